/**
 * The Node shell around the receipt core: files and gzip (key files: key-files.ts). Everything that decides validity
 * lives in the pure modules; this file only moves bytes. (spec/RECEIPT.md §3.1 for the gzip profile.)
 */
import { lineageMember } from './lineage.js';
import { partSourceOf } from './parts.js';
import { open, rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { withAppendsHeld, type ChainSource } from '../chain/source.js';
import { ReceiptError } from './errors.js';
import { StepchainError } from '../errors.js';
import type { KeyFileInput, KeyInput } from './keys.js';
import { signingKey } from './key-files.js';
import { verifyReceipt, type ByteInput, type ReceiptReport, type VerifyReceiptOptions } from './verify.js';
import { planReceipt, writeReceipt, type ReceiptPlan, type ReceiptWriterInput } from './writer.js';
import type { Json } from '../record/index.js';
import { receiptSource, type ReceiptSource } from './source.js';
import { concatBytes } from '../bytes.js';
import { afterLiveErasure, describeErasedSince, erasedSince, lineReader } from '../record/v3/erasure-pending.js';
import { capabilitiesOf } from '../record/formats.js';
import { deterministicGzip } from './gzip.js';
import { removeStaleTemps } from './stale-temps.js';

export { keygen, readKeyFile, readPublicKeyFile, signingKey, type KeygenResult } from './key-files.js';

export interface ExportOptions {
  /** Output path; gzip-compressed when it ends in .tar.gz or .tgz. */
  out: string;
  /** First seq, inclusive (default 0). */
  from?: number;
  /** Last seq, inclusive (default the journal's head). */
  to?: number;
  /** Sign the manifest: 32 seed bytes, { pem } holding a PKCS#8 PEM, or { keyFile } naming a PEM file. */
  sign?: KeyFileInput;
  /** Extra manifest members an extension defines (a transparency proof: spec/RECEIPT.md §4.5). */
  extra?: Record<string, Json>;
}

export interface ExportResult {
  out: string;
  bytes: number;
  compressed: boolean;
  manifest_digest: string;
  signed_by: string | null;
  range: { from: number; to: number; prev_hash: string };
  head: { seq: number; step_hash: string };
  entries: number;
}

/** Resolves the export options against a source into the writer core's input. */
export async function receiptInput(
  source: ChainSource,
  options: { from?: number; to?: number; sign?: KeyInput; extra?: Record<string, Json> } = {},
): Promise<ReceiptWriterInput> {
  const head = await source.head();
  if (head === null) throw new ReceiptError('EMPTY_RANGE', 'the journal holds no step; there is nothing to prove');
  const from = options.from ?? 0;
  const to = options.to ?? head.seq;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from || to > head.seq) {
    throw new ReceiptError(
      'RANGE_INVALID',
      `range ${String(from)}..${String(to)} is not within the journal's steps 0..${head.seq} with from ≤ to`,
    );
  }
  return {
    genesis: source.genesis,
    lines: () => source.lines({ from: 0, to }),
    // To the journal's end as it is when read, not the head read above: an erase may record its erasure past
    // that head while the range is read, and the export must see the record (ERASURE.md §4.1, §6.5).
    after: () => source.lines({ from: to + 1 }),
    journalLines: true,
    from,
    to,
    blob: (d) => source.blob(d),
    parts: partSourceOf(source),
    ...(options.sign === undefined ? {} : { sign: options.sign }),
    ...withLineage(source, options.extra),
  };
}

/** The caller's extra members, with a v3 fork's lineage (spec/APPROVALS.md §4.1): its receipt says it is a fork. */
function withLineage(source: ChainSource, extra: Record<string, Json> | undefined): { extra?: Record<string, Json> } {
  const lineage = lineageMember(source);
  if (lineage === null) return extra === undefined ? {} : { extra };
  return { extra: { ...lineage, ...extra } };
}

