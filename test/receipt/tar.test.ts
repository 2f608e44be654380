/**
 * The archive profile's header rules (spec/RECEIPT.md §3.2) one at a time, against src/receipt/tar.ts
 * directly: the header H(name, size) byte for byte as the spec's table writes it, its checksum, padding and
 * the zero block; and, for a hostile 512-byte block, which code `inspectHeader` gives and at which entry.
 * Written from the survivors of `npm run mutate -- receipt/tar.ts` (test/mutation/SURVIVORS.md): the
 * hostile-archive tests reached these rules only through a handful of archives.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  BLOCK,
  checksum,
  fieldText,
  inspectHeader,
  isZeroBlock,
  paddedSize,
  ustarHeader,
} from '../../src/receipt/tar.js';
import { entriesOf, rawHeader, tarOf } from './craft.js';
import { makeFixture } from './fixture.js';
import { receiptBytes, verifyReceipt } from '../../src/receipt/index.js';

const put = (h: Uint8Array, at: number, s: string): void => {
  for (let i = 0; i < s.length; i++) h[at + i] = s.charCodeAt(i);
};

/** H(name, size) written from §3.2's table alone, not from tar.ts. */
function specHeader(name: string, size: number): Uint8Array {
  const h = new Uint8Array(512);
  put(h, 0, name);
  put(h, 100, '000644 \0');
  put(h, 108, '000000 \0');
  put(h, 116, '000000 \0');
  put(h, 124, size.toString(8).padStart(11, '0') + ' ');
  put(h, 136, '00000000000 ');
  put(h, 156, '0');
  put(h, 257, 'ustar\0');
  put(h, 263, '00');
  put(h, 329, '000000 \0');
  put(h, 337, '000000 \0');
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  put(h, 148, sum.toString(8).padStart(6, '0') + ' \0');
  return h;
}

/** A receipt-like name: printable ASCII but for `\`, `:` and a `..` segment, 1–99 characters. */
const safeName = fc
  .string({ unit: fc.constantFrom(...'abcxyz0189-_.~ /'.split('')), minLength: 1, maxLength: 99 })
  .filter((n) => !n.startsWith('/') && !n.split('/').includes('..'));
/** Sizes up to the 11 octal digits' maximum, 8^11 − 1 (8 GiB − 1). */
const size = fc.oneof(fc.integer({ min: 0, max: 4096 }), fc.integer({ min: 0, max: 8 ** 11 - 1 }));
/** Sizes whose octal digits hold every digit 0–7, and the edges. */
const EDGE_SIZES = [0, 1, 7, 8, 511, 512, 513, 0o1234567, 0o76543210, 0o7654321076, 8 ** 11 - 1];

describe('RECEIPT §3.2 item 2: H(name, size), the one header the profile allows', () => {
  test('ustarHeader writes the table byte for byte, and its checksum is the byte sum with the field as spaces', () => {
    for (const n of EDGE_SIZES)
      expect(ustarHeader('chain/0000000000000000.jsonl', n)).toEqual(specHeader('chain/0000000000000000.jsonl', n));
    fc.assert(
      fc.property(safeName, size, (name, n) => {
        const h = ustarHeader(name, n);
        expect(h).toEqual(specHeader(name, n));
        expect(checksum(h)).toBe(parseInt(fieldText(h, 148, 6), 8));
      }),
    );
  });

  test('inspectHeader accepts H(name, size) and reads back that name and size', () => {
    for (const n of EDGE_SIZES)
      expect(inspectHeader(specHeader('blobs/x', n))).toEqual({ ok: true, name: 'blobs/x', size: n });
    expect(inspectHeader(specHeader('x'.repeat(99), 3))).toEqual({ ok: true, name: 'x'.repeat(99), size: 3 });
    fc.assert(
      fc.property(
        safeName,
        size,
        (name, n) => void expect(inspectHeader(specHeader(name, n))).toEqual({ ok: true, name, size: n }),
      ),
    );
  });

  test('padding rounds data up to whole blocks (item 4), and a zero block is all zeros', () => {
    expect([0, 1, 511, 512, 513, 1024, 1025].map(paddedSize)).toEqual([0, 512, 512, 512, 1024, 1024, 1536]);
    expect(BLOCK).toBe(512);
    expect(isZeroBlock(new Uint8Array(BLOCK))).toBe(true);
    for (const at of [0, 1, 255, 510, 511]) {
      const b = new Uint8Array(BLOCK);
      b[at] = 1;
      expect(isZeroBlock(b), `byte ${at}`).toBe(false);
    }
  });
});

