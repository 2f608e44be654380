/**
 * Bulk appends as a stream on the database stores (issue 34; spec/SQLITE.md §6, POSTGRES.md §6): appendStream,
 * appendMany of more than 4096 steps and `append --jsonl` write the batch chunk by chunk inside one
 * transaction, so memory is one chunk whatever its length, and keep the all-or-nothing promise — a step
 * refused in the middle, or the writer stopped and then killed (SIGKILL) in the middle, leaves none of the
 * batch: readers never see its rows, and the next writer appends after the chain as it was. Real better-sqlite3
 * files, the run's real embedded Postgres, the built CLI as a real process.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Journal, StepInput, Store } from '../../src/index.js';
import type { StreamedBatch } from '../../src/store/stream.js';
import { rootOfLeaves, stepLeafHash } from '../../src/proofs/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import { CLI } from '../hardening/support.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { drive, processState, until } from './helpers.js';

const root = tempDir('stepchain-bulk-db-');
const pg = await postgresHarness('pgbulk', 3);
const password = decodeURIComponent(new URL(pg.url).password);

type Streaming = Journal & {
  appendStream(
    steps: AsyncIterable<StepInput> | Iterable<StepInput>,
    options?: { chunk?: number },
  ): Promise<StreamedBatch>;
};

interface Kind {
  name: string;
  store(): Store & { close(): Promise<void> };
  /** The CLI's location of journal `id` in that store. */
  location(s: Store, id: string): string;
  env: Record<string, string>;
  /** The size of the Merkle tree the writers kept for journal `id` (its tree_state row). */
  treeSize(s: Store, id: string): Promise<number | null>;
}

