/**
 * Chunking of long strings in `stepchain/v3` (spec/FORMAT.md §14.3): a string whose escaped text (its JCS
 * literal without the quotes) is longer than 64 bytes is cut into chunks at word boundaries, never inside
 * an escape or a UTF-8 sequence, each chunk a committed unit. Deterministic: a verifier shown a whole string
 * re-chunks it. Pure.
 */
const encoder = new TextEncoder();

/** A string whose escaped text is longer than this many bytes is chunked (§4.2). */
export const CHUNK_THRESHOLD = 64;
/** Chunk size bound for escaped texts of at most LONG_TEXT bytes, and above it. */
export const CHUNK_MAX = 64;
export const CHUNK_MAX_LONG = 256;
export const LONG_TEXT = 4096;

let okScratch = new Uint8Array(1024);

/**
 * Where the chunks of an escaped text (a JCS string literal without its quotes, UTF-8) end (design §4.2),
 * or null when it is not chunked (≤ 64 bytes). A chunk holds at most `max` bytes (64, or 256 above 4096);
 * it ends after the last space among its bytes max/2 + 1 … max if there is one, else at `max` moved back so
 * as to split neither a UTF-8 sequence nor an escape. The text is `text[start, end)` (offsets are from
 * start), so a scan can pass the bytes it holds without a view of them.
 */
export function chunkEnds(text: Uint8Array, start = 0, end = text.length): number[] | null {
  const len = end - start;
  if (len <= CHUNK_THRESHOLD) return null;
  const max = len > LONG_TEXT ? CHUNK_MAX_LONG : CHUNK_MAX;
  const ok = escapeEnds(text, start, len);
  // May a chunk end at offset k: not inside an escape, not before a UTF-8 continuation byte.
  const may = (k: number): boolean => (ok !== null ? ok[k] === 1 : k === len || (text[start + k]! & 0xc0) !== 0x80);
  const ends: number[] = [];
  let s = 0;
  while (s < len) {
    let e = Math.min(s + max, len);
    if (e < len) {
      let cut = -1;
      for (let k = e; k > s + (max >> 1); k--) {
        if (text[start + k - 1] === 0x20 && may(k)) {
          cut = k;
          break;
        }
      }
      if (cut > 0) e = cut;
      else while (e > s && !may(e)) e--;
    }
    ends.push(e);
    s = e;
  }
  return ends;
}

/**
 * For a text holding an escape: ok[k] = 1 where a chunk may end at offset k (not inside an escape, not
 * before a UTF-8 continuation byte). Null when it holds none (most texts): then only the byte at k decides.
 */
function escapeEnds(text: Uint8Array, start: number, len: number): Uint8Array | null {
  // A bounded loop, not indexOf: the text is a range of a batch's bytes, and indexOf would search past it.
  let i0 = start;
  while (i0 < start + len && text[i0] !== 0x5c) i0++;
  if (i0 === start + len) return null;
  // One scratch array, reused: the writer chunks the long strings of every record it seals.
  if (okScratch.length < len + 1) okScratch = new Uint8Array(Math.max(len + 1, 2 * okScratch.length));
  const ok = okScratch.fill(1, 0, len + 1);
  for (let i = 0; i < len; i++) {
    const c = text[start + i]!;
    if (c === 0x5c) {
      const n = i + 1 < len && text[start + i + 1] === 0x75 ? 6 : 2;
      for (let k = 1; k < n && i + k <= len; k++) ok[i + k] = 0;
      i += n - 1;
      continue;
    }
    if ((c & 0xc0) === 0x80) ok[i] = 0;
  }
  return ok;
}

/** The escaped text of a string (its JCS literal without the quotes), as UTF-8. */
export function escapedText(s: string): Uint8Array {
  const lit = encoder.encode(JSON.stringify(s));
  return lit.subarray(1, lit.length - 1);
}

/** The chunks of a string (§4.2) as escaped UTF-8 byte strings, or null when it is not chunked. */
export function stringChunks(s: string): Uint8Array[] | null {
  const text = escapedText(s);
  const ends = chunkEnds(text);
  if (ends === null) return null;
  let start = 0;
  return ends.map((e) => {
    const c = text.subarray(start, e);
    start = e;
    return c;
  });
}

/** The string a disclosed chunk's escaped text stands for (JSON.parse of `"` ‖ chunk ‖ `"`). */
export function chunkString(chunk: Uint8Array): string {
  return JSON.parse('"' + new TextDecoder().decode(chunk) + '"') as string;
}
