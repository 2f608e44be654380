/**
 * The approval flow across two real processes (spec/APPROVALS.md §4): an agent process presents a call and
 * waits in awaitApproval; an approver signs from the built CLI (`stepchain approve`); the agent proceeds
 * with the effect naming its request — or, denied, never begins it (its side effect, a file, is never
 * written, and the journal holds no tool.started). Then `verify --approver` names who approved what.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const LIB = new URL('../../dist/index.js', import.meta.url).href;
const dir = tempDir('stepchain-approval-2p-');

const { run: cli } = cliIn(dir);

/** The agent: presents pay_invoice, waits for a decision another process appends, pays only if granted. */
const AGENT = `
import { writeFileSync } from 'node:fs';
import { FileStore, startRun } from ${JSON.stringify(LIB)};
const [storeDir, runId, paidFile] = process.argv.slice(2);
const run = await startRun(new FileStore(storeDir), { runId, format: 'stepchain/v3', input: { task: 'pay INV-9' } });
const call = { name: 'pay_invoice', args: { invoice: 'INV-9', amount: 120 } };
const request = await run.requestApproval(call);
process.stdout.write(JSON.stringify({ request: request.id }) + '\\n');
const outcome = await run.awaitApproval(request, { pollMs: 50 });
if (outcome.status === 'granted') {
  const effect = await run.beginTool({ ...call, approval: request });
  writeFileSync(paidFile, 'paid');
  await effect.complete({ paid: true });
}
await run.complete({ outcome: outcome.status });
await run.journal.close();
process.stdout.write(JSON.stringify({ outcome: outcome.status }) + '\\n');
`;

/** Starts the agent and resolves with the request id it presented, and its exit. */
function startAgent(runId: string): {
  request: Promise<string>;
  exit: Promise<{ code: number | null; lines: string[]; stderr: string }>;
} {
  const child = spawn(
    process.execPath,
    [join(dir, 'agent.mjs'), join(dir, 'runs'), runId, join(dir, `${runId}.paid`)],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  let gotRequest: (id: string) => void;
  const request = new Promise<string>((resolve) => (gotRequest = resolve));
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const first = out.split('\n')[0];
    if (out.includes('\n')) gotRequest((JSON.parse(first!) as { request: string }).request);
  });
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; lines: string[]; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, lines: out.trim().split('\n'), stderr: err })),
  );
  return { request, exit };
}

beforeAll(async () => {
  writeFileSync(join(dir, 'agent.mjs'), AGENT);
  for (const k of ['alice', 'mallory']) expect((await cli('keygen', '-o', `${k}.key`)).code).toBe(0);
}, 120_000);

describe('two processes: the agent waits, the approver signs from the CLI', () => {
  test('granted: the agent proceeds, the effect names the request, verify names the pinned approver', async () => {
    const agent = startAgent('granted');
    const id = await agent.request;
    const listed = await cli('approve', 'runs/granted', '--list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).requests).toEqual([
      expect.objectContaining({
        request: id,
        tool: 'pay_invoice',
        arguments: { invoice: 'INV-9', amount: 120 },
        status: 'pending',
      }),
    ]);
    const approved = await cli(
      'approve',
      'runs/granted',
      id,
      '--key',
      'alice.key',
      '--approve',
      '--reason',
      'invoice checked',
      '--json',
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({ ok: true, request: id, decision: 'granted' });
    const again = await cli('approve', 'runs/granted', id, '--key', 'mallory.key', '--deny', '--json');
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout).error.code).toBe('APPROVAL_DECIDED');
    const done = await agent.exit;
    expect(done.code, done.stderr).toBe(0);
    expect(done.lines.at(-1)).toBe('{"outcome":"granted"}');
    expect(readFileSync(join(dir, 'granted.paid'), 'utf8')).toBe('paid');
    const verified = await cli('verify', 'runs/granted', '--approver', 'alice.key.pub', '--json');
    expect(verified.code, verified.stdout).toBe(0);
    const approvals = JSON.parse(verified.stdout).report.approvals;
    expect(approvals).toEqual([
      expect.objectContaining({
        request: id,
        status: 'granted',
        tool: 'pay_invoice',
        approver: expect.objectContaining({ name: 'alice', pinned: true }),
        reason: 'invoice checked',
        effect_seq: expect.any(Number),
      }),
    ]);
    const human = await cli('verify', 'runs/granted', '--approver', 'alice.key.pub');
    expect(human.stderr).toMatch(
      new RegExp(
        `approved +"pay_invoice" \\(request "${id}", seq \\d+\\) by "alice" \\(pinned\\) at seq \\d+, executed at seq \\d+`,
      ),
    );
    const wrongPin = await cli('verify', 'runs/granted', '--approver', 'mallory.key.pub', '--json');
    expect(wrongPin.code).toBe(1);
    expect(JSON.parse(wrongPin.stdout).report.problems.map((p: { code: string }) => p.code)).toEqual([
      'APPROVER_UNKNOWN',
    ]);
    // The receipt carries the records: the same check and the same names, offline.
    expect((await cli('export', 'runs/granted', '-o', 'granted.tar.gz')).code).toBe(0);
    const receipt = await cli('verify', 'granted.tar.gz', '--approver', 'alice.key.pub', '--json');
    expect(receipt.code, receipt.stdout).toBe(0);
    expect(JSON.parse(receipt.stdout).report.approvals).toEqual(approvals);
    expect((await cli('verify', 'granted.tar.gz', '--approver', 'mallory.key.pub')).code).toBe(1);
    // The Art. 12 view names alice as the person involved.
    expect(
      (
        await cli(
          'record-keeping',
          'runs/granted',
          '--retention',
          'P6M',
          '-o',
          'art12.json',
          '--approver',
          'alice.key.pub',
        )
      ).code,
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'art12.json'), 'utf8')).runs[0].persons_involved.persons).toEqual([
      expect.objectContaining({ name: 'alice', role: 'approver', authenticated: true }),
    ]);
  }, 120_000);

  test('denied: the call is provably never begun', async () => {
    const agent = startAgent('denied');
    const id = await agent.request;
    const denied = await cli('approve', 'runs/denied', id, '--key', 'alice.key', '--deny', '--reason', 'duplicate');
    expect(denied.code, denied.stderr).toBe(0);
    const done = await agent.exit;
    expect(done.code, done.stderr).toBe(0);
    expect(done.lines.at(-1)).toBe('{"outcome":"denied"}');
    expect(existsSync(join(dir, 'denied.paid'))).toBe(false);
    const log = await cli('log', 'runs/denied', '--json');
    expect(log.stdout).not.toContain('tool.started');
    const verified = await cli('verify', 'runs/denied', '--approver', 'alice.key.pub', '--json');
    expect(verified.code, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout).report.approvals).toEqual([
      expect.objectContaining({ request: id, status: 'denied', effect: null, reason: 'duplicate' }),
    ]);
  }, 120_000);

  test('a v2 journal refuses approve with APPROVAL_FORMAT and tells the user to use --format v3', async () => {
    expect((await cli('init', 'old', '--run', '--format', 'v2')).code).toBe(0);
    const r = await cli('approve', 'old', 'x', '--key', 'alice.key', '--approve', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('APPROVAL_FORMAT');
    expect(r.stderr).toContain('--format v3');
  }, 60_000);
});
