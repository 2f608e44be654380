/**
 * The SQLite store's own behaviour (spec/SQLITE.md), beyond the conformance suite it passes like every
 * store: a journal copied file → SQLite → Postgres → file comes back byte for byte; one file to copy once
 * closed; readers that never create or migrate; a newer schema left untouched; a file that is not a
 * database refused; rows changed behind the store found by verify; a fork and a checkpoint across processes' locks.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { FileStore, copyJournal, type Journal, type StoredLine } from '../../src/store/index.js';
import { startRun } from '../../src/runtime/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import { noteSigner } from '../../src/proofs/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { code } from '../helpers/outcomes.js';

const pg = await postgresHarness('sqlitecopy', 3);
const root = tempDir('stepchain-sqlite-');
let n = 0;
const stores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});
function sqlite(options: ConstructorParameters<typeof SqliteStore>[1] = {}, file = `${root}/s${n++}.db`): SqliteStore {
  const s = new SqliteStore(file, options);
  stores.push(s);
  return s;
}

async function lines(j: Journal): Promise<StoredLine[]> {
  const out: StoredLine[] = [];
  for await (const l of j.lines()) out.push(l);
  return out;
}

/** Every file of a journal directory that holds its bytes (journal.json, buckets, blobs), path → bytes. */
function journalFiles(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  out.set('journal.json', readFileSync(join(dir, 'journal.json'), 'latin1'));
  for (const sub of ['buckets', 'blobs']) {
    if (!existsSync(join(dir, sub))) continue;
    for (const name of readdirSync(join(dir, sub), { recursive: true }) as string[]) {
      const p = join(dir, sub, name);
      try {
        out.set(`${sub}/${name}`, readFileSync(p, 'latin1'));
      } catch {
        // a folder of blobs
      }
    }
  }
  return out;
}

describe('copies between the stores', () => {
  test('file → SQLite → Postgres → file: the lines, bucket labels, blobs, genesis and config come back byte for byte', async () => {
    const dirs = tempDir();
    const files = new FileStore(`${dirs}/a`, { fsync: 'none', segmentBytes: 4096, blobThreshold: 1024 });
    const run = await startRun(files, { runId: 'run-1', conversationId: 'c-1', labels: { env: 'test' }, input: 'go' });
    const call = await run.beginModel({ model: 'm', prompt: 'p' });
    await call.complete({ result: 'r'.repeat(1500), toolCalls: [{ id: 'call-1', name: 'pay', arguments: { n: 1 } }] });
    const effect = await run.beginTool({ name: 'pay', args: { n: 1 }, callId: 'call-1' });
    await effect.complete({ paid: true, note: 'ünïcødé 🎉 \u2028' });
    for (let i = 0; i < 40; i++)
      await run.journal.append({ input: { i, pad: 'p'.repeat(200) }, result: i % 7 === 3 ? 'b'.repeat(1100 + i) : i });
    const original = await lines(run.journal);
    await run.journal.close();

    const lite = sqlite({ fsync: 'none' });
    await copyJournal(await files.open('run-1', { readOnly: true }), lite, 'run-1');
    const inLite = await lite.open('run-1', { readOnly: true });
    expect(await lines(inLite)).toEqual(original);
    expect(new Set(original.map((l) => l.segment)).size).toBeGreaterThan(1);
    const postgres = pg.store();
    await copyJournal(inLite, postgres, 'run-1');
    const inPg = await postgres.open('run-1', { readOnly: true });
    expect(await lines(inPg)).toEqual(original);
    const back = new FileStore(`${dirs}/b`, { fsync: 'none' });
    await copyJournal(inPg, back, 'run-1');
    const returned = await back.open('run-1', { readOnly: true });
    expect(await lines(returned)).toEqual(original);
    expect((await returned.verify()).ok).toBe(true);
    expect(journalFiles(`${dirs}/b/run-1`)).toEqual(journalFiles(`${dirs}/a/run-1`));
    // The SQLite and Postgres copies hold journal.json's bytes as their metadata.
    const db = connect(lite.file, { readonly: true });
    try {
      expect((db.prepare('SELECT meta FROM journals WHERE id = ?').get('run-1') as { meta: string }).meta).toBe(
        readFileSync(`${dirs}/a/run-1/journal.json`, 'utf8'),
      );
    } finally {
      db.close();
    }
    expect((await lite.runs({ conversationId: 'c-1' })).map((r) => r.id)).toEqual(['run-1']);
  }, 120_000);
});

