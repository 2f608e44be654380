/**
 * Reading one value out of a canonical text (spec/FORMAT.md §4.3) once the scanner has proved it canonical,
 * without a general parse in the common cases: a string with no escape is its text between the quotes, a
 * number is Number() of its text (the same double JSON.parse gives), null is null; anything else goes
 * through JSON.parse.
 */
export function canonicalValue(text: string, start: number, end: number): unknown {
  const c = text.charCodeAt(start);
  if (c === 0x22) {
    const inner = text.slice(start + 1, end - 1);
    return inner.includes('\\') ? JSON.parse(text.slice(start, end)) : inner;
  }
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return Number(text.slice(start, end));
  // In canonical text a value that starts with "n" is null (v2 records hold several: ref, error).
  if (c === 0x6e && end - start === 4) return null;
  return JSON.parse(text.slice(start, end));
}
