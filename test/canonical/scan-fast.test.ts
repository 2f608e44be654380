/**
 * The scanner's fast path (src/canonical/scan-fast.ts, issue 25) against the general scanner it stands in
 * front of: whatever the text, scanCanonical's result — verdict, defect, code, index, path, members,
 * markers — is the general scanner's, and the fast path vouches only for texts the general scanner finds
 * canonical. And it must actually vouch for the plain lines a writer produces, or it would only add cost.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { scanPlain } from '../../src/canonical/scan-fast.js';
import { scanCanonical, scanGeneral, type ScanOptions } from '../../src/canonical/scan.js';
import { STEP_V1 } from '../../src/record/v1.js';

/** The general scanner's result equals scanCanonical's, and the fast path vouched only for a canonical text. */
function agree(text: string, options: ScanOptions = {}): void {
  const general = scanGeneral(text, options);
  expect(scanCanonical(text, options)).toEqual(general);
  if (scanPlain(text, options.maxDepth ?? 128, options.members ?? true) !== undefined) {
    expect(general.defect).toBeNull();
    expect(general.markers).toEqual([]);
  }
}

/** A stored v1 line as the writer seals it, with escapes, an emoji, decimals and nesting in its content. */
function storedLine(): string {
  const texts = {
    input: canonicalJson({ messages: [{ content: 'Summarise the "Q3" report,\nplease \u0001 😀', role: 'user' }], params: { max_tokens: 1024, temperature: 0.2 } }),
    model: canonicalJson('claude-sonnet-4-5'),
    prompt: canonicalJson('You are a careful agent. Answer in one line.'),
    tool_call: canonicalJson({ arguments: { filters: { tags: ['prod', 'eu'] }, top_k: 6 }, id: 'call_1', name: 'search_docs' }),
    result: canonicalJson({ items: [{ score: 0.4521, tokens: 120 }], status: 'ok', total: -3 }),
    meta: canonicalJson({ agent: 'test', attempt: 1, empty: {}, none: [], flag: true, nothing: null }),
  };
  const { line } = STEP_V1.seal(texts, { seq: 7, stepId: 'step-7', ts: '2026-01-01T00:00:01.000Z', prevHash: 'sha256:' + 'ab'.repeat(32) });
  return line.slice(0, -1);
}

/** Plain JSON values: member names that need no escape and are not reserved, integers the fast path decides. */
const plainName = fc.string({ unit: 'grapheme', maxLength: 8 }).filter((k) => !/["\\\u0000-\u001f]/.test(k) && !k.startsWith('$stepchain:'));
const plainValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '/', 'é', '😀') }),
    fc.integer({ min: -1e14 + 1, max: 1e15 - 1 }), // at most 15 characters, sign included
    fc.constantFrom(0.5, -0.25, 0.000001, 123.456, true, false, null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(plainName, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const MUTANTS = ['"', '\\', ',', ':', '{', '}', '[', ']', ' ', '\t', '0', '9', '-', '+', '.', 'e', 'E', 'u', 'n', 't', '$', 'a', '\u0000', '\u001f', '\ud800', '\udc00', '😀', '\u2028'];

/** A text with one code unit replaced, inserted or deleted at `at`. */
function mutate(text: string, at: number, kind: number, by: string): string {
  const i = at % (text.length + 1);
  if (kind === 0) return text.slice(0, i) + by + text.slice(i + 1);
  if (kind === 1) return text.slice(0, i) + by + text.slice(i);
  return text.slice(0, i) + text.slice(i + 1);
}

describe('the fast path of the canonical scanner', () => {
  test('vouches for a stored line as the writer seals it, with the general scanner\'s members', () => {
    const line = storedLine();
    const members = scanPlain(line, 128, true);
    expect(members).toBeInstanceOf(Map);
    expect(members).toEqual(scanGeneral(line).members);
    expect(scanPlain(line, 128, false)).toBeNull();
  });

  test('vouches for the canonical text of every plain value, and agrees with the general scanner on it', () => {
    fc.assert(
      fc.property(plainValue, (value) => {
        const text = canonicalJson(value);
        expect(scanPlain(text, 128, true)).not.toBeUndefined();
        agree(text);
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ['a marker', '{"a":{"$stepchain:blob":{"digest":"x","size":1}}}'],
    ['an escaped member name', '{"\\n":1}'],
    ['a duplicate member', '{"a":1,"a":1}'],
    ['members out of order', '{"b":1,"a":2}'],
    ['whitespace', '{"a": 1}'],
    ['a needless escape', '{"a":"\\/"}'],
    ['an uppercase \\u escape', '{"a":"\\u001F"}'],
    ['a long integer', '{"a":1234567890123456}'],
    ['-0', '{"a":-0}'],
    ['an exponent', '{"a":1e2}'],
    ['a lone surrogate', '{"a":"\ud800"}'],
    ['a control character', '{"a":"\u0001"}'],
    ['an unterminated string', '{"a":"abc'],
    ['trailing text', '{"a":1}x'],
    ['too deep', '{"a":[[[[1]]]]}'],
  ])('gives up on %s, and the general scanner reports it', (_, text) => {
    expect(scanPlain(text, 4, true)).toBeUndefined();
    agree(text, { maxDepth: 4 });
  });

  test('reads a long string full of escapes in one pass (blob text: an escape per line break)', () => {
    // Searching for the closing quote again after every escape made this quadratic: 400 000 escapes in a
    // 1.6M-character string never finished (a blob check hung the suite). One pass vouches for it at once.
    const text = canonicalJson({ text: 'ab\n'.repeat(400_000) });
    expect(text.length).toBeGreaterThan(1_200_000);
    expect(scanPlain(text, 128, true)?.get('text')).toEqual([8, text.length - 1]);
  });

  test('agrees with the general scanner on arbitrary text', () => {
    const jsonish = fc.array(fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', 'u', '00', '1', '-', '.', 'e', 'true', 'null', ' ', '\ud800', '😀', 'a', '"a":', '$stepchain:'), { maxLength: 40 }).map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), jsonish), fc.boolean(), (text, members) => agree(text, { members })),
      { numRuns: 5000 },
    );
  });

  test('agrees with the general scanner on every single-character mutation of valid lines', () => {
    const lines = fc.oneof(fc.constant(storedLine()), plainValue.map((v) => canonicalJson(v)), fc.jsonValue({ maxDepth: 4 }).map((v) => canonicalJson(v)));
    fc.assert(
      fc.property(lines, fc.nat(), fc.nat(2), fc.oneof(fc.constantFrom(...MUTANTS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), fc.integer({ min: 1, max: 6 }), (text, at, kind, by, maxDepth) => {
        agree(mutate(text, at, kind, by));
        agree(mutate(text, at, kind, by), { maxDepth });
      }),
      { numRuns: 5000 },
    );
  });

  test('agrees with the general scanner on every single-byte change of a stored line that is still UTF-8', () => {
    const bytes = new TextEncoder().encode(storedLine());
    const decoder = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(fc.nat(bytes.length - 1), fc.nat(255), (at, byte) => {
        const changed = bytes.slice();
        changed[at] = byte;
        let text: string;
        try {
          text = decoder.decode(changed);
        } catch {
          return; // not UTF-8: the line check reports that before any scan
        }
        agree(text);
      }),
      { numRuns: 3000 },
    );
  });
});
