/**
 * The Node line-check pool: worker threads that run the per-line check of the chain verifier (spec/FORMAT.md
 * §6.3 steps 2–5) for chain/feeder.ts, which links their facts in order. Node-only, so it lives outside the
 * browser-safe verifier, behind chain/batch.ts's LineCheckPool interface.
 *
 * Workers start on the first batch, or earlier when the caller knows the chain is big (`start`): a journal
 * smaller than one batch never starts one. A worker keeps the process alive only while it has a batch to
 * answer. By default the pool leaves the calling thread a core (cores − 1 workers), and that thread checks
 * batches too whenever every worker holds two (LineCheckPool.callerChecks). A worker that fails fails its batches, which
 * the feeder then checks on its own thread; the pool does not start it again.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { LineBatch, LineCheckPool, PackedFacts } from '../chain/batch.js';
import { SharedBlocks } from './shared-memory.js';
import { defaultThreads } from './threads.js';

export interface LineCheckPoolOptions {
  /** Worker threads (default: one per core Node may use but the calling thread's, at least 1; at most 7). */
  threads?: number;
  /**
   * Whether the thread that feeds the pool checks batches too whenever every worker holds two (default: when
   * there are fewer workers than cores, so that thread has a core of its own).
   */
  callerChecks?: boolean;
  /** Bytes of lines per batch (default 128 KiB); a chain smaller than one batch is checked without workers. */
  batchBytes?: number;
}

interface Slot {
  worker: Worker;
  /** Batches sent and not yet answered. */
  waiting: Map<number, { resolve: (facts: PackedFacts | null) => void; reject: (e: Error) => void }>;
  failed: Error | null;
}

export class WorkerLineCheckPool implements LineCheckPool {
  readonly threads: number;
  readonly batchBytes: number | undefined;
  readonly callerChecks: boolean;
  /** Batches the workers have answered (how a caller can tell the workers ran). */
  answered = 0;
  private slots: Slot[] | null = null;
  private nextId = 0;
  private closed = false;
  /**
   * Batches the workers have finished, counted by each worker in shared memory as it finishes one, before its
   * answer is posted: the feeding thread reads it while it is busy (pending), when the answers wait unread in
   * its event loop.
   */
  private readonly finished = new Int32Array(new SharedArrayBuffer(4));
  /** Batches sent to a live worker, less those of workers that failed. */
  private sent = 0;
  private readonly shared = new SharedBlocks();

  constructor(options: LineCheckPoolOptions = {}) {
    // One core is the calling thread's: it reads and links, and checks batches when it would wait.
    const threads = options.threads ?? Math.max(1, defaultThreads() - 1);
    if (!Number.isSafeInteger(threads) || threads < 1)
      throw new RangeError(`threads must be a positive integer (got ${String(threads)})`);
    this.threads = threads;
    const batchBytes = options.batchBytes;
    if (batchBytes !== undefined && (!Number.isSafeInteger(batchBytes) || batchBytes < 1))
      throw new RangeError(`batchBytes must be a positive integer (got ${String(batchBytes)})`);
    this.batchBytes = batchBytes;
    this.callerChecks = options.callerChecks ?? threads < availableParallelism();
  }

  /**
   * Starts the workers now rather than at the first batch, for a caller that knows the chain is bigger than
   * one batch: they load their code while it opens and reads the first files.
   */
  start(): void {
    if (this.closed) throw new Error('the line-check pool is closed');
    this.slots ??= Array.from({ length: this.threads }, () => this.spawn());
  }

  /**
   * Batches live in shared memory: a worker reads the lines where the feeder wrote them. Copied into each
   * worker instead, every batch left a copy for that worker's garbage collector, and peak RSS grew by tens
   * of MB per worker (measured at 100 000 steps). Views into larger blocks (shared-memory.ts).
   */
  allocate(bytes: number): Uint8Array {
    return this.shared.allocate(bytes);
  }

  /**
   * Batches sent and not yet finished by a worker, read now: a worker's finish counts before its answer reaches
   * this thread (a feeding thread busy checking a batch of its own would otherwise see a worker still holding
   * two batches when it holds none, and leave it idle).
   */
  pending(): number {
    return this.sent - Atomics.load(this.finished, 0);
  }

  check(batch: LineBatch): Promise<PackedFacts | null> {
    if (this.closed) return Promise.reject(new Error('the line-check pool is closed'));
    const slots = (this.slots ??= Array.from({ length: this.threads }, () => this.spawn()));
    // The least busy live worker; the feeder bounds how many batches are out.
    let slot: Slot | null = null;
    for (const s of slots) if (s.failed === null && (slot === null || s.waiting.size < slot.waiting.size)) slot = s;
    if (slot === null) return Promise.reject(slots[0]!.failed!);
    const id = this.nextId++;
    const chosen = slot;
    this.sent++;
    return new Promise((resolve, reject) => {
      if (chosen.waiting.size === 0) chosen.worker.ref();
      chosen.waiting.set(id, { resolve, reject });
      chosen.worker.postMessage({ id, format: batch.format, bytes: batch.bytes, ends: batch.ends });
    });
  }

  /** Stops the workers; batches still out fail (their feeder checks them itself). */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots ?? [];
    this.slots = null;
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    // A small young generation: a batch's garbage dies young, and each worker's heap counts in the process's
    // peak RSS (no old-generation cap: one line may be 16 MiB). 8 MB, not 4: a v3 line's check allocates about
    // 12 KB, and at 4 MB a worker spent about 10% of its time scavenging (404 scavenges, 278 ms, verifying
    // 100 000 v3 steps on 2 cores; 200 scavenges, 179 ms at 8 MB; peak RSS unchanged, 141 MB).
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
      workerData: { finished: this.finished },
    });
    const slot: Slot = { worker, waiting: new Map(), failed: null };
    worker.unref();
    worker.on('message', (m: { id: number; facts: PackedFacts | null }) => {
      const w = slot.waiting.get(m.id);
      slot.waiting.delete(m.id);
      if (slot.waiting.size === 0) worker.unref();
      this.answered++;
      w?.resolve(m.facts);
    });
    const fail = (e: Error): void => {
      slot.failed = e;
      this.sent -= slot.waiting.size; // never finished: the feeder checks them itself
      for (const w of slot.waiting.values()) w.reject(e);
      slot.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a line-check worker exited (code ${code})`)));
    return slot;
  }
}

/** A pool of `threads` worker threads (default: one per core but the calling thread's, at most 7); close it when done. */
export function createLineCheckPool(options: LineCheckPoolOptions = {}): WorkerLineCheckPool {
  return new WorkerLineCheckPool(options);
}
