/** Shared set-up for the approval tests: a v3 run in a file store, an approver key pair. */
import { FileStore } from '../../src/store/file/store.js';
import { startRun } from '../../src/runtime/start.js';
import { keyPairFromSeed } from '../../src/receipt/keys.js';
import type { Run } from '../../src/runtime/run.js';
import { tempDir as testTempDir } from '../helpers/tmp.js';

/** Removed after the test file, like every tempDir (test/helpers/tmp.ts). */
export function tempDir(): string {
  return testTempDir('stepchain-approval-');
}

export async function v3Run(dir: string, runId = 'r1'): Promise<{ store: FileStore; run: Run }> {
  const store = new FileStore(dir);
  const run = await startRun(store, { runId, format: 'stepchain/v3', input: { task: 'pay the invoice' } });
  return { store, run };
}

/** Fixed keys: the approver, and an outsider. */
export const alice = keyPairFromSeed(new Uint8Array(32).fill(7));
export const mallory = keyPairFromSeed(new Uint8Array(32).fill(9));
