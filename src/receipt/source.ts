/**
 * A verified receipt as a read-only ChainSource (src/chain/source.ts), so diff and other consumers read a
 * receipt exactly as they read a journal. The receipt is verified in full first; `lines` and `blob` then
 * re-read the archive with the same strict reader (streaming, bounded memory) and re-check each entry's
 * digest against the verified manifest, so an archive that changed after verification is an error,
 * never silently different data. Pure: the caller supplies a function that opens the archive bytes again.
 */
import { digestBytes, sha256Stream, toHex } from '../canonical/sha256.js';
import { LineSplitter } from '../chain/lines.js';
import { describeLocation } from '../chain/report.js';
import type { ChainHead, ChainSource, SeqRange, StoredLine } from '../chain/source.js';
import type { Genesis } from '../record/formats.js';
import { ReceiptError } from './errors.js';
import { InflateError, openArchive, type ByteInput } from './inflate.js';
import { BLOB_NAME_RE, CHAIN_NAME_RE, type ReceiptManifest } from './manifest.js';
import { partEntryName, partListOf } from './parts.js';
import { FatalProblem } from './problems.js';
import { TarReader, type TarEntry } from './tar-reader.js';
import { verifyReceipt, type ReceiptReport, type VerifyReceiptOptions } from './verify.js';

export interface ReceiptSource extends ChainSource {
  readonly report: ReceiptReport;
  readonly manifest: ReceiptManifest;
}

/**
 * Blobs, and parts, up to this many bytes in total (each kind) are cached after the first call that reads one;
 * beyond, each call re-reads the archive to its entry.
 */
const CACHE_BYTES = 256 * 1024 * 1024;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Verifies the receipt and returns it as a ChainSource; throws ReceiptError RECEIPT_INVALID if it does not verify. */
export async function receiptSource(
  open: () => ByteInput | Promise<ByteInput>,
  options: VerifyReceiptOptions<ReceiptReport> = {},
): Promise<ReceiptSource> {
  const report = await verifyReceipt(await open(), options);
  if (!report.ok || !report.manifest) {
    const p = report.problems[0];
    throw new ReceiptError(
      'RECEIPT_INVALID',
      p
        ? `the receipt does not verify: ${p.code}${describeLocation(p.location) ? ` at ${describeLocation(p.location)}` : ''}: ${p.message}`
        : 'the receipt does not verify',
    );
  }
  return new VerifiedReceipt(open, report, report.manifest);
}

const changed = (name: string): ReceiptError =>
  new ReceiptError('SOURCE_CHANGED', `receipt entry ${name} changed after it was verified`);

/** It verified a moment ago: whatever no longer reads means the archive changed. */
function asChanged(e: unknown): unknown {
  if (e instanceof FatalProblem) return changed(e.location.file ?? 'the archive');
  if (e instanceof InflateError)
    return new ReceiptError('SOURCE_CHANGED', `the receipt changed after it was verified: ${e.message}`);
  return e;
}

class VerifiedReceipt implements ReceiptSource {
  readonly genesis: Genesis;
  private blobCache: Map<string, Uint8Array> | null = null;
  private partCache: Map<string, Uint8Array> | null = null;
  /** The manifest's blob digests and part addresses, looked up once per call (a receipt may list millions). */
  private listedBlobs: Set<string> | null = null;
  private listedParts: Set<string> | null = null;

  constructor(
    private readonly open: () => ByteInput | Promise<ByteInput>,
    readonly report: ReceiptReport,
    readonly manifest: ReceiptManifest,
  ) {
    this.genesis = manifest.genesis;
  }

  async head(): Promise<ChainHead | null> {
    return { seq: this.manifest.head.seq, step_hash: this.manifest.head.step_hash };
  }

  /** The archive's entries in order; the consumer reads each entry's data (or skips it) before the next. */
  private async *entries(): AsyncGenerator<{ entry: TarEntry; tar: TarReader }> {
    const { chunks } = await openArchive(await this.open());
    const tar = new TarReader(chunks, Number.POSITIVE_INFINITY, 'a verified receipt');
    try {
      for (let entry = await tar.next(); entry !== null; entry = await tar.next()) yield { entry, tar };
    } finally {
      await chunks.return(undefined);
    }
  }

  async *lines(range: SeqRange = {}): AsyncIterable<StoredLine> {
    try {
      yield* this.readLines(range);
    } catch (e) {
      throw asChanged(e);
    }
  }

