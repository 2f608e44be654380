/**
 * A process killed inside a tool's `execute` under each adapter (issue 18): a real child process runs a
 * recorded agent from the built package, is SIGKILLed while the second tool call executes, and the run,
 * reopened from its files, shows that call as the pending effect (with the model's call id) and the
 * continuation point right after the first tool call's outcome. The journal still verifies.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, resumeRun, type StepRecord } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);

/** Runs the child until it reports being inside execute, then kills it with SIGKILL. */
function killInsideExecute(
  script: string,
  dir: string,
  runId: string,
): Promise<{ callId: string; signal: NodeJS.Signals | null }> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [join(ROOT, 'test/adapters/crash', script), dir, runId], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

/** Runs the child to its end in `mode`: its printed lines and exit code. */
function rerun(
  script: string,
  dir: string,
  runId: string,
  mode: string,
): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  return new Promise((done, failed) => {
    const child = spawn(process.execPath, [join(ROOT, 'test/adapters/crash', script), dir, runId, mode], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', failed);
    child.on('exit', (code) => done({ lines: out.split('\n').filter((l) => l !== ''), code, stderr }));
  });
}

async function records(dir: string, runId: string): Promise<StepRecord[]> {
  const run = await resumeRun(new FileStore(dir), runId, { readOnly: true });
  const out: StepRecord[] = [];
  for await (const r of run.journal.read()) out.push(r);
  await run.close();
  return out;
}

const kindOf = (r: StepRecord): string => (r.v !== 1 ? r.kind : 'step');

describe.each([['ai-sdk-child.mjs'], ['openai-agents-child.mjs'], ['langchain-child.mjs']])(
  'killed inside execute, then run again: %s',
  (script) => {
    test('the naive rerun is refused before the lost call runs again, naming its effect; nothing of it is written', async () => {
      const dir = join(tempDir('stepchain-crash-'), 'runs');
      const runId = `rerun-${script.replace(/\W/g, '-')}`;
      await killInsideExecute(script, dir, runId);
      const pending = (await (await resumeRun(new FileStore(dir), runId, { readOnly: true })).pendingEffects())[0]!;
      const again = await rerun(script, dir, runId, 'rerun');
      expect(again.lines, again.stderr).toContain(`refused EFFECT_PENDING ${pending.id}`);
      expect(again.lines).not.toContain('executed Oslo');
      expect(again.code).toBe(1);
      const after = await records(dir, runId);
      // No second intent for the lost call, and the run did not complete.
      expect(
        after.filter(
          (r) => kindOf(r) === 'tool.started' && (r.tool_call as { call_id?: string }).call_id === 'call-oslo',
        ),
      ).toHaveLength(1);
      expect(after.some((r) => kindOf(r) === 'run.completed')).toBe(false);

      // Resolved as a retry (someone checked): the next rerun runs it again, naming the effect it retries, and completes.
      const run = await resumeRun(new FileStore(dir), runId);
      await run.resolveEffect(pending.id, { retry: true }, { reason: 'the weather service is read-only', by: 'test' });
      await run.close();
      const third = await rerun(script, dir, runId, 'rerun');
      expect(third.lines, third.stderr).toContain('executed Oslo');
      expect(third.lines.at(-1)).toBe('done sunny');
      const last = await resumeRun(new FileStore(dir), runId, { readOnly: true });
      expect((await last.journal.verify()).ok).toBe(true);
      expect(await last.pendingEffects()).toEqual([]);
      const oslo = (await last.effects()).filter((e) => e.callId === 'call-oslo');
      expect(oslo.map((e) => [e.status, e.resolution?.decision ?? null, e.retryOf])).toEqual([
        ['failed', 'retry', null],
        ['completed', null, pending.id],
      ]);
      await last.close();
    });

    test('a tool declared read-only is retried by the policy after the crash, and the decision is recorded', async () => {
      const dir = join(tempDir('stepchain-crash-'), 'runs');
      const runId = `readonly-${script.replace(/\W/g, '-')}`;
      await killInsideExecute(script, dir, runId);
      const again = await rerun(script, dir, runId, 'rerun-read-only');
      expect(again.lines, again.stderr).toContain('executed Oslo');
      expect(again.lines.at(-1)).toBe('done sunny');
      const run = await resumeRun(new FileStore(dir), runId, { readOnly: true });
      expect((await run.journal.verify()).ok).toBe(true);
      const oslo = (await run.effects()).filter((e) => e.callId === 'call-oslo');
      expect(oslo[0]!.resolution).toMatchObject({ decision: 'retry', by: 'policy:read-only' });
      expect(oslo[1]).toMatchObject({ status: 'completed', retryOf: oslo[0]!.id });
      await run.close();
    });
  },
);

