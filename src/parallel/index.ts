/** Verification on every core: the Node worker-thread pool behind chain/batch.ts's LineCheckPool. Node-only. */
export { WorkerLineCheckPool, createLineCheckPool, type LineCheckPoolOptions } from './pool.js';
export { defaultThreads, DEFAULT_MAX_THREADS } from './threads.js';