describe('one file', () => {
  test('closed, the store is the database file alone (the WAL checkpointed into it), and a copy of it opens elsewhere', async () => {
    const dir = tempDir();
    const s = new SqliteStore(`${dir}/agents.db`);
    const j = await s.create('j');
    for (let i = 0; i < 20; i++) await j.append({ input: i, result: 'x'.repeat(i * 100) });
    const head = await j.head();
    await j.close();
    await s.close();
    expect(readdirSync(dir)).toEqual(['agents.db']);
    writeFileSync(`${dir}/copy.db`, readFileSync(`${dir}/agents.db`));
    const copy = sqlite({}, `${dir}/copy.db`);
    const again = await copy.open('j', { readOnly: true });
    expect(await again.head()).toEqual(head);
    expect((await again.verify()).ok).toBe(true);
  });

  test('readers never create the file, and find no journals in a file that is not there', async () => {
    const file = `${tempDir()}/absent.db`;
    const s = sqlite({}, file);
    expect(await s.list()).toEqual([]);
    expect(await s.runs()).toEqual([]);
    expect(await code(s.open('j', { readOnly: true }))).toBe('JOURNAL_NOT_FOUND');
    expect(await code(s.verify('j'))).toBe('JOURNAL_NOT_FOUND');
    const health = await s.health('j');
    expect(health).toMatchObject({
      ok: false,
      backend: 'sqlite',
      reachable: true,
      writable: true,
      schema: { version: null },
    });
    expect(existsSync(file)).toBe(false);
  });

  test('a file written by a newer stepchain is SCHEMA_TOO_NEW for readers and writers, and left byte-identical', async () => {
    const file = `${tempDir()}/newer.db`;
    const first = new SqliteStore(file);
    await first.create('j');
    await first.close();
    const db = connect(file, {});
    db.prepare(
      "INSERT INTO migrations (version, description, applied_at) VALUES (99, 'from the future', '2030-01-01')",
    ).run();
    db.close();
    const before = readFileSync(file);
    const s = sqlite({}, file);
    expect(await code(s.list())).toBe('SCHEMA_TOO_NEW');
    expect(await code(s.create('k'))).toBe('SCHEMA_TOO_NEW');
    expect((await s.health()).problems.map((p) => p.code)).toEqual(['SCHEMA_TOO_NEW']);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  test('a file that is not a SQLite database is JOURNAL_INVALID, for readers and writers, and left as it is', async () => {
    const file = `${tempDir()}/notes.db`;
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(200));
    const s = sqlite({}, file);
    expect(await code(s.list())).toBe('JOURNAL_INVALID');
    expect(await code(s.create('j'))).toBe('JOURNAL_INVALID');
    expect(readFileSync(file, 'utf8')).toBe('these are my notes, not a database\n'.repeat(200));
  });
});

describe('rows changed behind the store', () => {
  test('verify names an edited line, a removed row and a head row that lies', async () => {
    const s = sqlite();
    const j = await s.create('j');
    for (let i = 0; i < 5; i++) await j.append({ input: i });
    expect((await j.verify()).ok).toBe(true);
    const db = connect(s.file, {});
    try {
      db.prepare(`UPDATE steps SET line = replace(line, '"input":2', '"input":7') WHERE seq = 2`).run();
      const edited = await j.verify();
      expect(edited.ok).toBe(false);
      expect(edited.problems[0]).toMatchObject({ code: 'HASH_MISMATCH', location: { seq: 2 } });
      db.prepare('DELETE FROM steps WHERE seq = 4').run();
      expect((await j.verify()).problems.map((p) => p.code)).toContain('JOURNAL_INVALID');
    } finally {
      db.close();
    }
  });
});

describe("fork and checkpoints under SQLite's write lock", () => {
  test("a fork in the same file shares the prefix byte for byte; a checkpoint is kept once and its tree is the chain's", async () => {
    const s = sqlite({ blobThreshold: 1024 });
    const parent = await s.create('parent');
    for (let i = 0; i < 10; i++) await parent.append({ input: i, result: i === 3 ? 'b'.repeat(2000) : i });
    const fork = await s.fork(parent, { fromStep: 5, to: 'child' });
    expect(fork.lineage).toMatchObject({ parent_journal: 'parent', from_step: 5 });
    expect((await lines(fork)).map((l) => l.text)).toEqual((await lines(parent)).slice(0, 6).map((l) => l.text));
    await fork.append({ input: 'only in the child' });
    expect((await fork.verify()).ok).toBe(true);
    expect(
      await fork.blob(
        (JSON.parse((await lines(parent))[3]!.text) as { result: { '$stepchain:blob': { digest: string } } }).result[
          '$stepchain:blob'
        ].digest,
      ),
    ).not.toBeNull();
    const signer = noteSigner(
      'agents.example.com/run/sha256:' + '0'.repeat(64),
      new Uint8Array(32).fill(7),
      1,
      () => 0,
    );
    const cp = await parent.checkpoint(signer);
    expect(cp.checkpoint.size).toBe(10);
    await parent.checkpoint(signer);
    expect(await parent.checkpoints()).toHaveLength(1);
    await parent.append({ input: 'after' });
    expect((await parent.treeView()).size).toBe(11);
    expect(await s.list()).toEqual(['child', 'parent']);
    await s.remove('child');
    expect(await s.list()).toEqual(['parent']);
  });
});