describe('docs/crash-safe-resume.md: the five-line resume after a SIGKILL mid-tool', () => {
  test('the example, as written, resolves the pending effect, continues from the continuation point with the recorded history, and completes', async () => {
    const dir = join(tempDir('stepchain-crash-'), 'runs');
    const runId = 'resume-doc';
    await killInsideExecute('ai-sdk-child.mjs', dir, runId);
    const pending = (await (await resumeRun(new FileStore(dir), runId, { readOnly: true })).pendingEffects())[0]!;
    const resumed = await rerun('resume-doc.mjs', dir, runId, '');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.lines.filter((l) => l.startsWith('executed '))).toEqual(['executed Oslo']);
    // The model's first prompt holds the history: Paris's result, and the lost call answered with its resolution.
    const first = JSON.parse(resumed.lines.find((l) => l.startsWith('prompt '))!.slice(7)) as Array<{
      role: string;
      content: Array<Record<string, unknown>>;
    }>;
    const toolParts = first.filter((m) => m.role === 'tool').flatMap((m) => m.content);
    expect(toolParts.map((p) => [p.toolCallId, (p.output as { type: string }).type])).toEqual([
      ['call-paris', 'json'],
      ['call-oslo', 'error-text'],
    ]);
    expect(JSON.stringify(toolParts[1])).toContain('resolved: retry');
    const run = await resumeRun(new FileStore(dir), runId, { readOnly: true });
    expect((await run.journal.verify()).ok).toBe(true);
    expect(await run.status()).toBe('completed');
    const oslo = (await run.effects()).filter(
      (e) => e.tool === 'weather' && (e.args as { city: string }).city === 'Oslo',
    );
    expect(oslo.map((e) => [e.status, e.resolution?.by ?? null, e.retryOf])).toEqual([
      ['failed', 'ops', null],
      ['completed', null, pending.id],
    ]);
    await run.close();
  });
});

describe("the resume example wherever it is shown (README.md's crash-safe section, docs/)", () => {
  test('every block marked resume-example is, byte for byte, the one the test above runs after a SIGKILL, and at most 5 lines', async () => {
    const { readFileSync } = await import('node:fs');
    const { documentedFiles } = await import('../../scripts/docs/blocks.mjs');
    // The fence is `javascript`, which the docs runner (test/docs/examples.test.ts) shows and does not run: an
    // excerpt, not a program. This is how a README copy of it runs in the suite: it must be the executed one.
    const MARKED = /<!-- resume-example[^>]*-->\n```javascript\n([\s\S]*?)```/g;
    const shown = (documentedFiles() as string[]).flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(MARKED)].map((m) => [file, m[1]!] as const),
    );
    const executed = shown.find(([file]) => file === 'docs/crash-safe-resume.md')?.[1];
    expect(executed, 'docs/crash-safe-resume.md has the resume-example block resume-doc.mjs runs').toBeDefined();
    for (const [file, body] of shown) {
      expect(body, file).toBe(executed);
      expect(body.trim().split('\n').length, file).toBeLessThanOrEqual(5);
    }
  });
});

describe('openai-agents resumeInput', () => {
  test('the items at the continuation point: the request input, the model output, each tool outcome as a function_call_result; the SDK runs on from them', async () => {
    const dir = join(tempDir('stepchain-crash-'), 'runs');
    const runId = 'agents-resume';
    await killInsideExecute('openai-agents-child.mjs', dir, runId);
    const resumed = await rerun('openai-agents-child.mjs', dir, runId, 'resume');
    expect(resumed.lines.at(-1), resumed.stderr).toBe('done sunny');
    expect(resumed.lines.filter((l) => l.startsWith('executed '))).toEqual([]);
    const items = JSON.parse(resumed.lines.find((l) => l.startsWith('input '))!.slice(6)) as Array<
      Record<string, unknown>
    >;
    const results = items.filter((i) => i.type === 'function_call_result');
    expect(results.map((i) => [i.callId, (i.output as { text: string }).text])).toEqual([
      ['call-paris', '{"city":"Paris","tempC":21}'],
      ['call-oslo', '{"city":"Oslo","tempC":5}'],
    ]);
    expect(items.filter((i) => i.type === 'function_call').map((i) => i.callId)).toEqual(['call-paris', 'call-oslo']);
    const run = await resumeRun(new FileStore(dir), runId, { readOnly: true });
    expect((await run.journal.verify()).ok).toBe(true);
    expect(await run.status()).toBe('completed');
    await run.close();
  });
});

describe.each([['ai-sdk-child.mjs'], ['openai-agents-child.mjs'], ['langchain-child.mjs']])(
  'killed inside execute: %s',
  (script) => {
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
      expect(effects.map((e) => [e.callId, e.status])).toEqual([
        ['call-paris', 'completed'],
        ['call-oslo', 'started'],
      ]);

      // The continuation point: the first tool call's outcome, before the model request that asked for the lost call.
      const point = await run.continuationPoint();
      const paris = effects[0]!;
      expect(point.seq).toBe(paris.endSeq);
      const kinds = point.steps.map((r) => r.kind);
      expect(kinds).toEqual(['run.started', 'model.started', 'model.completed', 'tool.started', 'tool.completed']);
      await run.close();
    });
  },
);
