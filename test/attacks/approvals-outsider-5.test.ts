/**
 * Outsider 5's approval findings on the verifier's side (issue 39), kept as attacks (each failed on the code
 * before the fix). The rules are APPROVALS.md §5 and §6; the CLI cases run the built CLI as a child process.
 * - 3.sh/3b: an effect begun for a denied, mismatched, expired, undecided or unknown request was reported, yet the
 *   request's entry said effect null and its line "never executed": the entry now names the first effect begun.
 * - 1.sh/2.sh: a call in OpenAI Chat's shape, or nested in a list of lists, was not compared.
 * - 5.sh: a same-tool call with its arguments under `input`/`args`, or none, gave no notice.
 * - 7.sh: a look-alike second run after a grant's effect gave no notice (one grant authorises one effect).
 * - a same-tool call with other arguments before its request gave no notice.
 * - 6.sh: verifyReceipt ignored a misspelt `require` member.
 * - 10.sh: a line nested 5,000 deep overflowed the stack of approve --list, show, effect list and diff.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { receiptBytes } from '../../src/receipt/node.js';
import { verifyReceipt } from '../../src/verifier/index.js';
import type { Journal } from '../../src/store/types.js';
import { alice, v3Run } from '../approval/helpers.js';
import { UNLOCK, approvalWorld, seen } from '../helpers/attack-world.js';
import { cliIn, json } from '../helpers/cli-in.js';

const { dir, decided } = approvalWorld();
const started = (j: Journal, request: string, hash: string, extra: Record<string, unknown> = {}) =>
  j.append({
    kind: 'tool.started',
    tool_call: { name: 'unlock', arguments: { pin: '4821' } },
    meta: { approval: { request, request_hash: hash } },
    ...extra,
  });

describe('approval attacks from outsider 5: the verifier', () => {
  it('3.sh: an effect begun for a denied, mismatched, undecided or unknown request is the entry\'s effect, never "never executed"', async () => {
    const cases: Array<[string, 'granted' | 'denied' | null, (h: string) => [string, string]]> = [
      ['APPROVAL_DENIED', 'denied', (h) => ['req-1', h]],
      ['APPROVAL_MISMATCH', 'denied', () => ['req-1', `sha256:${'0'.repeat(64)}`]],
      ['APPROVAL_MISSING', null, (h) => ['req-1', h]],
      ['APPROVAL_MISSING', 'denied', (h) => ['req-9', h]],
    ];
    for (const [code, decision, named] of cases) {
      const { run, req } = await decided(decision);
      const e = await started(run.journal, ...named(req.stepHash));
      const v = await seen(run.journal);
      expect(v.problems, code).toEqual([`${code}@${e.seq}`]);
      expect(v.entries[0], code).toMatchObject({ effect: e.step_id, effect_seq: e.seq });
      expect(v.entries[0]).not.toHaveProperty('unchecked');
    }
  });

  it("3b.sh: an effect begun after its grant expired is the entry's effect; a later effect is still refused", async () => {
    const { run, req } = await decided('granted', { expiresAt: new Date(Date.now() + 60_000) });
    // Dated past the expiry: the verifier reads the record's ts (the chain's latest).
    const e = await started(run.journal, req.id, req.stepHash, { ts: new Date(Date.now() + 3_600_000).toISOString() });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_EXPIRED@${e.seq}`]);
    expect(v.entries[0]).toMatchObject({ status: 'granted', effect: e.step_id, effect_seq: e.seq });
  });

  it("1.sh/2.sh: a denied call in OpenAI Chat's shape, or nested in lists at any depth, is APPROVAL_MISSING", async () => {
    const shapes: unknown[] = [
      { type: 'function', function: { name: 'unlock', arguments: '{"pin":"4821"}' } },
      { id: 'call_1', type: 'function', function: { name: 'unlock', arguments: { pin: '4821' } } },
      [[{ name: 'unlock', arguments: { pin: '4821' } }]],
      [
        { name: 'lookup', arguments: {} },
        [[[{ type: 'function', function: { name: 'unlock', arguments: '{"pin":"4821"}' } }]]],
      ],
      { toolName: 'unlock', input: { pin: '4821' } },
      { name: 'unlock', args: { pin: '4821' } },
    ];
    for (const tool_call of shapes) {
      const { run } = await decided('denied');
      const s = await run.journal.append({ kind: 'step', tool_call: tool_call as never, result: { unlocked: true } });
      const v = await seen(run.journal);
      expect(v.problems, JSON.stringify(tool_call)).toEqual([`APPROVAL_MISSING@${s.seq}`]);
      expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: s.seq });
    }
  });

  it('5.sh: a same-tool call whose arguments cannot be compared (another member, none) is APPROVAL_UNCHECKED', async () => {
    for (const tool_call of [
      { name: 'unlock', params: { pin: '4821' } },
      { name: 'unlock' },
      { name: 'unlock', input: 'x' },
    ]) {
      const { run } = await decided('denied');
      const s = await run.journal.append({ kind: 'step', tool_call: tool_call as never });
      const v = await seen(run.journal);
      expect(v.problems, JSON.stringify(tool_call)).toEqual([]);
      expect(v.notices).toContain(`APPROVAL_UNCHECKED@${s.seq}`);
      expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
    }
  });

  it("7.sh: a look-alike run after the grant's one effect is a notice; an unused grant is then not proven unused", async () => {
    const { run, req } = await decided('granted');
    const e = await run.beginTool({ ...UNLOCK, approval: req.id });
    await e.complete({ unlocked: 1 });
    const again = await run.beginTool({ name: 'unlock', args: '{"pin":"4821","retry":1}' });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.notices).toContain(`APPROVAL_UNCHECKED@${again.seq}`);
    // The grant's own effect stays proven: it ran once, at its seq.
    expect(v.entries[0]).toMatchObject({ status: 'granted', effect_seq: e.seq });
    expect(v.entries[0]).not.toHaveProperty('unchecked');

    const { run: unused } = await decided('granted');
    const other = await unused.beginTool({ name: 'unlock', args: { pin: '4821', retry: 1 } });
    const u = await seen(unused.journal);
    expect(u.notices).toContain(`APPROVAL_UNCHECKED@${other.seq}`);
    expect(u.entries[0]).toMatchObject({ status: 'granted', effect_seq: null, unchecked: true });
  });

  it('a same-tool call with other arguments before its request leaves the request unchecked (notice at the request)', async () => {
    const { run } = await v3Run(dir());
    await run.beginTool({ name: 'unlock', args: { pin: '4821', retry: 1 } });
    const req = await run.requestApproval(UNLOCK, { id: 'req-1' });
    await run.decideApproval(req.id, 'denied', { key: alice.privateKey, name: 'alice' });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.notices).toContain(`APPROVAL_UNCHECKED@${req.seq}`);
    expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
    // Another tool before it leaves it proven.
    const { run: clean } = await v3Run(dir());
    await clean.beginTool({ name: 'lookup', args: { pin: '4821' } });
    await clean.requestApproval(UNLOCK, { id: 'req-1' });
    expect((await seen(clean.journal)).entries[0]).not.toHaveProperty('unchecked');
  });

  it('6.sh: verifyReceipt refuses a require member it does not know (REQUIRE_INVALID), naming it', async () => {
    const { run } = await decided('granted');
    const bytes = await receiptBytes(run.journal, {});
    for (const require of [{ timestamp: true }, { signed: true }, { cosign: true }, { authenticate: true }]) {
      const r = await verifyReceipt(bytes, { require: require as never });
      expect(r.ok, JSON.stringify(require)).toBe(false);
      const p = r.problems.find((x) => x.code === 'REQUIRE_INVALID');
      expect(p?.message).toContain(JSON.stringify(Object.keys(require)[0]));
    }
    // The known ones are still held (met: none asked).
    expect((await verifyReceipt(bytes, { require: {} })).ok).toBe(true);
  });
});

describe('approval attacks from outsider 5: the CLI', () => {
  it('3.sh: verify names the effect begun for a denied request on its line and in --json', async () => {
    const { dir: d, run, req } = await decided('denied');
    const e = await started(run.journal, req.id, req.stepHash);
    await run.close();
    const cli = cliIn(d);
    await cli.ok('keygen', '-o', 'alice.key');
    // The decision was signed by the helper's key; pin it by its public key file.
    writeFileSync(join(d, 'pinned.pub'), Buffer.from(alice.publicKey).toString('base64') + '\n');
    const human = await cli.run('verify', 'r1', '--approver', 'pinned.pub');
    expect(human.code).toBe(1);
    expect(human.stderr + human.stdout).toContain(`APPROVAL_DENIED seq ${e.seq}`);
    expect(human.stderr + human.stdout).toMatch(
      new RegExp(`denied +"unlock" \\(request "req-1", seq 1\\).* executed at seq ${e.seq}`),
    );
    expect(human.stderr + human.stdout).not.toContain('never executed');
    const j = json(await cli.run('verify', 'r1', '--approver', 'pinned.pub', '--json'));
    expect(j.report.approvals[0]).toMatchObject({ effect: e.step_id, effect_seq: e.seq });
  });

  it('10.sh: a line nested 5,000 deep is a coded error for approve --list, approve, show, effect list and diff', async () => {
    const { dir: d, run } = await decided(null);
    await run.journal.append({ kind: 'step', tool_call: { name: 'x', arguments: { a: 1 } } });
    await run.close();
    const bucket = join(d, 'r1', 'buckets', readdirSync(join(d, 'r1', 'buckets'))[0]!);
    const lines = readFileSync(bucket, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"arguments":{"a":1}'));
    lines[at] = lines[at]!.replace('"arguments":{', `"arguments":${'['.repeat(5000)}${']'.repeat(5000)},"zz":{`);
    writeFileSync(bucket, lines.join('\n'));
    const cli = cliIn(d);
    await cli.ok('keygen', '-o', 'alice.key');
    for (const args of [
      ['approve', 'r1', '--list'],
      ['approve', 'r1', 'req-1', '--key', 'alice.key', '--deny'],
      ['show', 'r1', String(at)],
      ['effect', 'list', 'r1'],
      ['diff', 'r1', 'r1'],
    ]) {
      const r = await cli.run(...args);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr, args.join(' ')).not.toMatch(/Maximum call stack|looks like a bug/);
      expect(r.stderr, args.join(' ')).toMatch(/DEPTH_LIMIT/);
    }
  });
});