describe('RECEIPT §3.2, §7 step 2: inspectHeader, what a hostile header block is, and at which entry', () => {
  const NAME = 'chain/0000000000000000.jsonl';
  const inspect = (patch: Array<[number, string | number[]]>, name = NAME, keepChecksum = false) =>
    inspectHeader(rawHeader({ name, size: 10, patch, keepChecksum }));
  const refusal = (v: ReturnType<typeof inspectHeader>) => (v.ok ? v : { code: v.code, name: v.name });

  test('a checksum that does not match, or is not an octal number, is ARCHIVE_INVALID at no entry: its name is not trusted', () => {
    for (const field of [
      '000000 \0',
      '\0\0\0\0\0\0\0\0',
      '        ',
      'x',
      '0000008\0',
      [0x80, 0, 0, 0, 0, 0, 0, 0],
    ] as const) {
      const v = inspect([[148, field as string | number[]]], NAME, true);
      expect(refusal(v), JSON.stringify(field)).toEqual({ code: 'ARCHIVE_INVALID', name: undefined });
      if (!v.ok) expect(v.message).toMatch(/checksum/);
    }
    expect(refusal(inspect([[0, 'd']], NAME, true))).toEqual({ code: 'ARCHIVE_INVALID', name: undefined });
  });

  test('a right checksum written in another form (leading spaces, NUL then space) is read, and refused at the entry by the byte comparison', () => {
    for (const form of [
      (s: number) => ` ${s.toString(8).padStart(5, '0')} \0`,
      (s: number) => `${s.toString(8).padStart(6, '0')}\0 `,
      (s: number) => `${s.toString(8).padStart(7, '0')}\0`,
    ]) {
      const h = ustarHeader(NAME, 10);
      put(h, 148, form(checksum(h)));
      const v = inspectHeader(h);
      expect(refusal(v)).toEqual({ code: 'ARCHIVE_INVALID', name: NAME });
      if (!v.ok) expect(v.message).toMatch(/header field checksum/);
    }
  });

  test.each([
    ['1', 'a hard link'],
    ['2', 'a symbolic link'],
    ['3', 'a character device'],
    ['4', 'a block device'],
    ['5', 'a directory'],
    ['6', 'a FIFO'],
    ['7', 'a contiguous file'],
    ['x', 'a PAX extended header'],
    ['g', 'a PAX global header'],
    ['L', 'a GNU long-name header'],
    ['K', 'a GNU long-link header'],
    ['S', 'a GNU sparse file'],
    ['V', 'a GNU volume label'],
    ['\0', 'an entry of type "\\\\0"'],
    ['A', 'an entry of type "A"'],
  ])('typeflag %j is ARCHIVE_UNSAFE at the entry, named as %s (item 1)', (flag, what) => {
    const v = inspect([[156, flag]]);
    expect(refusal(v)).toEqual({ code: 'ARCHIVE_UNSAFE', name: NAME });
    if (!v.ok) expect(v.message).toContain(what);
  });

  test('a header that is not POSIX ustar (GNU magic, version, v7) is ARCHIVE_INVALID at the entry, before its name is read as a ustar path', () => {
    for (const patch of [
      [[257, 'ustar  \0']],
      [[263, '01']],
      [[263, ' \0']],
      [[257, [0, 0, 0, 0, 0, 0, 0, 0]]],
      [[257, 'USTAR']],
      [[262, ' ']],
    ] as Array<Array<[number, string | number[]]>>) {
      const v = inspect(patch);
      expect(refusal(v), JSON.stringify(patch)).toEqual({ code: 'ARCHIVE_INVALID', name: NAME });
      if (!v.ok) expect(v.message).toMatch(/not a POSIX ustar header/);
    }
    // an unsafe name in a header of another format is refused as that format, whichever byte differs
    for (const patch of [[[257, 'ustar  \0']], [[262, ' ']], [[263, 'x']], [[264, 'x']], [[257, 'v']]] as Array<
      Array<[number, string]>
    >) {
      expect(refusal(inspect(patch, '../x')), JSON.stringify(patch)).toEqual({ code: 'ARCHIVE_INVALID', name: '../x' });
    }
  });

  test.each([
    ['/etc/passwd', '/etc/passwd'],
    ['..', '..'],
    ['../x', '../x'],
    ['a/../b', 'a/../b'],
    ['a/..', 'a/..'],
    ['a\\b', 'a\\b'],
    ['c:x', 'c:x'],
  ])('the name %j is ARCHIVE_UNSAFE at that name (item 3)', (name, shown) => {
    expect(refusal(inspect([], name))).toEqual({ code: 'ARCHIVE_UNSAFE', name: shown });
  });

  test('a byte outside printable ASCII in the name is ARCHIVE_UNSAFE, named with the byte escaped; space and ~ are printable', () => {
    for (const [byte, shown] of [
      [0x01, 'a\\x01b'],
      [0x1f, 'a\\x1fb'],
      [0x7f, 'a\\x7fb'],
      [0x80, 'a\\x80b'],
      [0xe9, 'a\\xe9b'],
      [0xff, 'a\\xffb'],
    ] as const) {
      expect(refusal(inspect([[1, [byte]]], 'axb')), shown).toEqual({ code: 'ARCHIVE_UNSAFE', name: shown });
    }
    for (const name of ['a b', 'a~b', ' ', '~', '...', '..a', 'a..', 'a/..b'])
      expect(inspectHeader(ustarHeader(name, 1)), name).toEqual({ ok: true, name, size: 1 });
  });

  test('fieldText reads a field up to its end or its first NUL, escaping bytes outside printable ASCII', () => {
    const b = Uint8Array.from([0x61, 0x62, 0, 0x63, 0x64, 0x65]);
    expect(fieldText(b, 0, 6)).toBe('ab');
    expect(fieldText(b, 3, 2)).toBe('cd');
    expect(fieldText(b, 3, 3)).toBe('cde');
    expect(fieldText(Uint8Array.from([0x20, 0x7e, 0x1f, 0x7f]), 0, 4)).toBe(' ~\\x1f\\x7f');
  });

  test('the prefix field is ARCHIVE_INVALID at prefix/name, or ARCHIVE_UNSAFE there when the joined path climbs or is absolute', () => {
    expect(refusal(inspect([[345, 'chain']], 'x'))).toEqual({ code: 'ARCHIVE_INVALID', name: 'chain/x' });
    expect(refusal(inspect([[345, '..']], 'x'))).toEqual({ code: 'ARCHIVE_UNSAFE', name: '../x' });
    expect(refusal(inspect([[345, '/etc']], 'passwd'))).toEqual({ code: 'ARCHIVE_UNSAFE', name: '/etc/passwd' });
    expect(refusal(inspect([[345, 'a:']], 'x'))).toEqual({ code: 'ARCHIVE_UNSAFE', name: 'a:/x' });
    const v = inspect([[345, 'chain']], 'x');
    if (!v.ok) expect(v.message).toMatch(/prefix/);
  });

  test('a size field that is not octal digits (base-256, a digit 8 or 9, empty, text) is ARCHIVE_INVALID at the entry, never a throw', () => {
    const forms: Array<string | number[]> = [
      [0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10],
      [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
      '00000000018 ',
      '00000000009 ',
      '\0\0\0\0\0\0\0\0\0\0\0\0',
      '            ',
      'ten         ',
      '0000000001x ',
      '0 1         ',
    ];
    for (const field of forms) {
      const v = inspect([[124, field]]);
      expect(refusal(v), JSON.stringify(field)).toEqual({ code: 'ARCHIVE_INVALID', name: NAME });
      if (!v.ok) expect(v.message).toMatch(/size field that is not octal digits/);
    }
  });

  test('a size field in another octal form (NUL-terminated, leading spaces, 12 digits) is read, and refused by the byte comparison at the entry', () => {
    for (const field of ['0000000012\0 ', ' 0000000012 ', '000000000012', '00000000012\0', '12          ']) {
      const v = inspect([[124, field]]);
      expect(refusal(v), JSON.stringify(field)).toEqual({ code: 'ARCHIVE_INVALID', name: NAME });
      if (!v.ok) expect(v.message).toMatch(/header field size/);
    }
  });

  test.each([
    ['mode', 100, '000755 \0'],
    ['uid', 108, '001750 \0'],
    ['gid', 116, '001750 \0'],
    ['mtime', 136, '14567123456 '],
    ['linkname', 157, 'x'],
    ['linkname', 256, 'x'],
    ['uname', 265, 'root'],
    ['gname', 297, 'wheel'],
    ['devmajor', 329, '000001 \0'],
    ['devminor', 344, 'x'],
    ['padding', 500, 'x'],
    ['padding', 511, 'x'],
    ['name', 99, 'x'],
  ])('any other byte in %s (byte %i) is ARCHIVE_INVALID at the entry, naming the field', (field, at, bytes) => {
    const v = inspect([[at as number, bytes as string]]);
    expect(refusal(v)).toEqual({ code: 'ARCHIVE_INVALID', name: NAME });
    if (!v.ok) expect(v.message).toMatch(new RegExp(`header field ${field} `));
  });
});

const twoSteps = entriesOf(await receiptBytes(makeFixture({ steps: 2, bucketSize: 2 }), {}));

describe('RECEIPT §3.2 items 2–3, §7 step 2.7: a name that fills the name field', () => {
  // 100 bytes and no NUL: H(name, size) is defined for it, so the header passes the byte comparison; no
  // §3.3 form is that long, so the entry is refused where names are matched, as ENTRY_UNEXPECTED.
  const long = 'blobs/' + 'x'.repeat(94);
  const entries = twoSteps;

  test('inspectHeader reads all 100 bytes as the name', () => {
    expect(long).toHaveLength(100);
    expect(inspectHeader(ustarHeader(long, 7))).toEqual({ ok: true, name: long, size: 7 });
  });

  test.each([
    ['first', 0],
    ['after the manifest', 1],
    ['last', entries.length],
  ])('an entry so named, %s, is ENTRY_UNEXPECTED at that name and stops verification', async (_where, at) => {
    const spliced = [...entries.slice(0, at), { name: long, data: new Uint8Array(3) }, ...entries.slice(at)];
    const report = await verifyReceipt(tarOf(spliced));
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.code, p.location])).toContainEqual(['ENTRY_UNEXPECTED', { file: long }]);
    expect(report.problems.at(-1)?.code).toBe('ENTRY_UNEXPECTED');
  });
});
