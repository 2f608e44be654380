/**
 * What scanCanonical hands back besides the defect (spec/FORMAT.md §4.3, §3.5), and defects its mutation
 * run left unasserted in test/canonical (test/mutation/SURVIVORS.md): root member spans, marker objects,
 * member order and duplicates located at the name's opening quote, whitespace of every kind, a literal
 * character above the surrogates, an escaped high surrogate followed by something that is not "\u".
 */
import { describe, expect, test } from 'vitest';
import { scanCanonical } from '../../src/canonical/scan.js';

describe('root member spans', () => {
  test('each root member name maps to [start, end) of its value text, nested objects adding none', () => {
    const text = '{"a":1,"b":{"c":[2,{"d":3}]},"e":"x"}';
    const r = scanCanonical(text);
    expect(r.defect).toBeNull();
    expect([...r.members!.entries()]).toEqual([
      ['a', [5, 6]],
      ['b', [11, 28]],
      ['e', [33, 36]],
    ]);
    for (const [, [s, e]] of r.members!) expect(JSON.parse(text.slice(s, e))).toBeDefined();
  });

  test('collected by default, not when `members: false`, none for a root that is not an object', () => {
    expect(scanCanonical('{"a":1}', {}).members).toEqual(new Map([['a', [5, 6]]]));
    expect(scanCanonical('{"a":1}', { members: false }).members).toBeNull();
    expect(scanCanonical('[{"a":1}]').members).toBeNull();
  });
});

describe('marker objects (FORMAT §3.5): objects with a member name starting with the reserved prefix', () => {
  test('a marker is reported with its pointer, names and span; ordinary objects are not', () => {
    const text = '{"a":[{"$stepchain:blob":"x","n":1}],"b":{"c":1}}';
    const r = scanCanonical(text);
    expect(r.defect).toBeNull();
    expect(r.markers).toEqual([{ path: '/a/0', names: ['$stepchain:blob', 'n'], start: 6, end: 35 }]);
    expect(text.slice(6, 35)).toBe('{"$stepchain:blob":"x","n":1}');
  });

  test('no marker in ordinary text, nor for the prefix elsewhere in a name or in a value', () => {
    expect(scanCanonical('{"a":{"x$stepchain:":1},"b":"$stepchain:blob"}').markers).toEqual([]);
    expect(scanCanonical('[]').markers).toEqual([]);
  });
});

describe("member order and duplicates, located at the name's opening quote", () => {
  test.each([
    ['a duplicate name', '{"a":1,"a":2}', 'DUPLICATE_KEY', 7, '/a'],
    ['a duplicate after a disorder', '{"b":1,"a":2,"b":3}', 'DUPLICATE_KEY', 13, '/b'],
    ['a name out of UTF-16 order', '{"b":1,"a":2}', 'NONCANONICAL_LINE', 7, '/a'],
    ['a nested name out of order', '{"x":{"b":1,"a":2}}', 'NONCANONICAL_LINE', 12, '/x/a'],
  ])('%s', (_, text, code, index, path) => {
    const d = scanCanonical(text).defect;
    expect(d).toMatchObject({ code, index, path });
  });
});

describe('whitespace, surrogates and characters above them', () => {
  test('a run of mixed whitespace is non-canonical at its first character, not malformed', () => {
    for (const ws of [' \r', ' \n', ' \t', '\r\n', '\t \r']) {
      expect(scanCanonical(`[1,${ws}2]`).defect).toMatchObject({ code: 'NONCANONICAL_LINE', index: 3 });
    }
  });

  test('literal characters from U+E000 up are plain text, not surrogates', () => {
    for (const ch of ['\ue000', '\ufffd', '\uff71']) expect(scanCanonical(`["${ch}"]`).defect).toBeNull();
  });

  test('an escaped high surrogate followed by anything but "\\u" is LONE_SURROGATE at its backslash', () => {
    expect(scanCanonical('["\\ud800Xudc00"]').defect).toMatchObject({ code: 'LONE_SURROGATE', index: 2 });
    expect(scanCanonical('["\\ud800\\Xdc00"]').defect).toMatchObject({ code: 'LONE_SURROGATE', index: 2 });
  });
});
