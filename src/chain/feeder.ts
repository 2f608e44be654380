/**
 * Parallel chain verification (spec/FORMAT.md §6.3): the lines a reader hands in are gathered into
 * batches; each batch's per-line check (hashing, the canonical scan, the profile's rules — independent
 * for every line) runs on a LineCheckPool, and the facts come back to the one ChainVerifier in chain
 * order, where the sequential link check runs. The report is the sequential verifier's, problem for
 * problem, and observers see every line in order, as they would there.
 *
 * Memory stays bounded: at most a few batches per thread are in flight, and a reader awaits `settle()`
 * between its reads. Without a pool — or for a format the pool's workers do not read — every call goes
 * straight to the verifier. Pure: the pool is an interface; the Node one lives in src/parallel/.
 */
import { sha256IsPortable } from '../canonical/sha256.js';
import { journalFormat } from '../record/formats.js';
import { checkBatch, unpackFacts, type LineCheckPool, type PackedFacts } from './batch.js';
import { checkLineBytes } from './line.js';
import type { ChainProblemCode, ChainReport } from './report.js';
import type { ChainVerifier } from './verifier.js';

/**
 * A batch's size in bytes: big enough that a thread's round trip (about 0.1 ms) is small against the
 * checks (about 80 lines of 1.5 KB), small enough that the workers' heaps stay small (at 256 KiB peak RSS
 * with two workers was 15–30 MB higher, measured at 100 000 steps).
 */
export const BATCH_BYTES = 128 * 1024;

/**
 * How many unanswered batches each worker holds before the feeding thread checks the next batch itself (while
 * the workers start, or throughout with LineCheckPool.callerChecks): three, so a worker still has the next
 * batch queued when it finishes one while the feeding thread checks a batch of its own and then reads, links
 * and hands out the next (with two, a worker on 2 cores waited for batches about a sixth of the time; three:
 * `stepchain verify` of 100 000 v3 steps 5% faster, paired runs).
 */
const HELP_AFTER = 3;

/**
 * How many batches per worker may be in flight (sent or checked here, not yet passed to the verifier) before
 * the reader waits for the oldest: room for HELP_AFTER queued at each worker and the feeding thread's own.
 */
const IN_FLIGHT_PER_WORKER = 6;

/** What a batch holds besides its lines to check, replayed in order: a line's index, or another call to the verifier. */
type Op =
  | number
  | { segment: string; declared: number | null }
  | { longLine: number }
  | { torn: Uint8Array | string }
  | { text: string };

interface Batch {
  ops: Op[];
  bytes: Uint8Array;
  ends: Uint32Array;
  facts: PackedFacts | null | undefined;
  failed: boolean;
  ready: Promise<void>;
}

export interface ChainFeederOptions {
  /** Called after each line has gone through the verifier (for progress). */
  onEach?: () => void;
  /** Batch size in bytes (default BATCH_BYTES); tests use small ones. */
  batchBytes?: number;
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Batches checked on the feeding thread itself (see the constructor). */
const IN_THREAD: LineCheckPool = {
  threads: 1,
  callerChecks: true,
  check: (batch) => Promise.resolve(checkBatch(batch)),
};

export class ChainFeeder {
  private readonly pool: LineCheckPool | null;
  private readonly format: string;
  private readonly batchBytes: number;
  private readonly inFlight: Batch[] = [];
  private ops: Op[] = [];
  /**
   * The lines of the batch being gathered, in this thread's own memory; a batch goes out as one copy of them
   * into memory the pool allocates (shared with its workers). Copied there line by line instead, each copy paid
   * the engine's slow path for shared memory, about 0.45 µs a line whatever its length (one copy of a whole
   * batch: about 4 µs), the largest cost of `stepchain verify`'s feeding thread after the checks themselves.
   */
  private buffer: Uint8Array;
  private ends: number[] = [];
  private held = 0;
  /** Whether a batch was sent to the pool: a chain smaller than one batch never starts a worker. */
  private sent = false;
  /** The drain settle started, until it ends. */
  private draining: Promise<void> | null = null;
  /** Batches this thread checked itself because every worker was busy while starting (see take). */
  checkedHere = 0;
  /** Batches the pool has answered. */
  private answered = 0;

