/**
 * The receipt writer (spec/RECEIPT.md §3–§5). Two passes over the chain keep memory bounded by the
 * longest line, not the journal: `planReceipt` verifies the chain (a receipt is never written for a broken
 * one), measures every chain entry (size, steps, SHA-256) because a tar header states its size up front,
 * collects and checks the referenced blobs, and builds the manifest and its signature; `writeReceipt`
 * streams the archive, re-hashing every entry so a source that changed between the passes is an error,
 * not a receipt that fails verification later. Same input, same bytes: no clock, no randomness (Ed25519
 * signatures are deterministic). Node-only (tar-stream, node:crypto); the verifier never imports it.
 *
 * The core takes a genesis, a chain start, lines, blobs and optional extra manifest members, so a
 * published (redacted, re-anchored) chain can be packaged by the same code.
 */
import { pack as tarPack, type Header as TarHeader } from 'tar-stream';
import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from '../canonical/jcs.js';
import { digestBytes, isDigest } from '../canonical/sha256.js';
import { genesisHash, type Genesis, type Json } from '../record/index.js';
import { describeLocation } from '../chain/report.js';
import type { StoredLine } from '../chain/source.js';
import { ChainVerifier } from '../chain/verifier.js';
import { signManifest } from './dsse.js';
import { ReceiptError } from './errors.js';
import { keyIdOf, parsePrivateKey } from './keys.js';
import { MAX_ARCHIVE_BYTES, MAX_BLOB_BYTES, MAX_CHAIN_ENTRY_BYTES, MAX_ENTRIES, MAX_MANIFEST_BYTES, MAX_SIGNATURE_BYTES } from './limits.js';
import {
  BASE_MEMBERS, MANIFEST_NAME, RECEIPT_FORMAT, SIGNATURE_NAME, blobEntryName, chainEntryName, declaredArchiveBytes,
  type BlobEntry, type ChainEntry, type ReceiptManifest,
} from './manifest.js';
import { EXPORTER } from './version.js';
import { ed25519 } from '@noble/curves/ed25519.js';

export interface ReceiptWriterInput {
  genesis: Genesis;
  /**
   * The chain's stored lines in seq order, from its start through at least `to`; called once per pass.
   * Lines before `from` are verified, not written.
   */
  lines: () => AsyncIterable<StoredLine>;
  /** Where `lines()` starts when it is not the genesis (a re-anchored chain): its first seq and prev_hash. */
  start?: { seq: number; prev_hash: string };
  from: number;
  to: number;
  blob: (digest: string) => Promise<Uint8Array | null>;
  /** Extra top-level manifest members (I-JSON; may not reuse a base member's name). */
  extra?: Record<string, Json>;
  /** Ed25519 signing key: 32 seed bytes or a PKCS#8 PEM. */
  sign?: Uint8Array | string;
  /** The manifest's exporter string; defaults to this package's name and version. */
  exporter?: string;
}

export interface ReceiptPlan {
  manifest: ReceiptManifest;
  manifestBytes: Uint8Array;
  signatureBytes: Uint8Array | null;
  /** digest of manifestBytes: identifies the receipt's content. */
  manifestDigest: string;
  signedBy: string | null;
  input: ReceiptWriterInput;
}

const encoder = new TextEncoder();

function chainInvalid(message: string): ReceiptError {
  return new ReceiptError('CHAIN_INVALID', message, { hint: 'run `stepchain verify` on the journal; a receipt is only written for a chain that verifies' });
}

