/**
 * Retention (spec/RETENTION.md): prune removes exactly the expired runs, whole, each after its tombstone;
 * tombstones check against the checkpoints signed before the removal and refuse any other; a prune killed
 * mid-way is finished by the next; nothing of a removed run stays in the store; on every store. The built CLI's
 * calls run in one process of the CLI of the file's own (test/helpers/cli-sync.ts), but for the prune that is
 * SIGKILLed mid-way, which starts a real process.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FileStore, MemoryStore, type Journal, type Store } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { noteSigner } from '../../src/proofs/index.js';
import { checkTombstone, prune, readTombstones, TOMBSTONE_JOURNAL, type Tombstone } from '../../src/retention/index.js';
import { syncCli } from '../helpers/cli-sync.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import type { JsonObject } from '../../src/canonical/json.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const NOW = new Date('2026-11-27T12:00:00.000Z');
const daysAgo = (d: number): string => new Date(NOW.getTime() - d * 86_400_000).toISOString();
const LOG_KEY = new Uint8Array(32).fill(7);
const inProcess = syncCli();

/** A run created `age` days ago whose last step is `lastAge` days old, holding a marker no other run holds. */
async function makeRun(store: Store, id: string, age: number, lastAge: number, steps = 3): Promise<Journal> {
  const j = await store.create(id, { run: { agent: 'retention-test' }, createdAt: daysAgo(age) });
  for (let i = 0; i < steps; i++) {
    const ts = daysAgo(i === steps - 1 ? lastAge : age - (age - lastAge) * (i / steps));
    await j.append({ step_id: `${id}-${i}`, ts, input: { marker: `secret-of-${id}-${i}` }, result: { i } });
  }
  return j;
}

async function checkpointOf(j: Journal): Promise<string> {
  const signed = await (j as unknown as { checkpoint(s: unknown): Promise<{ note: string }> }).checkpoint(
    noteSigner('retention.test/log', LOG_KEY),
  );
  return signed.note;
}

const stores: Array<[string, () => Promise<Store>]> = [
  ['a directory', async () => new FileStore(tempDir('stepchain-prune-'), { fsync: 'none' })],
  ['SQLite', async () => new SqliteStore(join(tempDir('stepchain-prune-'), 'runs.db'), { fsync: 'none' })],
];

describe.each(stores)('prune on %s', (_name, make) => {
  test('removes exactly the expired runs, each after its tombstone, and finishes nothing twice', async () => {
    const store = await make();
    try {
      const old = await makeRun(store, 'old-a', 90, 60);
      const oldCheckpoint = await checkpointOf(old);
      await old.append({ step_id: 'old-a-late', ts: daysAgo(45), result: 'after the checkpoint' });
      await old.close();
      await (await makeRun(store, 'old-b', 40, 31, 1)).close();
      await (await makeRun(store, 'fresh', 40, 2)).close();
      await (await makeRun(store, 'created-long-ago', 400, 1)).close();

      const first = await prune(store, { keepDays: 30, now: NOW });
      expect(first.removed.map((t) => t.journal).sort()).toEqual(['old-a', 'old-b']);
      expect(first.kept).toBe(2);
      expect(await store.list({})).toEqual(['created-long-ago', 'fresh']);
      expect((await store.list()).sort()).toEqual([TOMBSTONE_JOURNAL, 'created-long-ago', 'fresh'].sort());

      const tombstones = await readTombstones(store);
      const a = tombstones.find((t) => t.journal === 'old-a')!;
      expect(a).toMatchObject({
        steps: 4,
        last_ts: daysAgo(45),
        checkpoint: oldCheckpoint,
        policy: { keep_days: 30, basis: 'last-step' },
      });
      expect(checkTombstone(a)).toEqual({ ok: true, checkpointSize: 3 });
      // The checkpoint someone kept from before the removal checks against the tombstone.
      expect(checkTombstone(a, oldCheckpoint)).toEqual({ ok: true, checkpointSize: 3 });
      expect(checkTombstone(tombstones.find((t) => t.journal === 'old-b')!)).toEqual({
        ok: true,
        checkpointSize: null,
      });

      // The tombstone journal is an ordinary journal: it verifies.
      const graveyard = await store.open(TOMBSTONE_JOURNAL, { readOnly: true });
      expect((await graveyard.verify()).ok).toBe(true);
      await graveyard.close();

      // Again: nothing more is expired, nothing is written twice.
      const second = await prune(store, { keepDays: 30, now: NOW });
      expect(second.removed).toEqual([]);
      expect(await readTombstones(store)).toHaveLength(2);

      // By creation time, the run created long ago goes too.
      const third = await prune(store, { keepDays: 30, now: NOW, basis: 'created', reason: 'policy change' });
      expect(third.removed.map((t) => t.journal).sort()).toEqual(['created-long-ago', 'fresh']);
      expect((await readTombstones(store)).map((t) => t.reason)).toEqual(expect.arrayContaining(['policy change']));
    } finally {
      await (store as { close?: () => Promise<void> }).close?.();
    }
  });
});

