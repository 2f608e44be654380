/** Verification on every core: the Node worker-thread pool behind chain/batch.ts's LineCheckPool. Node-only. */
export { WorkerLineCheckPool, createLineCheckPool, defaultThreads, DEFAULT_MAX_THREADS, type LineCheckPoolOptions } from './pool.js';