/** Pass 1: verify, measure, check blobs, build and sign the manifest. */
export async function planReceipt(input: ReceiptWriterInput): Promise<ReceiptPlan> {
  const { from, to } = input;
  const startSeq = input.start?.seq ?? 0;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < startSeq || to < from) {
    throw new ReceiptError('RANGE_INVALID', `range ${from}..${to} is not a range of seqs from ${startSeq} with from ≤ to`);
  }
  if (input.start && (!Number.isSafeInteger(input.start.seq) || input.start.seq < 0 || !isDigest(input.start.prev_hash))) {
    throw new ReceiptError('ARGUMENT_INVALID', 'start must be {seq: <non-negative integer>, prev_hash: "sha256:<hex>"}');
  }
  const privateKey = input.sign === undefined ? null : parsePrivateKey(input.sign);
  const blobs = new Map<string, number>();
  let blobConflict: string | null = null;
  let lastHash: string | null = input.start?.prev_hash ?? genesisHash(input.genesis);
  let prevHash: string | null = null;
  let inRange = false;
  let currentSeq = -1;
  let seqConflict: string | null = null;
  const verifier = new ChainVerifier({
    ...(input.start ? { start: input.start } : { genesis: input.genesis }),
    maxProblems: 10,
    onLine: (line) => {
      lastHash = line.step_hash;
      if (line.seq !== currentSeq && seqConflict === null) seqConflict = `the source says seq ${currentSeq} for a line whose seq is ${String(line.seq)}`;
      if (inRange) {
        for (const ref of line.blobs) {
          const known = blobs.get(ref.digest);
          if (known !== undefined && known !== ref.size && blobConflict === null) blobConflict = `blob ${ref.digest} is referenced with sizes ${known} and ${ref.size}`;
          blobs.set(ref.digest, ref.size);
        }
      }
    },
  });
  const chain: ChainEntry[] = [];
  let entry: { name: string; size: number; steps: number; hash: Hash; segment: string } | null = null;
  const close = (): void => {
    if (entry) chain.push({ digest: 'sha256:' + entry.hash.digest('hex'), name: entry.name, size: entry.size, steps: entry.steps });
    entry = null;
  };
  let segment: string | null = null;
  let count = 0;
  let lastSeq = startSeq - 1;
  for await (const line of input.lines()) {
    if (line.seq > to) break;
    if (line.segment !== segment) {
      verifier.beginSegment(line.segment);
      segment = line.segment;
    }
    if (line.seq >= from && !inRange) {
      inRange = true;
      prevHash = lastHash;
    }
    const bytes = encoder.encode(line.text + '\n');
    currentSeq = line.seq;
    lastHash = null;
    verifier.line(bytes.subarray(0, bytes.length - 1), true); // sets lastHash through onLine
    lastSeq = line.seq;
    if (!inRange) continue;
    count++;
    if (entry === null || entry.segment !== line.segment || entry.size + bytes.length > MAX_CHAIN_ENTRY_BYTES) {
      close();
      entry = { name: chainEntryName(line.seq), size: 0, steps: 0, hash: createHash('sha256'), segment: line.segment };
    }
    entry.size += bytes.length;
    entry.steps++;
    entry.hash.update(bytes);
  }
  close();
  const report = verifier.finish();
  if (!report.ok) {
    const p = report.problems[0]!;
    throw chainInvalid(`the chain does not verify: ${p.code} at ${describeLocation(p.location)}: ${p.message}`);
  }
  if (seqConflict) throw chainInvalid(seqConflict);
  if (count === 0) throw new ReceiptError('EMPTY_RANGE', `the journal holds no step in ${from}..${to}`);
  if (lastSeq !== to) throw new ReceiptError('RANGE_INVALID', `the journal ends at seq ${lastSeq}; the range asks for steps up to ${to}`);
  if (blobConflict) throw new ReceiptError('BLOB_CORRUPT', blobConflict);
  if (prevHash === null || report.head === null) throw chainInvalid('the range has no readable start or head');

  const blobList: BlobEntry[] = [...blobs.entries()].map(([digest, size]) => ({ digest, size })).sort((a, b) => (a.digest < b.digest ? -1 : 1));
  const entries = 2 + chain.length + blobList.length;
  if (entries > MAX_ENTRIES) throw new ReceiptError('LIMIT_EXCEEDED', `the receipt would hold ${entries} entries; a verifier accepts at most ${MAX_ENTRIES}`, { hint: 'export a shorter range' });
  for (const b of blobList) await fetchBlob(input, b);

  const base: ReceiptManifest = {
    blobs: blobList,
    chain,
    exporter: input.exporter ?? EXPORTER,
    format: RECEIPT_FORMAT,
    genesis: input.genesis,
    head: { seq: to, step_hash: report.head },
    range: { from, prev_hash: prevHash, to },
  };
  const manifest: ReceiptManifest = { ...base };
  for (const [k, v] of Object.entries(input.extra ?? {})) {
    if ((BASE_MEMBERS as readonly string[]).includes(k)) throw new ReceiptError('MANIFEST_INVALID', `extra manifest member ${JSON.stringify(k)} would replace a base member`);
    manifest[k] = v;
  }
  let text: string;
  try {
    text = canonicalJson(manifest);
  } catch (e) {
    throw new ReceiptError('MANIFEST_INVALID', `the manifest is not I-JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const manifestBytes = encoder.encode(text);
  if (manifestBytes.length > MAX_MANIFEST_BYTES) throw new ReceiptError('LIMIT_EXCEEDED', `the manifest would be ${manifestBytes.length} bytes; a verifier accepts at most ${MAX_MANIFEST_BYTES}`, { hint: 'export a shorter range' });
  let signatureBytes: Uint8Array | null = null;
  let signedBy: string | null = null;
  if (privateKey) {
    signatureBytes = encoder.encode(canonicalJson(signManifest(manifestBytes, privateKey)));
    if (signatureBytes.length > MAX_SIGNATURE_BYTES) throw new ReceiptError('LIMIT_EXCEEDED', `the signature entry would be ${signatureBytes.length} bytes; the limit is ${MAX_SIGNATURE_BYTES}`);
    signedBy = keyIdOf(ed25519.getPublicKey(privateKey));
  }
  const declared = declaredArchiveBytes(manifestBytes.length, signatureBytes ? signatureBytes.length : null, manifest);
  if (declared > MAX_ARCHIVE_BYTES) throw new ReceiptError('LIMIT_EXCEEDED', `the receipt would be ${declared} bytes uncompressed; a verifier accepts at most ${MAX_ARCHIVE_BYTES}`, { hint: 'export a shorter range' });
  return { manifest, manifestBytes, signatureBytes, manifestDigest: digestBytes(manifestBytes), signedBy, input };
}

async function fetchBlob(input: ReceiptWriterInput, b: BlobEntry): Promise<Uint8Array> {
  if (b.size > MAX_BLOB_BYTES) throw new ReceiptError('LIMIT_EXCEEDED', `blob ${b.digest} is ${b.size} bytes; a verifier accepts at most ${MAX_BLOB_BYTES}`);
  const bytes = await input.blob(b.digest);
  if (bytes === null) throw new ReceiptError('BLOB_MISSING', `a step references blob ${b.digest}, which the journal does not hold`);
  if (bytes.length !== b.size || digestBytes(bytes) !== b.digest) {
    throw new ReceiptError('BLOB_CORRUPT', `the journal's copy of blob ${b.digest} does not match its digest and size (${bytes.length} bytes)`);
  }
  return bytes;
}