describe('prune on Postgres', () => {
  test('the same policy gives the same removals and tombstones as on a directory', async () => {
    const pgh = await postgresHarness('prune', 2);
    const store = pgh.store();
    const dir = new FileStore(tempDir('stepchain-prune-'), { fsync: 'none' });
    for (const s of [store, dir] as Store[]) {
      await (await makeRun(s, 'old', 100, 50)).close();
      await (await makeRun(s, 'new', 10, 1)).close();
    }
    const [p, f] = [await prune(store, { keepDays: 30, now: NOW }), await prune(dir, { keepDays: 30, now: NOW })];
    expect(p.removed.map((t) => t.journal)).toEqual(['old']);
    // Same journal ids, created_at and ts: the runs are the same bytes but for the random salts, so compare the shape.
    const unsalted = (t: Tombstone) => ({
      ...t,
      head: null,
      tree_root: null,
      run_id: null,
      genesis_hash: null,
      head_proof: null,
    });
    expect(unsalted(p.removed[0]!)).toEqual(unsalted(f.removed[0]!));
    expect(await store.list({})).toEqual(['new']);
    expect(checkTombstone((await readTombstones(store))[0])).toEqual({ ok: true, checkpointSize: null });
  });
});

describe('tombstones refuse what they do not extend', () => {
  test('a checkpoint of another run, an altered root, a proof cut short, a hostile shape', async () => {
    const store = new MemoryStore();
    const a = await makeRun(store, 'a', 90, 60, 5);
    const b = await makeRun(store, 'b', 90, 60, 5);
    const cpB = await (async () => {
      const { MemoryTree, stepLeafHash, treeRoot, signCheckpoint } = await import('../../src/proofs/index.js');
      const t = new MemoryTree();
      for await (const line of b.lines())
        t.append(stepLeafHash((JSON.parse(line.text) as { step_hash: string }).step_hash)!);
      return signCheckpoint(
        { origin: 'retention.test/log', size: 5, root: await treeRoot(t, 5) },
        noteSigner('retention.test/log', LOG_KEY),
      );
    })();
    await a.close();
    await b.close();
    const { removed } = await prune(store, { keepDays: 30, now: NOW });
    const ta = removed.find((t) => t.journal === 'a')!;
    const tb = removed.find((t) => t.journal === 'b')!;
    expect(checkTombstone(tb, cpB)).toEqual({ ok: true, checkpointSize: 5 });
    expect(checkTombstone(ta, cpB)).toMatchObject({ ok: false, problem: { code: 'TOMBSTONE_INCONSISTENT' } });
    const altered: Tombstone = { ...tb, tree_root: ta.tree_root };
    expect(checkTombstone(altered, cpB)).toMatchObject({ ok: false, problem: { code: 'TOMBSTONE_INCONSISTENT' } });
    for (const hostile of [
      null,
      7,
      'x',
      [],
      {},
      { ...tb, tombstone: 'stepchain/tombstone/v9' },
      { ...tb, steps: -1 },
      { ...tb, head: null },
      { ...tb, consistency: null, checkpoint: cpB },
      { ...tb, policy: { keep_days: 1, basis: 'never' } },
    ]) {
      expect(checkTombstone(hostile as unknown)).toMatchObject({ ok: false, problem: { code: 'TOMBSTONE_MALFORMED' } });
    }
  });

  test('a tombstone written before a crash is not written again: the next prune only finishes the removal', async () => {
    const store = new MemoryStore();
    await (await makeRun(store, 'half-done', 90, 60)).close();
    // The state a prune killed between its two steps leaves: the tombstone durable, the run still there.
    const {
      removed: [planned],
    } = await prune(store, { keepDays: 30, now: NOW, dryRun: true });
    const graveyard = await store.create(TOMBSTONE_JOURNAL);
    await graveyard.append({
      step_id: `tombstone:half-done:${planned!.head}`,
      input: { journal: 'half-done' },
      result: planned as unknown as JsonObject,
    });
    await graveyard.close();
    const finished = await prune(store, { keepDays: 30, now: new Date(NOW.getTime() + 3_600_000) });
    expect(finished).toMatchObject({ resumed: 1, kept: 0 });
    expect(finished.removed).toEqual([planned]);
    expect(await store.list({})).toEqual([]);
    expect(await readTombstones(store)).toEqual([planned]);
  });

  test('a run written to while it is pruned is kept, and its tombstone is marked superseded', async () => {
    // A writer appends to the run between the tombstone and the removal: the store below does it at exactly that point.
    class RacingStore extends MemoryStore {
      override async open(id: string, options?: { readOnly?: boolean }): Promise<Journal> {
        const journal = await super.open(id, options);
        if (id !== TOMBSTONE_JOURNAL) return journal;
        const appendMany = journal.appendMany.bind(journal);
        journal.appendMany = async (steps, o) => {
          const done = await appendMany(steps, o);
          const run = await super.open('busy');
          await run.append({ step_id: 'late', result: 'written while being pruned' });
          await run.close();
          return done;
        };
        return journal;
      }
    }
    const store = new RacingStore();
    await (await makeRun(store, 'busy', 90, 60)).close();
    await store.create(TOMBSTONE_JOURNAL).then((j) => j.close());
    const result = await prune(store, { keepDays: 30, now: NOW });
    expect(result).toMatchObject({ removed: [], raced: ['busy'], kept: 1 });
    expect(await store.list({})).toEqual(['busy']);
    const busy = await store.open('busy', { readOnly: true });
    expect((await busy.head())?.seq).toBe(3);
    await busy.close();
  });

  test('a damaged run is never pruned: it is kept and reported, and the others still go', async () => {
    const root = tempDir('stepchain-prune-damaged-');
    const store = new FileStore(root, { fsync: 'none' });
    await (await makeRun(store, 'tampered', 90, 60)).close();
    await (await makeRun(store, 'intact', 90, 60)).close();
    const bucket = join(root, 'tampered', readdirSync(join(root, 'tampered')).find((f) => f.endsWith('.jsonl')) ?? '');
    const bucketFile = readdirSync(join(root, 'tampered'), { recursive: true })
      .map(String)
      .find((f) => f.endsWith('.jsonl'))!;
    const path = join(root, 'tampered', bucketFile);
    writeFileSync(path, readFileSync(path, 'utf8').replace('secret-of-tampered-1', 'rewritten-by-someone'));
    void bucket;
    const result = await prune(store, { keepDays: 30, now: NOW });
    expect(result.removed.map((t) => t.journal)).toEqual(['intact']);
    expect(result.skipped).toEqual([
      { journal: 'tampered', code: 'JOURNAL_INVALID', message: expect.stringContaining('at seq 1') },
    ]);
    expect(await store.list({})).toEqual(['tampered']);
    const cli = inProcess({ args: ['prune', root, '--keep-days', '30'] });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toContain('kept tampered: JOURNAL_INVALID');
  });

  test('property: prune removes exactly the runs past the cutoff, for any ages and any policy', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 365 }),
        async (ages, keepDays) => {
          const store = new MemoryStore();
          for (const [i, age] of ages.entries()) await (await makeRun(store, `r${i}`, age + 1, age, 1)).close();
          const { removed, kept } = await prune(store, { keepDays, now: NOW });
          const expected = ages.flatMap((age, i) => (age > keepDays ? [`r${i}`] : []));
          expect(removed.map((t) => t.journal).sort()).toEqual(expected.sort());
          expect(kept).toBe(ages.length - expected.length);
          for (const t of removed) expect(checkTombstone(t).ok).toBe(true);
        },
      ),
      { numRuns: 25 },
    );
  });

  test('a store of 10 000 runs: half pruned, in one pass, every tombstone checks', async () => {
    const store = new MemoryStore();
    for (let i = 0; i < 10_000; i++) {
      const j = await store.create(`run-${String(i).padStart(5, '0')}`, {
        run: { agent: 'bulk' },
        createdAt: daysAgo(i % 2 === 0 ? 100 : 5),
      });
      await j.append({ step_id: 's', ts: daysAgo(i % 2 === 0 ? 99 : 4), result: i });
      await j.close();
    }
    const { removed, kept } = await prune(store, { keepDays: 30, now: NOW });
    expect(removed).toHaveLength(5_000);
    expect(kept).toBe(5_000);
    expect((await store.list({})).every((id) => Number(id.slice(4)) % 2 === 1)).toBe(true);
    expect(removed.every((t) => checkTombstone(t).ok)).toBe(true);
  }, 120_000);
});