let files = 0;
const KINDS: Kind[] = [
  {
    name: 'SQLite',
    store: () => new SqliteStore(join(root, `s${files++}.db`)),
    location: (s, id) => `sqlite:${(s as SqliteStore).file}?journal=${id}`,
    env: {},
    treeSize: async (s, id) => {
      const db = connect((s as SqliteStore).file, { readonly: true });
      try {
        return (
          (
            db
              .prepare('SELECT t.size FROM tree_state t JOIN journals j ON j.key = t.journal WHERE j.id = ?')
              .get(id) as { size: number } | undefined
          )?.size ?? null
        );
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'Postgres',
    store: () => pg.store(),
    location: (s, id) => {
      const u = new URL(pg.url);
      u.password = '';
      u.searchParams.set('journal', id);
      u.searchParams.set('schema', (s as ReturnType<typeof pg.store>).tables.schema);
      return u.toString();
    },
    env: { PGPASSWORD: password },
    treeSize: async (s, id) => {
      const t = (s as ReturnType<typeof pg.store>).tables;
      const r = await pg.admin.query<{ size: string }>(
        `SELECT t.size FROM ${t.treeState} t JOIN ${t.journals} j ON j.key = t.journal WHERE j.id = $1`,
        [id],
      );
      return r.rows[0] === undefined ? null : Number(r.rows[0].size);
    },
  },
];

async function* stepsOf(n: number, bad?: { at: number; step: StepInput }): AsyncGenerator<StepInput> {
  for (let i = 0; i < n; i++) yield i === bad?.at ? bad.step : { input: { i }, result: 'ok' };
}

async function texts(j: Journal): Promise<string[]> {
  const out: string[] = [];
  for await (const l of j.lines()) out.push(l.text);
  return out;
}

describe.each(KINDS)('$name: a streamed batch is all or nothing', (kind) => {
  test.each([
    [
      'a step the prepare refuses (a member the journal computes)',
      { v: 9, input: 'x' } as unknown as StepInput,
      'FIELD_NOT_ALLOWED',
    ],
    [
      'a step the sequencer refuses (a committed step_id with other content)',
      { step_id: 'before-0', input: 'other' },
      'STEP_ID_CONFLICT',
    ],
  ])(
    '%s at step 1234 of 1500, written 100 at a time: none of it',
    async (_what, step, code) => {
      const s = kind.store();
      const j = (await s.create('refused')) as Streaming;
      for (let i = 0; i < 3; i++) await j.append({ step_id: `before-${i}`, input: i });
      const before = await texts(j);
      const err = await j
        .appendStream(stepsOf(1500, { at: 1234, step }), { chunk: 100 })
        .catch((e: unknown) => e as { code?: string; message: string });
      expect((err as { code?: string }).code).toBe(code);
      if (code === 'FIELD_NOT_ALLOWED') expect((err as Error).message).toContain('step 1234 of the batch');
      expect(await texts(j)).toEqual(before);
      expect((await j.append({ input: 'after' })).seq).toBe(3);
      // A step_id repeated across chunks is one step (idempotent), as in one appendMany.
      const repeated = async function* (): AsyncGenerator<StepInput> {
        yield* stepsOf(150);
        yield { step_id: 'twice', input: 't' };
        yield* stepsOf(150);
        yield { step_id: 'twice', input: 't' };
      };
      expect(await j.appendStream(repeated(), { chunk: 100 })).toEqual({
        steps: 302,
        appended: 301,
        first: 4,
        last: 304,
      });
      // appendMany of more than 4096 steps takes the same path: a refused step leaves none of it.
      const many = Array.from({ length: 5000 }, (_, i): StepInput => (i === 4321 ? step : { input: { many: i } }));
      const head = await j.head();
      await expect(j.appendMany(many)).rejects.toMatchObject({ code });
      expect(await j.head()).toEqual(head);
      many[4321] = { input: 'fine' };
      const results = await j.appendMany(many);
      expect(results.map((r) => r.seq)).toEqual(many.map((_, i) => head!.seq + 1 + i));
      const report = await j.verify();
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ ok: true, steps: 305 + 5000 });
      // The tree was followed chunk by chunk inside the transaction: its stored state covers the whole chain,
      // and the root read from it (a reader uses the stored tiles) is the RFC 6962 root of the step hashes.
      expect(await kind.treeSize(s, 'refused')).toBe(305 + 5000);
      const leaves = (await texts(j)).map((t) => stepLeafHash((JSON.parse(t) as { step_hash: string }).step_hash)!);
      const reader = (await s.open('refused', { readOnly: true })) as Journal & {
        treeView(): Promise<{ root: Uint8Array }>;
      };
      expect(Buffer.from((await reader.treeView()).root)).toEqual(Buffer.from(rootOfLeaves(leaves)));
      await s.close();
    },
    120_000,
  );

  test('append --jsonl stopped after its 4th chunk, then killed (SIGKILL): readers never see the batch, the next writer appends after the chain as it was', async () => {
    const s = kind.store();
    const j = await s.create('crashed');
    await j.append({ input: 'before' });
    const before = await texts(j);
    const input = join(root, `crashed-${kind.name}.jsonl`);
    writeFileSync(
      input,
      Array.from(
        { length: 5000 },
        (_, i) => `{"input":{"i":${i},"text":"a step of a bulk import"},"result":"ok"}\n`,
      ).join(''),
    );
    const child = drive(CLI, ['append', kind.location(s, 'crashed'), '--jsonl', '--file', input], {
      ...kind.env,
      STEPCHAIN_TEST_FAULT: 'after-chunk:stop@4',
    });
    let exited = false;
    void child.exited.then(() => (exited = true));
    await until(
      () =>
        exited ||
        (child.stderr().includes('stepchain-fault after-chunk stop') && processState(child.proc.pid!) === 'T'),
    );
    expect(exited, child.stderr()).toBe(false);
    // Four chunks (1024 steps) are written inside its open transaction: no reader sees them.
    const reader = await s.open('crashed', { readOnly: true });
    expect(await reader.head()).toMatchObject({ seq: 0 });
    expect(await texts(reader)).toEqual(before);
    child.proc.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(child.lines).toEqual([]); // nothing was printed: nothing was committed
    // The next writer (in Postgres, once the server has ended the dead client's transaction) follows seq 0.
    expect((await j.append({ input: 'after' })).seq).toBe(1);
    const all = await texts(reader);
    expect(all.slice(0, 1)).toEqual(before);
    expect(all.join('\n')).not.toContain('bulk import');
    expect((await reader.verify()).ok).toBe(true);
    await s.close();
  }, 120_000);

  test('append --jsonl of 4× the steps needs no more memory beyond a margin (memory does not grow with the input)', async () => {
    const s = kind.store();
    const peak = (n: number): number => {
      const at = kind.location(s, `memory-${n}`);
      const env = { ...process.env, ...kind.env };
      expect(spawnSync(process.execPath, [CLI, 'init', at], { stdio: 'ignore', env }).status).toBe(0);
      const input = join(root, `memory-${kind.name}-${n}.jsonl`);
      writeFileSync(
        input,
        Array.from(
          { length: n },
          (_, i) => `{"input":{"i":${i},"text":"a step of a bulk import"},"result":"ok"}\n`,
        ).join(''),
      );
      const r = spawnSync(
        '/usr/bin/time',
        ['-f', 'peak %M', process.execPath, CLI, 'append', at, '--jsonl', '--file', input],
        { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], env },
      );
      expect(r.status, r.stderr).toBe(0);
      return Number(/peak (\d+)/.exec(r.stderr)![1]) / 1024;
    };
    const small = peak(5_000);
    const large = peak(20_000);
    // Before: the whole input parsed into one appendMany, +77 MB from 5 000 to 20 000 steps (SQLite and Postgres
    // alike, measured). Now one chunk at a time: about +23 MB, the heap warming up to the steady state that a
    // million steps keep (bench/RESULTS.md "Bulk append").
    expect(large - small, `${small.toFixed(0)} MB for 5 000 steps, ${large.toFixed(0)} MB for 20 000`).toBeLessThan(45);
    expect((await (await s.open('memory-20000', { readOnly: true })).verify()).steps).toBe(20_000);
    await s.close();
  }, 120_000);
});

