/**
 * The per-line check (line.ts, spec/FORMAT.md §4.4, §6.3 steps 2–5) over a batch of stored lines, and its
 * facts packed for a trip between threads. A worker — a Node worker thread, a page's Web Worker — runs
 * `checkBatch`; the thread that links the chain unpacks each line's facts in order. Most lines are clean,
 * so their facts travel as a seq and two digests in flat arrays (a structured clone of one object per line
 * cost more than the check saved, measured); any other line travels whole. Pure: no Node-only imports.
 */
import { newSha256Batch, type Sha256Batch } from '../canonical/sha256-batch.js';
import { sha256Backend, sha256IsPortable, toHex } from '../canonical/sha256.js';
import { journalFormat } from '../record/formats.js';
import {
  checkLineMembers,
  decodeLine,
  settleStepHash,
  type DeferredStepHash,
  type LineFacts,
  type LineReading,
} from './line.js';
import { readLine } from './line-reading.js';

/** Stored lines without their newlines, back to back: line i is bytes[ends[i - 1] ?? 0 .. ends[i]]. */
export interface LineBatch {
  /** The genesis `format` of the journal: the worker checks each line by that format's record profiles. */
  format: string;
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** The facts of a batch's lines, in order. */
export interface PackedFacts {
  /** A clean line's seq; -1 - k for a line whose facts are `others[k]`. */
  seqs: Float64Array;
  /** prev_hash then step_hash of each clean line, DIGEST_CHARS each (spaces for the others). */
  hashes: string;
  /** The facts of every line that is not clean, whole. */
  others: LineFacts[];
  /**
   * A run journal's lines: each clean line's reading (LineFacts.reading) as READING_FIELDS texts, each ended by
   * a newline, which no canonical line holds raw (empty fields for the others, whose facts carry it whole).
   */
  readings?: string;
  /**
   * Beside `readings`: the digest of each clean line's call (StoredCallKey.digest), DIGEST_BYTES characters per
   * line (spaces where it has none). Apart, because a digest's characters may be any byte, the newline too.
   */
  callDigests?: string;
}

/** `sha256:` and 64 hex digits. */
const DIGEST_CHARS = 71;
const BLANK = ' '.repeat(2 * DIGEST_CHARS);
/** A call's digest as one-byte characters. */
const DIGEST_BYTES = 32;
const NO_DIGEST = ' '.repeat(DIGEST_BYTES);

/** Runs the per-line check on every line of a batch; null when this implementation does not read the format. */
export function checkBatch(batch: LineBatch): PackedFacts | null {
  const format = journalFormat(batch.format);
  if (format === null) return null;
  const { bytes, ends } = batch;
  // Where the platform's SHA-256 is the portable one (a browser), the step hashes of v1 lines are computed
  // together, four lanes at a time (hashDeferred); elsewhere each line is hashed by its check.
  const deferred: DeferredStepHash[] | undefined = sha256IsPortable() ? [] : undefined;
  const all: LineFacts[] = new Array<LineFacts>(ends.length);
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const text = decodeLine(bytes.subarray(start, ends[i]));
    if (typeof text !== 'string') all[i] = text;
    else {
      const { facts, members } = checkLineMembers(text, format, deferred);
      const linksRead = facts.seq !== null && facts.stepHash !== null;
      const reading = members === null ? undefined : readLine(text, members, format, linksRead);
      if (reading !== undefined) facts.reading = reading;
      all[i] = facts;
    }
    start = ends[i]!;
  }
  if (deferred !== undefined && deferred.length > 0) hashDeferred(deferred);
  const seqs = new Float64Array(ends.length);
  const hashes: string[] = [];
  const others: LineFacts[] = [];
  const readings: string[] | null = format.capabilities.runRecords ? [] : null;
  const digests: string[] | null = format.capabilities.approvals ? [] : null;
  for (let i = 0; i < ends.length; i++) {
    const f = all[i]!;
    if (isClean(f)) {
      seqs[i] = f.seq!;
      hashes.push(f.prevHash!, f.stepHash!);
      readings?.push(packReading(f.reading));
      const call = f.reading?.call;
      digests?.push(
        typeof call === 'object' && call !== null ? call.digest.slice(call.digestAt, call.digestAt + 32) : NO_DIGEST,
      );
    } else {
      seqs[i] = -1 - others.length;
      others.push(f);
      hashes.push(BLANK);
      readings?.push(NO_READING);
      digests?.push(NO_DIGEST);
    }
  }
  return {
    seqs,
    hashes: hashes.join(''),
    others,
    ...(readings === null ? {} : { readings: readings.join('') }),
    ...(digests === null ? {} : { callDigests: digests.join('') }),
  };
}

/**
 * A reading's fields: flags (kind is "step", step_id read, call state), step_id, and the call's id, seq, ts and
 * name (empty where it has none: a name's text is quoted); a record holding no call: its ts alone.
 */
const READING_FIELDS = 6;
const NO_READING = '\n'.repeat(READING_FIELDS);

function packReading(r: LineReading | undefined): string {
  if (r === undefined) return NO_READING;
  const call = r.call;
  const state = call === undefined ? '-' : call === null ? 'n' : call === 'parse' ? 'p' : 'c';
  const flags = (r.kindIsStep ? 's' : '-') + (r.stepId === null ? '-' : 'i') + state;
  const c = typeof call === 'object' && call !== null ? call : null;
  return c === null
    ? `${flags}\n${r.stepId ?? ''}\n\n\n${r.ts ?? ''}\n\n`
    : `${flags}\n${r.stepId ?? ''}\n${c.id}\n${c.seq}\n${c.ts}\n${c.name ?? ''}\n`;
}

