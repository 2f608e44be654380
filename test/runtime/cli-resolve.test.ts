/**
 * Effects of unknown outcome from the shell (spec/RUNS.md §5): the shell agent (real processes: sh and
 * the built CLI) is SIGKILLed inside its third tool; its naive rerun is refused — a completed key with
 * EFFECT_EXISTS, the pending effect with EFFECT_PENDING naming it — with nothing on standard output and
 * nothing written; `effect resolve` records each decision and the journal verifies. The agent (sh and the CLI,
 * killed, then rerun) and the library script that completes the run start real processes; the test's own
 * calls of the CLI run in one process of its own (cliInProcess, support.ts), one at a time.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';

const AGENT_SH = fileURLToPath(new URL('./fixtures/agent.sh', import.meta.url));
const cli = cliInProcess();

/** The journal's bytes: every segment file, in name order. */
function bytes(journal: string): string {
  return readdirSync(journal)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => readFileSync(join(journal, f), 'utf8'))
    .join('');
}

/** Runs the shell agent; with `begun`, kills its process group once it has begun that many effects. */
async function runAgent(
  journal: string,
  hangAt: number,
  begun?: number,
): Promise<{ lines: string[]; code: number | null; stderr: string }> {
  const proc = spawn('sh', [AGENT_SH, `${process.execPath} ${CLI}`, journal, String(hangAt)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const lines: string[] = [];
  let stderr = '';
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const closed = new Promise<number | null>((r) => proc.on('close', (code) => r(code)));
  let partial = '';
  proc.stdout.setEncoding('utf8').on('data', (c: string) => {
    partial += c;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    if (begun !== undefined && lines.filter((l) => l.startsWith('begun ')).length >= begun) {
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
  const code = await closed;
  return { lines, code, stderr };
}

describe('a shell agent killed mid-tool, then run again as it was', () => {
  test('the rerun is refused before its first tool; each refusal prints nothing and writes nothing; resolutions are recorded and verify', async () => {
    const root = tempDir();
    const journal = join(root, 'run-sh');
    const killed = await runAgent(journal, 2, 3);
    const ids = killed.lines.filter((l) => l.startsWith('begun ')).map((l) => l.slice(6));
    expect(ids).toHaveLength(3);
    const hung = ids[2]!;
    const before = bytes(journal);

    // The store's listing shows it interrupted, with its pending count; filtering by status finds it.
    const listed = JSON.parse((await cli(['runs', root, '--json'])).stdout) as { runs: Array<Record<string, unknown>> };
    expect(listed.runs).toEqual([
      expect.objectContaining({ id: 'run-sh', status: 'interrupted', pending: 1, ended_at: null }),
    ]);
    expect((await cli(['runs', root, '--status', 'interrupted'])).stdout).toContain('run-sh  interrupted, 1 pending');
    expect((await cli(['runs', root, '--status', 'completed'])).stdout).toBe('');
    expect((await cli(['runs', root, '--status', 'dead'])).code).toBe(2);
    expect(bytes(journal)).toBe(before);

    // The naive rerun: the same script from the top. Its first `effect begin` reuses key mail-0, which completed.
    const rerun = await runAgent(journal, -1);
    expect(rerun.code).toBe(1);
    expect(rerun.lines).toEqual([]);
    expect(rerun.stderr).toContain('EFFECT_EXISTS');
    expect(bytes(journal)).toBe(before);

    // The pending effect, asked for again by its key, or by its tool and arguments (under no key or another): refused, naming it.
    for (const extra of [['--idempotency-key', 'mail-2'], [], ['--idempotency-key', 'other-key']]) {
      const again = await cli([
        'effect',
        'begin',
        journal,
        '--tool',
        'send_email',
        '--args',
        '{"to":"user2@example.com"}',
        ...extra,
      ]);
      expect(again.code, again.stderr).toBe(1);
      expect(again.stdout).toBe('');
      expect(again.stderr).toContain('EFFECT_PENDING');
      expect(again.stderr).toContain(hung);
    }
    const json = await cli([
      'effect',
      'begin',
      journal,
      '--tool',
      'send_email',
      '--args',
      '{"to":"user2@example.com"}',
      '--json',
    ]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, action: 'begin', error: { code: 'EFFECT_PENDING' } });
    expect(bytes(journal)).toBe(before);

    // A completed key with --json: the existing effect and its result.
    const exists = await cli([
      'effect',
      'begin',
      journal,
      '--tool',
      'send_email',
      '--args',
      '{"to":"user0@example.com"}',
      '--idempotency-key',
      'mail-0',
      '--json',
    ]);
    expect(exists.code).toBe(1);
    expect(JSON.parse(exists.stdout)).toMatchObject({
      ok: false,
      error: { code: 'EFFECT_EXISTS' },
      effect: { id: ids[0], status: 'completed', result: { sent: true, i: 0 } },
    });
    expect(bytes(journal)).toBe(before);

    // Resolving: a reason is required; then the decision is recorded and the effect may begin again, naming it.
    const noReason = await cli(['effect', 'resolve', journal, hung, '--retry']);
    expect(noReason.code).toBe(2);
    const resolved = await cli([
      'effect',
      'resolve',
      journal,
      hung,
      '--retry',
      '--reason',
      'the mail provider has no message for mail-2',
      '--by',
      'ops:alice',
      '--json',
    ]);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      ok: true,
      action: 'resolve',
      id: hung,
      decision: 'retry',
      by: 'ops:alice',
    });
    const retried = await cli([
      'effect',
      'begin',
      journal,
      '--tool',
      'send_email',
      '--args',
      '{"to":"user2@example.com"}',
      '--idempotency-key',
      'mail-2',
    ]);
    expect(retried.code, retried.stderr).toBe(0);
    const retryId = retried.stdout.trim();
    const list = JSON.parse((await cli(['effect', 'list', journal, '--json'])).stdout) as {
      effects: Array<Record<string, unknown>>;
    };
    expect(list.effects.find((e) => e.id === hung)).toMatchObject({
      status: 'failed',
      resolution: { decision: 'retry', by: 'ops:alice', reason: 'the mail provider has no message for mail-2' },
    });
    expect(list.effects.find((e) => e.id === retryId)).toMatchObject({ status: 'started', retry_of: hung });

    // The retry is killed too (no process: it simply never ends); this time the provider shows it was sent.
    const done = await cli([
      'effect',
      'resolve',
      journal,
      retryId,
      '--done',
      '--result',
      '{"sent":true,"message_id":"m-2"}',
      '--reason',
      'in the provider log',
    ]);
    expect(done.code, done.stderr).toBe(0);
    const twice = await cli(['effect', 'resolve', journal, retryId, '--abandon', '--reason', 'x']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('EFFECT_NOT_PENDING');
    expect((await cli(['verify', journal])).code).toBe(0);

    // Completed: the listing shows it and its end time.
    const completed = await runNode(
      [
        '--input-type=module',
        '-e',
        `import { FileStore, resumeRun } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)}; const run = await resumeRun(new FileStore(${JSON.stringify(root)}), 'run-sh'); await run.complete('ok'); await run.close();`,
      ],
      { timeoutMs: 60_000 },
    );
    expect(completed.code, completed.stderr).toBe(0);
    const after = JSON.parse((await cli(['runs', root, '--status', 'completed', '--json'])).stdout) as {
      runs: Array<Record<string, unknown>>;
    };
    expect(after.runs).toEqual([
      expect.objectContaining({
        id: 'run-sh',
        status: 'completed',
        pending: 0,
        ended_at: expect.stringMatching(/^\d{4}-/),
      }),
    ]);
    // An ended run takes no more effects.
    const late = await cli(['effect', 'begin', journal, '--tool', 'send_email', '--args', '{"to":"late@example.com"}']);
    expect(late.code).toBe(2);
    expect(late.stderr).toContain('RUN_ENDED');
    expect(late.stdout).toBe('');
  }, 180_000);
});
