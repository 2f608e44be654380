/**
 * The Postgres store's Merkle tree on the run's real server (spec/POSTGRES.md §4.1): the tree is kept in
 * every commit's transaction (its stored state is the chain's whatever the batching), its root is
 * MemoryTree's, its proofs verify, a journal without a tree (made before schema version 2) gets one on
 * its first write, checkpoints and proofs are byte for byte the file store's for the same steps, and a
 * checkpoint that does not extend the last one signed is refused.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  MemoryTree,
  noteSigner,
  parseCheckpoint,
  parseNote,
  proveConsistency,
  proveInclusion,
  rootOfLeaves,
  stepLeafHash,
  tileCountAt,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from '../../src/proofs/index.js';
import { FileStore, type Journal, type StepInput } from '../../src/store/index.js';
import { PostgresStore, type PostgresJournal } from '../../src/store/postgres/index.js';
import { tempDir } from '../helpers/tmp.js';
import { postgresHarness } from '../helpers/postgres.js';

const pgHarness = await postgresHarness('pgtree', 4);
const { url, admin } = pgHarness;
const pgStore = (options: Record<string, unknown> = {}): PostgresStore => pgHarness.store(options);

const SEED = new Uint8Array(32).fill(7);
const ORIGIN = 'agents.example.com/run/sha256:' + '0'.repeat(64);
const step = (i: number, tag = 'a'): StepInput => ({
  step_id: `${tag}-${i}`,
  ts: '2026-03-01T10:00:00.000Z',
  input: { i, tag },
  model: 'm',
  result: { ok: i },
});

async function stepHashes(j: Journal): Promise<string[]> {
  const out: string[] = [];
  for await (const l of j.lines()) out.push((JSON.parse(l.text) as { step_hash: string }).step_hash);
  return out;
}

async function storedSize(store: PostgresStore, j: PostgresJournal): Promise<number | null> {
  const r = await admin.query(
    `SELECT size::float8 AS size FROM "${store.tables.schema}".tree_state WHERE journal = $1`,
    [j.key],
  );
  return r.rows[0]?.size ?? null;
}

async function tileRows(store: PostgresStore, j: PostgresJournal): Promise<number[]> {
  const r = await admin.query(
    `SELECT tile_level, count(*)::int AS n FROM "${store.tables.schema}".tree_tiles WHERE journal = $1 GROUP BY tile_level ORDER BY tile_level`,
    [j.key],
  );
  return r.rows.map((row: { n: number }) => row.n);
}

describe('the tree follows every commit', () => {
  test("any batching (appendMany, concurrent appends, one by one): the stored state is the chain's, its root MemoryTree's, its proofs verify", async () => {
    const store = pgStore();
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 120 }), fc.constantFrom('many', 'concurrent', 'single')), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        async (batches, pick) => {
          const j = await store.create(`p${k++}`);
          let i = 0;
          for (const [count, how] of batches) {
            const steps = Array.from({ length: how === 'single' ? Math.min(count, 5) : count }, () => step(i++));
            if (how === 'many') await j.appendMany(steps);
            else if (how === 'concurrent') await Promise.all(steps.map((s) => j.append(s)));
            else for (const s of steps) await j.append(s);
          }
          const hashes = await stepHashes(j);
          const size = hashes.length;
          expect(await storedSize(store, j)).toBe(size); // kept by the commits themselves, not rebuilt on read
          const levels = await tileRows(store, j);
          expect(levels).toEqual([0, 1, 2].map((l) => tileCountAt(size, l)).filter((c) => c > 0));
          const memory = new MemoryTree();
          for (const h of hashes) memory.append(stepLeafHash(h)!);
          const view = await (await store.open(j.id, { readOnly: true })).treeView();
          expect(view.size).toBe(size);
          expect(Buffer.from(view.root)).toEqual(Buffer.from(rootOfLeaves(hashes.map((h) => stepLeafHash(h)!))));
          expect(Buffer.from(view.root)).toEqual(Buffer.from(await treeRoot(memory, size)));
          const index = pick % size;
          const proof = await proveInclusion(view.reader, index, index, size);
          expect(proof.map((p) => Buffer.from(p).toString('hex'))).toEqual(
            (await proveInclusion(memory, index, index, size)).map((p) => Buffer.from(p).toString('hex')),
          );
          expect(verifyInclusion({ index, size, leaf: stepLeafHash(hashes[index]!)!, proof, root: view.root })).toEqual(
            { ok: true },
          );
          const oldSize = 1 + (pick % size);
          const consistency = await proveConsistency(view.reader, oldSize, size);
          expect(
            verifyConsistency({
              oldSize,
              oldRoot: await treeRoot(memory, oldSize),
              size,
              root: view.root,
              proof: consistency,
            }),
          ).toEqual({ ok: true });
          await j.close();
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);

  test('a journal written at schema version 1: read through an in-memory tree, migrated by the first writer, which builds its tree on the first append', async () => {
    const store = pgStore();
    const j = await store.create('old');
    await j.appendMany(Array.from({ length: 300 }, (_, i) => step(i)));
    // Back to what schema version 1 was: no tree tables (nor version 3's run_state), no migration row 2 or 3.
    const s = `"${store.tables.schema}"`;
    await admin.query(`DROP TABLE ${s}.tree_tiles, ${s}.tree_state, ${s}.checkpoints, ${s}.run_state`);
    await admin.query(`DELETE FROM ${s}.migrations WHERE version >= 2`);
    const want = rootOfLeaves((await stepHashes(j)).map((h) => stepLeafHash(h)!));
    const reader = new PostgresStore({ connectionString: url, schema: store.tables.schema });
    pgHarness.track(reader);
    const old = await reader.open('old', { readOnly: true });
    expect(Buffer.from((await old.treeView()).root)).toEqual(Buffer.from(want));
    expect(await old.checkpoints()).toEqual([]);
    expect((await admin.query(`SELECT max(version) AS v FROM ${s}.migrations`)).rows[0].v).toBe(1); // a reader never migrates
    const writer = new PostgresStore({ connectionString: url, schema: store.tables.schema });
    pgHarness.track(writer);
    const w = await writer.open('old');
    expect(await storedSize(store, w)).toBeNull();
    await w.append(step(300));
    expect(await storedSize(store, w)).toBe(301);
    expect(await tileRows(store, w)).toEqual([301, 1]);
    const view = await (await writer.open('old', { readOnly: true })).treeView();
    expect(Buffer.from(view.root)).toEqual(
      Buffer.from(rootOfLeaves((await stepHashes(w)).map((h) => stepLeafHash(h)!))),
    );
  }, 60_000);
  test('merkleTree: false defers the tree: commits leave it behind, the next checkpoint (or writer that keeps it) catches up', async () => {
    const store = pgStore();
    await store.create('lazy');
    const lazy = new PostgresStore({ connectionString: url, schema: store.tables.schema, merkleTree: false });
    pgHarness.track(lazy);
    const j = await lazy.open('lazy');
    await j.appendMany(Array.from({ length: 20 }, (_, i) => step(i)));
    expect(await storedSize(store, j)).toBeNull();
    const signed = await j.checkpoint(noteSigner(ORIGIN, SEED, 1, () => 0));
    expect(signed.checkpoint.size).toBe(20);
    expect(await storedSize(store, j)).toBe(20);
    expect(Buffer.from(signed.checkpoint.root)).toEqual(
      Buffer.from(rootOfLeaves((await stepHashes(j)).map((h) => stepLeafHash(h)!))),
    );
    await j.append(step(20));
    expect(await storedSize(store, j)).toBe(20);
    await (await store.open('lazy')).append(step(21));
    expect(await storedSize(store, j)).toBe(22);
  }, 60_000);
});

describe('checkpoints', () => {
  test('the same steps in the file store and Postgres: the same checkpoint note and the same proofs, byte for byte', async () => {
    const identity = { journalId: 'same', createdAt: '2026-03-01T10:00:00.000Z' };
    const file = await new FileStore(tempDir(), { fsync: 'none' }).create('run', identity);
    const pgj = await pgStore().create('run', identity);
    const steps = Array.from({ length: 70 }, (_, i) => step(i));
    for (const s of steps.slice(0, 40)) await file.append(s);
    await file.appendMany(steps.slice(40));
    await pgj.appendMany(steps.slice(0, 25));
    await Promise.all(steps.slice(25).map((s) => pgj.append(s)));
    const signer = noteSigner(ORIGIN, SEED, 1, () => 0);
    const a = await file.checkpoint(signer);
    const b = await pgj.checkpoint(signer);
    expect(b.note).toBe(a.note);
    expect(await pgj.checkpoints()).toEqual([a.note]);
    const fv = await file.treeView();
    const pv = await pgj.treeView();
    const hex = (hs: readonly Uint8Array[]) => hs.map((h) => Buffer.from(h).toString('hex'));
    expect(hex(await proveInclusion(pv.reader, 3, 9, 70))).toEqual(hex(await proveInclusion(fv.reader, 3, 9, 70)));
    expect(hex(await proveConsistency(pv.reader, 13, 70))).toEqual(hex(await proveConsistency(fv.reader, 13, 70)));
  }, 60_000);

  test('a truncated, then rewritten journal gets no new checkpoint (SIZE_DECREASED, then INCONSISTENT); the last one signed stays the record', async () => {
    const store = pgStore();
    const j = await store.create('rewritten', { segmentBytes: 1 << 30 });
    await j.appendMany(Array.from({ length: 10 }, (_, i) => step(i)));
    const signer = noteSigner(ORIGIN, SEED, 1, () => 0);
    const first = await j.checkpoint(signer);
    expect(first.checkpoint.size).toBe(10);
    // Rows deleted around the store, and the head row moved back to seq 4: a truncation.
    const s = `"${store.tables.schema}"`;
    await admin.query(`DELETE FROM ${s}.steps WHERE journal = $1 AND seq >= 5`, [j.key]);
    await admin.query(
      `UPDATE ${s}.journals SET head_seq = 4, head_hash = (SELECT (line::jsonb)->>'step_hash' FROM ${s}.steps WHERE journal = $1 AND seq = 4),
       bucket_first = 0, bucket_size = (SELECT sum(octet_length(line) + 1) FROM ${s}.steps WHERE journal = $1) WHERE key = $1`,
      [j.key],
    );
    const refused = async (): Promise<string> => {
      try {
        await j.checkpoint(signer);
        return 'signed';
      } catch (e) {
        return `${(e as { code: string }).code} | ${(e as Error).message}`;
      }
    };
    expect(await refused()).toMatch(/^CHECKPOINT_REFUSED \| .*refusing to sign size 5 .*size 10 .*SIZE_DECREASED/);
    // The writer rebuilds the tree from the chain as it is, and grows past the checkpoint with other steps.
    await j.appendMany(Array.from({ length: 8 }, (_, i) => step(i + 5, 'b')));
    expect(await storedSize(store, j)).toBe(13);
    expect(await refused()).toMatch(/^CHECKPOINT_REFUSED \| .*refusing to sign size 13 .*size 10 .*INCONSISTENT/);
    expect(await j.checkpoints()).toEqual([first.note]);
  }, 60_000);

  test('signers on two pools at once, between appends: one lock orders them, every kept checkpoint is of this tree', async () => {
    const store = pgStore();
    const j = await store.create('signed');
    const second = new PostgresStore({ connectionString: url, schema: store.tables.schema, connection: { max: 4 } });
    pgHarness.track(second);
    const other = await second.open('signed');
    const signer = noteSigner(ORIGIN, SEED, 1, () => 0);
    await Promise.all(
      Array.from({ length: 6 }, async (_, r) => {
        await (r % 2 ? j : other).appendMany(Array.from({ length: 7 }, (_, i) => step(i, `r${r}`)));
        await (r % 2 ? other : j).checkpoint(signer);
      }),
    );
    const view = await j.treeView();
    expect(view.size).toBe(42);
    const sizes: number[] = [];
    for (const note of await j.checkpoints()) {
      const opened = parseNote(note);
      if (!opened.ok) throw new Error(opened.problem.message);
      const cp = parseCheckpoint(opened.note.text);
      if (!cp.ok) throw new Error(cp.problem.message);
      sizes.push(cp.checkpoint.size);
      expect(Buffer.from(cp.checkpoint.root)).toEqual(Buffer.from(await treeRoot(view.reader, cp.checkpoint.size)));
    }
    expect(sizes.length).toBeGreaterThanOrEqual(1);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
  }, 60_000);
});
