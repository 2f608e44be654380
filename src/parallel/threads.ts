/**
 * How many threads check a chain's lines by default (issue 25), apart from the pool so that a caller can
 * size a pool before loading it (node:worker_threads). Node-only.
 */
import { availableParallelism } from 'node:os';

/**
 * The most threads that check lines by default, the calling thread included: beyond it the one thread that
 * links the chain is the bound.
 */
export const DEFAULT_MAX_THREADS = 8;

/** The default count of threads that check lines, the calling thread included: one per core Node may use, at most DEFAULT_MAX_THREADS. */
export function defaultThreads(): number {
  return Math.min(availableParallelism(), DEFAULT_MAX_THREADS);
}