describe("Postgres: the streamed batch's connection killed in the middle", () => {
  test('pg_terminate_backend after 4 chunks of 100: the batch fails with a coded error and leaves none of it; the next append follows the chain as it was', async () => {
    const s = pg.store({ connection: { max: 3, application_name: 'bulk-terminated' } });
    const j = (await s.create('terminated')) as Streaming;
    await j.append({ input: 'before' });
    const before = await texts(j);
    let killed = 0;
    async function* steps(): AsyncGenerator<StepInput> {
      for (let i = 0; i < 1000; i++) {
        if (i === 450) {
          // Four chunks are inserted inside the open transaction, whose backend now waits for the next one.
          const r = await pg.admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bulk-terminated' AND state = 'idle in transaction'`,
          );
          killed = r.rowCount ?? 0;
        }
        yield { input: { i }, result: 'a step of a bulk import' };
      }
    }
    const err = (await j.appendStream(steps(), { chunk: 100 }).catch((e: unknown) => e)) as {
      code?: string;
      message?: string;
    };
    expect(killed).toBe(1);
    expect(err.code, err.message).toBe('SERVER_UNREACHABLE');
    expect(await texts(j)).toEqual(before);
    expect((await j.append({ input: 'after' })).seq).toBe(1);
    expect((await texts(j)).join('\n')).not.toContain('bulk import');
    expect((await j.verify()).ok).toBe(true);
  }, 120_000);

  // Outsider 16: the server ends a session idle in its transaction, and the driver says only that the
  // connection is gone; the writer was told to check the server and the firewall.
  test('input that pauses past the idle timeout: the batch fails whole, saying the pause ended it, not the network', async () => {
    const s = pg.store({ idleTimeoutMs: 300 });
    const j = (await s.create('stalled')) as Streaming;
    async function* steps(): AsyncGenerator<StepInput> {
      yield { input: 'first' };
      await new Promise((r) => setTimeout(r, 1200));
      yield { input: 'second' };
    }
    const err = (await j.appendStream(steps(), { chunk: 1 }).catch((e: unknown) => e)) as {
      code?: string;
      message?: string;
      hint?: string;
    };
    expect(err.code, err.message).toBe('SERVER_ERROR');
    expect(err.message).toMatch(/paused \d+ ms while the batch was open, past the idle timeout of 300 ms/);
    expect(err.message).not.toMatch(/could not be reached/);
    expect(await texts(j)).toEqual([]);
    expect((await j.append({ input: 'after' })).seq).toBe(0);
  }, 60_000);
});