/** How many characters of lines pass 2 gathers before writing them to the archive (a line is never split). */
const FLUSH_CHARS = 64 * 1024;

function header(name: string, size: number): TarHeader {
  // Every field explicit: tar-stream's defaults would put the current time into mtime.
  return { name, size, mode: 0o644, uid: 0, gid: 0, mtime: new Date(0), type: 'file', linkname: '', uname: '', gname: '', devmajor: 0, devminor: 0 };
}

/** Pass 2: the archive's bytes (an uncompressed ustar stream), in bounded chunks. */
export async function* writeReceipt(plan: ReceiptPlan): AsyncGenerator<Uint8Array> {
  const pack = tarPack();
  let stopped = false;
  const whole = (name: string, bytes: Uint8Array): Promise<void> =>
    new Promise((resolve, reject) => {
      // Entry errors reach us through the callback (and the pack); the listener keeps a destroyed entry quiet.
      pack.entry(header(name, bytes.length), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), (err) => (err ? reject(err) : resolve())).on('error', () => {});
    });
  const produce = async (): Promise<void> => {
    await whole(MANIFEST_NAME, plan.manifestBytes);
    if (plan.signatureBytes) await whole(SIGNATURE_NAME, plan.signatureBytes);
    const { input, manifest } = plan;
    let index = 0;
    type Current = { w: ReturnType<typeof pack.entry>; done: Promise<void>; left: number; hash: Hash; size: number; pending: string[]; pendingChars: number };
    let current: Current | null = null;
    // Lines are written to the entry in runs of about FLUSH_CHARS, not one by one: each write is a trip
    // through the tar stream and out to the consumer, and per line that cost more than reading the line.
    const flush = async (c: Current): Promise<void> => {
      if (c.pending.length === 0) return;
      const bytes = Buffer.from(c.pending.join('\n') + '\n', 'utf8');
      c.pending = [];
      c.pendingChars = 0;
      c.hash.update(bytes);
      c.size += bytes.length;
      if (c.size > manifest.chain[index]!.size) throw new ReceiptError('SOURCE_CHANGED', `chain entry ${manifest.chain[index]!.name} grew between the export's passes`);
      if (!c.w.write(bytes)) await drained(c.w);
    };
    const finishEntry = async (): Promise<void> => {
      const c = current!;
      await flush(c);
      (c.w as unknown as { end(): void }).end();
      await c.done;
      const e = manifest.chain[index]!;
      if ('sha256:' + c.hash.digest('hex') !== e.digest || c.size !== e.size) {
        throw new ReceiptError('SOURCE_CHANGED', `chain entry ${e.name} changed between the export's passes`);
      }
      index++;
      current = null;
    };
    for await (const line of input.lines()) {
      if (stopped) return;
      if (line.seq < input.from) continue;
      if (line.seq > input.to) break;
      if (current === null) {
        const e = manifest.chain[index];
        if (!e) throw new ReceiptError('SOURCE_CHANGED', 'the source yields more steps than it did in the first pass');
        let settle!: (err?: Error | null) => void;
        const done = new Promise<void>((resolve, reject) => { settle = (err) => (err ? reject(err) : resolve()); });
        const w = pack.entry(header(e.name, e.size), (err) => settle(err));
        w.on('error', () => {});
        done.catch(() => {}); // awaited in finishEntry; when the consumer stops first, nobody will
        current = { w, done, left: e.steps, hash: createHash('sha256'), size: 0, pending: [], pendingChars: 0 };
      }
      const c: Current = current;
      c.pending.push(line.text);
      c.pendingChars += line.text.length + 1;
      if (--c.left === 0) await finishEntry();
      else if (c.pendingChars >= FLUSH_CHARS) await flush(c);
    }
    if (current !== null || index !== manifest.chain.length) throw new ReceiptError('SOURCE_CHANGED', 'the source yields fewer steps than it did in the first pass');
    for (const b of manifest.blobs) {
      if (stopped) return;
      await whole(blobEntryName(b.digest), await fetchBlob(input, b).catch((e: unknown) => {
        throw e instanceof ReceiptError && e.code !== 'LIMIT_EXCEEDED' ? new ReceiptError('SOURCE_CHANGED', `${e.message} (it was present in the first pass)`) : e;
      }));
    }
    pack.finalize();
  };
  const producer = produce().catch((err: unknown) => {
    pack.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  try {
    for await (const chunk of pack as AsyncIterable<Uint8Array>) yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
  } finally {
    stopped = true;
    if (!pack.destroyed) (pack as unknown as { destroy(): void }).destroy();
    // Not awaited: a producer blocked on a destroyed entry never resumes; it checks `stopped` if it does,
    // and its errors were already routed to the pack.
    void producer;
  }
}

/**
 * Resolves when a backpressured entry drains (or closes). Both listeners are removed whichever fires:
 * with two `once` listeners the unfired `close` one stayed, one more per backpressure event, so a large
 * entry leaked listeners and memory in proportion to its size (MaxListenersExceededWarning in bench/).
 */
function drained(w: { on(event: 'drain' | 'close', fn: () => void): unknown; off(event: 'drain' | 'close', fn: () => void): unknown }): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      w.off('drain', done);
      w.off('close', done);
      resolve();
    };
    w.on('drain', done);
    w.on('close', done);
  });
}

/** Plans and writes in one call. */
export async function* receiptTar(input: ReceiptWriterInput): AsyncGenerator<Uint8Array> {
  yield* writeReceipt(await planReceipt(input));
}
