/**
 * Whether every number in a JSON text is exactly the value JSON.parse reads it as (spec/APPROVALS.md §5 step 3,
 * "Arguments given as text"): its decimal text denotes the same value as the shortest text of the double it is
 * read as, and it is not an integer past ±(2^53−1). JSON.parse silently rounds `9007199254740993` to
 * `…992` and `0.10000000000000001` to `0.1`; a tool in another language reading the text gets the value the text
 * says. Text holding such a number is compared as the string it is, so two texts whose numbers differ are never
 * one call. The verifier and the runtime's gate both reach this through approval/calls.ts callForm, and the MCP
 * proxy refuses a call holding such a number (mcp/lines.ts). Pure; runs in a browser.
 */

/** A JSON number token, as RFC 8259 writes it: sign, integer part, fraction, exponent. */
const NUMBER = /-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?/y;

/** A number's value as digits without leading or trailing zeros and a power of ten ("0" for zero, sign aside). */
function decimalOf(int: string, frac: string, exp: string): string {
  let digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  let power = BigInt(exp === '' ? '0' : exp) - BigInt(frac.length);
  const trimmed = digits.replace(/0+$/, '');
  power += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${digits}e${power}`;
}

/** Whether number token `token` denotes exactly the value JSON.parse reads it as (a safe integer, if integral). */
export function exactNumber(token: string): boolean {
  NUMBER.lastIndex = 0;
  const m = NUMBER.exec(token);
  if (m?.[0].length !== token.length) return false;
  const d = Number(token);
  if (!Number.isFinite(d) || (Number.isInteger(d) && Math.abs(d) > Number.MAX_SAFE_INTEGER)) return false;
  const shortest = /^-?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(Math.abs(d)));
  if (shortest === null) return false;
  return decimalOf(m[1]!, m[2] ?? '', m[3] ?? '') === decimalOf(shortest[1]!, shortest[2] ?? '', shortest[3] ?? '');
}

/** Whether every number in JSON text `text` (already known to parse) is exact (exactNumber). Outside strings only. */
export function numbersExact(text: string): boolean {
  return firstInexactNumber(text) === -1;
}

/** The index of the first number in JSON text `text` (already known to parse) that is not exact, else -1. */
export function firstInexactNumber(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote, past escapes.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m === null || !exactNumber(m[0])) return i;
      i += m[0].length - 1;
    }
  }
  return -1;
}
