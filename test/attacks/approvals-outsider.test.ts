// Outsider (black-box) attacks on approval records (spec/APPROVALS.md), from /tmp/outsider's report: each
// test replays a finding through the built CLI (in one process of its own, test/helpers/cli-sync.ts) and asserts the SAFE behaviour, so it fails while the hole is open.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApprovalLedger } from '../../src/approval/ledger.js';
import { Run } from '../../src/runtime/run.js';
import { alice, tempDir, v3Run } from '../approval/helpers.js';
import { syncCli } from '../helpers/cli-sync.js';
import { eraseValue } from '../../src/erase/store.js';
import type { Journal } from '../../src/store/types.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Res {
  status: number;
  stdout: string;
  stderr: string;
}
const inProcess = syncCli();
function sc(cwd: string, args: string[], input?: string): Res {
  return inProcess({ args, cwd, input });
}
const ok = (r: Res): Res => {
  if (r.status !== 0) throw new Error(`cli failed ${r.status}: ${r.stderr}${r.stdout}`);
  return r;
};
const jcs = (v: unknown): string => {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(o[k])}`)
    .join(',')}}`;
};
const digestOf = (name: string, args: unknown) =>
  `sha256:${createHash('sha256')
    .update(jcs({ arguments: args, name }))
    .digest('hex')}`;

/** A v3 journal `j` in a fresh folder with alice's key, and request req-1 presenting `name(args)`. */
const templates = new Map<string, string>();
let keyDir: string | undefined;
/** A folder holding alice.key and alice.key.pub, written by `stepchain keygen` once per file. */
function keyPair(): string {
  if (keyDir === undefined) {
    keyDir = mkdtempSync(join(tmpdir(), 'sc-apx-key-'));
    dirs.push(keyDir);
    ok(sc(keyDir, ['keygen', '-o', 'alice.key']));
  }
  return keyDir;
}

function setup(
  name: string,
  args: unknown,
  opts: { run?: boolean; expiresAt?: string } = {},
): { dir: string; hash: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'sc-apx-'));
  dirs.push(dir);
  // Built through the CLI once per distinct request (and one key pair per file), then copied: each test
  // changes only its own copy.
  const key = JSON.stringify([name, args, opts]);
  let template = templates.get(key);
  if (template === undefined) {
    template = mkdtempSync(join(tmpdir(), 'sc-apx-template-'));
    dirs.push(template);
    cpSync(keyPair(), template, { recursive: true });
    ok(sc(template, ['init', 'j', '--format', 'v3', ...(opts.run ? ['--run'] : [])]));
    const req = {
      kind: 'approval.requested',
      step_id: 'req-1',
      input: { presented: { name, arguments: args }, expires_at: opts.expiresAt ?? null },
    };
    ok(sc(template, ['append', 'j'], JSON.stringify(req)));
    templates.set(key, template);
  }
  cpSync(template, dir, { recursive: true });
  const hash = (): string => {
    const lines = readdirSync(join(dir, 'j', 'buckets'))
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .flatMap((f) =>
        readFileSync(join(dir, 'j', 'buckets', f), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { kind: string; step_hash: string }),
      );
    return lines.find((r) => r.kind === 'approval.requested')!.step_hash;
  };
  return { dir, hash };
}
const decide = (dir: string, how: '--approve' | '--deny', journal = 'j') =>
  ok(sc(dir, ['approve', journal, 'req-1', '--key', 'alice.key', how, '--reason', 'checked', '--name', 'alice']));
const effect = (hash: string, call: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    kind: 'tool.started',
    step_id: 'eff-1',
    tool_call: call,
    meta: { approval: { request: 'req-1', request_hash: hash } },
    ...extra,
  });
function verify(dir: string, journal = 'j'): { status: number; problems: string[]; notices: string[]; text: string } {
  const j = sc(dir, ['verify', journal, '--approver', 'alice.key.pub', '--json']);
  const doc = JSON.parse(j.stdout) as {
    report: { problems: Array<{ code: string }>; warnings: Array<{ code: string }> };
  };
  const human = sc(dir, ['verify', journal, '--approver', 'alice.key.pub']);
  return {
    status: j.status,
    problems: doc.report.problems.map((p) => p.code),
    notices: doc.report.warnings.map((w) => w.code),
    text: human.stderr,
  };
}

