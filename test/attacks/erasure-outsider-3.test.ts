/**
 * The fourth outsider's erase/copy/publish findings (black box, built CLI), kept as attacks that must fail: each
 * runs the finding's steps as real `stepchain` processes (dist/) and asserts the fixed behaviour.
 *
 * - 3: `copy` of a fork dropped its lineage, so a grant the fork copied from its parent (which authorises
 *   nothing in the fork, APPROVALS.md §4) authorised an effect in the copy: one grant ran twice, and a fork
 *   that did not verify was copied into a journal that did. Now COPY_DROPS_LINEAGE, and the fork is verified as
 *   a fork while it is copied.
 * - 11 / 12: erasing an approved effect's /meta/approval (or a member of its call) made the runtime-written
 *   completion APPROVAL_MISSING, the journal INVALID and the run unresumable; now the completion is
 *   APPROVAL_UNCHECKED (a notice, §5 step 5).
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, startRun } from '../../src/index.js';
import { unlockIn } from '../helpers/attack-world.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-erasure-outsider3-');
const SECRET = 'secretmail@example.org';
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { feed: run } = cliIn(dir, {}, { inProcess: true });

/** A v3 run journal `<store>/r` whose request req-1 presents unlock {pin}, granted by alice (a real `approve`). */
async function granted(store: string): Promise<void> {
  const run0 = await startRun(new FileStore(join(dir, store)), { runId: 'r', format: 'stepchain/v3', input: 'go' });
  await run0.requestApproval({ name: 'unlock', args: { pin: '4821' } }, { id: 'req-1' });
  await run0.close();
  expect((await run(['keygen', '-o', `${store}.key`])).code).toBe(0);
  expect(
    (await run(['approve', `${store}/r`, 'req-1', '--key', `${store}.key`, '--approve', '--name', 'alice'])).code,
  ).toBe(0);
}

/** Runs the granted call through the runtime in journal `id`; the error code when refused. */
const unlock = (store: string, id: string): Promise<string> => unlockIn(join(dir, store), id);

