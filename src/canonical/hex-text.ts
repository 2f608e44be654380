/**
 * Digest and seed texts read in place in a line (record/rules.ts, record/v3.ts): a quoted run of lowercase hex
 * digits, tested by a table instead of a sticky regular expression. Three such members sit in every stored
 * line, and entering the regular expression cost about 290 ns a member against about 150 ns for this loop
 * (`stepchain verify` of the 100 000-step bench journal: bench/RESULTS.md). Pure.
 */

/** 1 at each lowercase hex digit's code. */
const LOWER_HEX = new Uint8Array(128);
for (const c of '0123456789abcdef') LOWER_HEX[c.charCodeAt(0)] = 1;

/** Whether text[from, end) is all lowercase hex digits (false past the text's end). */
export function isLowerHexAt(text: string, from: number, end: number): boolean {
  if (end > text.length) return false;
  let ok = 1;
  // No early exit: a valid digest, the usual case, reads every digit anyway, and the loop stays branch-light.
  for (let k = from; k < end; k++) {
    const c = text.charCodeAt(k);
    ok &= c < 128 ? LOWER_HEX[c]! : 0;
  }
  return ok === 1;
}

/** Whether text[start, end) is `"sha256:` and 64 lowercase hex digits and `"`, a digest's canonical text. */
export function isDigestTextAt(text: string, start: number, end: number): boolean {
  return (
    end - start === 73 &&
    text.charCodeAt(start) === 0x22 &&
    text.charCodeAt(end - 1) === 0x22 &&
    text.startsWith('sha256:', start + 1) &&
    isLowerHexAt(text, start + 8, end - 1)
  );
}

/** Whether text[start, end) is 64 lowercase hex digits in quotes (a v3 record's seed). */
export function isHex64TextAt(text: string, start: number, end: number): boolean {
  return (
    end - start === 66 &&
    text.charCodeAt(start) === 0x22 &&
    text.charCodeAt(end - 1) === 0x22 &&
    isLowerHexAt(text, start + 1, end - 1)
  );
}
