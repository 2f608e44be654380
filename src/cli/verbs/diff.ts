/** `stepchain diff`: where two runs (journals or receipts) diverge. */
import type { ChainSource } from '../../chain/source.js';
import { diff, formatDiff, summarize } from '../../diff/index.js';
import { openReceiptSource } from '../../receipt/index.js';
import { publishedReceiptHooks } from '../../redact/index.js';
import { EXIT_FAILED, EXIT_OK, type Verb } from '../cli.js';
import { locationKind, openJournal } from '../location.js';
import { countingSource } from '../output.js';

/** Opens a journal (directory or Postgres) or a receipt file as a read-only chain. */
export async function openRun(path: string): Promise<{ source: ChainSource; close(): Promise<void> }> {
  if ((await locationKind(path)) === 'journal') {
    const { journal, at } = await openJournal(path, { readOnly: true });
    return { source: journal, close: () => journal.close().finally(() => at.close()) };
  }
  // The whole verification, as `verify` runs it: published (redacted) receipts carry anchor and redactions
  // members, which the hooks check, and their finish adds the declaration and anchor checks.
  const source = await openReceiptSource(path, publishedReceiptHooks().options);
  return { source, close: async () => {} };
}

export const diffVerb: Verb = {
  name: 'diff',
  summary: 'show where two runs diverge, step and field (journals or receipts)',
  usage: '<a> <b> [--all] [--ignore pointer]… [--envelope]',
  description: [
    'Compares content (input, model, prompt, tool_call, result, meta), not the envelope fields that always differ between runs.',
    'Extra or missing steps are reported as insertions and deletions. A receipt is verified in full first, exactly as',
    '`stepchain verify` does (a published receipt with its anchor and declarations): one that does not verify is an error (exit 2).',
  ].join('\n'),
  options: {
    all: { type: 'boolean', description: 'report every divergence, not only the first' },
    ignore: { type: 'string', multiple: true, arg: 'pointer', description: 'leave out values matching a JSON Pointer pattern (* one token, ** any depth), e.g. /result/**/request_id' },
    envelope: { type: 'boolean', description: 'compare ts, step_id, seq, prev_hash and step_hash too' },
  },
  args: { min: 2, max: 2, names: ['a', 'b'] },
  examples: [
    ['stepchain diff runs/recorded runs/replay', 'the first divergence between a run and its replay'],
    ['stepchain diff a.tar.gz b.tar.gz --all --ignore /result/**/request_id', 'every divergence, ignoring request ids'],
  ],
  async run({ out, values, positionals }) {
    const a = await openRun(positionals[0]!);
    try {
      const b = await openRun(positionals[1]!);
      try {
        const progress = out.progress('diffing: lines read');
        const report = await diff(countingSource(a.source, progress), countingSource(b.source, progress), {
          all: values.all === true,
          envelope: values.envelope === true,
          ...(values.ignore ? { ignore: values.ignore as string[] } : {}),
        });
        progress.end();
        if (out.json) out.document('diff', { ok: true, same: report.same, report });
        else if (report.same) out.say(out.style('green', summarize(report)));
        else {
          // The verdict goes to stderr like every verdict; with --all the step-by-step listing is the
          // command's output, on stdout (formatDiff's first line is the summary itself).
          out.say(out.style(['red', 'bold'], summarize(report)));
          if (values.all) out.print(formatDiff(report).split('\n').slice(1).join('\n'));
        }
        return report.same ? EXIT_OK : EXIT_FAILED;
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  },
};
