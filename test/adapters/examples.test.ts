/**
 * The runnable examples in examples/ (README "Recording the Vercel AI SDK" / "Recording the OpenAI Agents
 * SDK"): each is run as a user would run it — `node examples/<name>.mjs` against the built package,
 * importing `stepchain` and its adapter subpath by name — and must record a run that verifies.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { FileStore, resumeRun } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
const run = promisify(execFile);
// Outside a test runner NODE_ENV is unset; the Agents SDK turns tracing off under NODE_ENV=test.
const { NODE_ENV: _testEnv, ...env } = process.env;

describe('examples/', () => {
  test('ai-sdk.mjs records a verified run: model call, tool effect, model call', async () => {
    const dir = join(tempDir('stepchain-example-'), 'runs');
    const { stdout } = await run(process.execPath, [join(ROOT, 'examples/ai-sdk.mjs'), dir], { cwd: ROOT, env });
    expect(stdout).toContain('answer: It is 21°C in Paris.');
    expect(stdout).toMatch(/8 records, verified ok/);
    const [runId] = await new FileStore(dir).list();
    const recorded = await resumeRun(new FileStore(dir), runId!, { readOnly: true });
    expect((await recorded.effects()).map((e) => [e.tool, e.callId, e.status])).toEqual([
      ['weather', 'call-1', 'completed'],
    ]);
    await recorded.close();
  });

  test('openai-agents.mjs records a verified run and the handoff target as its child run', async () => {
    const dir = join(tempDir('stepchain-example-'), 'runs');
    const { stdout } = await run(process.execPath, [join(ROOT, 'examples/openai-agents.mjs'), dir], { cwd: ROOT, env });
    expect(stdout).toContain('answer: It is 21°C in Paris.');
    expect(stdout).toMatch(/\(triage\): 6 records, verified ok/);
    expect(stdout).toMatch(/\(specialist, child of [\w-]+\): 8 records, verified ok/);
    expect(stdout).not.toContain('NOT ok');
  });

  test('replay.test.mjs (README "Deterministic replay tests") passes under vitest, as a user runs it', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        join(ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        'examples/vitest.config.mjs',
        '--reporter',
        'verbose',
      ],
      // TMPDIR: the store the example makes in the OS temp dir, as a user's would, goes with this file's.
      { cwd: ROOT, env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0', TMPDIR: tempDir('stepchain-replay-tmp-') } },
    );
    expect(stdout).toContain('the agent replays its recorded run exactly, with no live model or tool');
    expect(stdout).toMatch(/Tests\s+2 passed/);
  });
});