describe('the CLI', () => {
  const run = (args: string[]) => inProcess({ args });

  test('--dry-run writes nothing; prune and runs --removed say what went, as text and JSON', async () => {
    const root = tempDir('stepchain-prune-cli-');
    const store = new FileStore(root, { fsync: 'none' });
    await (await makeRun(store, 'old', 400, 300)).close();
    await (await makeRun(store, 'new', 2, 0)).close();
    const before = snapshot(root);
    const dry = run(['prune', root, '--keep-days', '30', '--dry-run']);
    expect(dry.status).toBe(0);
    expect(dry.stderr).toContain('would remove old: 3 steps');
    expect(snapshot(root)).toEqual(before);

    const real = run(['prune', root, '--keep-days', '30', '--reason', 'GDPR\u001b[31m retention']);
    expect(real.status).toBe(0);
    expect(real.stderr).toContain('removed 1 run, kept 1');
    const listed = run(['runs', root, '--removed', '--json']);
    expect(listed.status).toBe(0);
    const doc = JSON.parse(listed.stdout) as { ok: boolean; removed: Array<Tombstone & { check: { ok: boolean } }> };
    expect(doc.ok).toBe(true);
    expect(doc.removed.map((t) => [t.journal, t.steps, t.check.ok])).toEqual([['old', 3, true]]);
    const text = run(['runs', root, '--removed']);
    expect(text.stdout).toContain('old  3 steps');
    expect(text.stdout).not.toContain('\u001b[31m');
    // Nothing of the removed run is left in the store's files: not its content, not its directory.
    expect(grepTree(root, 'secret-of-old')).toEqual([]);
    expect(readdirSync(root)).not.toContain('old');

    expect(run(['prune', root]).status).toBe(2);
    expect(run(['prune', root, '--keep-days', '-1']).status).toBe(2);
    expect(run(['prune', root, '--keep-days', '3', '--basis', 'soon']).status).toBe(2);
  });

  test('runs --removed refuses tombstones from an altered tombstone journal, and a back-dated step does not expire an active run', async () => {
    const root = tempDir('stepchain-prune-alter-');
    const store = new FileStore(root, { fsync: 'none' });
    await (await makeRun(store, 'gone', 400, 300, 1)).close();
    const active = await store.create('active', { run: { agent: 'x' }, createdAt: daysAgo(1) });
    await active.append({ step_id: 'now', result: 'today' });
    await active.append({ step_id: 'backdated', ts: daysAgo(500), result: "a writer's clock may go back" });
    await active.close();
    expect(run(['prune', root, '--keep-days', '30']).status).toBe(0);
    expect(await store.list({})).toEqual(['active']);
    const bucketFile = readdirSync(join(root, TOMBSTONE_JOURNAL), { recursive: true })
      .map(String)
      .find((f) => f.endsWith('.jsonl'))!;
    const path = join(root, TOMBSTONE_JOURNAL, bucketFile);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"steps":1', '"steps":7'));
    const listed = run(['runs', root, '--removed', '--json']);
    expect(listed.status).toBe(1);
    const doc = JSON.parse(listed.stdout) as {
      ok: boolean;
      tombstones_chain: { ok: boolean; problems: Array<{ code: string }> };
    };
    expect(doc.ok).toBe(false);
    expect(doc.tombstones_chain.problems[0]!.code).toBe('HASH_MISMATCH');
    const text = run(['runs', root, '--removed']);
    expect(text.status).toBe(1);
    expect(text.stderr).toContain('the tombstone journal _tombstones does NOT verify');
    expect(text.stdout).toContain('not evidence');
  });

  test('a prune SIGKILLed mid-way is finished by the next: each expired run removed once, with one tombstone', async () => {
    const root = tempDir('stepchain-prune-kill-');
    const store = new FileStore(root, { fsync: 'none' });
    for (let i = 0; i < 150; i++)
      await (await makeRun(store, `old-${String(i).padStart(3, '0')}`, 200, 100, 1)).close();
    await (await makeRun(store, 'new', 2, 0, 1)).close();
    const child = spawn(process.execPath, [CLI, 'prune', root, '--keep-days', '30'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve) => {
      let seen = 0;
      child.stderr.on('data', (chunk: Buffer) => {
        seen += chunk.toString().split('removed old-').length - 1;
        if (seen >= 1) child.kill('SIGKILL');
      });
      child.on('exit', () => resolve());
    });
    const interrupted = (await store.list({})).length;
    const again = run(['prune', root, '--keep-days', '30', '--json']);
    expect(again.status).toBe(0);
    // The kill landed mid-way (at the first of 150 removals reported): the second prune had runs left to remove.
    expect(interrupted).toBeGreaterThan(1);
    expect((JSON.parse(again.stdout) as { removed: unknown[] }).removed.length).toBe(interrupted - 1);
    expect(await store.list({})).toEqual(['new']);
    const tombstones = await readTombstones(store);
    expect(tombstones.map((t) => t.journal).sort()).toEqual(
      Array.from({ length: 150 }, (_, i) => `old-${String(i).padStart(3, '0')}`),
    );
    expect(tombstones.every((t) => checkTombstone(t).ok)).toBe(true);
    const verified = run(['verify', join(root, TOMBSTONE_JOURNAL)]);
    expect(verified.status).toBe(0);
  }, 120_000);
});

