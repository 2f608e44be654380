/**
 * A process killed inside a tool's `execute` under each adapter (issue 18): a real child process runs a
 * recorded agent from the built package, is SIGKILLed while the second tool call executes, and the run,
 * reopened from its files, shows that call as the pending effect (with the model's call id) and the
 * continuation point right after the first tool call's outcome. The journal still verifies.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, resumeRun } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);

/** Runs the child until it reports being inside execute, then kills it with SIGKILL. */
function killInsideExecute(script: string, dir: string, runId: string): Promise<{ callId: string; signal: NodeJS.Signals | null }> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [join(ROOT, 'test/adapters/crash', script), dir, runId], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let callId: string | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /in-execute (\S+)/.exec(out);
      if (m !== null && callId === undefined) {
        callId = m[1]!;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', failed);
    child.on('exit', (_code, signal) => {
      if (callId === undefined) failed(new Error(`${script} exited before reaching execute: ${err}`));
      else done({ callId, signal });
    });
  });
}

describe.each([['ai-sdk-child.mjs'], ['openai-agents-child.mjs']])('killed inside execute: %s', (script) => {
  test('the reopened run shows the pending effect and the continuation point', async () => {
    const dir = join(tempDir('stepchain-crash-'), 'runs');
    const runId = `crash-${script.replace(/\W/g, '-')}`;
    const killed = await killInsideExecute(script, dir, runId);
    expect(killed).toEqual({ callId: 'call-oslo', signal: 'SIGKILL' });

    const run = await resumeRun(new FileStore(dir), runId, { readOnly: true });
    expect((await run.journal.verify()).ok).toBe(true);
    const pending = await run.pendingEffects();
    expect(pending.map((e) => [e.tool, e.callId, e.args])).toEqual([['weather', 'call-oslo', { city: 'Oslo' }]]);
    const effects = await run.effects();
    expect(effects.map((e) => [e.callId, e.status])).toEqual([['call-paris', 'completed'], ['call-oslo', 'started']]);

    // The continuation point: the first tool call's outcome, before the model request that asked for the lost call.
    const point = await run.continuationPoint();
    const paris = effects[0]!;
    expect(point.seq).toBe(paris.endSeq);
    const kinds = point.steps.map((r) => (r as unknown as { kind: string }).kind);
    expect(kinds).toEqual(['run.started', 'model.started', 'model.completed', 'tool.started', 'tool.completed']);
    await run.close();
  });
});
