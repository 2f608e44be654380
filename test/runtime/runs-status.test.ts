/**
 * `stepchain runs` on the database stores after a real crash (issue 36; SQLITE.md §4.2, POSTGRES.md §4.2):
 * an agent process (dist/, through openStore) is SIGKILLed inside a tool; the listing — one query over the
 * run_state rows its appends wrote — shows that run interrupted with its pending count beside a completed
 * and a failed one, `--status` filters on it, the listing writes nothing, and the naive rerun of the tool
 * from the shell is refused with EFFECT_PENDING naming the effect, printing nothing on standard output.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, test } from 'vitest';
import { startRun, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { CLI, runNode } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

const AGENT = fileURLToPath(new URL('./fixtures/agent.mjs', import.meta.url));
const server = new URL(inject('pgUrl'));
const env = { PGPASSWORD: decodeURIComponent(server.password), NO_COLOR: '1' };
const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 60_000, env });

/** A store location without a journal, and the same with `?journal=` (`&journal=` after a query). */
interface Place {
  store: Store;
  location: string;
  journal(id: string): string;
}

const PLACES: Array<[string, () => Place]> = [
  [
    'SQLite',
    () => {
      const file = `${tempDir('stepchain-runs-status-')}/runs.db`;
      return {
        store: new SqliteStore(file),
        location: `sqlite:${file}`,
        journal: (id) => `sqlite:${file}?journal=${id}`,
      };
    },
  ],
  [
    'Postgres',
    () => {
      const schema = `runsstatus_${process.pid}`;
      const u = new URL(server.toString());
      u.password = '';
      u.searchParams.set('schema', schema);
      const location = u.toString();
      return {
        store: new PostgresStore({ connectionString: server.toString(), schema }),
        location,
        journal: (id) => `${location}&journal=${id}`,
      };
    },
  ],
];

/** The agent of crash.test.ts on `location`, hanging inside its first tool; resolves with that effect's id once begun. */
async function killedMidTool(location: string, runId: string): Promise<string> {
  const proc = spawn(process.execPath, [AGENT, location, runId, 'tools', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  const id = await new Promise<string>((resolve, reject) => {
    proc.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      const m = /begun (\S+)\n/.exec(out);
      if (m !== null) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`agent exited early: ${err}`)));
  });
  proc.kill('SIGKILL');
  await exited;
  return id;
}

describe.each(PLACES)('stepchain runs on a %s store', (_name, make) => {
  test('a run killed mid-tool is listed interrupted with its pending count, filtered by --status, and its naive rerun is refused', async () => {
    const { store, location, journal } = make();
    const done = await startRun(store, { runId: 'a-done', agent: 'crash-test' });
    await done.complete('ok');
    await done.close();
    const failed = await startRun(store, { runId: 'b-failed', agent: 'crash-test' });
    await failed.fail(new Error('quota'));
    await failed.close();
    const hung = await killedMidTool(location, 'c-crash');
    const head = async () => (await (await store.open('c-crash', { readOnly: true })).head())!.step_hash;
    const before = await head();

    const listed = await cli(['runs', location, '--json']);
    expect(listed.code).toBe(0);
    const runs = (JSON.parse(listed.stdout) as { runs: Array<Record<string, unknown>> }).runs;
    expect(runs.map((r) => [r.id, r.status, r.pending])).toEqual([
      ['a-done', 'completed', 0],
      ['b-failed', 'failed', 0],
      ['c-crash', 'interrupted', 1],
    ]);
    expect(runs[0]!.ended_at).toEqual(expect.stringMatching(/^\d{4}-/));
    expect(runs.every((r) => !('progress' in r))).toBe(true);
    const interrupted = await cli(['runs', location, '--status', 'interrupted']);
    expect(interrupted.stdout).toContain('c-crash  interrupted, 1 pending');
    expect(interrupted.stdout).not.toContain('a-done');
    expect(
      JSON.parse((await cli(['runs', location, '--status', 'completed', '--json'])).stdout).runs.map(
        (r: { id: string }) => r.id,
      ),
    ).toEqual(['a-done']);
    expect(await head()).toBe(before);

    // The naive rerun of the tool that was in flight: the same tool and arguments as the pending effect.
    const again = await cli(['effect', 'list', journal('c-crash'), '--pending', '--json']);
    const pending = (JSON.parse(again.stdout) as { effects: Array<{ id: string; arguments: Record<string, unknown> }> })
      .effects;
    expect(pending.map((e) => e.id)).toEqual([hung]);
    const args = JSON.stringify(pending[0]!.arguments);
    const naive = await cli(['effect', 'begin', journal('c-crash'), '--tool', 'send_email', '--args', args]);
    expect(naive.code).toBe(1);
    expect(naive.stdout).toBe('');
    expect(naive.stderr).toContain('EFFECT_PENDING');
    expect(naive.stderr).toContain(hung);
    expect(await head()).toBe(before);
    if (store instanceof SqliteStore || store instanceof PostgresStore) await store.close();
  }, 120_000);
});
