/**
 * docs/threat-model.md backs each claim with a test, cited as `file` › `name` › …: every cited file must
 * exist and every cited test name must occur in it, so that renaming or deleting a test cannot leave a
 * claim standing without its evidence. A name's placeholders (`%s`, `$name`, `%#`) and an ellipsis (`…`,
 * for the rest of a long name) match anything; the literal pieces between them must all be in the file.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOC = 'docs/threat-model.md';

interface Citation {
  file: string;
  names: string[];
}

// The store conformance suite lives in src/testing/ (it is exported, so a third-party store can run it).
const FILE_RE = /^(?:test|src\/testing)\/[\w./-]+\.(?:ts|mts|mjs|js)$/;

/**
 * The citations of a Markdown text. A backticked test path starts one; a backticked span after `›`
 * continues its chain of names (describe › test); one after a bare comma that follows a name is a
 * sibling test of the same file. Any other backticked span (code, vector ids) is not a name.
 */
export function citationsOf(markdown: string): Citation[] {
  const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
  const found: Citation[] = [];
  let current: Citation | null = null;
  let previous: 'file' | 'name' | 'other' = 'other';
  let last = 0;
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    const span = m[1]!;
    const between = text.slice(last, m.index).replace(/\s+/g, ' ').trim();
    last = m.index + m[0].length;
    if (FILE_RE.test(span)) {
      current = { file: span, names: [] };
      found.push(current);
      previous = 'file';
    } else if (current && ((between === '›' && previous !== 'other') || (between === ',' && previous === 'name'))) {
      current.names.push(span);
      previous = 'name';
    } else {
      previous = 'other';
    }
  }
  return found;
}

/** Source text with the escapes a string literal needs undone, so a name reads as it does in the doc. */
const unescape = (source: string): string => source.replace(/\\(['"`\\])/g, '$1');

/**
 * The names a file spells with placeholders — a table's `%s`, `$name`, a template's `${…}` — as
 * patterns, so that a name cited as it runs ("every receipt of the vectors (44): …") is found too.
 */
function patternsOf(source: string): RegExp[] {
  const literals = source.match(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g) ?? [];
  const placeholder = /%[sdifjo#]|\$\{[^}]*\}|\$[A-Za-z_][\w.]*/;
  return literals
    .map((l) => unescape(l.slice(1, -1)))
    .filter((l) => placeholder.test(l))
    .map((l) => new RegExp('^' + l.split(new RegExp(placeholder.source, 'g')).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.+') + '$'));
}

/** The literal pieces of a cited name: what is left between placeholders and ellipses. */
export const piecesOf = (name: string): string[] =>
  name
    .split(/%[sdifjo#%]|\$[A-Za-z_][\w.]*|…/)
    .map((p) => p.trim())
    .filter((p) => p.length > 0);

const citations = citationsOf(readFileSync(ROOT + DOC, 'utf8'));
const files = [...new Set(citations.map((c) => c.file))].sort();
const names = [...new Set(citations.flatMap((c) => c.names.map((n) => `${c.file} › ${n}`)))];

describe('the citation reader', () => {
  test('reads chains, siblings and files, and skips code and vector ids', () => {
    const md = 'Shown by `test/a.test.ts` › `outer` › `row %s`,\n  `sibling…`; `test/b.test.ts` (whole file); vectors `x-1`, `x-2` and `journal.verify()` › `not a name`.';
    expect(citationsOf(md)).toEqual([
      { file: 'test/a.test.ts', names: ['outer', 'row %s', 'sibling…'] },
      { file: 'test/b.test.ts', names: [] },
    ]);
  });

  test('placeholders and ellipses leave the literal pieces', () => {
    expect(piecesOf('$id: $comment')).toEqual([':']);
    expect(piecesOf('… tool node, interrupt, resume and a fork…')).toEqual(['tool node, interrupt, resume and a fork']);
    expect(piecesOf('%s at random positions')).toEqual(['at random positions']);
  });
});

describe(`${DOC} cites tests that exist`, () => {
  test('it cites tests', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(names.length).toBeGreaterThan(100);
  });

  test.each(files)('%s exists', (file) => {
    expect(existsSync(ROOT + file), `${DOC} cites ${file}, which does not exist`).toBe(true);
  });

  test.each(names)('%s', (cited) => {
    const [file, name] = cited.split(' › ', 2) as [string, string];
    if (!existsSync(ROOT + file)) return; // reported once, by the file's own test
    const raw = readFileSync(ROOT + file, 'utf8');
    const source = unescape(raw);
    const patterns = patternsOf(raw);
    for (const piece of piecesOf(name)) {
      expect(source.includes(piece) || patterns.some((p) => p.test(piece)), `${DOC} cites "${name}" in ${file}; "${piece}" does not occur there`).toBe(true);
    }
  });
});
