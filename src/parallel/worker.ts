/**
 * A worker thread of the line-check pool (pool.ts): runs the per-line check of spec/FORMAT.md §6.3 steps
 * 2–5 (chain/batch.ts) on each batch it is sent and posts the packed facts back. It holds no state between
 * batches.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkBatch, type LineBatch } from '../chain/batch.js';

const port = parentPort!;
/** The pool's count of finished batches (pool.ts pending), in shared memory. */
const finished = (workerData as { finished?: Int32Array } | null)?.finished;
port.on('message', (message: LineBatch & { id: number }) => {
  const facts = checkBatch(message);
  if (finished !== undefined) Atomics.add(finished, 0, 1);
  port.postMessage({ id: message.id, facts }, facts ? [facts.seqs.buffer as ArrayBuffer] : []);
});
