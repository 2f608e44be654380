/**
 * The numbers a journal would store as other numbers (spec/FORMAT.md §3: a JSON number is a double, written in
 * its shortest form, RFC 8785): the check every entry that takes JSON from outside applies before it records it —
 * `stepchain append` (cli/input.ts) and the OpenTelemetry receiver (otel/server.ts, otel/attributes.ts). Pure.
 */

/**
 * A number token worth a look: 16 digits or more (a decimal of at most 15 significant digits survives the trip
 * through a double, DBL_DIG, and comes back as the same value), or an exponent of three digits (underflow).
 */
const MAY_LOSE_DIGITS = /[0-9.]{16}|[eE][+-]?[0-9]{3}/;

/**
 * The index of the first number outside strings that the journal would store as another, in a text the strict
 * scan accepted as JSON; -1 when there is none. JSON.parse rounds a number to a double and the journal writes
 * that double's shortest form (RFC 8785), so 12345678901234567890 would be stored as 12345678901234567000 and
 * the step would hold a number the agent never sent (outsiders B and C). Kept: a number whose stored form has
 * its value (35809267966483470, 1e21 written out, 0.1), and a decimal or exponent form that is its double
 * written to the digits it gives (Java's 9.999999999999999E22 and 4.9E-324, C's 0.10000000000000001: outsider D),
 * as a writer of doubles writes them. Refused: an integer written out that its double changes (2^63 too: it is
 * stored as 9223372036854776000), digits a double does not hold (0.1000000000000000000001), underflow (1e-400).
 */
export function inexactNumber(text: string): number {
  if (!MAY_LOSE_DIGITS.test(text)) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: the text is valid JSON, so a backslash always escapes the next character.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    let end = i + 1;
    while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
    const literal = text.slice(i, end);
    if (MAY_LOSE_DIGITS.test(literal) && !keepsItsValue(literal)) return i;
    i = end - 1;
  }
  return -1;
}

/** The number token of JSON text `text` at `index` (where inexactNumber or exact-numbers.ts found one), for a message. */
export function numberAt(text: string, index: number): string {
  return /^-?[0-9.eE+-]+/.exec(text.slice(index, index + 400))?.[0] ?? '';
}

/** Whether the journal stores `literal` as itself (see inexactNumber). */
function keepsItsValue(literal: string): boolean {
  const value = decimalValue(literal);
  const stored = Number(literal);
  if (value === decimalValue(String(stored))) return true;
  if (/^-?[0-9]+$/.test(literal)) return false;
  // A double written to `digits` significant digits: its exact value rounded there (toPrecision rounds the exact
  // binary value). Zero has no such form: a non-zero decimal stored as 0 underflowed.
  const digits = value.replace(/^-/, '').split('e')[0]!.length;
  return stored !== 0 && digits <= 100 && value === decimalValue(stored.toPrecision(digits));
}

/** A JSON number's exact value as `[-]digits e exponent`, digits without leading or trailing zeros ("0" for zero). */
function decimalValue(literal: string): string {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (m === null) return literal;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = BigInt(m[4] ?? '0') - BigInt(fraction.length);
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += BigInt(trailing);
  return `${m[1]}${digits}e${exponent}`;
}