  constructor(
    readonly verifier: ChainVerifier,
    pool: LineCheckPool | null | undefined,
    private readonly options: ChainFeederOptions = {},
  ) {
    const format = verifier.format;
    // Workers look formats up by name: a caller's own format object is checked here, on this thread.
    // With no pool where the SHA-256 is the portable one (a browser), lines still go through in batches, checked
    // on this thread: a batch's step hashes are computed together (checkBatch), several times faster.
    const given = pool && pool.threads > 0 ? pool : sha256IsPortable() ? IN_THREAD : null;
    this.pool = given !== null && journalFormat(format.format) === format ? given : null;
    this.format = format.format;
    this.batchBytes = options.batchBytes ?? pool?.batchBytes ?? BATCH_BYTES;
    this.buffer = new Uint8Array(this.pool === null ? 0 : this.batchBytes);
  }

  beginSegment(label: string, declaredFirstSeq: number | null = null): void {
    if (this.pool === null) this.verifier.beginSegment(label, declaredFirstSeq);
    else this.ops.push({ segment: label, declared: declaredFirstSeq });
  }

  /** As ChainVerifier.line. `bytes` may be a view the caller reuses after the call: it is copied at once. */
  line(bytes: Uint8Array | string, terminated: boolean): void {
    if (this.pool === null) {
      this.verifier.line(bytes, terminated);
      this.options.onEach?.();
    } else if (!terminated) this.ops.push({ torn: typeof bytes === 'string' ? bytes : bytes.slice() });
    else if (typeof bytes === 'string') this.ops.push({ text: bytes });
    else {
      if (this.held + bytes.length > this.buffer.length) {
        this.flush();
        if (bytes.length > this.buffer.length) this.buffer = new Uint8Array(bytes.length);
      }
      this.ops.push(this.ends.length);
      this.buffer.set(bytes, this.held);
      this.held += bytes.length;
      this.ends.push(this.held);
    }
  }

  longLine(byteLength: number): void {
    if (this.pool !== null) this.ops.push({ longLine: byteLength });
    else {
      this.verifier.longLine(byteLength);
      this.options.onEach?.();
    }
  }

  /**
   * Waits until few enough batches are in flight, passing every finished one to the verifier in order.
   * A reader calls it between reads; without a pool it returns at once.
   */
  settle(): Promise<void> | undefined {
    if (this.draining !== null) return this.draining;
    if (this.pool === null || this.inFlight.length === 0) return undefined;
    // One drain at a time: two would both wait on the same head and then apply batches out of order.
    return (this.draining = this.drain().finally(() => void (this.draining = null)));
  }

  private async drain(): Promise<void> {
    const most = this.pool!.threads * IN_FLIGHT_PER_WORKER;
    while (
      this.inFlight.length > 0 &&
      (this.inFlight.length > most || this.inFlight[0]!.facts !== undefined || this.inFlight[0]!.failed)
    ) {
      const head = this.inFlight[0]!;
      // While the workers start, the oldest batch may sit with one still loading its code: this thread checks it
      // itself instead of waiting (the worker's answer, when it comes, is the same and is dropped). At the start
      // of `stepchain verify` of 100 000 v3 steps this thread otherwise waited about 35 ms for the first answer.
      if (this.answered === 0 && head.facts === undefined && !head.failed) {
        this.checkedHere++;
        head.facts = checkBatch({ format: this.format, bytes: head.bytes, ends: head.ends });
      } else await head.ready;
      this.inFlight.shift();
      this.apply(head);
    }
  }

