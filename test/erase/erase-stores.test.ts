/**
 * Erasure in the SQLite and Postgres stores (spec/ERASURE.md §6), through the library on a real SQLite file
 * and the run's real Postgres server: after erasing every occurrence of a value (one of them stored as a
 * part), the value, its salt and the record's seed are in no row of any table — and, for SQLite, in no byte
 * of the database file or its WAL; the step hashes are unchanged, a writer that held the journal open keeps
 * appending (the head row's open-segment size follows the longer sealed line), verify reports the values
 * erased (fast and deep); erasure across a store finds every match and lists the journals it cannot search.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import type { Journal } from '../../src/store/index.js';
import { eraseMatching, eraseValue } from '../../src/erase.js';
import { b64u, unitAt } from '../../src/record/v3/erasure.js';
import { resumeRun, startRun } from '../../src/runtime/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-erase-stores-');
afterAll(() => rmSync(root, { recursive: true, force: true }));
const pg = await postgresHarness('erase', 4);

const EMAIL = 'grace.erasure+stores@example.org';
const PAGE = `Customer file of ${EMAIL}: ` + 'the long history of an account, repeated. '.repeat(40);
const hex = (b: Uint8Array | string): string => Buffer.from(b).toString('hex');

type Store = SqliteStore | PostgresStore;

interface Backend {
  name: string;
  store(): Store;
  /** Every byte the store holds for its journals, as one buffer per place (a table's rows, a file). */
  places(store: Store): Promise<Array<{ where: string; bytes: Buffer }>>;
}

const backends: Backend[] = [
  {
    name: 'sqlite',
    store: () => new SqliteStore(join(mkdtempSync(join(root, 's-')), 'store.db')),
    async places(store) {
      const file = (store as SqliteStore).file;
      const db = connect(file, { readonly: true });
      const out: Array<{ where: string; bytes: Buffer }> = [];
      try {
        for (const { name } of db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as Array<{
          name: string;
        }>) {
          const parts: Buffer[] = [];
          for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>) {
            for (const v of Object.values(row)) parts.push(Buffer.isBuffer(v) ? v : Buffer.from(String(v)));
          }
          out.push({ where: `table ${name}`, bytes: Buffer.concat(parts) });
        }
      } finally {
        db.close();
      }
      // The bytes on disk: the database file and its WAL (truncated by the erase's checkpoint).
      for (const f of [file, `${file}-wal`]) if (existsSync(f)) out.push({ where: f, bytes: readFileSync(f) });
      return out;
    },
  },
  {
    name: 'postgres',
    store: () => pg.store(),
    async places(store) {
      const schema = (store as PostgresStore).tables.schema;
      const { rows: tables } = await pg.admin.query<{ t: string }>(
        `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1`,
        [schema],
      );
      const out: Array<{ where: string; bytes: Buffer }> = [];
      for (const { t } of tables) {
        // Every row as text: bytea columns come out as \x hex, so the needles' hex forms are searched too.
        const { rows } = await pg.admin.query<{ r: string }>(`SELECT r::text AS r FROM "${schema}"."${t}" r`);
        out.push({ where: `table ${t}`, bytes: Buffer.from(rows.map((x) => x.r).join('\n')) });
      }
      return out;
    },
  },
];

async function lineOf(j: Journal, seq: number): Promise<Record<string, unknown>> {
  for await (const l of j.lines({ from: seq, to: seq })) return JSON.parse(l.text) as Record<string, unknown>;
  throw new Error(`no line ${seq}`);
}

