/**
 * Where a defect of a stored line is reported, and which one wins (spec/FORMAT.md §4.3, issue 15 item 6).
 * The vectors (refused.json, group "locations") are checked against the chain verifier, which is what
 * reports them. Then a second, independent reading of §4.3 — written from the spec's rules, not from the
 * scanner: it collects every defect with its position and picks the first, where the scanner stops at the
 * first it meets — is run against the scanner on generated damaged lines. Where they disagree, the spec is
 * ambiguous or the scanner wrong.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { scanCanonical } from '../../src/canonical/scan.js';
import { verifyChain } from '../../src/chain/index.js';
import { genesisHash, type Genesis } from '../../src/record/index.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';
import { referenceScan as reference } from '../helpers/reference-scan.js';

interface LocatedCase {
  id: string;
  group: string;
  text?: string;
  base64?: string;
  expected_code: string;
  expected_column: number;
  expected_path: string | null;
}

const refused = loadVectors<LocatedCase>('refused.json');
const located = refused.cases.filter((c) => c.group === 'locations');
const genesis: Genesis = { format: 'stepchain/v1', journal_id: 'locations', created_at: '2026-01-01T00:00:00.000Z' };

describe('refused.json locations: the problem the chain verifier reports', () => {
  test('there are location cases for grammar, UTF-8, precedence and non-canonical forms', () => {
    for (const prefix of ['grammar-', 'utf8-', 'wins-', 'noncanonical-'])
      expect(located.some((c) => c.id.startsWith(prefix))).toBe(true);
    expect(genesisHash(genesis)).toMatch(/^sha256:/);
  });

  test.each(located.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const bytes = vectorBytes(c);
    const line = new Uint8Array(bytes.length + 1);
    line.set(bytes);
    line[bytes.length] = 0x0a;
    const report = verifyChain({ genesis, files: [{ name: '0000000000000000.jsonl', bytes: line }] });
    const first = report.problems[0]!;
    expect({
      code: first.code,
      column: first.location.column,
      path: first.location.path ?? (c.expected_path === null ? null : ''),
    }).toEqual({
      code: c.expected_code,
      column: c.expected_column,
      path: c.expected_path,
    });
  });
});

describe('an independent reading of §4.3 agrees with the scanner', () => {
  const scanned = (text: string) => {
    const d = scanCanonical(text).defect;
    return d && { code: d.code, at: d.index, path: d.path };
  };

  test.each(located.filter((c) => c.text !== undefined).map((c) => [c.id, c.text!] as const))(
    'on the vector %s',
    (_id, text) => {
      expect(reference(text)).toEqual(scanned(text));
    },
  );

  test('on generated damaged lines: the same code, position and pointer', () => {
    const piece = fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      '"',
      '\\',
      ':',
      ',',
      ' ',
      'u',
      'd800',
      'dc00',
      'D83D',
      '\\ud800',
      '\\udc00',
      '\\u0061',
      '\\/',
      '0',
      '1',
      '-',
      '.',
      'e',
      '+',
      '1e400',
      'tru',
      'nul',
      'a',
      'é',
      '😀',
      '\t',
    );
    const edit = fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.array(piece, { minLength: 1, maxLength: 3 }));
    const base = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => canonicalJson(v)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v, null, 1)),
      fc.array(piece, { maxLength: 30 }).map((a) => a.join('')),
    );
    fc.assert(
      fc.property(base, fc.array(edit, { maxLength: 3 }), (text, edits) => {
        // Edited by code point: text decoded from UTF-8 never holds half of a surrogate pair.
        let t = [...text];
        for (const [pos, cut, insert] of edits) {
          const p = pos % (t.length + 1);
          t = [...t.slice(0, p), ...insert.flatMap((x) => [...x]), ...t.slice(p + cut)];
        }
        const line = t.join('');
        expect(reference(line), line).toEqual(scanned(line));
      }),
      { numRuns: 20_000 },
    );
  });
});