/** The receipt as an uncompressed tar held in memory (tests, vectors, small journals). */
export async function receiptBytes(
  source: ChainSource,
  options: { from?: number; to?: number; sign?: KeyInput; extra?: Record<string, Json> } = {},
): Promise<Uint8Array> {
  const plan = await planReceipt(await receiptInput(source, options));
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

/** Writes a receipt file (atomically: a temporary file renamed into place). */
export async function exportReceipt(source: ChainSource, options: ExportOptions): Promise<ExportResult> {
  if (!options || typeof options.out !== 'string' || options.out === '')
    throw new ReceiptError('ARGUMENT_INVALID', 'exportReceipt needs { out: <path> }');
  const sign = options.sign === undefined ? undefined : await signingKey(options.sign);
  const range = {
    ...(options.from === undefined ? {} : { from: options.from }),
    ...(options.to === undefined ? {} : { to: options.to }),
    ...(sign === undefined ? {} : { sign }),
    ...(options.extra === undefined ? {} : { extra: options.extra }),
  };
  // An export that meets an erase between its record and its rewrite waits for it (record/v3/erasure-pending.ts).
  return afterLiveErasure(async () => {
    const input = await receiptInput(source, range);
    // The last seq the plan read for erasure records (its `after`): what erasedSince reads on from.
    let checkedTo = input.to;
    const after = input.after;
    const plan = await planReceipt({
      ...input,
      ...(after === undefined
        ? {}
        : {
            after: async function* () {
              for await (const l of after()) {
                checkedTo = Math.max(checkedTo, l.seq);
                yield l;
              }
            },
          }),
    }).catch((e: unknown) => {
      // A whole export splits an erasure only when an erase recorded it past the head read at the start and
      // rewrote a line of the range before the export read it: the head moved, and the next try reads to it.
      if (options.to !== undefined || !(e instanceof ReceiptError) || e.code !== 'RANGE_SPLITS_ERASURE') throw e;
      throw new ReceiptError(
        'SOURCE_CHANGED',
        'the journal grew while it was exported: an erase recorded an erasure after the head this export read and carried it out in a step of the range; export again',
        { cause: e },
      );
    });
    return writePlanToFile(plan, options.out, {
      source,
      check: async () => {
        if (!capabilitiesOf(source.genesis).erasure) return;
        const p = await erasedSince(source.lines({ from: checkedTo + 1 }), input.from, input.to, lineReader(source));
        if (p !== null)
          throw new ReceiptError('ERASURE_PENDING', describeErasedSince(p, `${options.out} was being written`), {
            hint: 'export again once the erase is done',
          });
      },
    });
  });
}

/**
 * The last look before a receipt is renamed to its name (an erasure recorded meanwhile of what it copied,
 * ERASURE.md §4.1), made with the source's appends held, the rename too: a refusal leaves `out` as it was.
 */
export interface BeforePlacing {
  source: ChainSource;
  check: () => Promise<void>;
}

/** Writes a planned receipt to `out` (gzip for .tar.gz/.tgz). Reused by the publisher. */
export async function writePlanToFile(plan: ReceiptPlan, out: string, placing?: BeforePlacing): Promise<ExportResult> {
  const compressed = /\.(tar\.gz|tgz)$/i.test(out);
  // The receipt replaces a regular file at `out`, never a FIFO, device or directory (rename would replace the node).
  const kind = await nonRegularTarget(out);
  if (kind !== null)
    throw new ReceiptError(
      'OUTPUT_FAILED',
      `cannot write ${out}: it is ${kind}, not a regular file; name a file to write`,
      { location: { file: out } },
    );
  const tmp = `${out}.tmp-${process.pid}-${Date.now()}`;
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    const handle = await open(tmp, 'wx', 0o644);
    const sink = handle.createWriteStream();
    const tar = Readable.from(writeReceipt(plan), { objectMode: false });
    if (compressed) {
      const [gzip, header] = deterministicGzip();
      await pipeline(tar, gzip, header, count, sink);
    } else await pipeline(tar, count, sink);
    if (placing === undefined) await rename(tmp, out);
    else
      await withAppendsHeld(placing.source, async () => {
        await placing.check();
        await rename(tmp, out);
      });
    await removeStaleTemps(out);
  } catch (e) {
    // The cleanup never hides the failure: with the folder missing or a file, rm itself fails (ENOTDIR).
    await rm(tmp, { force: true }).catch(() => {});
    if (e instanceof StepchainError) throw e; // a coded refusal (the check before placing: a RedactError too)
    throw new ReceiptError('OUTPUT_FAILED', `cannot write ${out}: ${e instanceof Error ? e.message : String(e)}`, {
      cause: e,
    });
  }
  const m = plan.manifest;
  return {
    out,
    bytes,
    compressed,
    manifest_digest: plan.manifestDigest,
    signed_by: plan.signedBy,
    range: m.range,
    head: m.head,
    entries: 1 + (plan.signatureBytes ? 1 : 0) + m.chain.length + m.blobs.length,
  };
}

