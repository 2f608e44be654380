/**
 * Outsider E's attacks on the calls a chain runs before and beside its requests (spec/APPROVALS.md §5 step 4,
 * §6), through the built CLI as they made them: a denied call begun with a tool_call large enough that the writer
 * stores it as a part (PARTS.md §3) was "denied, never executed" with exit 0 — the part showed no call; and a call
 * run before its request and again after it named the later run as the request's effect.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { syncCli } from '../helpers/cli-sync.js';
import { tempDir } from '../helpers/tmp.js';

const cli = syncCli();

interface Report {
  ok: boolean;
  problems: { code: string; location: { seq?: number } }[];
  warnings: { code: string; location: { seq?: number } }[];
  approvals: {
    request: string;
    status: string;
    effect: string | null;
    effect_seq: number | null;
    unchecked?: boolean;
  }[];
}

function journalWithDeniedPay(): { dir: string; key: string } {
  const dir = tempDir('stepchain-outsider-e-');
  const journal = join(dir, 'jd');
  const key = join(dir, 'alice.key');
  expect(cli({ args: ['init', journal] }).status).toBe(0);
  expect(cli({ args: ['keygen', '-o', key] }).status).toBe(0);
  const request = {
    kind: 'approval.requested',
    step_id: 'r1',
    input: { presented: { name: 'pay', arguments: { a: 1 } }, expires_at: null },
  };
  expect(cli({ args: ['append', journal], input: JSON.stringify(request) }).status).toBe(0);
  expect(cli({ args: ['approve', journal, 'r1', '--key', key, '--deny', '--name', 'alice'] }).status).toBe(0);
  return { dir: journal, key };
}

const verified = (journal: string, key: string, threads: string[]): { status: number; report: Report } => {
  const r = cli({ args: ['verify', journal, '--approver', `${key}.pub`, '--json', ...threads] });
  return { status: r.status, report: (JSON.parse(r.stdout) as { report: Report }).report };
};

test('a denied call begun with a tool_call the writer stores as a part is never reported "never executed"', () => {
  const { dir, key } = journalWithDeniedPay();
  // Neither member alone reaches the part threshold (1 KiB); the tool_call as a whole does.
  const summary = 'paying invoice INV-9 for the customer; '.repeat(15);
  const started = {
    kind: 'tool.started',
    step_id: 'X',
    tool_call: { name: 'pay', arguments: { a: 1 }, summary, idempotency_key: summary },
  };
  expect(cli({ args: ['append', dir], input: JSON.stringify(started) }).status).toBe(0);
  const bucket = readdirSync(join(dir, 'buckets'))[0]!;
  const last = readFileSync(join(dir, 'buckets', bucket), 'utf8')
    .trim()
    .split('\n')
    .at(-1)!;
  expect(Object.keys((JSON.parse(last) as { tool_call: object }).tool_call)).toEqual(['$stepchain:part']);
  for (const threads of [['--threads', '1'], ['--threads', '2'], []]) {
    const { report } = verified(dir, key, threads);
    expect(report.warnings.map((w) => [w.code, w.location.seq])).toContainEqual(['APPROVAL_UNCHECKED', 2]);
    expect(report.approvals).toMatchObject([{ request: 'r1', status: 'denied', effect: null, unchecked: true }]);
  }
  const human = cli({ args: ['verify', dir, '--approver', `${key}.pub`] });
  expect(human.stderr + human.stdout).not.toContain('never executed');
});

test('a call run before its request and again after it: the request names the first run as its effect', () => {
  const dir = tempDir('stepchain-outsider-e-');
  const journal = join(dir, 'j');
  expect(cli({ args: ['init', journal] }).status).toBe(0);
  const records = [
    { kind: 'step', step_id: 'X', tool_call: { name: 'pay', arguments: { a: 1 } } },
    {
      kind: 'approval.requested',
      step_id: 'r1',
      input: { presented: { name: 'pay', arguments: { a: 1 } }, expires_at: null },
    },
    { kind: 'step', step_id: 'Y', tool_call: { name: 'pay', arguments: { a: 1 } } },
  ];
  for (const r of records) expect(cli({ args: ['append', journal], input: JSON.stringify(r) }).status).toBe(0);
  for (const threads of [['--threads', '1'], ['--threads', '2'], []]) {
    const r = cli({ args: ['verify', journal, '--json', ...threads] });
    const report = (JSON.parse(r.stdout) as { report: Report }).report;
    expect(report.problems.map((p) => [p.code, p.location.seq])).toEqual([
      ['APPROVAL_MISSING', 0],
      ['APPROVAL_MISSING', 2],
    ]);
    expect(report.approvals).toMatchObject([{ request: 'r1', effect: 'X', effect_seq: 0 }]);
  }
});
