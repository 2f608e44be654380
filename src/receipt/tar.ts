/**
 * The receipt archive profile (spec/RECEIPT.md §3): POSIX ustar headers whose every byte is a function of
 * the entry's name and size. `ustarHeader` builds that header; `inspectHeader` says, for a hostile 512-byte
 * block, why it is not one — so the strict reader can compare whole blocks and still report clear causes.
 * Pure; runs in a browser.
 */

export const BLOCK = 512;

const ascii = (s: string, into: Uint8Array, at: number): void => {
  for (let i = 0; i < s.length; i++) into[at + i] = s.charCodeAt(i);
};

/** 0-padded octal digits followed by a space (and the field's NUL, if any, left in place). */
const octal = (value: number, digits: number): string => value.toString(8).padStart(digits, '0') + ' ';

/** The one header the profile allows for a regular file `name` of `size` bytes (§3.2). */
export function ustarHeader(name: string, size: number): Uint8Array {
  const h = new Uint8Array(BLOCK);
  ascii(name, h, 0);
  ascii(octal(0o644, 6), h, 100);
  ascii(octal(0, 6), h, 108);
  ascii(octal(0, 6), h, 116);
  ascii(octal(size, 11), h, 124);
  ascii(octal(0, 11), h, 136);
  h[156] = 0x30; // '0': regular file
  ascii('ustar\0', h, 257);
  ascii('00', h, 263);
  ascii(octal(0, 6), h, 329);
  ascii(octal(0, 6), h, 337);
  ascii(octal(checksum(h), 6), h, 148);
  return h;
}

/** The ustar checksum: the byte sum with the checksum field counted as eight spaces. */
export function checksum(h: Uint8Array): number {
  let sum = 8 * 0x20;
  for (let i = 0; i < 148; i++) sum += h[i]!;
  for (let i = 156; i < BLOCK; i++) sum += h[i]!;
  return sum;
}

/** An entry's data with its zero padding: `size` rounded up to a whole number of blocks. */
export function paddedSize(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

export function isZeroBlock(b: Uint8Array): boolean {
  for (const x of b) if (x !== 0) return false;
  return true;
}

/** Reads a NUL- or space-terminated octal field; null when it is not one. */
function readOctal(b: Uint8Array, at: number, len: number): number | null {
  let i = at;
  const end = at + len;
  while (i < end && b[i] === 0x20) i++;
  let value = 0;
  let digits = 0;
  for (; i < end; i++) {
    const c = b[i]!;
    if (c >= 0x30 && c <= 0x37) {
      value = value * 8 + (c - 0x30);
      digits++;
    } else break;
  }
  for (; i < end; i++) if (b[i] !== 0 && b[i] !== 0x20) return null;
  return digits === 0 ? null : value;
}

/** A NUL-terminated field as text, with non-printable-ASCII bytes escaped, for messages. */
export function fieldText(b: Uint8Array, at: number, len: number): string {
  let s = '';
  for (let i = at; i < at + len && b[i] !== 0; i++) {
    const c = b[i]!;
    s += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return s;
}

export type HeaderVerdict =
  | { ok: true; name: string; size: number }
  | { ok: false; code: 'ARCHIVE_INVALID' | 'ARCHIVE_UNSAFE'; message: string; name?: string };

const TYPE_NAMES: Record<string, string> = {
  '1': 'a hard link',
  '2': 'a symbolic link',
  '3': 'a character device',
  '4': 'a block device',
  '5': 'a directory',
  '6': 'a FIFO',
  '7': 'a contiguous file',
  x: 'a PAX extended header',
  g: 'a PAX global header',
  L: 'a GNU long-name header',
  K: 'a GNU long-link header',
  S: 'a GNU sparse file',
  V: 'a GNU volume label',
};

/**
 * Names the profile's byte-for-byte comparison reports by field. The checksum comes last: it already matches
 * the block's byte sum, so it differs from the profile's only because another field does (which is the one
 * to name) or because it is written in another form.
 */
const FIELDS: [string, number, number][] = [
  ['name', 0, 100],
  ['mode', 100, 8],
  ['uid', 108, 8],
  ['gid', 116, 8],
  ['size', 124, 12],
  ['mtime', 136, 12],
  ['typeflag', 156, 1],
  ['linkname', 157, 100],
  ['magic', 257, 6],
  ['version', 263, 2],
  ['uname', 265, 32],
  ['gname', 297, 32],
  ['devmajor', 329, 8],
  ['devminor', 337, 8],
  ['prefix', 345, 155],
  ['padding', 500, 12],
  ['checksum', 148, 8],
];

/**
 * Checks a non-zero header block against the profile. Unsafe constructs (links, devices, extension
 * headers that can rename entries, paths that climb or start at the root) are ARCHIVE_UNSAFE; anything
 * else that is not the profile's exact header is ARCHIVE_INVALID.
 */
export function inspectHeader(h: Uint8Array): HeaderVerdict {
  const stored = readOctal(h, 148, 8);
  if (stored === null || stored !== checksum(h)) {
    return {
      ok: false,
      code: 'ARCHIVE_INVALID',
      message: `header checksum ${stored === null ? 'is not an octal number' : `${stored} does not match the header's byte sum ${checksum(h)}`}: not a valid tar header`,
    };
  }
  const name = fieldText(h, 0, 100);
  const prefix = fieldText(h, 345, 155);
  const full = prefix ? `${prefix}/${name}` : name;
  const type = String.fromCharCode(h[156]!);
  if (type !== '0') {
    const what = TYPE_NAMES[type] ?? `an entry of type ${JSON.stringify(type === '\0' ? '\\0' : type)}`;
    return {
      ok: false,
      code: 'ARCHIVE_UNSAFE',
      name: full,
      message: `entry ${JSON.stringify(full)} is ${what}; a receipt holds regular files only (typeflag "0")`,
    };
  }
  if (fieldText(h, 257, 6) !== 'ustar' || h[262] !== 0 || h[263] !== 0x30 || h[264] !== 0x30) {
    return {
      ok: false,
      code: 'ARCHIVE_INVALID',
      name: full,
      message: `entry ${JSON.stringify(full)} is not a POSIX ustar header (magic "ustar\\0", version "00")`,
    };
  }
  if (full.startsWith('/') || full.split('/').some((s) => s === '..') || /[\\:]|\\x/.test(full)) {
    return {
      ok: false,
      code: 'ARCHIVE_UNSAFE',
      name: full,
      message: `entry name ${JSON.stringify(full)} is absolute, climbs with "..", or holds a backslash, colon or non-ASCII byte`,
    };
  }
  if (prefix)
    return {
      ok: false,
      code: 'ARCHIVE_INVALID',
      name: full,
      message: `entry ${JSON.stringify(full)} uses the ustar prefix field; receipt names fit the name field`,
    };
  const size = readOctal(h, 124, 12);
  if (size === null || h[124]! & 0x80) {
    return {
      ok: false,
      code: 'ARCHIVE_INVALID',
      name: full,
      message: `entry ${JSON.stringify(full)} has a size field that is not octal digits`,
    };
  }
  const expected = ustarHeader(name, size);
  for (const [field, at, len] of FIELDS) {
    for (let i = at; i < at + len; i++) {
      if (h[i] !== expected[i]) {
        return {
          ok: false,
          code: 'ARCHIVE_INVALID',
          name: full,
          message: `entry ${JSON.stringify(full)}: header field ${field} is ${JSON.stringify(fieldText(h, at, len))}, not the profile's ${JSON.stringify(fieldText(expected, at, len))} (byte ${i})`,
        };
      }
    }
  }
  return { ok: true, name, size };
}
