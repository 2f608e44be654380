/**
 * Archive bytes in, tar bytes out (spec/RECEIPT.md §3.1): an input that starts with the gzip magic 1f 8b is
 * exactly one gzip member (RFC 1952) and nothing after it; anything else is taken as a bare tar. Bounds on
 * the tar bytes (§6.1) are the reader's business: this module inflates only as far as it is asked to.
 *
 * Why not the platform's DecompressionStream: implementations disagree on what follows a member (Node 20
 * silently drops everything after a member when the next byte is 0x00, browsers refuse a second member),
 * and none says where a member ends — so "\x00 + a second member holding evil.txt" verified here while
 * other tar readers extracted it. pako's zlib port exposes zlib's own z_stream, whose next_in/avail_in say
 * exactly where the member ended, and its gzip mode checks the header, CRC-32 and ISIZE as zlib does.
 * Pure; runs in a browser.
 */
import {
  ZStream,
  Z_BUF_ERROR,
  Z_NO_FLUSH,
  Z_OK,
  Z_STREAM_END,
  zlibInflate,
  zlibInflateEnd,
  zlibInflateInit2,
} from 'pako';
import { concatBytes } from '../bytes.js';

export class InflateError extends Error {}

export type ByteInput = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Output is produced in pieces of this size: the inflater never runs further ahead of the reader. */
const OUT_CHUNK = 64 * 1024;
/** zlib windowBits for "gzip wrapper only, 32 KiB window" (no zlib-wrapper auto-detection). */
const GZIP_ONLY = 16 + 15;

export async function* chunksOf(input: ByteInput): AsyncGenerator<Uint8Array> {
  if (input instanceof Uint8Array) {
    yield input;
    return;
  }
  if (typeof (input as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (input as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        if (!(value instanceof Uint8Array))
          throw new InflateError('the input stream yielded something other than bytes');
        yield value;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }
  for await (const chunk of input as AsyncIterable<Uint8Array>) {
    if (!(chunk instanceof Uint8Array)) throw new InflateError('the input yielded something other than bytes');
    yield chunk;
  }
}

export interface Inflated {
  compressed: boolean;
  chunks: AsyncGenerator<Uint8Array>;
}

/** Peeks at the first bytes and returns the tar stream, inflated when the input is gzip. */
export async function openArchive(input: ByteInput): Promise<Inflated> {
  const source = chunksOf(input);
  const head: Uint8Array[] = [];
  let have = 0;
  while (have < 2) {
    const r = await source.next();
    if (r.done) break;
    head.push(r.value);
    have += r.value.length;
  }
  const first = head.length === 0 ? new Uint8Array(0) : head.length === 1 ? head[0]! : concatBytes(head);
  async function* replay(): AsyncGenerator<Uint8Array> {
    try {
      if (first.length) yield first;
      for (;;) {
        const r = await source.next();
        if (r.done) return;
        yield r.value;
      }
    } finally {
      await source.return(undefined);
    }
  }
  const compressed = first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b;
  return { compressed, chunks: compressed ? gunzip(replay()) : replay() };
}

/**
 * Inflates one gzip member and refuses any byte after it (a second member, zero padding, anything). Output
 * comes in fresh buffers of at most OUT_CHUNK bytes, so a consumer may keep what it was given.
 */
async function* gunzip(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const strm = new ZStream();
  if (zlibInflateInit2(strm, GZIP_ONLY) !== Z_OK) throw new InflateError('the inflater could not start');
  let consumed = 0;
  let ended = false;
  try {
    for await (const chunk of source) {
      if (chunk.length === 0) continue;
      if (ended) throw trailing(consumed, chunk.length);
      strm.input = chunk;
      strm.next_in = 0;
      strm.avail_in = chunk.length;
      // Until this chunk is used up, or a full output buffer says more output may be pending.
      for (let full = true; !ended && (strm.avail_in > 0 || full);) {
        strm.output = new Uint8Array(OUT_CHUNK);
        strm.next_out = 0;
        strm.avail_out = OUT_CHUNK;
        const before = strm.avail_in;
        const status = zlibInflate(strm, Z_NO_FLUSH);
        consumed += before - strm.avail_in;
        if (status === Z_STREAM_END) ended = true;
        else if (status !== Z_OK && status !== Z_BUF_ERROR) {
          throw new InflateError(
            `the gzip stream is corrupt at compressed byte ${consumed}: ${strm.msg || `zlib status ${status}`}`,
          );
        }
        const produced = OUT_CHUNK - strm.avail_out;
        full = strm.avail_out === 0;
        if (produced > 0) yield strm.output.subarray(0, produced);
        if (status === Z_BUF_ERROR && !full) {
          // No progress possible: zlib wants more input (it never leaves input unread with room to write).
          if (strm.avail_in > 0) throw new InflateError(`the inflater stalled at compressed byte ${consumed}`);
          break;
        }
      }
      if (ended && strm.avail_in > 0) throw trailing(consumed, strm.avail_in);
    }
    if (!ended)
      throw new InflateError(`the gzip stream ends inside its member after ${consumed} compressed bytes (truncated)`);
  } finally {
    zlibInflateEnd(strm);
  }
}

function trailing(memberBytes: number, more: number): InflateError {
  return new InflateError(
    `bytes follow the gzip member, which ends at byte ${memberBytes} (at least ${more} more): a receipt is exactly one gzip member and nothing after it — not zeros, not a second member`,
  );
}
