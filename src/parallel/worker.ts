/**
 * A worker thread of the line-check pool (pool.ts): runs the per-line check of spec/FORMAT.md §6.3 steps
 * 2–5 (chain/batch.ts) on each batch it is sent and posts the packed facts back. It holds no state between
 * batches.
 */
import { parentPort } from 'node:worker_threads';
import { checkBatch, type LineBatch } from '../chain/batch.js';

const port = parentPort!;
port.on('message', (message: LineBatch & { id: number }) => {
  const facts = checkBatch(message);
  port.postMessage({ id: message.id, facts }, facts ? [facts.seqs.buffer as ArrayBuffer] : []);
});
