/** RFC 6901 JSON Pointer encoding and decoding. */

export function escapeToken(token: string | number): string {
  const s = String(token);
  return !s.includes('~') && !s.includes('/') ? s : s.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function toPointer(tokens: readonly (string | number)[]): string {
  let out = '';
  for (const t of tokens) out += '/' + escapeToken(t);
  return out;
}

/** Splits a pointer into its unescaped tokens; throws RangeError for a string that is not a pointer. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new RangeError(`a JSON Pointer starts with "/": ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => {
      if (/~[^01]|~$/.test(t)) throw new RangeError(`bad escape in JSON Pointer token ${JSON.stringify(t)}`);
      return t.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}
