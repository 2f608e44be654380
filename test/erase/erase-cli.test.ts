/**
 * `stepchain erase` through the built CLI (dist/): a checkpoint signed before the erasure still verifies after
 * it; a receipt exported after it holds neither the value nor its salt; an erase SIGKILLed after its erasure
 * record (and after its rewrite) leaves a journal that verifies — the erasure reported pending — and
 * `--resume` completes it. The SIGKILLed erases (STEPCHAIN_TEST_ERASE_FAULT kills the process) start real
 * processes; every other call runs in one process of the CLI of the file's own (cliInProcess, support.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { unitAt, b64u } from '../../src/record/v3/erasure.js';
import { cliInProcess } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const dir = tempDir('stepchain-erase-cli-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const EMAIL = 'carol.sigkill@example.org';
const inProcess = cliInProcess();

/** A call given an environment of its own (a fault to inject) starts a process; the rest run in inProcess. */
function run(
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  if (Object.keys(env).length === 0) return inProcess(args, { cwd: dir, ...(input === undefined ? {} : { input }) });
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env } },
      (error, stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}
const bucket = (j: string): string =>
  join(
    dir,
    j,
    'buckets',
    readdirSync(join(dir, j, 'buckets')).find((n) => n.endsWith('.jsonl'))!,
  );
const record0 = (j: string): Record<string, unknown> => JSON.parse(readFileSync(bucket(j), 'utf8').split('\n')[0]!);

async function journal(j: string): Promise<void> {
  expect((await run(['init', j, '--format', 'v3'])).code).toBe(0);
  expect(
    (await run(['append', j], JSON.stringify({ input: { to: EMAIL }, result: { email: EMAIL, sent: true } }))).code,
  ).toBe(0);
  expect((await run(['append', j], JSON.stringify({ input: { n: 2 } }))).code).toBe(0);
}
async function verifyJson(
  j: string,
  extra: string[] = [],
): Promise<{ ok: boolean; warnings: Array<{ code: string }>; problems: unknown[] }> {
  const r = await run(['verify', j, '--json', ...extra]);
  const doc = JSON.parse(r.stdout) as {
    ok: boolean;
    report: { warnings: Array<{ code: string }>; problems: unknown[] };
  };
  return { ok: doc.ok, warnings: doc.report.warnings, problems: doc.report.problems };
}

describe('stepchain erase (real processes)', { timeout: 180_000 }, () => {
  it('a checkpoint signed before the erasure verifies after it; a later receipt holds neither value nor salt', async () => {
    await journal('cp');
    const salt = unitAt(record0('cp'), '/result/email').unit.salt.slice();
    expect((await run(['keygen', '-o', 'log.key'])).code).toBe(0);
    const signed = await run([
      'checkpoint',
      'cp',
      '--sign',
      'log.key',
      '--authority',
      'agents.example.com',
      '-o',
      'cp.checkpoint',
    ]);
    expect(signed.code).toBe(0);
    const vkey = /\S+\+[0-9a-f]{8}\+\S+/.exec(signed.stdout + signed.stderr)![0];
    const erased = await run([
      'erase',
      'cp',
      '--seq',
      '0',
      '--path',
      '/result/email',
      '--reason',
      'GDPR Art. 17',
      '--by',
      'dpo',
      '--json',
    ]);
    expect(erased.code).toBe(0);
    expect(JSON.parse(erased.stdout)).toMatchObject({ ok: true, seq: 0, path: '/result/email' });
    const after = await run(['verify', 'cp', '--checkpoint', 'cp.checkpoint', '--log-key', vkey, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ ok: true });
    expect(after.code).toBe(0);
    const human = await run(['verify', 'cp']);
    expect(human.stderr + human.stdout).toMatch(/VALUE_ERASED/);
    const log = await run(['log', 'cp']);
    expect(log.stdout + log.stderr).toContain('result: {"sent":true,‹1 erased›}');
    expect((await run(['export', 'cp', '-o', 'cp.tar.gz'])).code).toBe(0);
    const tar = gunzipSync(readFileSync(join(dir, 'cp.tar.gz')));
    expect(tar.includes(Buffer.from(JSON.stringify({ email: EMAIL }).slice(10, -2)))).toBe(true); // input.to is another unit, still there
    for (const n of [Buffer.from(salt), Buffer.from(Buffer.from(salt).toString('hex')), Buffer.from(b64u(salt))])
      expect(tar.includes(n)).toBe(false);
    expect((await run(['verify', 'cp.tar.gz'])).code).toBe(0);
    writeFileSync(join(dir, 'policy.json'), JSON.stringify({ rules: [{ id: 'n', paths: ['/input/n'] }] }));
    // A journal with erased values is published with them shown as erased (REDACTION.md §13.12).
    const published = await run(['publish', 'cp', '--policy', 'policy.json', '--opt-in', '-o', 'cp-public.tar.gz']);
    expect(published.code, published.stderr).toBe(0);
    const head = JSON.parse((await run(['head', 'cp', '--json'])).stdout).head.step_hash as string;
    const pv = await run(['verify', 'cp-public.tar.gz', '--head', head]);
    expect(pv.code, pv.stderr).toBe(0);
    expect(pv.stderr + pv.stdout).toMatch(/VALUE_ERASED/);
    const pub = gunzipSync(readFileSync(join(dir, 'cp-public.tar.gz')));
    for (const n of [Buffer.from(salt), Buffer.from(Buffer.from(salt).toString('hex')), Buffer.from(b64u(salt))])
      expect(pub.includes(n)).toBe(false);
  });

  for (const point of ['after-record', 'after-rewrite'] as const) {
    it(`an erase SIGKILLed ${point} leaves a journal that verifies; --resume completes it`, async () => {
      const j = `kill-${point}`;
      await journal(j);
      const killed = await run(
        ['erase', j, '--seq', '0', '--path', '/result/email', '--reason', 'GDPR Art. 17'],
        undefined,
        { STEPCHAIN_TEST_ERASE_FAULT: point },
      );
      expect(killed.signal).toBe('SIGKILL');
      expect(killed.stderr).toContain(`stepchain-erase-fault ${point}`);
      const mid = await verifyJson(j);
      expect(mid.problems).toEqual([]);
      expect(mid.ok).toBe(true);
      expect(mid.warnings.map((w) => w.code)).toContain(point === 'after-record' ? 'ERASURE_PENDING' : 'VALUE_ERASED');
      const resumed = await run(['erase', j, '--resume', '--json']);
      expect(resumed.code).toBe(0);
      const done = await verifyJson(j, ['--deep']);
      expect(done.ok).toBe(true);
      expect(done.warnings.map((w) => w.code)).toContain('VALUE_ERASED');
      expect(done.warnings.map((w) => w.code)).not.toContain('ERASURE_PENDING');
      const text = readFileSync(bucket(j), 'utf8');
      expect(text.split('\n')[0]).not.toContain(`"email":"${EMAIL}"`);
      expect(readdirSync(join(dir, j, 'buckets')).filter((n) => n.startsWith('.'))).toEqual([]);
    });
  }
});