describe('approval attacks from the outsider report', () => {
  it('15: a different tool run under a grant is APPROVAL_MISMATCH even when its arguments are stored as a part', () => {
    const { dir, hash } = setup('pay', { amount: 120 });
    decide(dir, '--approve');
    ok(
      sc(
        dir,
        ['append', 'j'],
        effect(hash(), { name: 'delete_all_files', arguments: { path: '/', pad: 'A'.repeat(1100) } }),
      ),
    );
    const v = verify(dir);
    expect(v.problems).toContain('APPROVAL_MISMATCH');
    expect(v.status).not.toBe(0);
    expect(v.text).toMatch(/INVALID/);
  });

  it('15: the approved call with a part-sized argument, written by the same journal, still verifies (same part address)', () => {
    const big = { body: 'Z'.repeat(1500), to: 'ops@corp.example' };
    const { dir, hash } = setup('mail', big);
    decide(dir, '--approve');
    ok(sc(dir, ['append', 'j'], effect(hash(), { name: 'mail', arguments: big })));
    const v = verify(dir);
    expect(v.problems).toEqual([]);
    expect(v.notices).not.toContain('APPROVAL_UNCHECKED');
    expect(v.text).toMatch(
      /approved +"mail" \(request "req-1", seq 0\) by "alice" \(pinned\) at seq 1, executed at seq 2/,
    );
  });

  it('16 and 5: effect begin refuses a denied presented call (APPROVAL_DENIED) and an undecided one (APPROVAL_REQUIRED); verify finds a denied part-sized call run unnamed', () => {
    const args = { body: 'Z'.repeat(1500), to: 'all@corp.example' };
    const { dir } = setup('mail', args, { run: true });
    const pending = sc(dir, ['effect', 'begin', 'j', '--tool', 'mail', '--args', JSON.stringify(args), '--json']);
    expect(pending.status).not.toBe(0);
    expect(pending.stdout + pending.stderr).toMatch(/APPROVAL_REQUIRED/);
    decide(dir, '--deny');
    const denied = sc(dir, ['effect', 'begin', 'j', '--tool', 'mail', '--args', JSON.stringify(args), '--json']);
    expect(denied.status).not.toBe(0);
    expect(denied.stdout + denied.stderr).toMatch(/APPROVAL_DENIED/);
    // Finding 2: the refusal does not present the approver's own name as fact.
    expect(denied.stdout + denied.stderr).toMatch(/calling itself \\?"alice\\?" \(unpinned, self-named\)/);
    // Written by hand (not through the runtime), the same unnamed call is found by the verifier.
    ok(
      sc(
        dir,
        ['append', 'j'],
        JSON.stringify({ kind: 'tool.started', step_id: 'eff-x', tool_call: { name: 'mail', arguments: args } }),
      ),
    );
    const v = verify(dir);
    expect(v.problems).toContain('APPROVAL_MISSING');
    expect(v.text).not.toMatch(/never executed/);
  });

  it("20: a grant copied into a fork does not authorise the fork's effect", () => {
    const { dir, hash } = setup('pay', { amount: 120 });
    ok(sc(dir, ['fork', 'j', '--from-step', '0', 'B']));
    decide(dir, '--approve');
    const grant = readdirSync(join(dir, 'j', 'buckets'))
      .filter((f) => f.endsWith('.jsonl'))
      .flatMap((f) =>
        readFileSync(join(dir, 'j', 'buckets', f), 'utf8')
          .split('\n')
          .filter(Boolean),
      )
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((r) => r.kind === 'approval.granted')!;
    ok(
      sc(
        dir,
        ['append', 'B'],
        JSON.stringify({ kind: grant.kind, ref: grant.ref, ts: grant.ts, input: grant.input, meta: grant.meta }),
      ),
    );
    ok(sc(dir, ['append', 'j'], effect(hash(), { name: 'pay', arguments: { amount: 120 } })));
    ok(sc(dir, ['append', 'B'], effect(hash(), { name: 'pay', arguments: { amount: 120 } })));
    expect(verify(dir, 'j').problems).toEqual([]);
    const b = verify(dir, 'B');
    expect(b.problems).toContain('APPROVAL_MISSING');
    expect(b.status).not.toBe(0);
  });

  it('20: the runtime of a fork refuses an effect for a request copied from the parent, granted in the fork or not', async () => {
    const { store, run } = await v3Run(tempDir());
    const req = await run.requestApproval({ name: 'pay', args: { amount: 120 } });
    const parent = await store.open('r1');
    const fork = await store.fork(parent, { fromStep: req.seq, to: 'r1-fork' });
    const forked = Run.of(fork);
    // Deciding the copied request in the fork is refused (APPROVALS.md §4: APPROVAL_FORKED), and begins nothing.
    await expect(
      forked.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' }),
    ).rejects.toMatchObject({ code: 'APPROVAL_FORKED' });
    await expect(forked.beginTool({ name: 'pay', args: { amount: 120 }, approval: req.id })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    await (await run.beginTool({ name: 'pay', args: { amount: 120 }, approval: req.id })).complete({ paid: true });
  });

  it('4: a denied call recorded as a plain step is APPROVAL_MISSING, not "never executed"', () => {
    const { dir } = setup('pay', { amount: 9999 });
    decide(dir, '--deny');
    ok(
      sc(
        dir,
        ['append', 'j'],
        JSON.stringify({ tool_call: { name: 'pay', arguments: { amount: 9999 } }, result: { paid: true } }),
      ),
    );
    const v = verify(dir);
    expect(v.problems).toContain('APPROVAL_MISSING');
    expect(v.status).not.toBe(0);
  });

  it('12: an effect dated before its grant was decided (backdated past the expiry) is a problem', () => {
    const { dir, hash } = setup('pay', { amount: 1 }, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    decide(dir, '--approve');
    ok(
      sc(
        dir,
        ['append', 'j'],
        effect(hash(), { name: 'pay', arguments: { amount: 1 } }, { ts: '2000-01-01T00:00:00.000Z' }),
      ),
    );
    const v = verify(dir);
    expect(v.problems).toContain('APPROVAL_MISSING');
    expect(v.status).not.toBe(0);
  });

  it('13: a tool_call member the approver never saw (server, summary) is APPROVAL_MISMATCH', () => {
    const { dir, hash } = setup('pay', { amount: 120 });
    decide(dir, '--approve');
    ok(
      sc(
        dir,
        ['append', 'j'],
        effect(hash(), {
          name: 'pay',
          arguments: { amount: 120 },
          server: 'https://evil.example',
          summary: 'paying 9999 to mallory',
        }),
      ),
    );
    const v = verify(dir);
    expect(v.problems).toContain('APPROVAL_MISMATCH');
  });

  it('10: erasing what the check needs from a denied-then-executed effect leaves APPROVAL_UNCHECKED, never a silent "never executed"', () => {
    const { dir, hash } = setup('pay', { amount: 9999 });
    decide(dir, '--deny');
    ok(sc(dir, ['append', 'j'], effect(hash(), { name: 'pay', arguments: { amount: 9999 } })));
    expect(verify(dir).problems).toContain('APPROVAL_DENIED');
    ok(sc(dir, ['erase', 'j', '--seq', '2', '--path', '/meta/approval', '--reason', 'retention']));
    ok(sc(dir, ['erase', 'j', '--seq', '2', '--path', '/tool_call/arguments/amount', '--reason', 'retention']));
    const v = verify(dir);
    expect(v.notices).toContain('APPROVAL_UNCHECKED');
    expect(v.text).not.toMatch(/never executed/);
    expect(v.text).toMatch(/not proven/);
  });

  // Under 256 bytes as JSON text: a longer name is refused at the request (APPROVALS.md §2).
  it('14 and 2: the verdict quotes a tool named like a verdict line, and hedges an unpinned self-chosen name', () => {
    const spoof = `pay (request req-1, seq 0) by alice (pinned) at seq 1, executed at seq 2${' '.repeat(150)}`;
    const { dir } = setup(spoof, { amount: 1 });
    decide(dir, '--deny');
    const human = sc(dir, ['verify', 'j']).stderr;
    expect(human).toContain(JSON.stringify(spoof));
    expect(human).toMatch(/calling itself "alice" \(unpinned, self-named\)/);
  });

  it('9: invisible and line-breaking characters from content are escaped in the verdict', () => {
    const name = 'pay\u2028x\u2029\u200b\ufeff\u00ad\u{e0041}';
    const { dir } = setup(name, { amount: 1 });
    const human = sc(dir, ['verify', 'j']).stderr;
    expect(human).not.toMatch(/[\u2028\u2029\u200b\ufeff\u00ad]|\u{e0041}/u);
    expect(human).toContain('pay\\u2028x\\u2029\\u200b\\ufeff\\u00ad\\udb40\\udc41');
  });

  it('17: approve --list and approve --approve show the whole call the signature covers, never cut', () => {
    const args = {
      note: `Monthly payroll run as usual, nothing special here. ALSO SEND 1000000 EUR TO ACCOUNT MALLORY-666. ${'x'.repeat(200)} Thanks!`,
      to: 'payroll',
    };
    const { dir } = setup('wire', args);
    const whole = jcs({ arguments: args, name: 'wire' });
    expect(ok(sc(dir, ['approve', 'j', '--list'])).stdout).toContain(whole);
    const signed = ok(sc(dir, ['approve', 'j', 'req-1', '--key', 'alice.key', '--approve', '--name', 'alice']));
    expect(signed.stderr).toContain(whole);
    expect(ok(sc(dir, ['approve', 'j', '--list', '--all'])).stdout).toMatch(
      /calling itself "alice" \(unpinned, self-named\)/,
    );
  });

  it("19: a receipt keeps the journal's approval and erasure notices, takes --approver, and prints the approval lines", () => {
    const { dir } = setup('pay', { amount: 1 });
    ok(sc(dir, ['append', 'j'], JSON.stringify({ result: { email: 'jane@example.org', plan: 'pro' } })));
    decide(dir, '--approve');
    ok(sc(dir, ['erase', 'j', '--seq', '1', '--path', '/result/email', '--reason', 'GDPR']));
    ok(sc(dir, ['export', 'j', '-o', 'r.tar']));
    const doc = JSON.parse(sc(dir, ['verify', 'r.tar', '--json']).stdout) as {
      report: { warnings: Array<{ code: string }> };
    };
    expect(doc.report.warnings.map((w) => w.code)).toEqual(
      expect.arrayContaining(['VALUE_ERASED', 'APPROVER_UNPINNED']),
    );
    const pinned = sc(dir, ['verify', 'r.tar', '--approver', 'alice.key.pub']);
    expect(pinned.stderr).toMatch(/approved +"pay" \(request "req-1", seq 0\) by "alice" \(pinned\)/);
  });
});

// Publications and partial receipts are made by hand in the outsider's reproductions (findings/v3pub.py,
// mkpartial.py); the chain-level rule they broke is held here on the records such a receipt's chain holds.
describe('approval checks on records whose values are not in hand (findings 7, 3)', () => {
  const H = `sha256:${'1'.repeat(64)}`;
  const W = { '$stepchain:withheld': `sha256:${'2'.repeat(64)}` };
  const request = {
    kind: 'approval.requested',
    seq: 0,
    step_id: 'req-1',
    step_hash: H,
    ts: '2026-11-27T10:00:00.000Z',
    input: {
      presented: { name: 'pay', arguments: { amount: 120 } },
      digest: digestOf('pay', { amount: 120 }),
      expires_at: null,
    },
  };

  it('7: an effect with its meta.approval or its amount withheld is APPROVAL_UNCHECKED, and no request reads "never executed" or "executed" as proven', () => {
    for (const eff of [
      {
        kind: 'tool.started',
        seq: 2,
        step_id: 'eff-1',
        ts: '2026-11-27T10:00:03.000Z',
        tool_call: { name: 'pay', arguments: { amount: W } },
        meta: { approval: W },
      },
      {
        kind: 'tool.started',
        seq: 2,
        step_id: 'eff-1',
        ts: '2026-11-27T10:00:03.000Z',
        tool_call: { name: 'pay', arguments: { amount: W } },
        meta: { approval: { request: 'req-1', request_hash: H } },
      },
    ]) {
      const ledger = new ApprovalLedger({ genesisHash: null });
      ledger.record(request);
      // A grant published with its reason withheld: its signature cannot be checked, so it is not counted.
      ledger.record({
        kind: 'approval.granted',
        seq: 1,
        ref: 'req-1',
        ts: '2026-11-27T10:00:02.000Z',
        input: { type: 'stepchain-approval/v1', reason: W },
        meta: { approver: {}, signature: 'x' },
      });
      ledger.record(eff);
      expect(ledger.finish().map((f) => f.code)).toContain('APPROVAL_UNCHECKED');
      expect(ledger.entries()[0]!.unchecked).toBe(true);
    }
  });

  it("3: a partial range's effect for a request outside it is APPROVAL_UNCHECKED, and the verdict does not say it was approved and ran", () => {
    const ledger = new ApprovalLedger({ genesisHash: null, partial: true });
    ledger.record({
      kind: 'approval.requested',
      seq: 5,
      step_id: 'req-2',
      step_hash: H,
      ts: '2026-11-27T10:00:00.000Z',
      input: { presented: { name: 'other', arguments: {} }, digest: digestOf('other', {}), expires_at: null },
    });
    ledger.record({
      kind: 'tool.started',
      seq: 7,
      step_id: 'eff-1',
      ts: '2026-11-27T10:00:03.000Z',
      tool_call: { name: 'pay', arguments: { amount: 120 } },
      meta: { approval: { request: 'req-1', request_hash: H } },
    });
    expect(ledger.finish().map((f) => f.code)).toEqual(['APPROVAL_UNCHECKED']);
    expect(ledger.entries()[0]!.unchecked).toBe(true);
  });
});

// Outsider 3 (issue 39), the verifier's side: records that carry a presented call without naming its request
// (an outcome naming a harmless start, a dangling ref, an unknown kind, an array of calls), whole values erased
// from an unnamed effect, and an effect back-dated behind a later record. In-process (a file store and the chain
// verifier), each on a journal of its own.
describe('approval attacks from outsider 3: every record carrying a call is compared', () => {
  const PAY = { name: 'pay', args: { amount: 500, to: 'mallory' } };
  const CALL = { name: PAY.name, arguments: PAY.args };
  const seen = async (j: Journal) => {
    const r = await j.verify({ approvers: [{ key: alice.publicKey, name: 'alice' }] });
    return {
      problems: r.problems.map((p) => `${p.code}@${p.location.seq}`),
      notices: r.warnings.map((w) => w.code),
      entry: r.approvals![0]!,
    };
  };
  const denied = async () => {
    const { store, run } = await v3Run(tempDir());
    const req = await run.requestApproval(PAY);
    await run.decideApproval(req.id, 'denied', { key: alice.privateKey, name: 'alice' });
    return { store, run, req };
  };

  it('F7: a completion naming a harmless start but carrying the denied call ran it (after the denial, and before the request)', async () => {
    const { run } = await denied();
    const start = await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'lookup', arguments: { q: 'w' } },
    });
    const done = await run.journal.append({
      kind: 'tool.completed',
      ref: start.step_id,
      tool_call: CALL,
      result: { paid: true },
    });
    const after = await seen(run.journal);
    expect(after.problems).toEqual([`APPROVAL_MISSING@${done.seq}`]);
    expect(after.entry).toMatchObject({ status: 'denied', effect_seq: done.seq });

    const { run: early } = await v3Run(tempDir());
    const s = await early.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'lookup', arguments: { q: 'w' } },
    });
    const c = await early.journal.append({
      kind: 'tool.completed',
      ref: s.step_id,
      tool_call: CALL,
      result: { paid: true },
    });
    const req = await early.requestApproval(PAY);
    await early.decideApproval(req.id, 'denied', { key: alice.privateKey, name: 'alice' });
    const before = await seen(early.journal);
    expect(before.problems).toEqual([`APPROVAL_MISSING@${c.seq}`]);
    expect(before.entry.effect_seq).toBe(c.seq);
  });

  it("F7: after a grant, a completion of the approved start carrying another call is APPROVAL_MISMATCH; the runtime's own completion verifies", async () => {
    const { run } = await v3Run(tempDir());
    const req = await run.requestApproval(PAY);
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const effect = await run.beginTool({ ...PAY, approval: req.id });
    await effect.annotate({ summary: 'paying', idempotencyKey: 'k-1' });
    await effect.complete({ paid: true });
    expect((await seen(run.journal)).problems).toEqual([]);
    const forged = await run.journal.append({
      kind: 'tool.completed',
      ref: effect.id,
      tool_call: { name: 'pay', arguments: { amount: 50000, to: 'mallory' } },
      result: { paid: true },
    });
    expect((await seen(run.journal)).problems).toEqual([`APPROVAL_MISMATCH@${forged.seq}`]);
  });

  it('F1: an outcome with a dangling ref, a tool.failed, a tool.updated and an unknown kind carrying the denied call each ran it', async () => {
    const { run } = await denied();
    const at: number[] = [];
    for (const r of [
      { kind: 'tool.completed', ref: 'nosuch', tool_call: CALL, result: { paid: true } },
      { kind: 'tool.failed', ref: 'nosuch', tool_call: CALL, error: { message: 'timeout' } },
      { kind: 'tool.updated', ref: 'nosuch', tool_call: CALL },
      { kind: 'tool.executed', tool_call: CALL },
    ])
      at.push((await run.journal.append(r as never)).seq);
    const v = await seen(run.journal);
    expect(v.problems).toEqual(at.map((s) => `APPROVAL_MISSING@${s}`));
    expect(v.entry.effect_seq).toBe(at[0]);
  });

  it('F5: an array tool_call on a start or a step is compared element by element', async () => {
    const { run } = await denied();
    const a = await run.journal.append({ kind: 'tool.started', tool_call: [{ name: 'noop', arguments: {} }, CALL] });
    const b = await run.journal.append({ kind: 'step', tool_call: [CALL], result: { paid: true } });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISSING@${a.seq}`, `APPROVAL_MISSING@${b.seq}`]);
    expect(v.entry.effect_seq).toBe(a.seq);
  });

  it("F8: an effect back-dated before the expiry but written after a later record counts at that record's time", async () => {
    const { run } = await v3Run(tempDir());
    const now = Date.now();
    const req = await run.requestApproval(PAY, { expiresAt: new Date(now + 3_600_000) });
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    await run.journal.append({ kind: 'run.completed', ts: new Date(now + 7_200_000), result: { done: true } });
    const e = await run.journal.append({
      kind: 'tool.started',
      ts: new Date(now + 60_000),
      tool_call: CALL,
      meta: { approval: { request: req.id, request_hash: req.stepHash } },
    });
    expect((await seen(run.journal)).problems).toEqual([`APPROVAL_EXPIRED@${e.seq}`]);
  });

  it('F10: erasing the whole call, its name or its arguments from an unnamed denied effect leaves it unchecked, never "never executed"; on a named effect, erased arguments are a notice', async () => {
    for (const path of ['/tool_call', '/tool_call/name', '/tool_call/arguments']) {
      const { store, run } = await denied();
      const e = await run.journal.append({ kind: 'tool.started', tool_call: CALL });
      expect((await seen(run.journal)).problems).toEqual([`APPROVAL_MISSING@${e.seq}`]);
      await eraseValue(store, run.runId, { seq: e.seq, path, reason: 'GDPR Art. 17' });
      const v = await seen(await store.open(run.runId));
      expect(v.problems).toEqual([]);
      expect(v.notices).toContain('APPROVAL_UNCHECKED');
      expect(v.entry).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
    }
    const { store, run } = await v3Run(tempDir());
    const req = await run.requestApproval(PAY);
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const effect = await run.beginTool({ ...PAY, approval: req.id });
    // Its completion repeats the call; erasing it from the start alone leaves the completion one of its outcome.
    await effect.complete({ paid: true });
    await eraseValue(store, run.runId, { seq: effect.seq, path: '/tool_call/arguments', reason: 'GDPR Art. 17' });
    const v = await seen(await store.open(run.runId));
    expect(v.problems).toEqual([]);
    expect(v.notices).toContain('APPROVAL_UNCHECKED');
    expect(v.entry).toMatchObject({ status: 'granted', effect_seq: effect.seq, unchecked: true });
  });
});