test("a prune killed between a run's rename and its deletion is finished by the next: nothing of the run left on disk", async () => {
  // The state such a kill leaves (FILE-STORE.md §15): the tombstone durable, the run renamed to a hidden
  // directory and not yet deleted. An outsider reproduced it with a real SIGKILL; the rename and the kill
  // are made here by a store whose remove stops right after its commit point.
  const root = tempDir('stepchain-prune-removing-');
  const run = (args: string[]) => inProcess({ args });
  class KilledAfterRename extends FileStore {
    override async remove(id: string): Promise<void> {
      renameSync(join(root, id), join(root, '.removing-0123456789abcdef'));
      throw new Error('killed after the rename');
    }
  }
  const store = new FileStore(root, { fsync: 'none' });
  await (await makeRun(store, 'old', 400, 300)).close();
  await (await makeRun(store, 'new', 2, 0)).close();
  await expect(prune(new KilledAfterRename(root, { fsync: 'none' }), { keepDays: 30, now: NOW })).rejects.toThrow(
    'killed after the rename',
  );
  expect(grepTree(root, 'secret-of-old').length).toBeGreaterThan(0);
  expect(await store.list({})).toEqual(['new']); // list() never names the tombstone journal

  const before = snapshot(root);
  expect(run(['prune', root, '--keep-days', '30', '--dry-run']).status).toBe(0);
  expect(snapshot(root)).toEqual(before);
  // doctor says so, and how to finish, without failing the store or touching it; of the store root or a journal in it.
  for (const at of [root, join(root, 'new')]) {
    const doctor = run(['doctor', at]);
    expect(doctor.status, doctor.stderr).toBe(0);
    expect(doctor.stderr).toContain(
      `REMOVAL_UNFINISHED 1 removed journal's files still on disk under ${root} (.removing-…: a prune or removal was cut short after its commit point); any \`stepchain prune ${root} --keep-days N\` deletes them`,
    );
    expect(JSON.parse(run(['doctor', at, '--json']).stdout)).toMatchObject({
      ok: true,
      notices: [{ code: 'REMOVAL_UNFINISHED' }],
    });
  }
  expect(snapshot(root)).toEqual(before);

  // What a removal never leaves is never deleted, whatever its name (outsider C): a file, links to elsewhere.
  const elsewhere = tempDir('stepchain-prune-elsewhere-');
  writeFileSync(join(elsewhere, 'keep.txt'), 'kept');
  writeFileSync(join(root, '.removing-1111111111111111'), 'a file of the user');
  symlinkSync(elsewhere, join(root, '.removing-2222222222222222'));
  symlinkSync(join(elsewhere, 'keep.txt'), join(root, '.removing-3333333333333333'));
  const again = run(['prune', root, '--keep-days', '30', '--json']);
  expect(again.status).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ finished: 1, removed: [] });
  expect(
    readdirSync(root)
      .filter((n) => n.startsWith('.removing-'))
      .sort(),
  ).toEqual(['.removing-1111111111111111', '.removing-2222222222222222', '.removing-3333333333333333']);
  expect(readFileSync(join(elsewhere, 'keep.txt'), 'utf8')).toBe('kept');
  expect(grepTree(root, 'secret-of-old')).toEqual([]);
  expect((await readTombstones(store)).map((t) => t.journal)).toEqual(['old']);
  // Nothing left to finish: the text says nothing of it, nor does doctor (a file or a link of that name is no removal).
  expect(run(['prune', root, '--keep-days', '30']).stderr).not.toContain('interrupted prune had removed');
  const healthy = run(['doctor', root]);
  expect(healthy.stderr).toContain('✔ healthy');
  expect(healthy.stderr).not.toContain('REMOVAL_UNFINISHED');
});