/**
 * A receipt file is read 256 KiB at a time: every read is a trip through libuv's thread pool, and at 64 KiB
 * those trips cost 1–9% of a 100 000-step receipt's verify CPU time (measured in CPU time, paired
 * runs); 1 MiB reads saved no more and cost 30 MB more peak RSS (bench/workers/rss.mjs).
 */
const READ_CHUNK_BYTES = 256 * 1024;

/** A receipt file's bytes streamed from disk, or the ARCHIVE_INVALID problem saying why it cannot be opened. */
export async function openReceiptFile(
  path: string,
): Promise<
  { ok: true; chunks: AsyncIterable<Uint8Array> } | { ok: false; problem: ReceiptReport['problems'][number] }
> {
  try {
    const handle = await open(path, 'r');
    return { ok: true, chunks: toBytes(handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES })) };
  } catch (e) {
    const message = `cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`;
    return { ok: false, problem: { code: 'ARCHIVE_INVALID', message, location: { file: path } } };
  }
}

/** Verifies a receipt file, streaming it from disk. Never throws on the file's content. */
export async function verifyReceiptFile<R extends ReceiptReport = ReceiptReport>(
  path: string,
  options: VerifyReceiptOptions<R> = {},
): Promise<R> {
  const opened = await openReceiptFile(path);
  if (opened.ok) return verifyReceipt(opened.chunks, options);
  const r = await verifyReceipt(new Uint8Array(0), options);
  r.problems = [opened.problem];
  return r;
}

async function* toBytes(stream: AsyncIterable<Buffer>): AsyncGenerator<Uint8Array> {
  for await (const b of stream) yield new Uint8Array(b.buffer, b.byteOffset, b.length);
}

/** `verifyReceipt` for a file path as well as bytes or a stream: the root entry's `verifyReceipt`. */
export async function verifyReceiptAt<R extends ReceiptReport = ReceiptReport>(
  input: ByteInput | string,
  options: VerifyReceiptOptions<R> = {},
): Promise<R> {
  return typeof input === 'string' ? verifyReceiptFile(input, options) : verifyReceipt(input, options);
}

/** A receipt file as a verified, read-only ChainSource (for diff and other readers). Throws RECEIPT_INVALID. */
export async function openReceiptSource(
  path: string,
  options: VerifyReceiptOptions<ReceiptReport> = {},
): Promise<ReceiptSource> {
  return receiptSource(async () => {
    const handle = await open(path, 'r');
    return toBytes(handle.createReadStream({ highWaterMark: 1 << 16 }));
  }, options);
}

/**
 * What stands at `path` when it is something a write through a temporary file and rename(2) must not
 * replace — a FIFO, a device, a directory, a socket — or null when nothing is there or it is a regular file
 * (a symbolic link is followed). rename(2) over `/dev/full` as root replaces the device node itself; and a
 * reader checks it before opening a file, since opening a FIFO with no writer waits for ever.
 */
export async function nonRegularTarget(path: string): Promise<string | null> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return null; // absent (or unreadable: the write itself then reports why)
  }
  if (info.isFile()) return null;
  return info.isFIFO()
    ? 'a FIFO'
    : info.isDirectory()
      ? 'a directory'
      : info.isSocket()
        ? 'a socket'
        : info.isCharacterDevice() || info.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
}