describe.each(backends)('erase in the $name store', { timeout: 180_000 }, (backend) => {
  it('drops the saved run state (run_state row) that held an erased argument: readers fold the sealed record', async () => {
    const store = backend.store();
    const run = await startRun(store, { runId: 'rs', format: 'stepchain/v3' });
    await run.beginTool({ name: 'send_email', args: { to: EMAIL }, idempotencyKey: 'mail-1' });
    await run.close();
    const runState = async (): Promise<Buffer> =>
      (await backend.places(store)).find((p) => p.where === 'table run_state')!.bytes;
    expect((await runState()).includes(EMAIL)).toBe(true);
    await eraseValue(store, 'rs', { seq: 1, path: '/tool_call/arguments/to', reason: 'GDPR Art. 17' });
    for (const p of await backend.places(store)) expect(p.bytes.includes(EMAIL), p.where).toBe(false);
    const again = await resumeRun(store, 'rs');
    const effects = await again.effects();
    expect(effects.map((e) => e.tool)).toEqual(['send_email']);
    expect(JSON.stringify(effects)).not.toContain(EMAIL);
    // The next append writes the row again, folded from the sealed record.
    await again.beginTool({ name: 'lookup', args: { q: 1 } });
    await again.close();
    expect((await runState()).length).toBeGreaterThan(0);
    expect((await runState()).includes(EMAIL)).toBe(false);
  });

  it('leaves neither the value, nor its salt, nor the seed in any table; keeps the step hashes; a writer keeps appending', async () => {
    const store = backend.store();
    const j = await store.create('r', { format: 'stepchain/v3' } as never);
    await j.append({
      input: { customer: { email: EMAIL, id: 'c-17' } },
      tool_call: { name: 'lookup', arguments: { q: EMAIL } },
      result: { email: EMAIL, plan: 'pro', notes: ['vip', EMAIL], page: PAGE },
    } as never);
    await j.append({ input: { q: 'next' }, result: { ok: true } } as never);
    const before = await lineOf(j, 0);
    const salt = unitAt(before, '/result/email').unit.salt.slice();
    const seed = before.seed as string;
    expect(JSON.stringify(before.result)).toContain('$stepchain:part');
    expect((await backend.places(store)).some((p) => p.bytes.includes(EMAIL))).toBe(true);

    const paths = [
      '/result/email',
      '/result/notes/1',
      '/input/customer/email',
      '/tool_call/arguments/q',
      '/result/page',
    ];
    const outcomes = [];
    for (const path of paths) {
      outcomes.push(
        await eraseValue(store, 'r', { seq: 0, path, reason: 'GDPR Art. 17 request #118', by: 'dpo@example.org' }),
      );
      // The journal held open since before the erasure appends on: the head row agrees with the rewritten rows.
      await j.append({ input: { after: path } } as never);
    }
    expect(outcomes.at(-1)!.parts_deleted.length).toBe(1);
    // SQLite: the WAL was truncated after each rewrite (no other connection was reading); Postgres: not its concern.
    expect(outcomes.map((o) => o.wal_truncated)).toEqual(
      paths.map(() => (backend.name === 'sqlite' ? true : undefined)),
    );
    await j.close();

    const needles: Array<[string, Buffer]> = [
      ['the value', Buffer.from(EMAIL)],
      ['the value in hex', Buffer.from(hex(EMAIL))],
      ['the salt', Buffer.from(salt)],
      ['the salt in hex', Buffer.from(hex(salt))],
      ['the salt in base64url', Buffer.from(b64u(salt))],
      ['the seed', Buffer.from(seed)],
      ["the seed's bytes", Buffer.from(seed, 'hex')],
    ];
    const found = (await backend.places(store)).flatMap((p) =>
      needles.filter(([, n]) => p.bytes.includes(n)).map(([what]) => `${what} in ${p.where}`),
    );
    expect(found).toEqual([]);

    const r = await store.open('r', { readOnly: true });
    const after = await lineOf(r, 0);
    expect(after.seed).toBeUndefined();
    expect(after.step_hash).toBe(before.step_hash);
    await r.close();
    for (const deep of [false, true]) {
      const report = await store.verify('r', { deep } as never);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.head_seq).toBe(2 + 2 * paths.length - 1);
      expect(
        report.warnings
          .filter((w) => w.code === 'VALUE_ERASED')
          .map((w) => w.location.path)
          .sort(),
      ).toEqual([...paths].sort());
    }
  });

  it('erases one subject across the store, lists the journals it cannot search, refuses what it cannot erase', async () => {
    const store = backend.store();
    for (const id of ['a', 'b']) {
      const j = await store.create(id, { format: 'stepchain/v3' } as never);
      await j.append({ input: { customer: { email: EMAIL } }, result: { email: EMAIL } } as never);
      await j.append({ result: { email: 'bob@example.org' } } as never);
      await j.close();
    }
    const old = await store.create('old', {} as never);
    await old.append({ result: { email: EMAIL } } as never);
    await old.close();
    const report = await eraseMatching(store, {
      matchPath: '/result/email',
      value: EMAIL,
      reason: 'GDPR Art. 17',
      by: 'dpo',
    });
    expect(report.erased.map((e) => `${e.journal}:${e.seq}:${e.path}`).sort()).toEqual([
      'a:0:/result/email',
      'b:0:/result/email',
    ]);
    expect(report.journals_not_v3).toEqual(['old']);
    expect(report.failed).toEqual([]);
    const wild = await eraseMatching(store, { matchPath: '/*/*/email', value: EMAIL, reason: 'GDPR Art. 17' });
    expect(wild.erased.map((e) => `${e.journal}:${e.seq}:${e.path}`).sort()).toEqual([
      'a:0:/input/customer/email',
      'b:0:/input/customer/email',
    ]);
    for (const id of ['a', 'b']) {
      const v = await store.verify(id);
      expect(v.problems).toEqual([]);
      expect(v.warnings.filter((w) => w.code === 'VALUE_ERASED').length).toBe(2);
    }
    await expect(eraseValue(store, 'a', { seq: 0, path: '/result/email', reason: 'again' })).rejects.toThrow(
      /ERASURE_TARGET_INVALID/,
    );
    await expect(eraseValue(store, 'a', { seq: 2, path: '/input/path', reason: 'r' })).rejects.toThrow(
      /erasure record/,
    );
    await expect(eraseValue(store, 'old', { seq: 0, path: '/result/email', reason: 'r' })).rejects.toThrow(
      /stepchain\/v3/,
    );
    await expect(eraseValue(store, 'a', { seq: 99, path: '/result/email', reason: 'r' })).rejects.toThrow(
      /no record at seq 99/,
    );
    expect((await store.verify('a')).head_seq).toBe(3);
    // Inside a part, or one chunk of a long string: refused with a code that says why and what to erase instead.
    const doc = {
      owner: EMAIL,
      ...Object.fromEntries(
        Array.from({ length: 40 }, (_, i) => [`k${i}`, `a short line of the customer file, number ${i}`]),
      ),
    };
    const p = await store.create('p', { format: 'stepchain/v3' } as never);
    await p.append({ result: { doc, note: 'n'.repeat(100) } } as never);
    expect(JSON.stringify(await lineOf(p, 0))).toContain('"doc":{"$stepchain:part"');
    await p.close();
    await expect(eraseValue(store, 'p', { seq: 0, path: '/result/doc/owner', reason: 'r' })).rejects.toMatchObject({
      code: 'ERASURE_INSIDE_PART',
      message: expect.stringContaining('erase the member that holds the part, /result/doc,'),
    });
    await expect(eraseValue(store, 'p', { seq: 0, path: '/result/note#1', reason: 'r' })).rejects.toMatchObject({
      code: 'ERASURE_CHUNK',
      message: expect.stringContaining('erase the whole string, /result/note'),
    });
    expect((await store.verify('p')).head_seq).toBe(0);
    if (store instanceof SqliteStore) await store.close();
  });
});