/** Each packed batch's readings split into fields, once, on the thread that unpacks it. */
const split = new WeakMap<PackedFacts, string[]>();

function unpackReading(packed: PackedFacts, i: number): LineReading | undefined {
  if (packed.readings === undefined) return undefined;
  let fields = split.get(packed);
  if (fields === undefined) split.set(packed, (fields = packed.readings.split('\n')));
  const at = i * READING_FIELDS;
  const flags = fields[at];
  if (flags?.length !== 3) return undefined;
  const state = flags.charCodeAt(2);
  const reading: LineReading = {
    kindIsStep: flags.charCodeAt(0) === 0x73,
    stepId: flags.charCodeAt(1) === 0x69 ? fields[at + 1]! : null,
  };
  if (state === 0x6e) {
    reading.call = null;
    // A record holding no call carries its ts, which dates the chain for the approval check (line-reading.ts).
    const ts = fields[at + 4];
    if (ts !== undefined && ts !== '') reading.ts = ts;
  } else if (state === 0x70) reading.call = 'parse';
  else if (state === 0x63) {
    const name = fields[at + 5]!;
    reading.call = {
      id: fields[at + 2]!,
      seq: Number(fields[at + 3]),
      ts: fields[at + 4]!,
      // The batch's digests string itself, read at this line's place: no slice a line, and the table copies
      // from a flat string (from a 32-character slice each read cost about 4 ns, bench/RESULTS.md).
      digest: packed.callDigests ?? '',
      digestAt: DIGEST_BYTES * i,
      name: name === '' ? null : name,
    };
  }
  return reading;
}

const encoder = new TextEncoder();
/** One batch per thread, reused (its memory kept): the WebAssembly kernel where it compiles, else the portable batch. */
let lineHashes: Sha256Batch | null = null;

/**
 * The SHA-256 engine the chain's line hashes go through on this platform: where the hash is portable, the
 * batch's ('wasm-simd-4', or the portable one's name where WebAssembly is refused); elsewhere the native one's.
 */
export function lineHashEngine(): string {
  return sha256IsPortable() ? (lineHashes ??= newSha256Batch()).name : sha256Backend().name;
}

/** Hashes the deferred lines' preimages in one batch and settles each comparison. */
function hashDeferred(deferred: DeferredStepHash[]): void {
  const batch = (lineHashes ??= newSha256Batch());
  batch.reset();
  for (const d of deferred) {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    const max = 3 * (d.head.length + d.tail.length);
    const at = batch.reserve(max);
    const mem = batch.bytes;
    const head = encoder.encodeInto(d.head, mem.subarray(at, at + max)).written;
    const tail = encoder.encodeInto(d.tail, mem.subarray(at + head, at + max)).written;
    batch.close(head + tail);
  }
  const digests = batch.run();
  for (let i = 0; i < deferred.length; i++)
    settleStepHash(deferred[i]!, 'sha256:' + toHex(digests.subarray(32 * i, 32 * i + 32)));
}

function isClean(f: LineFacts): boolean {
  return (
    f.readable &&
    f.problems.length === 0 &&
    f.blobs.length === 0 &&
    f.markers.length === 0 &&
    f.notices === undefined &&
    f.publicForm === undefined &&
    f.erasure === undefined &&
    f.approval === undefined &&
    f.seq !== null &&
    f.prevHash?.length === DIGEST_CHARS &&
    f.stepHash?.length === DIGEST_CHARS
  );
}

/** Line i's facts, as `checkLineBytes` returned them in the worker. */
export function unpackFacts(packed: PackedFacts, i: number): LineFacts {
  const seq = packed.seqs[i]!;
  if (seq < 0) return packed.others[-1 - seq]!;
  const at = i * 2 * DIGEST_CHARS;
  const facts: LineFacts = {
    problems: NO_PROBLEMS,
    readable: true,
    seq,
    prevHash: packed.hashes.slice(at, at + DIGEST_CHARS),
    stepHash: packed.hashes.slice(at + DIGEST_CHARS, at + 2 * DIGEST_CHARS),
    blobs: [],
    markers: [],
  };
  const reading = unpackReading(packed, i);
  if (reading !== undefined) facts.reading = reading;
  return facts;
}

const NO_PROBLEMS: LineFacts['problems'] = Object.freeze([]);

/**
 * Where batches are checked: worker threads in Node (`stepchain`'s createLineCheckPool), or anything else
 * that runs `checkBatch`. `check` resolves with the batch's facts in line order, or null when the worker
 * does not read the batch's format (the caller then checks the lines itself).
 */
export interface LineCheckPool {
  /** How many batches it checks at once. */
  readonly threads: number;
  /** The batch size it wants, in bytes (default 128 KiB): smaller batches start workers for smaller chains. */
  readonly batchBytes?: number;
  /**
   * Whether the thread that feeds the pool checks batches too, whenever every worker already holds three (feeder.ts HELP_AFTER):
   * true when the pool leaves that thread a core of its own (fewer workers than cores). Otherwise it checks
   * batches only while the workers start, before their first answer.
   */
  readonly callerChecks?: boolean;
  /**
   * Batches sent to `check` and not yet finished, read at once where the pool can tell before their answers
   * arrive (worker threads counting in shared memory); absent: the feeder counts the answers it has received.
   */
  pending?(): number;
  /** Memory for a batch the workers can read without a copy (shared memory); default: an ordinary array. */
  allocate?(bytes: number): Uint8Array;
  check(batch: LineBatch): Promise<PackedFacts | null>;
}
