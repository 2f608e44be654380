/**
 * The line-check pool `stepchain verify` runs with: how many worker threads, and when their module loads.
 */
import { readdir, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { LineCheckPool } from '../index.js';
import { BATCH_BYTES } from '../chain/feeder.js';
import { defaultThreads } from '../parallel/threads.js';
import { BUCKETS_DIR } from '../store/file/layout.js';

/**
 * The worker pool for `threads` threads in all: this one, which reads, links and checks batches whenever
 * every worker holds two, and `threads` − 1 workers (none for one thread, or on one core). A second isolate
 * per core was measured to cost more than it gains: each worker loads its code, compiles the checks anew
 * and grows a heap of its own (bench/speed.mjs, process rows). A journal directory whose buckets hold less
 * than one batch gets none: the feeder would check it on this thread anyway, and loading the pool
 * (node:worker_threads) is a few milliseconds of a small verify's start; a bigger one starts its workers
 * now, so they load while this thread opens and reads the first files. Receipts and Postgres load the pool
 * at the first batch (their size is not known before reading).
 */
export async function linePool(threads: number | undefined, journalDir?: string): Promise<ClosablePool | undefined> {
  if (threads === 1 || (journalDir !== undefined && (await smallerThanOneBatch(journalDir)))) return undefined;
  const workers = (threads ?? defaultThreads()) - 1;
  if (workers < 1) return undefined;
  scavengeAlone(workers + 1);
  if (journalDir === undefined) return poolAtFirstBatch(workers);
  const { createLineCheckPool } = await import('../parallel/index.js');
  const pool = createLineCheckPool({ threads: workers, callerChecks: true });
  pool.start();
  return pool;
}

export type ClosablePool = LineCheckPool & { close(): Promise<void> };

/**
 * A pool whose module (node:worker_threads, the pool) loads at the first batch: a receipt or a Postgres
 * journal of one batch or less, whose size is not known before it is read, never loads it. Its batches
 * live in shared memory from the start, as the pool's own (WorkerLineCheckPool.allocate), so the workers
 * read them where the feeder wrote them.
 */
function poolAtFirstBatch(workers: number): ClosablePool {
  let loaded: Promise<ClosablePool> | null = null;
  const load = (): Promise<ClosablePool> =>
    (loaded ??= import('../parallel/index.js').then((m) =>
      m.createLineCheckPool({ threads: workers, callerChecks: true }),
    ));
  return {
    threads: workers,
    callerChecks: true,
    allocate: (bytes) => new Uint8Array(new SharedArrayBuffer(bytes)),
    check: async (batch) => (await load()).check(batch),
    close: async () => {
      if (loaded !== null) await (await loaded).close();
    },
  };
}

/** Whether a journal directory's buckets hold fewer bytes than one batch; false when that cannot be told (the verifier then reports why). */
async function smallerThanOneBatch(dir: string): Promise<boolean> {
  try {
    const buckets = join(dir, BUCKETS_DIR);
    let bytes = 0;
    for (const name of await readdir(buckets)) {
      bytes += (await stat(join(buckets, name))).size;
      if (bytes >= BATCH_BYTES) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the threads that check lines take every core, each thread's young-generation collections run without
 * V8's helper threads (--no-parallel-scavenge, read at every scavenge, so it applies set now): a scavenge
 * otherwise hands work to helpers that find no idle core and waits for them, while the other thread is
 * checking lines. Measured on 2 cores, `stepchain verify` of 100 000 v3 steps, paired runs: CPU of all threads
 * −6%, wall −9%. With a core to spare (fewer threads), the helpers have one, and the flag is left alone.
 */
function scavengeAlone(threads: number): void {
  if (threads >= availableParallelism()) setFlagsFromString('--no-parallel-scavenge');
}
