/** The nesting depth of JSON text, read without recursion (spec/FORMAT.md §3.3). Pure; runs in a browser. */
import { MAX_RECORD_DEPTH } from './limits.js';

/**
 * Whether a line's JSON text nests deeper than `max` (brackets outside strings): a line no verifier accepts
 * (FORMAT.md §3.3, DEPTH_LIMIT), read here without recursion so that a planted line gives a coded error to every
 * reader (show, approve, effect, diff), not a stack overflow.
 */
export function nestsDeeper(text: string, max: number = MAX_RECORD_DEPTH): boolean {
  if (text.length <= max * 2 || !openingsExceed(text, max)) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++;
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/**
 * Whether the text holds more than `max` opening brackets (in strings too): only then can it nest deeper than
 * `max`. indexOf finds them fast, so a typical line (a few dozen brackets) is never walked char by char.
 */
function openingsExceed(text: string, max: number): boolean {
  let n = 0;
  for (const c of ['{', '['])
    for (let i = text.indexOf(c); i >= 0; i = text.indexOf(c, i + 1)) if (++n > max) return true;
  return false;
}

/**
 * nestsDeeper over a stored line's UTF-8 bytes (the file store's tail read holds bytes). Only a line with more
 * than `max` opening brackets is decoded and walked: any typical line is answered by indexOf alone.
 */
export function bytesNestDeeper(bytes: Uint8Array, max: number = MAX_RECORD_DEPTH): boolean {
  let n = 0;
  for (const opener of [0x7b, 0x5b])
    for (let i = bytes.indexOf(opener); i >= 0 && n <= max; i = bytes.indexOf(opener, i + 1)) n++;
  return n > max && nestsDeeper(new TextDecoder().decode(bytes), max);
}
