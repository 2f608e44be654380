// Writes one "## heading" section of a results file (bench/RESULTS.md or RESULTS-quick.md): replaces the
// section that starts with `heading` up to the next "## ", or puts it before "## Notes" (or at the end).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export function writeSection(file, heading, lines) {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '# stepchain benchmark results\n\n';
  const start = text.indexOf(heading);
  let out;
  if (start >= 0) {
    const next = text.indexOf('\n## ', start + 3);
    out = text.slice(0, start) + lines.join('\n') + (next >= 0 ? '\n' + text.slice(next + 1) : '');
  } else {
    const notes = text.indexOf('## Notes');
    out =
      notes >= 0 ? text.slice(0, notes) + lines.join('\n') + '\n' + text.slice(notes) : text + '\n' + lines.join('\n');
  }
  writeFileSync(file, out);
}