  /** Checks what is left, passes it all to the verifier, and returns its report. */
  async finish(): Promise<ChainReport<ChainProblemCode>> {
    if (this.draining !== null) await this.draining;
    if (this.pool !== null) {
      if (this.sent) this.flush();
      else this.inFlight.push(this.take(null));
      for (let head = this.inFlight.shift(); head !== undefined; head = this.inFlight.shift()) {
        await head.ready;
        this.apply(head);
      }
    }
    return this.verifier.finish();
  }

  /** Sends the gathered lines to the pool as one batch. */
  private flush(): void {
    if (this.ops.length === 0) return;
    this.sent = true;
    this.inFlight.push(this.take(this.pool));
  }

  private take(pool: LineCheckPool | null): Batch {
    const shared = this.pool?.allocate?.(this.held);
    let bytes: Uint8Array;
    if (shared === undefined) {
      // Nowhere to share: the gathered lines go as they are, and the next batch gathers in new memory.
      bytes = this.buffer.subarray(0, this.held);
      this.buffer = new Uint8Array(this.batchBytes);
    } else {
      bytes = shared;
      bytes.set(this.buffer.subarray(0, this.held));
    }
    const batch: Batch = {
      ops: this.ops,
      bytes,
      ends: Uint32Array.from(this.ends),
      facts: undefined,
      failed: false,
      ready: Promise.resolve(),
    };
    this.ops = [];
    this.ends = [];
    this.held = 0;
    if (batch.ends.length === 0) batch.facts = null;
    else if (
      pool === null ||
      ((this.answered === 0 || pool.callerChecks === true) && this.unanswered() >= pool.threads * HELP_AFTER)
    ) {
      // Every worker already holds HELP_AFTER batches: this thread would only wait, so it checks this one
      // itself. While the workers start (none has answered yet) always; after that only when the pool leaves
      // this thread a core (callerChecks): with as many workers as cores, a feeding thread that keeps checking
      // is a thread more than the cores, and it answers the workers late (measured on 2 cores, 2 workers,
      // 100 000 steps: 477 ms without help, 621 ms helping throughout). With one worker fewer than the cores
      // it is the other way round: the feeding thread's idle time is a core's (bench/speed.mjs, process rows).
      if (pool !== null) this.checkedHere++;
      batch.facts = checkBatch({ format: this.format, bytes, ends: batch.ends });
    } else {
      batch.ready = pool.check({ format: this.format, bytes, ends: batch.ends }).then(
        (facts) => {
          this.answered++;
          // A batch this thread checked while the workers started keeps its facts (see drain).
          if (batch.facts === undefined) batch.facts = facts;
        },
        () => void (batch.failed = true), // a worker that failed: this thread checks the batch itself
      );
    }
    return batch;
  }

  /** Batches sent to the pool and not yet finished (as the pool can tell at once), else not yet answered. */
  private unanswered(): number {
    const pending = this.pool?.pending?.();
    if (pending !== undefined) return pending;
    let n = 0;
    for (const b of this.inFlight) if (b.facts === undefined && !b.failed) n++;
    return n;
  }

  /** A finished batch, through the verifier in order. */
  private apply(batch: Batch): void {
    const v = this.verifier;
    const { bytes, ends } = batch;
    const facts = batch.facts ?? null;
    for (const op of batch.ops) {
      if (typeof op === 'number') {
        const line = bytes.subarray(op === 0 ? 0 : ends[op - 1], ends[op]);
        v.checkedLine(facts === null ? checkLineBytes(line, v.format) : unpackFacts(facts, op), () =>
          decoder.decode(line),
        );
      } else if ('segment' in op) {
        v.beginSegment(op.segment, op.declared);
        continue;
      } else if ('longLine' in op) v.longLine(op.longLine);
      else if ('torn' in op) v.line(op.torn, false);
      else v.line(op.text, true);
      this.options.onEach?.();
    }
  }
}
