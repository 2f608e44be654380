/**
 * People's JSON input to the CLI (src/cli/input.ts): what is refused rather than coerced. Bytes that are not
 * UTF-8 are refused at the first byte that starts no well-formed sequence, and an integer literal beyond
 * ±(2^53 − 1) is refused where JSON.parse would round it; everything else parses as before.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { decodeUtf8Input, parseJsonStrict, readLinesOf } from '../../src/cli/input.js';
import { inexactNumber } from '../../src/canonical/stored-numbers.js';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const where = { file: 'in.json' };

describe('decodeUtf8Input', () => {
  test('property: it decodes exactly what a strict decoder decodes, and names a byte before which all is UTF-8', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 40 }),
          fc.string({ unit: 'binary', maxLength: 20 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
          fc
            .tuple(fc.string({ unit: 'binary', maxLength: 10 }), fc.uint8Array({ minLength: 1, maxLength: 3 }))
            .map(([s, tail]) => new Uint8Array([...Buffer.from(s, 'utf8'), ...tail])),
        ),
        (bytes) => {
          let expected: string | null = null;
          try {
            expected = strict.decode(bytes);
          } catch {
            expected = null;
          }
          try {
            expect(decodeUtf8Input(bytes, where)).toBe(expected);
          } catch (e) {
            expect(expected).toBeNull();
            const m = /in\.json:(\d+): byte (\d+) of the line \(0x([0-9a-f]{2})\)/.exec((e as Error).message);
            expect(m).not.toBeNull();
            // The line and byte it names: everything before that byte is UTF-8, and that byte is the one named.
            const lines = Buffer.from(bytes).toString('latin1').split('\n');
            const line = Number(m![1]);
            const offset = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + Number(m![2]) - 1;
            expect(() => strict.decode(bytes.subarray(0, offset))).not.toThrow();
            expect(bytes[offset]).toBe(parseInt(m![3]!, 16));
          }
        },
      ),
    );
  });

  test('a byte order mark is kept for the strict scan to refuse, as before', () => {
    expect(decodeUtf8Input(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), where)).toBe('\ufeff{}');
    expect(() => parseJsonStrict('\ufeff{}', where)).toThrow(/in\.json:1:1 is not valid JSON/);
  });

  test('overlong forms, surrogates and code points past U+10FFFF are not UTF-8', () => {
    for (const bad of [
      [0xc0, 0xaf],
      [0xe0, 0x80, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xf5, 0x80, 0x80, 0x80],
      [0xe2, 0x82],
    ])
      expect(() => decodeUtf8Input(new Uint8Array([0x41, ...bad]), where), bad.join(',')).toThrow(
        /in\.json:1: byte 2 of the line/,
      );
  });
});

describe('inexactNumber', () => {
  test('property: what JSON.stringify writes (doubles, safe integers, strings of digits) holds none', () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(
        fc.maxSafeInteger(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map((n) => n.toString()),
        fc.boolean(),
        fc.constant(null),
      ),
      node: fc.oneof(
        { depthSize: 'small' },
        tie('leaf'),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(inexactNumber(JSON.stringify(v))).toBe(-1);
        expect(inexactNumber(JSON.stringify(v, null, 2))).toBe(-1);
      }),
    );
  });

  test('property: an integer the journal would store as another, in any notation, is found where it starts', () => {
    const wide = fc
      .oneof(fc.bigInt({ min: 2n ** 53n, max: 10n ** 20n }), fc.bigInt({ min: -(10n ** 20n), max: -(2n ** 53n) }))
      .filter((n) => String(Number(n)) !== String(n));
    const digitsOnly = (n: bigint): string => `${n}`;
    const notation = fc.constantFrom(
      digitsOnly,
      (n: bigint) => `${n}.0`,
      (n: bigint) => `${n}e0`,
      (n: bigint) => `${n}0E-1`,
    );
    /**
     * Whether n is its double written to n's significant digits (toPrecision rounds the exact binary value): with a
     * point or an exponent that is how a writer of doubles may print it (%.18g), kept by design (outsider D); only
     * digits alone say an integer, which must keep its value. (Seed -926728140 found -17228580640618332200.0.)
     */
    const doubleWritten = (n: bigint): boolean => {
      const digits = String(n < 0n ? -n : n).replace(/0+$/, '').length;
      const [mantissa, exponent] = Number(n).toPrecision(digits).split('e');
      const [whole, fraction = ''] = mantissa!.replace('-', '').split('.');
      const value = BigInt(whole! + fraction) * 10n ** BigInt(Number(exponent ?? 0) - fraction.length);
      return (n < 0n ? -value : value) === n;
    };
    fc.assert(
      fc.property(
        fc.string().filter((s) => s !== 'w'),
        fc.maxSafeInteger(),
        wide,
        notation,
        (name, safe, n, write) => {
          fc.pre(write === digitsOnly || !doubleWritten(n));
          const before = JSON.stringify({ [name]: [safe, `${n}`, 1.5e300] }).slice(0, -1);
          const text = `${before},"w":${write(n)}}`;
          expect(inexactNumber(text)).toBe(before.length + 5);
          expect(() => parseJsonStrict(text, where)).toThrow(
            `holds the number ${write(n)}, which would be stored as ${String(Number(n))}, another number`,
          );
        },
      ),
    );
  });

  test('kept: numbers stored with the value sent, and doubles written to the digits they give (outsider D); refused: digits a double drops, 2^63 written out, underflow (outsider C)', () => {
    expect(
      inexactNumber(
        '[9007199254740991,-9007199254740991,9007199254740992,1000000000000000000000,-35809267966483470,1e21,' +
          '9223372036854776000,0.1,0.10000,1.5e300,1e-320,-0.0,12345678901234567000,123456789012345.6,' +
          // doubles as Java's Double.toString and C's %.17g write them: not the shortest form, the same double
          '9.999999999999999E22,1.9999999999999998E23,4.9E-324,5.7223519193314771E17,0.10000000000000001]',
      ),
    ).toBe(-1);
    for (const lost of [
      '9007199254740993',
      '-9007199254740993',
      '12345678901234567890.0',
      '1.2345678901234567890e19',
      '12345678901234567890e0',
      '9007199254740993E0',
      '9223372036854775808',
      '18446744073709551616',
      '0.1000000000000000000001',
      '1e-400',
    ])
      expect(inexactNumber(`[${lost}]`), lost).toBe(1);
    expect(inexactNumber('{"a":"12345678901234567890","b":"\\"12345678901234567890"}')).toBe(-1);
    expect(() => parseJsonStrict('{"n": 12345678901234567890}', where)).toThrow(
      'in.json:1:7 holds the number 12345678901234567890, which would be stored as 12345678901234567000, another number',
    );
  });
});

describe('readLinesOf', () => {
  test('property: the non-blank lines of a file, whatever lengths cross its 64 KiB reads, CRLF or LF, with their numbers', async () => {
    const dir = tempDir('stepchain-lines-');
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.oneof(
              fc.constant(''),
              fc.string({ unit: 'grapheme', maxLength: 30 }),
              fc.nat(150_000).map((n) => 'é'.repeat(n)),
            ),
            fc.boolean(),
          ),
          { maxLength: 8 },
        ),
        fc.boolean(),
        async (lines, endsWithNewline) => {
          const texts = lines.map(([t]) => t.replace(/[\r\n]/g, ' '));
          let body = texts.map((t, i) => t + (lines[i]![1] ? '\r\n' : '\n')).join('');
          if (!endsWithNewline && body.endsWith('\n')) body = body.replace(/\r?\n$/, '');
          const file = join(dir, 'in.jsonl');
          writeFileSync(file, body);
          const got: Array<[number, string]> = [];
          for await (const l of readLinesOf(file)) got.push([l.line, l.text]);
          const expected = texts.map((t, i): [number, string] => [i + 1, t]).filter(([, t]) => t.trim() !== '');
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });
});
