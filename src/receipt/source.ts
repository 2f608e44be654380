/**
 * A verified receipt as a read-only ChainSource (src/chain/source.ts), so diff and other consumers read a
 * receipt exactly as they read a journal. The receipt is verified in full first; `lines` and `blob` then
 * re-read the archive (streaming, bounded memory) and re-check each entry's digest against the verified
 * manifest, so an archive that changed after verification is an error, never silently different data.
 * Pure: the caller supplies a function that opens the archive bytes again.
 */
import { digestBytes, sha256Stream, toHex } from '../canonical/sha256.js';
import type { Genesis } from '../record/index.js';
import type { ChainHead, ChainSource, SeqRange, StoredLine } from '../chain/source.js';
import { describeLocation } from '../chain/report.js';
import { ReceiptError } from './errors.js';
import { InflateError, openArchive, type ByteInput } from './inflate.js';
import { BLOB_NAME_RE, CHAIN_NAME_RE, type ReceiptManifest } from './manifest.js';
import { BLOCK, inspectHeader, isZeroBlock } from './tar.js';
import { ByteReader, verifyReceipt, type ReceiptReport, type VerifyReceiptOptions } from './verify.js';
import { concatBytes } from '../bytes.js';

export interface ReceiptSource extends ChainSource {
  readonly report: ReceiptReport<string>;
  readonly manifest: ReceiptManifest;
}

/** Blobs up to this many bytes in total are cached after the first blob() call; beyond, each call re-reads. */
const BLOB_CACHE_BYTES = 256 * 1024 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Verifies the receipt and returns it as a ChainSource; throws ReceiptError RECEIPT_INVALID if it does not verify. */
export async function receiptSource(open: () => ByteInput | Promise<ByteInput>, options: VerifyReceiptOptions<ReceiptReport<string>> = {}): Promise<ReceiptSource> {
  const report = await verifyReceipt(await open(), options);
  if (!report.ok || !report.manifest) {
    const p = report.problems[0];
    throw new ReceiptError('RECEIPT_INVALID', p ? `the receipt does not verify: ${p.code}${describeLocation(p.location) ? ` at ${describeLocation(p.location)}` : ''}: ${p.message}` : 'the receipt does not verify');
  }
  const manifest = report.manifest;
  const changed = (name: string): ReceiptError => new ReceiptError('SOURCE_CHANGED', `receipt entry ${name} changed after it was verified`);
  /** The archive no longer inflates (it verified a moment ago): it changed. */
  const unreadable = (e: unknown): never => {
    throw e instanceof InflateError ? new ReceiptError('SOURCE_CHANGED', `the receipt changed after it was verified: ${e.message}`) : e;
  };

  /** The archive's entries in order; the consumer reads exactly `size` data bytes from `reader` before the next. */
  async function* entries(): AsyncGenerator<{ name: string; size: number; reader: ByteReader }> {
    const { chunks } = await openArchive(await open());
    try {
      const reader = new ByteReader(chunks);
      for (;;) {
        const header = await reader.read(BLOCK).catch(unreadable);
        if (header.length < BLOCK || isZeroBlock(header)) return;
        const v = inspectHeader(header);
        if (!v.ok) throw changed(v.name ?? 'a header');
        yield { name: v.name, size: v.size, reader };
        const pad = (BLOCK - (v.size % BLOCK)) % BLOCK;
        if (pad) await reader.read(pad).catch(unreadable);
      }
    } finally {
      await chunks.return(undefined);
    }
  }
  const skip = async (reader: ByteReader, size: number): Promise<void> => {
    for (let left = size; left > 0;) {
      const got = await reader.read(Math.min(left, 1 << 16)).catch(unreadable);
      if (got.length === 0) throw changed('the archive');
      left -= got.length;
    }
  };

  let blobCache: Map<string, Uint8Array> | null = null;
  const blobTotal = manifest.blobs.reduce((n, b) => n + b.size, 0);

  return {
    report,
    manifest,
    genesis: manifest.genesis as Genesis,
    async head(): Promise<ChainHead | null> {
      return { seq: manifest.head.seq, step_hash: manifest.head.step_hash };
    },
    async *lines(range: SeqRange = {}): AsyncIterable<StoredLine> {
      const from = range.from ?? manifest.range.from;
      const to = range.to ?? manifest.range.to;
      const byName = new Map(manifest.chain.map((c) => [c.name, c]));
      let seq = manifest.range.from;
      for await (const { name, size, reader } of entries()) {
        const entry = byName.get(name);
        const first = entry ? Number(CHAIN_NAME_RE.exec(name)![1]) : 0;
        if (!entry || first + entry.steps - 1 < from) {
          if (entry) seq = first + entry.steps;
          await skip(reader, size);
          continue;
        }
        if (first > to) return;
        // Stream the entry in 64 KiB pieces, yielding each complete line: memory is one line plus a piece.
        const h = sha256Stream();
        let partial: Uint8Array = new Uint8Array(0);
        let count = 0;
        for (let left = size; left > 0;) {
          const piece = Uint8Array.from(await reader.read(Math.min(left, 1 << 16)).catch(unreadable));
          if (piece.length === 0) throw changed(name);
          left -= piece.length;
          h.update(piece);
          let start = 0;
          for (;;) {
            const nl = piece.indexOf(0x0a, start);
            if (nl < 0) break;
            const part = piece.subarray(start, nl);
            const bytes = partial.length ? concatBytes([partial, part]) : part;
            partial = new Uint8Array(0);
            start = nl + 1;
            count++;
            if (seq >= from && seq <= to) yield { segment: name, seq, text: decoder.decode(bytes) };
            seq++;
            if (seq > to) return;
          }
          if (start < piece.length) partial = concatBytes([partial, piece.subarray(start)]);
        }
        if ('sha256:' + toHex(h.digest()) !== entry.digest || partial.length || count !== entry.steps) throw changed(name);
      }
    },
    async blob(digest: string): Promise<Uint8Array | null> {
      const listed = manifest.blobs.find((b) => b.digest === digest);
      if (!listed) return null;
      if (blobCache) return blobCache.get(digest) ?? null;
      const cache = blobTotal <= BLOB_CACHE_BYTES ? new Map<string, Uint8Array>() : null;
      let found: Uint8Array | null = null;
      for await (const { name, size, reader } of entries()) {
        if (!BLOB_NAME_RE.test(name) || (!cache && name !== `blobs/${digest.slice(7)}`)) {
          await skip(reader, size);
          continue;
        }
        const bytes = Uint8Array.from(await reader.read(size).catch(unreadable));
        const d = 'sha256:' + name.slice(6);
        if (digestBytes(bytes) !== d) throw changed(name);
        cache?.set(d, bytes);
        if (d === digest) found = bytes;
        if (!cache && found) break;
      }
      if (cache) blobCache = cache;
      return found;
    },
  };
}

