/**
 * Every citation of a section of a spec document resolves: `FORMAT.md §6.3`, `FILE-STORE.md §8`,
 * `RUNS.md §2`, `PROOFS §9.4` — in spec/, src/, test/, scripts/, bench/, docs/ and the top-level documents
 * — names a heading that exists in that document, and inside spec/ a bare `§N` names one of the document's
 * own. Sections move (FORMAT.md's file store became FILE-STORE.md, issue 37); a citation left behind
 * would send a reader, or an implementer, to the wrong rule.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const SPEC = join(ROOT, 'spec');

/** The section numbers a spec document's headings define: "6.3" for "### 6.3 Verification procedure". */
function headingsOf(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^#{2,4} (\d+(?:\.\d+)*[a-z]?)\.? /gm)) out.add(m[1]!);
  return out;
}

const specDocs = readdirSync(SPEC).filter((f) => f.endsWith('.md')).sort();
const headings = new Map(specDocs.map((f) => [f, headingsOf(readFileSync(join(SPEC, f), 'utf8'))]));

// Where older numbers are cited on purpose: FORMAT.md's table of where its sections went, and the notes
// saying which old sections a moved document holds. The vector generators' description strings are
// golden text (vectors/ is never rewritten), so they keep the numbers they were generated with.
const ON_PURPOSE: Array<[file: string, from: string, to: string]> = [
  ['spec/FORMAT.md', '**Where the sections went.**', '\n## 1.'],
  ['spec/RUNS.md', 'Its §1 was the end of', '\n## 1.'],
];

const REF = String.raw`§\d+(?:\.\d+)*[a-z]?`;
const GAP = String.raw`(?:[ \t]*\n[ \t]*(?:\*|//|#)?[ \t]*|[ \t])`;
const LIST = String.raw`${REF}(?:(?:,${GAP}|${GAP}and${GAP}|,${GAP}and${GAP}|–|${GAP}or${GAP})${REF})*`;
const DOC = String.raw`(?:[\w./-]*?\b(?<name>[A-Z][A-Z-]+)(?:\.md)?(?:\]\([^)]*\))?|[\w./-]+\.md|RFC[ \t]\d+|C2SP\S*)`;
const CITATION = new RegExp(String.raw`(?<pre>${DOC}${GAP})?(?<list>${LIST})(?<post>${GAP}of${GAP}(?<postDoc>[A-Z][A-Z-]*)\.md)?`, 'g');

interface Citation { doc: string; section: string; context: string }

/** The citations of spec sections in `text`; `own` is the document a bare `§N` refers to, or null. */
export function citationsIn(text: string, own: string | null): Citation[] {
  const out: Citation[] = [];
  for (const m of text.matchAll(CITATION)) {
    const g = m.groups!;
    let doc: string | null = own;
    if (g.pre) doc = g.name ? `${g.name}.md` : null;
    else if (g.postDoc) doc = `${g.postDoc}.md`;
    if (doc === null || !headings.has(doc)) continue;
    for (const r of g.list!.matchAll(new RegExp(REF, 'g'))) {
      out.push({ doc, section: r[0].slice(1), context: text.slice(Math.max(0, m.index - 40), m.index + m[0].length).replace(/\s+/g, ' ') });
    }
  }
  return out;
}

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : filesUnder(p, keep);
    return keep(e.name) ? [p] : [];
  });
}

const code = (n: string): boolean => /\.(ts|mts|mjs|js)$/.test(n) && !n.endsWith('.d.ts');
const sources = [
  ...specDocs.map((f) => join(SPEC, f)),
  ...filesUnder(join(ROOT, 'src'), code),
  ...filesUnder(join(ROOT, 'test'), (n) => code(n) || n.endsWith('.md')),
  ...filesUnder(join(ROOT, 'scripts'), code),
  ...filesUnder(join(ROOT, 'bench'), (n) => code(n) || n.endsWith('.md')),
  ...filesUnder(join(ROOT, 'docs'), (n) => n.endsWith('.md')),
  ...['ARCHITECTURE.md', 'SECURITY.md', 'README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'vectors/README.md'].map((f) => join(ROOT, f)),
].map((p) => relative(ROOT, p));

function textOf(file: string): string {
  let text = readFileSync(join(ROOT, file), 'utf8');
  for (const [f, from, to] of ON_PURPOSE) {
    if (f !== file) continue;
    const a = text.indexOf(from);
    const b = text.indexOf(to, a);
    if (a >= 0 && b > a) text = text.slice(0, a) + text.slice(b);
  }
  if (file.startsWith('scripts/vectors/')) text = text.replace(/^\s*description: .*$/gm, '');
  return text;
}

describe('the citation reader', () => {
  test('reads prefixed citations, lists and bare sections, and skips RFCs and unknown documents', () => {
    const found = citationsIn('see FORMAT.md §6.3 and §7, RUNS §2; §5.1 of PROOFS.md, RFC 8785 §3.2.3, docs/x.md §9; bare §5.', 'RECEIPT.md');
    expect(found.map((c) => `${c.doc} ${c.section}`)).toEqual(['FORMAT.md 6.3', 'FORMAT.md 7', 'RUNS.md 2', 'PROOFS.md 5.1', 'RECEIPT.md 5']);
  });

  test('every spec document has numbered headings', () => {
    for (const [doc, set] of headings) expect(set.size, doc).toBeGreaterThan(3);
  });
});

describe('citations of spec sections resolve', () => {
  test.each(sources)('%s', (file) => {
    const own = file.startsWith('spec/') ? file.slice(5) : null;
    const broken = citationsIn(textOf(file), own)
      .filter((c) => !headings.get(c.doc)!.has(c.section))
      .map((c) => `${c.doc} §${c.section} (…${c.context})`);
    expect(broken, `${file} cites sections that do not exist`).toEqual([]);
  });
});
