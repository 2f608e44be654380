/**
 * Erasure findings of the fourth and fifth outsiders left open after the first fixes, kept as attacks that must
 * fail: each runs the finding's steps through the built `stepchain` (dist/, in one process of its own: cli-in.ts
 * inProcess) and asserts the fixed behaviour.
 *
 * - outsider 5, 8: a receipt of steps F..K where an erased record n < F and its erasure record E > K was
 *   refused CHAIN_INVALID ("ERASURE_UNRECORDED at seq n"), a valid journal called corrupt. The range holds
 *   neither end of that erasure: it is written and verifies (spec/ERASURE.md §6.5).
 * - outsider 4, 6: a publication withholding the slot that holds an erased value said the completed erasure
 *   was "recorded but not yet carried out … run --resume" (ERASURE_PENDING); now ERASURE_WITHHELD (§5 step 4).
 * - outsider 4, 2: personal data an appender planted in the reason of a bogus approval decision (no such request,
 *   or a signature that does not hold) could never be erased (ERASURE_SIGNED). Now a decision that already counts
 *   as none can have values erased; the verifier reports a decision with an erased value as APPROVAL_INVALID
 *   ("unverifiable after erasure"), so the verdict stays; a decision that counts is still refused.
 * - outsider 5, 9: an erasure record's own `by`/`reason` could never be erased (ERASURE_TARGET_INVALID) and
 *   `--match-path` said "0 erased". Now both can be, by seq or by match, and the journal stays valid (§3).
 * - erase left the same value where the runtime repeats it (a tool's result in run.completed) and said nothing:
 *   now the outcome lists every other place (`elsewhere`, and a line each in people's text).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, startRun } from '../../src/index.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-erasure-outsider5-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { run, ok } = cliIn(dir, {}, { inProcess: true });
/** The codes of a `verify --json` report's problems and notices. */
const codes = (r: { stdout: string }): string[] => {
  const report = (JSON.parse(r.stdout) as { report: { problems: { code: string }[]; warnings?: { code: string }[] } })
    .report;
  return [...report.problems, ...(report.warnings ?? [])].map((p) => p.code);
};

/** A v3 run journal `<store>/r` whose request req-1 (seq 1) presents unlock {pin: 4821}. */
async function requested(store: string): Promise<void> {
  const r = await startRun(new FileStore(join(dir, store)), { runId: 'r', format: 'stepchain/v3', input: 'go' });
  await r.requestApproval({ name: 'unlock', args: { pin: '4821' } }, { id: 'req-1' });
  await r.close();
}

