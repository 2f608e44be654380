/**
 * Finds any of many strings in a text in one pass, for the publisher's leak sweep (spec/REDACTION.md §5.5).
 * A Rabin–Karp rolling hash over the first PREFIX code units of each needle picks candidate positions, and
 * only candidates are compared in full, so a text is read once whatever the number of needles, with no
 * allocation per position. Needles shorter than PREFIX are searched with includes.
 */
const PREFIX = 6;
const BASE = 0x01000193;
/** BASE^(PREFIX-1) mod 2^32: the weight of the code unit leaving the window. */
const LEAVING = power(BASE, PREFIX - 1);

function power(base: number, exponent: number): number {
  let p = 1;
  for (let i = 0; i < exponent; i++) p = Math.imul(p, base);
  return p;
}

/** The hash of `s`'s code units [at, at + PREFIX), in the int32 ring the rolling update stays in. */
function windowHash(s: string, at: number): number {
  let h = 0;
  for (let i = at; i < at + PREFIX; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

export class NeedleSearch {
  private readonly short: string[] = [];
  private readonly byHash = new Map<number, string[]>();

  constructor(needles: Iterable<string>) {
    for (const needle of needles) {
      if (needle.length === 0) continue;
      if (needle.length < PREFIX) {
        this.short.push(needle);
        continue;
      }
      const h = windowHash(needle, 0);
      const list = this.byHash.get(h);
      if (list) list.push(needle);
      else this.byHash.set(h, [needle]);
    }
  }

  /** A needle that occurs in `text` (the short ones are tried first), or null when none does. */
  find(text: string): string | null {
    for (const needle of this.short) if (text.includes(needle)) return needle;
    if (this.byHash.size === 0 || text.length < PREFIX) return null;
    let h = windowHash(text, 0);
    for (let i = 0; ; i++) {
      const candidates = this.byHash.get(h);
      if (candidates) for (const needle of candidates) if (text.startsWith(needle, i)) return needle;
      if (i + PREFIX >= text.length) return null;
      h = (Math.imul((h - Math.imul(text.charCodeAt(i), LEAVING)) | 0, BASE) + text.charCodeAt(i + PREFIX)) | 0;
    }
  }
}
