/** The nesting depth of a stored line's bytes, scanned without recursion (spec/FORMAT.md §3.3). Pure; runs in a browser. */
import { MAX_RECORD_DEPTH } from './limits.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = [0x7b, 0x5b]; // { [
const CLOSERS = [0x7d, 0x5d]; // } ]

/**
 * Whether UTF-8 JSON bytes nest deeper than `max` (brackets outside strings; the record object counts as 1): a
 * line no verifier accepts (DEPTH_LIMIT). A loop, not a parser, so a line nested 20,000 deep gives its reader a
 * coded error instead of a stack overflow. A line with at most `max` opening brackets (any typical line) is
 * never walked byte by byte.
 */
export function bytesNestDeeper(bytes: Uint8Array, max: number = MAX_RECORD_DEPTH): boolean {
  if (!moreOpenersThan(bytes, max)) return false;
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
    } else if (b === OPENERS[0] || b === OPENERS[1]) {
      if (++depth > max) return true;
    } else if (b === CLOSERS[0] || b === CLOSERS[1]) depth--;
  }
  return false;
}

/** Whether the bytes hold more than `max` opening brackets, strings included (indexOf is fast on a long line). */
function moreOpenersThan(bytes: Uint8Array, max: number): boolean {
  let n = 0;
  for (const opener of OPENERS)
    for (let i = bytes.indexOf(opener); i >= 0; i = bytes.indexOf(opener, i + 1)) if (++n > max) return true;
  return false;
}
