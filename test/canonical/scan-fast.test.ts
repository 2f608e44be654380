/**
 * The scanner's fast path (src/canonical/scan-fast.ts, issue 25) against the general scanner it stands in
 * front of: whatever the text, scanCanonical's result — verdict, defect, code, index, path, members,
 * markers — is the general scanner's, and the fast path vouches only for texts the general scanner finds
 * canonical. And it must actually vouch for the plain lines a writer produces, or it would only add cost.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { holdsWatchedText, scanPlain } from '../../src/canonical/scan-fast.js';
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
    input: canonicalJson({
      messages: [{ content: 'Summarise the "Q3" report,\nplease \u0001 😀', role: 'user' }],
      params: { max_tokens: 1024, temperature: 0.2 },
    }),
    model: canonicalJson('claude-sonnet-4-5'),
    prompt: canonicalJson('You are a careful agent. Answer in one line.'),
    tool_call: canonicalJson({
      arguments: { filters: { tags: ['prod', 'eu'] }, top_k: 6 },
      id: 'call_1',
      name: 'search_docs',
    }),
    result: canonicalJson({ items: [{ score: 0.4521, tokens: 120 }], status: 'ok', total: -3 }),
    meta: canonicalJson({ agent: 'test', attempt: 1, empty: {}, none: [], flag: true, nothing: null }),
  };
  const { line } = STEP_V1.seal(texts, {
    seq: 7,
    stepId: 'step-7',
    ts: '2026-01-01T00:00:01.000Z',
    prevHash: 'sha256:' + 'ab'.repeat(32),
  });
  return line.slice(0, -1);
}

/** Plain JSON values: member names that need no escape and are not reserved, integers the fast path decides. */
const plainName = fc
  .string({ unit: 'grapheme', maxLength: 8 })
  .filter((k) => !/["\\\u0000-\u001f]/.test(k) && !k.startsWith('$stepchain:'));
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

const MUTANTS = [
  '"',
  '\\',
  ',',
  ':',
  '{',
  '}',
  '[',
  ']',
  ' ',
  '\t',
  '0',
  '9',
  '-',
  '+',
  '.',
  'e',
  'E',
  'u',
  'n',
  't',
  '$',
  'a',
  '\u0000',
  '\u001f',
  '\ud800',
  '\udc00',
  '😀',
  '\u2028',
];

/** A text with one code unit replaced, inserted or deleted at `at`. */
function mutate(text: string, at: number, kind: number, by: string): string {
  const i = at % (text.length + 1);
  if (kind === 0) return text.slice(0, i) + by + text.slice(i + 1);
  if (kind === 1) return text.slice(0, i) + by + text.slice(i);
  return text.slice(0, i) + text.slice(i + 1);
}

describe('the fast path of the canonical scanner', () => {
  test("vouches for a stored line as the writer seals it, with the general scanner's members", () => {
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
    const jsonish = fc
      .array(
        fc.constantFrom(
          '{',
          '}',
          '[',
          ']',
          '"',
          '\\',
          ':',
          ',',
          'u',
          '00',
          '1',
          '-',
          '.',
          'e',
          'true',
          'null',
          ' ',
          '\ud800',
          '😀',
          'a',
          '"a":',
          '$stepchain:',
        ),
        { maxLength: 40 },
      )
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), jsonish), fc.boolean(), (text, members) =>
        agree(text, { members }),
      ),
      { numRuns: 5000 },
    );
  });

  test('agrees with the general scanner on every single-character mutation of valid lines', () => {
    const lines = fc.oneof(
      fc.constant(storedLine()),
      plainValue.map((v) => canonicalJson(v)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => canonicalJson(v)),
    );
    fc.assert(
      fc.property(
        lines,
        fc.nat(),
        fc.nat(2),
        fc.oneof(fc.constantFrom(...MUTANTS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
        fc.integer({ min: 1, max: 6 }),
        (text, at, kind, by, maxDepth) => {
          agree(mutate(text, at, kind, by));
          agree(mutate(text, at, kind, by), { maxDepth });
        },
      ),
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

/**
 * Edges the random generators above reach too rarely to pin, each family enumerated in full: in each, a
 * one-line change to scan-fast.ts that makes it vouch for a non-canonical text (or hand back wrong members)
 * passed the properties above (\u0008 accepted, "a!" sorted before "a", a lone U+DFFF; see
 * test/mutation/SURVIVORS.md, "scan-fast.ts").
 * Every text is read twice: as it is (no control or surrogate in it: the indexed string reader) and with a
 * literal emoji in a trailing member (the character-by-character reader), so both string readers are held.
 */
describe('the fast path at the edges of its grammar', () => {
  /** The text as given and, when it is an object, with a literal surrogate pair appended as a last member. */
  const bothReaders = (text: string): string[] =>
    text.startsWith('{') && text.endsWith('}') && text !== '{}'
      ? [text, `${text.slice(0, -1)},"~~":"😀"}`]
      : [text, `[${text},"😀"]`];

  const HEX = '0123456789abcdefABCDEF';
  test('every escape a string can hold: the seven short ones, \\u00XX for every two hex digits, and others', () => {
    const escapes: string[] = [];
    for (let c = 0x20; c < 0x7f; c++) escapes.push('\\' + String.fromCharCode(c));
    for (const h of HEX) for (const l of HEX) escapes.push(`\\u00${h}${l}`, `\\u${h}${l}00`, `\\u0${h}0${l}`);
    escapes.push('\\u00', '\\u0', '\\u', '\\', '\\u00\\"', '\\u001');
    for (const e of escapes) {
      for (const text of [`{"a":"${e}"}`, `{"a":"x${e}y"}`, `["${e}",1]`, `"${e}"`])
        for (const t of bothReaders(text)) agree(t);
    }
    // The fast path vouches for the canonical ones rather than leaving them all to the general scanner.
    for (const e of [
      '\\"',
      '\\\\',
      '\\b',
      '\\f',
      '\\n',
      '\\r',
      '\\t',
      '\\u0000',
      '\\u0007',
      '\\u000b',
      '\\u000e',
      '\\u001f',
      '\\u001a',
    ]) {
      expect(scanPlain(`{"a":"${e}"}`, 128, true)).toBeInstanceOf(Map);
    }
    for (const e of [
      '\\u0008',
      '\\u0009',
      '\\u000a',
      '\\u000c',
      '\\u000d',
      '\\u0020',
      '\\u001A',
      '\\/',
      '\\a',
      '\\a0001',
      '\\x0041',
    ]) {
      expect(scanPlain(`{"a":"${e}"}`, 128, true)).toBeUndefined();
    }
  });

  test('a quote or a backslash after an escape: where the string ends', () => {
    for (const text of [
      '["\\",1]',
      '["\\"",1]',
      '["\\\\",1]',
      '["\\\\\\",1]',
      '["a\\"b",1]',
      '["\\"\\"",1]',
      '{"a":"\\"","b":"\\\\"}',
      '{"a":"\\",1}',
      '["\\n\\"",1]',
      '["x\\""]"]',
    ]) {
      for (const t of bothReaders(text)) agree(t);
    }
  });

  test('member names in order: every pair of names where one is a prefix of the other or differs by one unit', () => {
    // Units below and above the closing quote (0x22) matter: a name compared one unit past its end meets it.
    const names = [
      '',
      'a',
      'a ',
      'a!',
      'a#',
      'a~',
      'ab',
      'aa',
      'b',
      'a\u007f',
      'aé',
      'a\uffff',
      'a\ue000',
      'a😀',
      '😀',
      '\uffff',
      ' ',
      '!',
    ];
    for (const x of names) {
      for (const y of names) {
        for (const t of bothReaders(`{"${x}":1,"${y}":2}`)) agree(t);
        for (const t of bothReaders(`{"${x}":{"${y}":1,"${x}":2},"${y}":3}`)) agree(t);
      }
    }
  });

  test('escaped member names: the general scanner decodes them, so the fast path must give up', () => {
    for (const name of ['\\n', '\\"', '\\\\', '\\u0001', 'a\\tb', '\\u00e9']) {
      for (const t of bothReaders(`{"${name}":1}`)) {
        agree(t);
        expect(scanPlain(t, 128, true)).toBeUndefined();
      }
      for (const t of bothReaders(`{"a":{"${name}":1}}`)) agree(t);
    }
  });

  test('literal characters at the edges of the surrogate and control ranges, alone, paired and after an escape', () => {
    const units = [
      '\u0000',
      '\u001f',
      ' ',
      '\ud7ff',
      '\ud800',
      '\udbff',
      '\udc00',
      '\udfff',
      '\ue000',
      '\uffff',
      '\\',
      '"',
      'a',
    ];
    for (const x of units) {
      for (const y of units) {
        for (const text of [`["${x}${y}"]`, `{"${x}${y}":1}`, `{"a":"${x}${y}"}`, `["\\n${x}${y}"]`])
          for (const t of bothReaders(text)) agree(t);
      }
    }
  });

  test('numbers: every short token of digits, signs, points and exponents, in every position', () => {
    const parts = [
      '',
      '-',
      '--',
      '0',
      '1',
      '9',
      '00',
      '01',
      '10',
      '.',
      '.0',
      '.5',
      '.50',
      '.000001',
      '.0000001',
      'e1',
      'E1',
      'e',
      '+',
      ']',
      '}',
      ',',
    ];
    const tokens = new Set<string>();
    for (const a of parts) for (const b of parts) for (const c of ['', '1', '.', ']', '0']) tokens.add(a + b + c);
    tokens
      .add('123456789012345')
      .add('1234567890123456')
      .add('-12345678901234')
      .add('-123456789012345')
      .add('-0.0000015')
      .add('-0.000001');
    for (const n of tokens) {
      for (const text of [n, `[${n}]`, `[${n},1]`, `[${n}]]`, `{"a":${n}}`, `{"a":${n},"b":1}`, `[1,${n}]`])
        agree(text);
    }
  });

  test('objects and arrays nested to the depth limit, one over, and empty ones', () => {
    for (let maxDepth = 1; maxDepth <= 4; maxDepth++) {
      for (let depth = 0; depth <= 5; depth++) {
        for (const [open, close] of [
          ['{"a":', '}'],
          ['[', ']'],
          ['{"a":[', ']}'],
          ['[{"a":', '}]'],
        ] as const) {
          for (const inner of ['1', '{}', '[]', '{"b":2}', '[3]']) {
            const text = open.repeat(depth) + inner + close.repeat(depth);
            agree(text, { maxDepth });
            agree(text, { maxDepth, members: false });
          }
        }
      }
    }
  });

  test('separators: every character in place of a colon, a comma or a closing bracket', () => {
    const units = [' ', ',', ':', '}', ']', '"', '1', 'a', '\u0000', ''];
    for (const u of units) {
      for (const text of [
        `{"a"${u}1}`,
        `{"a":1${u}"b":2}`,
        `[1${u}2]`,
        `{"a":1${u}`,
        `[1${u}`,
        `{${u}"a":1}`,
        `[${u}1]`,
        `{"a":[1${u}}`,
        `{"a":{"b":1${u}]}`,
      ]) {
        for (const t of bothReaders(text)) agree(t);
      }
    }
  });

  test("root names handed back by position: a name that is a prefix, an extension or a repeat of the last line's", () => {
    const sequence = [
      '{"ab":1,"b":2}',
      '{"a":1,"b":2}',
      '{"abc":1,"b":2}',
      '{"":1,"b":2}',
      '{"a":1,"bc":2}',
      '{"ab":1,"b":2}',
      '{"b":1}',
      '{"a":1}',
      `{${Array.from({ length: 40 }, (_, k) => `"k${String(k).padStart(2, '0')}":${k}`).join(',')}}`,
      `{${Array.from({ length: 40 }, (_, k) => `"k${String(k).padStart(2, '0')}x":${k}`).join(',')}}`,
      `{${Array.from({ length: 40 }, (_, k) => `"k${String(k).padStart(2, '0')}":${k}`).join(',')}}`,
    ];
    for (let round = 0; round < 2; round++) {
      for (const text of sequence) {
        expect(scanPlain(text, 128, true)).toEqual(scanGeneral(text).members);
        agree(text);
      }
    }
  });
});

describe('the texts the fast path notes for the approval check (holdsWatchedText)', () => {
  /** approval/calls.ts PARSED_LINE: what holdsWatchedText stands in for on a text the fast path vouched for. */
  const PARSED_LINE = /"(?:\$stepchain:|approval|kind":"model\.)/;
  const word = fc.constantFrom(
    'approval',
    'approvals',
    'kind',
    'model.x',
    'model',
    '$stepchain:part',
    'a',
    'x"approval',
    '\\',
  );
  const text = fc.array(fc.oneof(word, fc.string({ maxLength: 4 })), { maxLength: 4 }).map((parts) => parts.join(''));
  const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      tie('object'),
      fc.array(tie('value'), { maxLength: 3 }),
    ),
    object: fc.dictionary(
      fc.oneof(word, text).filter((k) => !k.startsWith('$stepchain:')),
      tie('value'),
      { maxKeys: 4 },
    ),
  })).value;

  test('says exactly what the search says, for every text it vouched for, and nothing for any other', () => {
    fc.assert(
      fc.property(json, fc.constantFrom('approval', 'kind":"model.', '$stepchain:', ''), (v, extra) => {
        const line = canonicalJson({ content: v });
        if (scanPlain(line, 128, true) !== undefined) expect(holdsWatchedText(line)).toBe(PARSED_LINE.test(line));
        const other = `${line} ${extra}`;
        expect(holdsWatchedText(other)).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
  });

  test('a quote escaped inside a string counts, one that closes a string is followed by no text', () => {
    for (const [value, seen] of [
      ['say \\"approval\\"', true],
      ['"$stepchain:x', true],
      ['approva', false],
      ['kind":"model.', false],
    ] as const) {
      const line = canonicalJson({ a: value, kind: 'step' });
      expect(scanPlain(line, 128, true)).toBeDefined();
      expect(holdsWatchedText(line)).toBe(seen || PARSED_LINE.test(line));
      expect(PARSED_LINE.test(line)).toBe(holdsWatchedText(line));
    }
    const model = canonicalJson({ kind: 'model.call', x: { kind: 'model.y' } });
    expect(scanPlain(model, 128, true)).toBeDefined();
    expect(holdsWatchedText(model)).toBe(true);
  });
});
