/**
 * Where each character of a string stands in its canonical JSON text (RFC 8785 escaping, UTF-8), for a v3
 * publication that maps a detector's span in the string onto the string's chunks (spec/REDACTION.md §13: chunks
 * are cut from the escaped text). Pure.
 */

/**
 * The escaped-text byte offset of each UTF-16 index of `s` (JCS escaping, UTF-8), for mapping detector spans onto
 * chunks. Each code point's length is counted, not encoded: encoding each one's JSON text was most of the time of
 * publishing a chat, whose every prompt repeats the messages before it (a 2 000-turn conversation: 6 minutes).
 */
export function escapedOffsets(s: string): number[] {
  const off = new Array<number>(s.length + 1);
  let at = 0;
  for (let i = 0; i < s.length;) {
    const cp = s.codePointAt(i)!;
    off[i] = at;
    if (cp > 0xffff) off[i + 1] = at;
    at += escapedLength(cp);
    i += cp > 0xffff ? 2 : 1;
  }
  off[s.length] = at;
  return off;
}

/** The UTF-8 bytes of one code point in a JCS string (RFC 8785 §3.2.2.2, JSON.stringify's escaping). */
function escapedLength(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2; // \" \\
  if (cp < 0x20) return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6;
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp >= 0xd800 && cp <= 0xdfff) return 6; // a lone surrogate is written \uXXXX
  return cp < 0x10000 ? 3 : 4;
}
