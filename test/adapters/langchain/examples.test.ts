/**
 * The README's LangChain example runs as written: `examples/langchain-callbacks.mjs` in a child process,
 * importing `stepchain` and `stepchain/langchain` through the package's own exports (dist/ must be built,
 * as `npm test` does first).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { tempDir } from '../../helpers/tmp.js';

const run = promisify(execFile);
const dir = tempDir('stepchain-langchain-example-');

test('examples/langchain-callbacks.mjs: a recorded agent run that verifies', async () => {
  const { stdout } = await run(process.execPath, ['examples/langchain-callbacks.mjs', dir], {
    cwd: new URL('../../../', import.meta.url).pathname,
  });
  expect(stdout).toContain('3 tool.started weather');
  expect(stdout).toContain('effects: weather completed');
  expect(stdout).toContain('verified: true');
});
