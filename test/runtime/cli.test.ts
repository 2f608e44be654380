/**
 * The runtime through the CLI, as an agent in another language uses it: a shell-script agent (real
 * processes: sh and the built CLI) killed mid-tool, then `effect list`, `continuation`, `log`, `effect end`,
 * `runs`, `init` with run options, and `verify` showing the identity. The agent's calls start real processes
 * (sh runs the CLI, and is killed); the test's own calls run in one process of the CLI of the file's own
 * (cliInProcess, support.ts), a process other than the killed agent's, as the next process would be.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, cliInProcess } from '../hardening/support.js';

const AGENT_SH = fileURLToPath(new URL('./fixtures/agent.sh', import.meta.url));
const cli = cliInProcess();

/** Runs the shell agent until it has begun `begun` effects, then kills its whole process group. */
async function runAgentUntil(journal: string, hangAt: number, begun: number): Promise<string[]> {
  const proc = spawn('sh', [AGENT_SH, `${process.execPath} ${CLI}`, journal, String(hangAt)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const lines: string[] = [];
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  await new Promise<void>((resolve, reject) => {
    let partial = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => {
      partial += c;
      const parts = partial.split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
      if (lines.filter((l) => l.startsWith('begun ')).length >= begun) resolve();
    });
    proc.on('close', () => reject(new Error(`the agent exited early: ${err}`)));
  });
  const closed = new Promise((r) => proc.on('close', r));
  process.kill(-proc.pid!, 'SIGKILL');
  await closed;
  return lines;
}

describe('a shell agent killed between `effect begin` and `effect end`', () => {
  test('the next process sees the pending effect; continuation excludes it; its outcome can be recorded once', async () => {
    const root = tempDir();
    const journal = join(root, 'run-sh');
    const lines = await runAgentUntil(journal, 2, 3);
    const ids = lines.filter((l) => l.startsWith('begun ')).map((l) => l.slice(6));
    expect(ids).toHaveLength(3);
    const hung = ids[2]!;

    const list = await cli(['effect', 'list', journal, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const doc = JSON.parse(list.stdout) as { effects: Array<Record<string, unknown>>; pending: number; run_id: string };
    expect(doc.run_id).toBe('run-sh');
    expect(doc.effects.map((e) => [e.id, e.status, e.outcome_unknown])).toEqual([
      [ids[0], 'completed', false],
      [ids[1], 'completed', false],
      [hung, 'started', true],
    ]);
    expect(doc.effects[2]).toMatchObject({
      tool: 'send_email',
      arguments: { to: 'user2@example.com' },
      idempotency_key: 'mail-2',
      seq: 5,
    });
    expect(doc.pending).toBe(1);

    const pending = await cli(['effect', 'list', journal, '--pending']);
    expect(pending.stdout).toContain(hung);
    expect(pending.stdout).toContain('PENDING — outcome unknown');
    expect(pending.stdout).not.toContain(ids[0]);

    const cont = await cli(['continuation', journal, '--json']);
    const point = JSON.parse(cont.stdout) as { seq: number; head_seq: number; pending: string[]; steps: unknown[] };
    expect(point).toMatchObject({ seq: 4, head_seq: 5, pending: [hung] });
    expect(point.steps).toHaveLength(5);
    expect((await cli(['continuation', journal])).stdout).toBe('4\n');

    const log = await cli(['log', journal]);
    expect(log.code).toBe(0);
    expect(log.stderr).toContain('run run-sh (agent shell-agent, conversation conv-sh, environment=test)');
    expect(log.stderr).toContain('1 tool effect started with no recorded outcome');
    const marked = log.stdout.split('\n').filter((l) => l.includes('PENDING'));
    expect(marked).toHaveLength(1);
    expect(marked[0]).toContain('tool.started');

    // The next process decides: the mail provider says it was not sent, so the effect failed.
    const end = await cli([
      'effect',
      'end',
      journal,
      hung,
      '--error',
      '{"name":"NotSent","message":"provider has no record of mail-2"}',
    ]);
    expect(end.code, end.stderr).toBe(0);
    const again = await cli(['effect', 'end', journal, hung, '--result', '{"sent":true}']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('EFFECT_ALREADY_ENDED');
    const unknown = await cli(['effect', 'end', journal, 'no-such-effect', '--result', '1']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('EFFECT_UNKNOWN');
    expect((await cli(['continuation', journal])).stdout).toBe('6\n');
    const verify = await cli(['verify', journal]);
    expect(verify.code).toBe(0);
    expect(verify.stderr).toContain('run run-sh (agent shell-agent');
  }, 120_000);
});

describe('init with run options, runs, and effect on a v1 journal', () => {
  test('runs lists by conversation and parent, oldest first; a reused run id is refused', async () => {
    const root = tempDir();
    expect((await cli(['init', join(root, 'orch'), '--conversation', 'c1', '--agent', 'orchestrator'])).code).toBe(0);
    expect(
      (await cli(['init', join(root, 'sub-b'), '--conversation', 'c1', '--parent', 'orch', '--label', 'user=u1'])).code,
    ).toBe(0);
    expect((await cli(['init', join(root, 'sub-a'), '--conversation', 'c2', '--parent', 'orch'])).code).toBe(0);
    expect((await cli(['init', join(root, 'plain'), '--format', 'v1'])).code).toBe(0);
    const reused = await cli(['init', join(root, 'orch'), '--run']);
    expect(reused.code).toBe(2);
    expect(reused.stderr).toContain('RUN_EXISTS');
    const byConv = JSON.parse((await cli(['runs', root, '--conversation', 'c1', '--json'])).stdout) as {
      runs: Array<{ id: string }>;
    };
    expect(byConv.runs.map((r) => r.id)).toEqual(['orch', 'sub-b']);
    const byParent = JSON.parse((await cli(['runs', root, '--parent', 'orch', '--json'])).stdout) as {
      runs: Array<{ id: string; run: Record<string, unknown> }>;
    };
    expect(byParent.runs.map((r) => r.id)).toEqual(['sub-b', 'sub-a']);
    expect(byParent.runs[0]!.run).toEqual({ conversation_id: 'c1', labels: { user: 'u1' }, parent_run_id: 'orch' });
    const text = await cli(['runs', root, '--label', 'user=u1']);
    expect(text.stdout).toContain('sub-b');
    expect(text.stdout).not.toContain('sub-a');
    const v1 = await cli(['effect', 'begin', join(root, 'plain'), '--tool', 't', '--args', '{}']);
    expect(v1.code).toBe(2);
    expect(v1.stderr).toContain('NOT_A_RUN');
    expect(v1.stdout).toBe('');
  }, 120_000);

  test.each(['effect', 'continuation', 'runs'])('%s --help has usage and examples', async (verb) => {
    const r = await cli([verb, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: stepchain ${verb}`);
    expect(r.stdout).toContain('Examples:');
  });
});
