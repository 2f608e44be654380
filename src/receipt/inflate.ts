/**
 * Archive bytes in, tar bytes out (spec/RECEIPT.md §3.1, §6): a gzip stream (RFC 1952, detected by its
 * magic 1f 8b) is inflated with the web-standard DecompressionStream, counting output so a decompression
 * bomb is stopped at the documented cap instead of being inflated; anything else is taken as a bare tar.
 * Pure; runs in a browser.
 */
import { GZIP_RATIO_ALLOWANCE, MAX_ARCHIVE_BYTES, MAX_GZIP_RATIO } from './limits.js';
import { concatBytes } from '../bytes.js';

export class InflateLimit extends Error {}
export class InflateError extends Error {}

export type ByteInput = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export async function* chunksOf(input: ByteInput): AsyncGenerator<Uint8Array> {
  if (input instanceof Uint8Array) {
    // Small slices: the bomb check compares output with the compressed bytes fed so far.
    for (let i = 0; i < input.length; i += 1 << 16) yield input.subarray(i, Math.min(input.length, i + (1 << 16)));
    return;
  }
  if (typeof (input as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (input as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        if (!(value instanceof Uint8Array)) throw new InflateError('the input stream yielded something other than bytes');
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
  return { compressed, chunks: compressed ? gunzip(replay()) : capped(replay()) };
}

async function* capped(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > MAX_ARCHIVE_BYTES) throw new InflateLimit(`the archive exceeds ${MAX_ARCHIVE_BYTES} bytes`);
    yield chunk;
  }
}

async function* gunzip(source: AsyncGenerator<Uint8Array>): AsyncGenerator<Uint8Array> {
  const ds = new DecompressionStream('gzip');
  const writer = ds.writable.getWriter();
  const reader = ds.readable.getReader();
  let consumed = 0;
  let stopped = false;
  let pumpError: unknown = null;
  // The pump feeds compressed bytes as fast as the inflater accepts them; the loop below reads output.
  const pump = (async () => {
    try {
      for await (const chunk of source) {
        if (stopped) break;
        await writer.ready;
        consumed += chunk.length;
        await writer.write(chunk);
      }
      if (!stopped) await writer.close();
    } catch (e) {
      pumpError = e;
      try { await writer.abort(e); } catch { /* already errored */ }
    }
  })();
  let produced = 0;
  try {
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch (e) {
        if (pumpError instanceof InflateError || pumpError instanceof InflateLimit) throw pumpError;
        throw new InflateError(`the gzip stream is corrupt: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (r.done) break;
      produced += r.value.length;
      if (produced > MAX_ARCHIVE_BYTES) throw new InflateLimit(`the archive inflates beyond ${MAX_ARCHIVE_BYTES} bytes`);
      if (produced > GZIP_RATIO_ALLOWANCE + MAX_GZIP_RATIO * consumed) {
        throw new InflateLimit(`the gzip stream inflates ${produced} bytes from at most ${consumed}: beyond ${MAX_GZIP_RATIO}:1 after the first ${GZIP_RATIO_ALLOWANCE} bytes (a decompression bomb)`);
      }
      yield r.value;
    }
    if (pumpError) throw pumpError instanceof InflateError || pumpError instanceof InflateLimit ? pumpError : new InflateError(String(pumpError));
  } finally {
    stopped = true;
    reader.cancel().catch(() => {});
    await pump.catch(() => {});
    await source.return(undefined);
  }
}

