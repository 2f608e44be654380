/**
 * The fifth outsider's fork/copy findings on approvals (black box, the built CLI in one process of its own: cli-in.ts inProcess), kept as
 * attacks that must fail (spec/APPROVALS.md §4, §8 *Copies and forks*):
 *
 * - 4.sh: `fork --from-step 0` of a granted run, then `stepchain copy <parent> <fork>` appended the parent's
 *   request and grant to the fork after its fork point, byte for byte, so the fork rule (a request at or before
 *   the fork point authorises nothing) no longer reached them: the runtime ran the grant in both journals, and
 *   both verified "approved … executed". Now the copy is refused (COPY_INTO_FORK) and nothing is written.
 * - Its related point: `approve <fork> req-1` offered a request the fork copied from its parent as pending and
 *   signed a decision that authorised nothing in the fork; `copy <fork> <parent>` then carried that decision
 *   into the parent, where it worked. Now approve refuses (APPROVAL_FORKED) and `--list` does not offer it, and
 *   a copy of such a fork into a target holding the request is refused (COPY_DROPS_LINEAGE).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, startRun } from '../../src/index.js';
import { copyJournal } from '../../src/store/copy.js';
import { unlockIn } from '../helpers/attack-world.js';
import { cliIn, json } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-approvals-fork-copy-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { run, ok, append } = cliIn(dir, {}, { inProcess: true });

/** A v3 run journal `<store>/r` whose request req-1 presents unlock {pin}; granted by alice when `grant`. */
async function requested(store: string, grant: boolean): Promise<void> {
  const r = await startRun(new FileStore(join(dir, store)), { runId: 'r', format: 'stepchain/v3', input: 'go' });
  await r.requestApproval({ name: 'unlock', args: { pin: '4821' } }, { id: 'req-1' });
  await r.close();
  if ((await run('keygen', '-o', `${store}.key`)).code !== 0) throw new Error('keygen failed');
  if (grant) await ok('approve', `${store}/r`, 'req-1', '--key', `${store}.key`, '--approve', '--name', 'alice');
}

/** Runs the granted call through the runtime in journal `id`; the error code when refused. */
const unlock = (store: string, id: string): Promise<string> => unlockIn(join(dir, store), id);

/** The seq of journal `id`'s last step. */
async function headOf(store: string, id: string): Promise<number | undefined> {
  const j = await new FileStore(join(dir, store)).open(id, { readOnly: true });
  try {
    return (await j.head())?.seq;
  } finally {
    await j.close();
  }
}

/** Journal `id`'s stored record at `seq`, as its line holds it (the seed included). */
async function recordAt(store: string, id: string, seq: number): Promise<Record<string, unknown>> {
  const j = await new FileStore(join(dir, store)).open(id, { readOnly: true });
  try {
    for await (const l of j.lines({ from: seq, to: seq })) return JSON.parse(l.text) as Record<string, unknown>;
    throw new Error(`no seq ${seq}`);
  } finally {
    await j.close();
  }
}

/** Whether `verify` of the journal exits 0 and says req-1's grant was executed. */
async function executedClean(journal: string, key: string): Promise<boolean> {
  const v = await run('verify', journal, '--approver', `${key}.pub`, '--json');
  const approvals = (json(v).report.approvals ?? []) as Array<{ request: string; effect_seq: number | null }>;
  return v.code === 0 && approvals.some((a) => a.request === 'req-1' && a.effect_seq !== null);
}

