/**
 * The README's LangGraph example runs as written: `examples/langgraph-checkpointer.mjs` in a child process,
 * importing `stepchain` and `stepchain/langgraph` through the package's own exports (so dist/ must be built,
 * as `npm test` does first).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);
const dir = tempDir('stepchain-langgraph-example-');

test('examples/langgraph-checkpointer.mjs: interrupt, resume, a receipt that verifies', async () => {
  const { stdout } = await run(process.execPath, ['examples/langgraph-checkpointer.mjs', dir], {
    cwd: new URL('../../../', import.meta.url).pathname,
  });
  expect(stdout).toContain('verdict: approved');
  expect(stdout).toMatch(/receipt valid: true \| head: sha256:[0-9a-f]{64}/);
  expect(stdout).toContain('checkpoints: input → loop → loop → loop');
});
