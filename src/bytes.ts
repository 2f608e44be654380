/** Byte helpers shared by the pure modules (no Buffer: they run in a browser). */

/** The concatenation of `parts`, as one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * `s` in a string of its own, for a piece of a stored line kept after the line is done with (a step_id, a call's
 * key). V8 keeps a slice (and a concatenation) as a view that holds its whole source alive: kept for every
 * record, such pieces held every line of a journal (a 100 000-step verify peaked at 290 MB and its collector
 * traced them all). Prefixing then slicing flattens the text into a copy; short strings are copied anyway.
 */
export function ownString(s: string): string {
  return (' ' + s).slice(1);
}

/**
 * The offset of the first byte of `bytes` that starts no well-formed UTF-8 sequence (the Unicode standard's table
 * 3-7), or bytes.length when every sequence is whole: where a strict decoder failed, for a message that points there.
 */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    // The second byte's range is narrower after E0, ED, F0 and F4 (no overlong forms, surrogates or > U+10FFFF).
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return bytes.length;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * `bytes` as UTF-8 text (a byte order mark kept), or, where they are not UTF-8, the offset of the first byte that
 * starts no well-formed sequence: what every reader of outside input refuses (decoded with replacement, a record
 * would hold U+FFFD where the sender's character was).
 */
export function utf8OrBadByte(bytes: Uint8Array): string | number {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    return firstInvalidUtf8(bytes);
  }
}