describe('erasure: the fourth outsider findings (real processes)', { timeout: 300_000 }, () => {
  it('finding 3: copy of a fork holding a copied request is refused COPY_DROPS_LINEAGE; the grant does not run twice', async () => {
    await granted('c3');
    expect((await run(['fork', 'c3/r', '--from-step', '2', 'c3/f'])).code).toBe(0);
    const copied = await run(['copy', 'c3/f', 'c3/c', '--json']);
    expect(copied.code).not.toBe(0);
    expect(copied.stdout + copied.stderr).toContain('COPY_DROPS_LINEAGE');
    // To SQLite too.
    const toSqlite = await run(['copy', 'c3/f', `sqlite:${join(dir, 'c3.db')}?journal=c`]);
    expect(toSqlite.code).not.toBe(0);
    expect(toSqlite.stderr).toContain('COPY_DROPS_LINEAGE');
    // The parent runs its grant once; the fork refuses it; the copy (if anything was made) holds no request.
    expect(await unlock('c3', 'r')).toBe('ran');
    expect(await unlock('c3', 'f')).toBe('APPROVAL_REQUIRED');
    const verified = await run(['verify', 'c3/c', '--json']);
    expect(verified.stdout).not.toContain('req-1');
  });

  it('finding 3: an INVALID fork (an effect using the copied grant) is not copied into a valid journal', async () => {
    await granted('c3b');
    expect((await run(['fork', 'c3b/r', '--from-step', '2', 'c3b/f'])).code).toBe(0);
    const effect = JSON.stringify({
      kind: 'tool.started',
      tool_call: { name: 'unlock', arguments: { pin: '4821' } },
      meta: { approval: { request: 'req-1', request_hash: 'x' } },
    });
    // Hand-appended, naming the request (seq 1) by its step hash exactly.
    const fork = await new FileStore(join(dir, 'c3b')).open('f', { readOnly: true });
    let hash = '';
    for await (const l of fork.lines({ from: 1, to: 1 }))
      hash = (JSON.parse(l.text) as { step_hash: string }).step_hash;
    await fork.close();
    const append = await run(['append', 'c3b/f'], effect.replace('"x"', JSON.stringify(hash)) + '\n');
    expect(append.code).toBe(0);
    const before = await run(['verify', 'c3b/f']);
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('APPROVAL_MISSING');
    const copied = await run(['copy', 'c3b/f', 'c3b/c']);
    expect(copied.code).not.toBe(0);
    expect((await run(['verify', 'c3b/c'])).stderr).not.toContain('executed');
  });

  it('finding 7: publish, export and fork refuse ERASURE_PENDING while an erasure is recorded but not carried out', async () => {
    expect((await run(['init', 'p7', '--format', 'v3'])).code).toBe(0);
    const steps = [{ result: { email: SECRET, plan: 'gold-plan-7' } }, { input: { i: 1 } }, { input: { i: 2 } }];
    expect((await run(['append', 'p7', '--jsonl'], steps.map((x) => JSON.stringify(x)).join('\n') + '\n')).code).toBe(
      0,
    );
    // Killed right after its erasure record is durable (a real SIGKILL at the commit point).
    const killed = await run(['erase', 'p7', '--seq', '0', '--path', '/result/email', '--reason', 'GDPR'], undefined, {
      STEPCHAIN_TEST_ERASE_FAULT: 'after-record',
    });
    expect(killed.code).not.toBe(0);
    expect((await run(['verify', 'p7'])).stderr).toContain('ERASURE_PENDING');
    writeFileSync(join(dir, 'p7-policy.json'), JSON.stringify({ rules: [{ id: 'r', paths: ['/result/plan'] }] }));
    for (const args of [
      ['publish', 'p7', '--policy', 'p7-policy.json', '--opt-in', '-o', 'p7-pub.tar'],
      ['export', 'p7', '-o', 'p7-all.tar'],
      ['export', 'p7', '--to', '1', '-o', 'p7-prefix.tar'],
      ['fork', 'p7', '--from-step', '1', 'p7-fork'],
    ]) {
      const refused = await run(args);
      expect(refused.code, args.join(' ')).not.toBe(0);
      expect(refused.stderr, args.join(' ')).toContain('ERASURE_PENDING');
      expect(refused.stderr).toContain('--resume');
    }
    for (const f of ['p7-pub.tar', 'p7-all.tar', 'p7-prefix.tar']) expect(existsSync(join(dir, f))).toBe(false);
    expect(existsSync(join(dir, 'p7-fork'))).toBe(false);
    // Resumed, all of them work, and the value is in none.
    expect((await run(['erase', 'p7', '--resume'])).code).toBe(0);
    const published = await run(['publish', 'p7', '--policy', 'p7-policy.json', '--opt-in', '-o', 'p7-pub.tar']);
    expect(published.code, published.stderr).toBe(0);
    expect(readFileSync(join(dir, 'p7-pub.tar'), 'latin1')).not.toContain(SECRET);
    // (From the erasure record on: a fork ending before it would split the erasure, RANGE_SPLITS_ERASURE.)
    expect((await run(['fork', 'p7', '--from-step', '3', 'p7-fork'])).code).toBe(0);
  });

  for (const [finding, path] of [
    ['11', '/meta/approval'],
    ['12', '/tool_call/arguments/pin'],
  ] as const) {
    it(`finding ${finding}: erasing ${path} of an approved effect leaves the journal valid (APPROVAL_UNCHECKED) and the run resumable`, async () => {
      const store = `e${finding}`;
      await granted(store);
      expect(await unlock(store, 'r')).toBe('ran');
      expect((await run(['verify', `${store}/r`, '--approver', `${store}.key.pub`])).code).toBe(0);
      expect((await run(['erase', `${store}/r`, '--seq', '3', '--path', path, '--reason', 'housekeeping'])).code).toBe(
        0,
      );
      const after = await run(['verify', `${store}/r`, '--approver', `${store}.key.pub`]);
      expect(after.stderr).not.toContain('APPROVAL_MISSING');
      expect(after.stderr).toContain('APPROVAL_UNCHECKED');
      expect(after.code).toBe(0);
      // Resumable, and the grant, used once (its use maybe erased), does not run a second time.
      expect(await unlock(store, 'r')).toBe('APPROVAL_USED');
      if (finding === '11') {
        // A second effect appended by hand for the grant is not a clean "executed": the erased start may have used it.
        const j = await new FileStore(join(dir, store)).open('r', { readOnly: true });
        let hash = '';
        for await (const l of j.lines({ from: 1, to: 1 }))
          hash = (JSON.parse(l.text) as { step_hash: string }).step_hash;
        await j.close();
        const again = JSON.stringify({
          kind: 'tool.started',
          tool_call: { name: 'unlock', arguments: { pin: '4821' } },
          meta: { approval: { request: 'req-1', request_hash: hash } },
        });
        expect((await run(['append', `${store}/r`], again + '\n')).code).toBe(0);
        const twice = await run(['verify', `${store}/r`, '--approver', `${store}.key.pub`]);
        expect(twice.stderr).toMatch(/APPROVAL_UNCHECKED seq 6[^\n]*may have used already/);
      }
    });
  }
});
