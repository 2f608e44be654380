/**
 * The scanner at the edges of its character classes (spec/FORMAT.md §4.3): the hex digits 9, A and F, the
 * surrogate ranges' first and last units, what may stand between the halves of an escaped pair, escaped
 * names that equal literal ones, and objects at the depth limit. Each row was a mutant that survived the
 * suite (npm run mutate; test/mutation/SURVIVORS.md); each expectation is checked twice, against the
 * scanner and against the independent reading of §4.3 in test/helpers/reference-scan.ts.
 */
import { describe, expect, test } from 'vitest';
import { scanCanonical } from '../../src/canonical/scan.js';
import { referenceScan } from '../helpers/reference-scan.js';

const code = (text: string): string | null => scanCanonical(text).defect?.code ?? null;

describe('lines as decoded from UTF-8', () => {
  test.each<[string, string | null, string]>([
    ['["\\u0019"]', null, 'a control character escaped with a 9 in its hex: canonical'],
    ['["\\u0009"]', 'NONCANONICAL_LINE', 'U+0009 has the short escape \\t'],
    ['["\\u001A"]', 'NONCANONICAL_LINE', 'uppercase A in the hex is a form, not a grammar error'],
    ['["\\u00A9"]', 'NONCANONICAL_LINE', '© is written as itself'],
    ['["\\u001f"]', null, 'the last control character, lowercase'],
    ['["\\u0020"]', 'NONCANONICAL_LINE', 'the space, first character past the controls, is written as itself'],
    [
      '["\\udbff\\udfff"]',
      'NONCANONICAL_LINE',
      'the last pair (U+10FFFF): a pair, written literally in canonical form',
    ],
    ['["\\ud800\\udc00"]', 'NONCANONICAL_LINE', 'the first pair (U+10000)'],
    ['["\\udbff"]', 'LONE_SURROGATE', 'the last high surrogate, alone'],
    ['["\\udfff"]', 'LONE_SURROGATE', 'the last low surrogate, alone'],
    ['["\\udc00"]', 'LONE_SURROGATE', 'the first low surrogate, alone'],
    ['["\\ud800\\ue000"]', 'LONE_SURROGATE', 'a high surrogate followed by an escape just past the low range'],
    ['["\\ud800\\udbff"]', 'LONE_SURROGATE', 'a high surrogate followed by another high one'],
    ['["\\ud800xxdc00"]', 'LONE_SURROGATE', 'low-surrogate hex digits without their \\u are no low half'],
    ['["\\ud800\\xdc00"]', 'LONE_SURROGATE', 'nor after \\x (the broken escape comes later than the lone one)'],
    ['["\\ud800\\\\dc00"]', 'LONE_SURROGATE', 'nor after an escaped backslash'],
    ['["\\ue000"]', 'NONCANONICAL_LINE', 'U+E000, just past the surrogates, escaped: written as itself'],
    ['["\\uffff"]', 'NONCANONICAL_LINE', 'U+FFFF escaped'],
    ['["\ue000"]', null, 'U+E000 as itself'],
    ['["\uffff\ud7ff"]', null, 'U+FFFF and U+D7FF as themselves'],
    ['{"\\ud83d\\ude00":1,"😀":2}', 'DUPLICATE_KEY', 'an escaped pair and the character itself are the same name'],
    ['{"😀":1,"\\ud83d\\ude00":2}', 'DUPLICATE_KEY', 'the other way round'],
    ['{"\\u0061":1,"a":2}', 'DUPLICATE_KEY', 'an escaped letter and the letter'],
    [
      '{"\\ud83d\\ude00":1,"\\ud83d\\ude01":2}',
      'NONCANONICAL_LINE',
      'distinct escaped pairs: only the escapes are wrong',
    ],
    ['{"a":'.repeat(128) + '1' + '}'.repeat(128), null, 'objects nested exactly 128 deep'],
    ['{"a":'.repeat(129) + '1' + '}'.repeat(129), 'DEPTH_LIMIT', 'objects nested 129 deep'],
    ['[{"a":'.repeat(64) + '[1]' + '}]'.repeat(64), 'DEPTH_LIMIT', 'arrays and objects, 129 deep'],
    ['[{"a":'.repeat(64) + '1' + '}]'.repeat(64), null, 'arrays and objects, 128 deep'],
  ])('%s', (text, expected) => {
    expect(code(text)).toBe(expected);
    expect(referenceScan(text)?.code ?? null).toBe(expected);
  });

  test('the depth limit in an object is met at the opening brace of the 129th level, at its member', () => {
    const text = '{"a":'.repeat(129) + '1' + '}'.repeat(129);
    expect(scanCanonical(text).defect).toMatchObject({ code: 'DEPTH_LIMIT', index: 5 * 128, path: '/a'.repeat(128) });
    expect(scanCanonical(text, { maxDepth: 3 }).defect).toMatchObject({
      code: 'DEPTH_LIMIT',
      index: 15,
      path: '/a/a/a',
    });
    expect(scanCanonical('{"a":{"b":{}}}', { maxDepth: 3 }).defect).toBeNull();
  });
});

// Text given to the scanner as a JavaScript string can hold what UTF-8 cannot: a lone surrogate code unit.
describe('strings handed to the scanner directly', () => {
  test.each<[string, string | null]>([
    ['"\ud800"', 'LONE_SURROGATE'],
    ['"\ud800a"', 'LONE_SURROGATE'],
    ['"\udbff\ue000"', 'LONE_SURROGATE'],
    ['"\udc00\udc00"', 'LONE_SURROGATE'],
    ['"\udfff"', 'LONE_SURROGATE'],
    ['"a\udfff"', 'LONE_SURROGATE'],
    ['"\ud83d\ude00"', null],
    ['"\udbff\udfff"', null],
  ])('%j', (text, expected) => {
    expect(code(text)).toBe(expected);
  });
});