describe('erasure: the fourth and fifth outsiders, what was left (real processes)', { timeout: 300_000 }, () => {
  it('outsider 5, 8: a receipt between an erased record and its erasure record, holding neither, is written and verifies', async () => {
    await requested('e8');
    writeFileSync(join(dir, 'e8-step.json'), '{"kind":"step","input":{"note":"unrelated"}}');
    await ok('append', 'e8/r', '--file', 'e8-step.json');
    await ok('erase', 'e8/r', '--seq', '1', '--path', '/input/presented/arguments/pin', '--reason', 'gdpr');
    // seq 1 erased, erasure record at seq 3: steps 2..2 hold neither.
    await ok('export', 'e8/r', '--from', '2', '--to', '2', '-o', 'e8.tar.gz');
    const verified = await ok('verify', 'e8.tar.gz', '--json');
    expect(JSON.parse(verified.stdout).report.ok).toBe(true);
    // A range holding the erased record but not its erasure record is still refused, with the ends that work.
    const split = await run('export', 'e8/r', '--from', '1', '--to', '2', '-o', 'e8b.tar.gz');
    expect(split.code).not.toBe(0);
    expect(split.stderr).toContain('RANGE_SPLITS_ERASURE');
    expect(split.stderr).not.toContain('CHAIN_INVALID');
  });

  it('outsider 4, 6: a publication that withholds an erased value does not call its erasure pending', async () => {
    await ok('init', 'p6', '--format', 'v3');
    writeFileSync(join(dir, 'p6-step.json'), '{"result":{"email":"alice@example.org","plan":"pro"}}');
    await ok('append', 'p6', '--file', 'p6-step.json');
    await ok('erase', 'p6', '--seq', '0', '--path', '/result/email', '--reason', 'GDPR');
    const journal = await ok('verify', 'p6', '--json');
    expect(codes(journal)).toContain('VALUE_ERASED');
    // Withheld whole (the slot), and withheld as a member's name (its object shows the others).
    for (const [name, paths] of [
      ['slot', ['/result']],
      ['member', ['/result/plan']],
    ] as const) {
      writeFileSync(join(dir, `p6-${name}.json`), JSON.stringify({ rules: [{ id: 'r', paths }] }));
      await ok('publish', 'p6', '--policy', `p6-${name}.json`, '--opt-in', '-o', `p6-${name}.tar`);
      const published = await ok('verify', `p6-${name}.tar`, '--json');
      expect(codes(published)).not.toContain('ERASURE_PENDING');
      expect(JSON.parse(published.stdout).report.ok).toBe(true);
      if (name === 'slot') expect(codes(published)).toContain('ERASURE_WITHHELD');
    }
  });

  it("outsider 4, 2: a bogus decision's planted reason can be erased; the decision stays a problem; a real one stays signed", async () => {
    await requested('d2');
    const G = `sha256:${'0'.repeat(64)}`;
    const bogus = (ref: string, seq: number): string =>
      JSON.stringify({
        kind: 'approval.granted',
        ref,
        ts: '2026-11-27T10:00:00.000Z',
        input: {
          type: 'stepchain-approval/v2',
          genesis_hash: G,
          request: ref,
          request_seq: seq,
          request_hash: G,
          decision: 'granted',
          decided_at: '2026-11-27T10:00:00.000Z',
          reason: 'victim@example.org',
        },
        meta: { approver: { keyid: G, public_key: 'A'.repeat(43) + '=', name: null }, signature: 'AAAA' },
      });
    // seq 2 names no request; seq 3 names req-1 with a binding and signature that do not hold.
    writeFileSync(join(dir, 'd2-a.json'), bogus('nope', 0));
    writeFileSync(join(dir, 'd2-b.json'), bogus('req-1', 1));
    await ok('append', 'd2/r', '--file', 'd2-a.json');
    await ok('append', 'd2/r', '--file', 'd2-b.json');
    const before = await run('verify', 'd2/r', '--json');
    expect(before.code).not.toBe(0);
    await ok('erase', 'd2/r', '--seq', '2', '--path', '/input/reason', '--reason', 'GDPR Art. 17');
    await ok('erase', 'd2/r', '--seq', '3', '--path', '/meta/signature', '--reason', 'GDPR Art. 17');
    await ok('erase', 'd2/r', '--seq', '3', '--path', '/input/reason', '--reason', 'GDPR Art. 17');
    expect(readFileSync(join(dir, 'd2/r/buckets/0000000000000000.jsonl'), 'utf8')).not.toContain('victim@example.org');
    const after = await run('verify', 'd2/r', '--json');
    expect(after.code).not.toBe(0);
    const problems = (
      JSON.parse(after.stdout) as {
        report: { problems: { code: string; message: string; location: { seq: number } }[] };
      }
    ).report.problems;
    expect(
      problems
        .filter((p) => p.code === 'APPROVAL_INVALID')
        .map((p) => p.location.seq)
        .sort(),
    ).toEqual([2, 3]);
    expect(problems.find((p) => p.location.seq === 3)!.message).toContain('unverifiable after erasure');
    // The request is still undecided: an erased bogus grant never becomes one.
    expect((await ok('approve', 'd2/r', '--list', '--json')).stdout).toContain('req-1');
    // A decision that counts (a real denial) is still refused, nothing written.
    await ok('keygen', '-o', 'd2.key');
    await requested('d3');
    await ok('approve', 'd3/r', 'req-1', '--key', 'd2.key', '--deny', '--name', 'alice', '--reason', 'no');
    const bucket = readFileSync(join(dir, 'd3/r/buckets/0000000000000000.jsonl'), 'utf8');
    const refused = await run('erase', 'd3/r', '--seq', '2', '--path', '/input/reason', '--reason', 'x');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('ERASURE_SIGNED');
    expect(readFileSync(join(dir, 'd3/r/buckets/0000000000000000.jsonl'), 'utf8')).toBe(bucket);
  });

  it("outsider 5, 9: an erasure record's own by and reason can be erased, by seq and by match; the journal verifies", async () => {
    await requested('e9');
    const asked = 'GDPR Art. 17 request from bob@example.org';
    await ok(
      'erase',
      'e9/r',
      '--seq',
      '1',
      '--path',
      '/input/presented/arguments/pin',
      '--reason',
      asked,
      '--by',
      'dpo@example.org',
    );
    await ok('erase', 'e9/r', '--seq', '2', '--path', '/input/by', '--reason', 'the DPO left');
    const matched = await ok(
      'erase',
      'e9',
      '--match-path',
      '/input/reason',
      '--value',
      JSON.stringify(asked),
      '--reason',
      'x',
      '--json',
    );
    expect(
      (JSON.parse(matched.stdout) as { erased: { seq: number; path: string }[] }).erased.map(
        (o) => `${o.seq} ${o.path}`,
      ),
    ).toEqual(['2 /input/reason']);
    const bucket = readFileSync(join(dir, 'e9/r/buckets/0000000000000000.jsonl'), 'utf8');
    expect(bucket).not.toContain('dpo@example.org');
    expect(bucket).not.toContain('bob@example.org');
    const verified = await ok('verify', 'e9/r', '--json');
    expect(codes(verified).filter((c) => c === 'VALUE_ERASED')).toHaveLength(3);
    // Of an erasure record, nothing else can be erased: it is what the erased value is checked against.
    const refused = await run('erase', 'e9/r', '--seq', '2', '--path', '/input/digest', '--reason', 'x');
    expect(refused.stderr).toContain('ERASURE_TARGET_INVALID');
  });

  it('an erase names every other place the journal holds the same value (a result repeated in run.completed)', async () => {
    const r = await startRun(new FileStore(join(dir, 'e5')), { runId: 'r', format: 'stepchain/v3', input: 'go' });
    const effect = await r.beginTool({ name: 'lookup', args: { q: 'alice' } });
    await effect.complete({ email: 'alice@example.org' });
    await r.complete({ email: 'alice@example.org' });
    await r.close();
    const lines = readFileSync(join(dir, 'e5/r/buckets/0000000000000000.jsonl'), 'utf8').trim().split('\n');
    const at = lines.findIndex((l) => l.includes('"kind":"tool.completed"'));
    const erased = await ok(
      'erase',
      'e5/r',
      '--seq',
      String(at),
      '--path',
      '/result/email',
      '--reason',
      'GDPR',
      '--json',
    );
    const elsewhere = (JSON.parse(erased.stdout) as { elsewhere?: { seq: number; path: string }[] }).elsewhere ?? [];
    const completed = lines.findIndex((l) => l.includes('"kind":"run.completed"'));
    expect(elsewhere).toContainEqual({ seq: completed, path: '/result/email' });
    expect(elsewhere.every((p) => p.seq !== at)).toBe(true);
    // Said in people's text too, with what to do.
    await ok('erase', 'e5/r', '--seq', String(completed), '--path', '/result/email', '--reason', 'GDPR');
    expect(readFileSync(join(dir, 'e5/r/buckets/0000000000000000.jsonl'), 'utf8')).not.toContain('alice@example.org');
  });
});