function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[p] = readFileSync(p, 'latin1');
    }
  };
  walk(root);
  return out;
}

function grepTree(root: string, needle: string): string[] {
  return Object.entries(snapshot(root))
    .filter(([, text]) => text.includes(needle))
    .map(([p]) => p);
}

test('a run whose id is too long for a plain tombstone step id is pruned all the same (a hashed step id), and its tombstone names it in full', async () => {
  const store = new MemoryStore();
  const long = 'agent-' + 'x'.repeat(100);
  await (await makeRun(store, long, 90, 60)).close();
  await (await makeRun(store, 'short', 90, 60)).close();
  const result = await prune(store, { keepDays: 30, now: NOW });
  expect(result.removed.map((t) => t.journal).sort()).toEqual([long, 'short'].sort());
  expect(await store.list({})).toEqual([]);
  const graveyard = await store.open(TOMBSTONE_JOURNAL);
  const ids: string[] = [];
  for await (const r of graveyard.read()) ids.push(r.step_id);
  await graveyard.close();
  expect(ids).toContain(`tombstone:short:${result.removed.find((t) => t.journal === 'short')!.head}`);
  expect(ids.some((id) => /^tombstone:sha256\.[0-9a-f]{32}:sha256:[0-9a-f]{64}$/.test(id))).toBe(true);
  expect((await readTombstones(store)).map((t) => t.journal).sort()).toEqual([long, 'short'].sort());
});
