/**
 * The Node line-check pool: worker threads that run the per-line check of the chain verifier (spec/FORMAT.md
 * §6.3 steps 2–5) for chain/feeder.ts, which links their facts in order. Node-only, so it lives outside the
 * browser-safe verifier, behind chain/batch.ts's LineCheckPool interface.
 *
 * Workers start on the first batch, not before: a journal smaller than one batch never starts one. A worker
 * keeps the process alive only while it has a batch to answer. A worker that fails fails its batches, which
 * the feeder then checks on its own thread; the pool does not start it again.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { LineBatch, LineCheckPool, PackedFacts } from '../chain/batch.js';

export interface LineCheckPoolOptions {
  /** Worker threads (default: the cores Node may use, at most 8). */
  threads?: number;
  /** Bytes of lines per batch (default 128 KiB); a chain smaller than one batch is checked without workers. */
  batchBytes?: number;
}

/** The most threads a pool starts by default: beyond it the one thread that links the chain is the bound. */
export const DEFAULT_MAX_THREADS = 8;

/** The default thread count: one per core Node may use, at most DEFAULT_MAX_THREADS. */
export function defaultThreads(): number {
  return Math.min(availableParallelism(), DEFAULT_MAX_THREADS);
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
  /** Batches the workers have answered (how a caller can tell the workers ran). */
  answered = 0;
  private slots: Slot[] | null = null;
  private nextId = 0;
  private closed = false;

  constructor(options: LineCheckPoolOptions = {}) {
    const threads = options.threads ?? defaultThreads();
    if (!Number.isSafeInteger(threads) || threads < 1) throw new RangeError(`threads must be a positive integer (got ${String(threads)})`);
    this.threads = threads;
    const batchBytes = options.batchBytes;
    if (batchBytes !== undefined && (!Number.isSafeInteger(batchBytes) || batchBytes < 1)) throw new RangeError(`batchBytes must be a positive integer (got ${String(batchBytes)})`);
    this.batchBytes = batchBytes;
  }

  /**
   * Batches live in shared memory: a worker reads the lines where the feeder wrote them. Copied into each
   * worker instead, every batch left a copy for that worker's garbage collector, and peak RSS grew by tens
   * of MB per worker (measured at 100 000 steps).
   */
  allocate(bytes: number): Uint8Array {
    return new Uint8Array(new SharedArrayBuffer(bytes));
  }

  check(batch: LineBatch): Promise<PackedFacts | null> {
    if (this.closed) return Promise.reject(new Error('the line-check pool is closed'));
    const slots = (this.slots ??= Array.from({ length: this.threads }, () => this.start()));
    // The least busy live worker; the feeder bounds how many batches are out.
    let slot: Slot | null = null;
    for (const s of slots) if (s.failed === null && (slot === null || s.waiting.size < slot.waiting.size)) slot = s;
    if (slot === null) return Promise.reject(slots[0]!.failed!);
    const id = this.nextId++;
    const chosen = slot;
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

  private start(): Slot {
    // A small young generation: a batch's garbage dies young, and each worker's heap counts in the process's
    // peak RSS (no old-generation cap: one line may be 16 MiB).
    const worker = new Worker(new URL('./worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: 4 } });
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
      for (const w of slot.waiting.values()) w.reject(e);
      slot.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`a line-check worker exited (code ${code})`)));
    return slot;
  }
}

/** A pool of `threads` worker threads (default: one per core, at most 8); close it when done. */
export function createLineCheckPool(options: LineCheckPoolOptions = {}): WorkerLineCheckPool {
  return new WorkerLineCheckPool(options);
}