describe('approvals across forks and copies: the fifth outsider (real processes)', { timeout: 300_000 }, () => {
  it('4.sh: copy of the parent into a fork made before its request is refused; the grant runs in one journal only', async () => {
    await requested('a', true);
    await ok('fork', 'a/r', '--from-step', '0', 'a/f');
    const copied = await run('copy', 'a/r', 'a/f', '--json');
    expect(copied.code).toBe(2);
    expect(copied.stdout + copied.stderr).toContain('COPY_INTO_FORK');
    expect(copied.stdout + copied.stderr).toContain('seq 1');
    // Nor by hand with `stepchain append`: the parent's request with its own seed would have its step hash.
    const parentRequest = await recordAt('a', 'r', 1);
    const replay = ['kind', 'step_id', 'ts', 'ref', 'input', 'seed'].map((k) => [k, parentRequest[k]]);
    writeFileSync(join(dir, 'replay.json'), JSON.stringify(Object.fromEntries(replay)));
    const appended = await run('append', 'a/f', '--file', 'replay.json');
    expect(appended.code).toBe(2);
    expect(appended.stderr).toMatch(/APPROVAL_INVALID.*seed/);
    // Nothing written: the fork holds its step 0 only, and the parent's grant runs in the parent alone.
    expect(await headOf('a', 'f')).toBe(0);
    expect(await unlock('a', 'r')).toBe('ran');
    expect(await unlock('a', 'f')).not.toBe('ran');
    expect(await executedClean('a/r', 'a.key')).toBe(true);
    expect(await executedClean('a/f', 'a.key')).toBe(false);
  });

  it('approve on a fork neither offers nor signs a request copied from the parent; the fork cannot carry one into it', async () => {
    await requested('b', false);
    await ok('fork', 'b/r', '--from-step', '1', 'b/f');
    // Not pending here: --list offers nothing, --all shows it as the parent's.
    expect(json(await ok('approve', 'b/f', '--list', '--json')).requests).toEqual([]);
    const all = json(await ok('approve', 'b/f', '--list', '--all', '--json')).requests as Array<
      Record<string, unknown>
    >;
    expect(all.map((a) => [a.request, a.forked])).toEqual([['req-1', true]]);
    const decided = await run('approve', 'b/f', 'req-1', '--key', 'b.key', '--approve', '--name', 'alice');
    expect(decided.code).toBe(2);
    expect(decided.stderr).toContain('APPROVAL_FORKED');
    // The fork's own steps after the request are not copied into the parent, which holds the request.
    await append('b/f', 0, 1, 'own');
    const back = await run('copy', 'b/f', 'b/r', '--json');
    expect(back.code).toBe(2);
    expect(back.stdout + back.stderr).toContain('COPY_DROPS_LINEAGE');
    expect(await headOf('b', 'r')).toBe(1);
    // The parent still decides its own request, and runs it once.
    await ok('approve', 'b/r', 'req-1', '--key', 'b.key', '--approve', '--name', 'alice');
    expect(await unlock('b', 'r')).toBe('ran');
    expect(await unlock('b', 'f')).toBe('APPROVAL_REQUIRED');
  });

  it('a fork with steps of its own past its fork point is still completed from a copy of itself', async () => {
    // In process (the refusals above are the CLI's): the rule is no broader than "never the fork's first own steps".
    const store = new FileStore(join(dir, 'd'), { fsync: 'none' });
    const r = await store.create('r', { format: 'stepchain/v3' });
    await r.appendMany([{ input: 'p0' }, { input: 'p1' }]);
    const f = await store.fork(r, { fromStep: 1, to: 'f' });
    await f.append({ input: 'own' });
    await copyJournal(f, store, 'g');
    const g = await store.open('g');
    await g.append({ input: 'more' });
    // The source continues the fork's own steps (its step 2 is the fork's), so nothing of another journal lands past F.
    expect((await copyJournal(g, store, 'f2')).copied).toBe(4);
    await f.close();
    expect((await copyJournal(g, store, 'f')).copied).toBe(1);
    // A fork holding nothing past F is not continued from its parent, approvals or not.
    const h = await store.fork(r, { fromStep: 0, to: 'h' });
    await h.close();
    await expect(copyJournal(r, store, 'h')).rejects.toMatchObject({ code: 'COPY_INTO_FORK' });
    await Promise.all([r.close(), g.close()]);
  });
});
