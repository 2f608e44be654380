/**
 * `stepchain erase` on SQLite and Postgres locations through the built CLI (dist/): an erase SIGKILLed inside
 * its rewrite transaction (after the UPDATE, before COMMIT) leaves the erasure record committed and the row
 * unchanged — the journal verifies, the erasure reported pending — and `--resume` completes it; a checkpoint
 * signed and witness-cosigned before the erasure still verifies after it, cosignature included (verify
 * refuses the checkpoint when the quorum is not met); `--match-path` on the store location erases across it.
 * The SIGKILLed erase (STEPCHAIN_TEST_ERASE_FAULT kills the process) starts a real process; every other call
 * runs in one process of the CLI of the file's own (cliInProcess, support.ts).
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { connect } from '../../src/store/sqlite/driver.js';
import { cliInProcess } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const dir = tempDir('stepchain-erase-stores-cli-');
const server = new URL(inject('pgUrl'));
const password = decodeURIComponent(server.password);
const schema = `erasecli_${process.pid}`;
const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
afterAll(async () => {
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});
const EMAIL = 'dana.sigkill+stores@example.org';
const inProcess = cliInProcess({ PGPASSWORD: password });

/** A call given an environment of its own (a fault to inject) starts a process; the rest run in inProcess. */
function run(
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  if (Object.keys(env).length === 0) return inProcess(args, { cwd: dir, ...(input === undefined ? {} : { input }) });
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1', PGPASSWORD: password, ...env } },
      (error, stdout, stderr) => {
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          stdout,
          stderr,
        });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

interface Backend {
  name: string;
  location: string;
  /** The store itself (no journal): for --match-path across it. */
  storeLocation: string;
  /** The stored line of seq 0, read behind the store's back. */
  line0(): Promise<string>;
}

const sqliteFile = join(dir, 'store.db');
const pgLocation = (): string => {
  const u = new URL(server.toString());
  u.password = '';
  u.searchParams.set('journal', 'k');
  u.searchParams.set('schema', schema);
  return u.toString();
};
const backends: Backend[] = [
  {
    name: 'sqlite',
    location: `sqlite:${sqliteFile}?journal=k`,
    storeLocation: `sqlite:${sqliteFile}`,
    async line0() {
      const db = connect(sqliteFile, { readonly: true });
      try {
        return (db.prepare('SELECT line FROM steps WHERE seq = 0').get() as { line: string }).line;
      } finally {
        db.close();
      }
    },
  },
  {
    name: 'postgres',
    location: pgLocation(),
    storeLocation: pgLocation().replace(/journal=k&?/, ''),
    async line0() {
      return (await admin.query<{ line: string }>(`SELECT line FROM "${schema}".steps WHERE seq = 0`)).rows[0]!.line;
    },
  },
];

async function verifyJson(
  at: string,
  extra: string[] = [],
): Promise<{ ok: boolean; codes: string[]; problems: unknown[] }> {
  const r = await run(['verify', at, '--json', ...extra]);
  const doc = JSON.parse(r.stdout) as {
    ok: boolean;
    report: { warnings: Array<{ code: string }>; problems: unknown[] };
  };
  return { ok: doc.ok, codes: doc.report.warnings.map((w) => w.code), problems: doc.report.problems };
}

describe.each(backends)('stepchain erase on $name (real processes)', { timeout: 180_000 }, (b) => {
  it('an erase SIGKILLed inside its rewrite transaction leaves a journal that verifies; --resume completes it; a checkpoint and cosignature from before still verify', async () => {
    expect((await run(['init', b.location, '--format', 'v3'])).code).toBe(0);
    expect(
      (
        await run(
          ['append', b.location],
          JSON.stringify({ input: { to: EMAIL }, result: { email: EMAIL, sent: true } }),
        )
      ).code,
    ).toBe(0);
    expect((await run(['append', b.location], JSON.stringify({ input: { n: 2 } }))).code).toBe(0);
    const key = join(dir, `${b.name}.key`);
    expect((await run(['keygen', '-o', key])).code).toBe(0);
    const signed = await run([
      'checkpoint',
      b.location,
      '--sign',
      key,
      '--authority',
      'agents.example.com',
      '-o',
      join(dir, `${b.name}.checkpoint`),
    ]);
    expect(signed.code).toBe(0);
    const vkey = /\S+\+[0-9a-f]{8}\+\S+/.exec(signed.stdout + signed.stderr)![0];
    // A witness cosigns that checkpoint before the erasure (its first for this origin: no proof needed).
    const wkeyFile = join(dir, `${b.name}-w.key`);
    expect((await run(['keygen', '-o', wkeyFile])).code).toBe(0);
    const wname = 'witness.example/w1';
    const wkey = (await run(['witness', '--key', wkeyFile, '--name', wname])).stdout.trim();
    const cosigned = join(dir, `${b.name}.cosigned`);
    const w = await run([
      'witness',
      join(dir, `${b.name}.checkpoint`),
      '--key',
      wkeyFile,
      '--name',
      wname,
      '--state',
      join(dir, `${b.name}-wstate`),
      '--log-key',
      vkey,
      '-o',
      cosigned,
    ]);
    expect(w.code).toBe(0);

    const killed = await run(
      ['erase', b.location, '--seq', '0', '--path', '/result/email', '--reason', 'GDPR Art. 17'],
      undefined,
      { STEPCHAIN_TEST_ERASE_FAULT: 'in-rewrite' },
    );
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stderr).toContain('stepchain-erase-fault in-rewrite');
    // The transaction died with the process: the row is as it was, the erasure record committed.
    expect(await b.line0()).toContain(`"email":"${EMAIL}"`);
    const mid = await verifyJson(b.location);
    expect(mid.problems).toEqual([]);
    expect(mid.ok).toBe(true);
    expect(mid.codes).toContain('ERASURE_PENDING');

    const resumed = await run(['erase', b.location, '--resume', '--json']);
    expect(resumed.code).toBe(0);
    expect((JSON.parse(resumed.stdout) as { erased: unknown[] }).erased).toHaveLength(1);
    expect(await b.line0()).not.toContain(`"email":"${EMAIL}"`); // input.to is another unit, kept
    const done = await verifyJson(b.location, [
      '--deep',
      '--checkpoint',
      cosigned,
      '--log-key',
      vkey,
      '--witness',
      wkey,
      '--quorum',
      '1',
    ]);
    expect(done.problems).toEqual([]);
    expect(done.ok).toBe(true);
    expect(done.codes).toContain('VALUE_ERASED');
    expect(done.codes).not.toContain('ERASURE_PENDING');

    // Across the store: the other occurrence (input.to) found and erased, with a report.
    const across = await run([
      'erase',
      b.storeLocation,
      '--match-path',
      '/input/to',
      '--value',
      EMAIL,
      '--reason',
      'GDPR Art. 17',
      '--json',
    ]);
    expect(across.code).toBe(0);
    expect(JSON.parse(across.stdout)).toMatchObject({
      ok: true,
      journals_scanned: 1,
      erased: [{ journal: 'k', seq: 0, path: '/input/to' }],
      failed: [],
    });
    expect(await b.line0()).not.toContain(EMAIL);
    expect((await verifyJson(b.location)).ok).toBe(true);
  });
});