  private async *readLines(range: SeqRange): AsyncGenerator<StoredLine> {
    const m = this.manifest;
    const from = range.from ?? m.range.from;
    const to = range.to ?? m.range.to;
    const byName = new Map(m.chain.map((c) => [c.name, c]));
    let seq = m.range.from;
    for await (const { entry, tar } of this.entries()) {
      const listed = byName.get(entry.name);
      const first = listed ? Number(CHAIN_NAME_RE.exec(entry.name)![1]) : 0;
      if (!listed || first + listed.steps - 1 < from) {
        if (listed) seq = first + listed.steps;
        await tar.skip(entry);
        continue;
      }
      if (first > to) return;
      // Stream the entry in 64 KiB pieces, yielding each complete line: memory is one line plus a piece.
      // The entry is read to its end even when the range ends inside it: its digest is what says that
      // the lines yielded are the ones verified.
      const h = sha256Stream();
      const splitter = new LineSplitter();
      for await (const piece of tar.dataPieces(entry)) {
        h.update(piece);
        for (const l of splitter.push(piece)) {
          if (seq >= from && seq <= to) yield { segment: entry.name, seq, text: decoder.decode(l.bytes) };
          seq++;
        }
      }
      if ('sha256:' + toHex(h.digest()) !== listed.digest || splitter.end() !== null || splitter.lines !== listed.steps)
        throw changed(entry.name);
      if (seq > to) return;
      await tar.padding(entry);
    }
  }

  /**
   * A stepchain/v3 receipt's parts, read as a journal's are (`parts.store.get`), so replay and diff resolve
   * references in it; the reader that asks checks each file against the reference (PARTS.md §9).
   */
  readonly parts = { store: { get: (address: string): Promise<Uint8Array | null> => this.part(address) } };

  private async part(address: string): Promise<Uint8Array | null> {
    const parts = partListOf(this.manifest);
    if (!(this.listedParts ??= new Set(parts.map((p) => p.address))).has(address)) return null;
    if (this.partCache) return this.partCache.get(address) ?? null;
    // Diff and replay ask for each part a conversation references; read one at a time, every part was a pass
    // over the whole archive (inflated again, for a .tar.gz), so a chat's receipt cost passes by the hundred.
    const cache = parts.reduce((n, p) => n + p.size, 0) <= CACHE_BYTES ? new Map<string, Uint8Array>() : null;
    const name = partEntryName(address);
    let found: Uint8Array | null = null;
    try {
      for await (const { entry, tar } of this.entries()) {
        const listed = entry.name.startsWith('parts/') && this.listedParts.has('sha256:' + entry.name.slice(6));
        if (!listed || (!cache && entry.name !== name)) {
          await tar.skip(entry);
          continue;
        }
        // What a part holds is checked by the reader that asks, against the reference (PARTS.md §9).
        const bytes = Uint8Array.from(await tar.readData(entry));
        cache?.set('sha256:' + entry.name.slice(6), bytes);
        if (entry.name === name) found = bytes;
        if (!cache && found) break;
      }
    } catch (e) {
      throw asChanged(e);
    }
    if (cache) this.partCache = cache;
    return found;
  }

  async blob(digest: string): Promise<Uint8Array | null> {
    try {
      return await this.readBlob(digest);
    } catch (e) {
      throw asChanged(e);
    }
  }

  private async readBlob(digest: string): Promise<Uint8Array | null> {
    const m = this.manifest;
    if (!(this.listedBlobs ??= new Set(m.blobs.map((b) => b.digest))).has(digest)) return null;
    if (this.blobCache) return this.blobCache.get(digest) ?? null;
    const cache = m.blobs.reduce((n, b) => n + b.size, 0) <= CACHE_BYTES ? new Map<string, Uint8Array>() : null;
    let found: Uint8Array | null = null;
    for await (const { entry, tar } of this.entries()) {
      if (!BLOB_NAME_RE.test(entry.name) || (!cache && entry.name !== `blobs/${digest.slice(7)}`)) {
        await tar.skip(entry);
        continue;
      }
      const bytes = Uint8Array.from(await tar.readData(entry));
      const d = 'sha256:' + entry.name.slice(6);
      if (digestBytes(bytes) !== d) throw changed(entry.name);
      cache?.set(d, bytes);
      if (d === digest) found = bytes;
      if (!cache && found) break;
    }
    if (cache) this.blobCache = cache;
    return found;
  }
}
