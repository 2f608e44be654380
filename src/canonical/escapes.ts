/**
 * The string escapes of JSON text as the canonical scanner reads them (RFC 8259 §7, RFC 8785 §3.2.2.2):
 * which short escapes exist and what they stand for, which characters JCS writes with a short escape, the
 * run of characters that need none, and the four hex digits of a \u escape.
 */
export const SHORT_ESCAPES: Record<number, number> = { 0x62: 8, 0x74: 9, 0x6e: 10, 0x66: 12, 0x72: 13 };
export const CANONICAL_SHORT = new Set([8, 9, 10, 12, 13]);
/** A (possibly empty) run of string characters that need no escape and are not surrogates; sticky. */
export const PLAIN_RUN = /[^"\\\u0000-\u001f\ud800-\udfff]*/y;

export function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** The value of the four hex digits at s[at, at + 4), or -1 when they are not four hex digits. */
export function hexValue(s: string, at: number): number {
  for (let k = 0; k < 4; k++) if (!isHex(s.charCodeAt(at + k))) return -1;
  return parseInt(s.slice(at, at + 4), 16);
}
