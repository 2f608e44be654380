/**
 * The built CLI on Postgres locations, against the run's real server: every journal verb takes
 * postgres://user@host:port/db?journal=<id> with the password from PGPASSWORD; `copy` moves journals
 * between directories and Postgres byte for byte and idempotently; `doctor` reports; servers that cannot
 * be used are coded errors, never a stack trace, and never show a password. The calls run in one process of
 * the CLI of the file's own (cliInProcess, support.ts), PGPASSWORD its environment; a call that sets its own
 * (a wrong or empty PGPASSWORD) starts a real process with it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';

const server = new URL(inject('pgUrl'));
const password = decodeURIComponent(server.password);
const schema = `clitest_${process.pid}`;
/** A location without the password: the CLI gets it from PGPASSWORD, as users should give it. */
function at(journal: string, extra: Record<string, string> = {}): string {
  const u = new URL(server.toString());
  u.password = '';
  u.searchParams.set('journal', journal);
  u.searchParams.set('schema', schema);
  for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
  return u.toString();
}
const inProcess = cliInProcess({ PGPASSWORD: password });
const cli = (args: string[], options: { input?: string; env?: Record<string, string> } = {}) => {
  const input = options.input === undefined ? {} : { input: options.input };
  return Object.keys(options.env ?? {}).length === 0
    ? inProcess(args, input)
    : runNode([CLI, ...args], { timeoutMs: 60_000, env: { PGPASSWORD: password, ...options.env }, ...input });
};
const dir = tempDir('stepchain-pg-cli-');
const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
afterAll(() => admin.end());

function noStack(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr).not.toContain(password);
}

const STEPS = [
  {
    step_id: 's0',
    ts: '2026-02-01T00:00:00.000Z',
    input: { q: 'paris' },
    model: 'm',
    prompt: 'weather?',
    tool_call: { name: 'get_weather' },
    result: { t: 18.5 },
  },
  {
    step_id: 's1',
    ts: '2026-02-01T00:00:01.000Z',
    input: null,
    model: 'm',
    prompt: 'summarise',
    result: 'x'.repeat(70_000),
  },
  { step_id: 's2', ts: '2026-02-01T00:00:02.000Z', input: 'ünïcødé', result: 'ok', meta: { agent: 'a' } },
];

describe('journal verbs on a Postgres location', () => {
  test('init, append, log, show, head, verify, export, fork: the same verbs, the same outputs', async () => {
    expect((await cli(['init', at('run')])).code).toBe(0);
    const appended = await cli(['append', at('run'), '--jsonl'], {
      input: STEPS.map((s) => JSON.stringify(s)).join('\n'),
    });
    expect(appended.code, appended.stderr).toBe(0);
    expect(
      appended.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    ).toEqual(['0', '1', '2']);
    const log = await cli(['log', at('run'), '--json']);
    expect(log.code, log.stderr).toBe(0);
    const doc = JSON.parse(log.stdout) as { ok: boolean; steps: Array<{ result: unknown }> };
    expect(doc.ok).toBe(true);
    expect(doc.steps[1]!.result).toBe('x'.repeat(70_000)); // a blob, restored
    const show = await cli(['show', at('run'), '2', '--json']);
    expect(JSON.parse(show.stdout).step.meta).toEqual({ agent: 'a' });
    const head = await cli(['head', at('run')]);
    expect(head.stdout).toMatch(/^2 sha256:[0-9a-f]{64}\n$/);
    const verify = await cli(['verify', at('run'), '--head', head.stdout.split(' ')[1]!.trim(), '--json']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, kind: 'journal', report: { steps: 3 } });
    expect(JSON.parse(verify.stdout).path).not.toContain(password);
    const exported = await cli(['export', at('run'), '-o', join(dir, 'run.tar')]);
    expect(exported.code, exported.stderr).toBe(0);
    expect((await cli(['verify', join(dir, 'run.tar')])).code).toBe(0);
    const fork = await cli(['fork', at('run'), '--from-step', '1', at('run-fork'), '--json']);
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout).lineage).toMatchObject({ parent_journal: 'run', from_step: 1 });
    const elsewhere = await cli(['fork', at('run'), '--from-step', '1', join(dir, 'fork-dir')]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain('beside its parent');
  });
});

describe('copy', () => {
  test('directory → Postgres → directory: identical receipts, no diff; again: nothing to do; grown: completed', async () => {
    const src = join(dir, 'src');
    expect((await cli(['init', src, '--bucket-bytes', '4096', '--blob-threshold', '1024'])).code).toBe(0);
    const many = Array.from({ length: 30 }, (_, i) => ({
      step_id: `c${i}`,
      input: { i, pad: 'p'.repeat(300) },
      result: i % 4 === 0 ? 'b'.repeat(2000 + i) : i,
    }));
    expect((await cli(['append', src, '--jsonl'], { input: many.map((s) => JSON.stringify(s)).join('\n') })).code).toBe(
      0,
    );
    const toPg = await cli(['copy', src, at('copied'), '--json']);
    expect(toPg.code, toPg.stderr).toBe(0);
    expect(JSON.parse(toPg.stdout)).toMatchObject({
      ok: true,
      created: true,
      copied: 30,
      already: 0,
      head: { seq: 29 },
    });
    const back = join(dir, 'back');
    const toDir = await cli(['copy', at('copied'), back, '--json']);
    expect(toDir.code, toDir.stderr).toBe(0);
    for (const [loc, name] of [
      [src, 'a.tar'],
      [at('copied'), 'b.tar'],
      [back, 'c.tar'],
    ] as const) {
      const r = await cli(['export', loc, '-o', join(dir, name)]);
      expect(r.code, r.stderr).toBe(0);
    }
    const a = readFileSync(join(dir, 'a.tar'));
    expect(readFileSync(join(dir, 'b.tar')).equals(a)).toBe(true);
    expect(readFileSync(join(dir, 'c.tar')).equals(a)).toBe(true);
    const d = await cli(['diff', src, at('copied'), '--envelope', '--json']);
    expect(d.code, d.stderr).toBe(0);
    expect(JSON.parse(d.stdout)).toMatchObject({ same: true });

    const again = await cli(['copy', src, at('copied'), '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, created: false, copied: 0, already: 30 });
    expect((await cli(['append', src], { input: '{"input":"one more"}' })).code).toBe(0);
    const grown = await cli(['copy', src, at('copied'), '--json']);
    expect(JSON.parse(grown.stdout)).toMatchObject({ copied: 1, already: 30, head: { seq: 30 } });
    expect((await cli(['head', at('copied')])).stdout).toBe((await cli(['head', src])).stdout);
  });

  test('refuses to overwrite a different journal, and leaves it untouched', async () => {
    const other = join(dir, 'other');
    expect((await cli(['init', other])).code).toBe(0);
    expect((await cli(['append', other], { input: '{"input":1}' })).code).toBe(0);
    expect((await cli(['init', at('taken')])).code).toBe(0);
    const refused = await cli(['copy', other, at('taken'), '--json']);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: 'JOURNAL_EXISTS' });
    expect(JSON.parse(refused.stdout).error.message).toMatch(/another genesis.*left untouched/);
    noStack(refused.stderr);
    expect((await cli(['head', at('taken')])).stderr).toContain('empty');
  });
});

describe('the Merkle tree on a Postgres location', () => {
  test('checkpoint, prove, export --checkpoint: the same files, byte for byte, as for the journal directory it was copied from', async () => {
    const twin = join(dir, 'twin'); // the same id on both sides, so the same origin
    expect((await cli(['keygen', '-o', join(dir, 'log.key')])).code).toBe(0);
    expect((await cli(['init', twin])).code).toBe(0);
    const steps = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => JSON.stringify({ step_id: `t${from + i}`, input: { i: from + i } })).join(
        '\n',
      );
    expect((await cli(['append', twin, '--jsonl'], { input: steps(0, 40) })).code).toBe(0);
    expect((await cli(['copy', twin, at('twin')])).code).toBe(0);
    const sign = (loc: string, out: string, first: boolean) =>
      cli([
        'checkpoint',
        loc,
        '--sign',
        join(dir, 'log.key'),
        ...(first ? ['--authority', 'agents.example.com'] : []),
        '-o',
        join(dir, out),
        '--json',
      ]);
    for (const [loc, tag] of [
      [twin, 'd'],
      [at('twin'), 'p'],
    ] as const) {
      const r = await sign(loc, `${tag}-a.checkpoint`, true);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, checkpoint: { size: 40 }, extends: null });
    }
    const same = (a: string, b: string) =>
      expect(readFileSync(join(dir, b)).equals(readFileSync(join(dir, a))), `${a} = ${b}`).toBe(true);
    same('d-a.checkpoint', 'p-a.checkpoint');
    expect((await cli(['append', twin, '--jsonl'], { input: steps(40, 25) })).code).toBe(0);
    expect((await cli(['copy', twin, at('twin')])).code).toBe(0);
    for (const [loc, tag] of [
      [twin, 'd'],
      [at('twin'), 'p'],
    ] as const) {
      const r = await sign(loc, `${tag}-b.checkpoint`, false);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, checkpoint: { size: 65 }, extends: 40 });
      const c = await cli([
        'prove',
        loc,
        '--checkpoint',
        join(dir, `${tag}-b.checkpoint`),
        '--from',
        '3',
        '--to',
        '9',
        '-o',
        join(dir, `${tag}-incl.proof`),
      ]);
      expect(c.code, c.stderr).toBe(0);
      const o = await cli([
        'prove',
        loc,
        '--checkpoint',
        join(dir, `${tag}-b.checkpoint`),
        '--old',
        join(dir, `${tag}-a.checkpoint`),
        '-o',
        join(dir, `${tag}-cons.proof`),
      ]);
      expect(o.code, o.stderr).toBe(0);
      const e = await cli([
        'export',
        loc,
        '--from',
        '50',
        '--to',
        '60',
        '--checkpoint',
        join(dir, `${tag}-b.checkpoint`),
        '-o',
        join(dir, `${tag}-part.tar`),
      ]);
      expect(e.code, e.stderr).toBe(0);
    }
    for (const f of ['b.checkpoint', 'incl.proof', 'cons.proof', 'part.tar']) same(`d-${f}`, `p-${f}`);
    const vkey = JSON.parse((await sign(at('twin'), 'p-c.checkpoint', false)).stdout).vkey as string;
    const checked = await cli([
      'verify',
      '--proof',
      join(dir, 'p-cons.proof'),
      '--log-key',
      vkey,
      '--checkpoint',
      join(dir, 'p-a.checkpoint'),
      '--json',
    ]);
    expect(checked.code, checked.stderr).toBe(0);
    const part = await cli(['verify', join(dir, 'p-part.tar'), '--log-key', vkey, '--json']);
    expect(part.code, part.stderr).toBe(0);
    const extended = await cli([
      'verify',
      at('twin'),
      '--checkpoint',
      join(dir, 'p-a.checkpoint'),
      '--log-key',
      vkey,
      '--json',
    ]);
    expect(extended.code, extended.stderr).toBe(0);
  }, 120_000);
});

describe('doctor', () => {
  test('a healthy Postgres location: backend, server, schema version, writable, the journal head', async () => {
    expect((await cli(['init', at('doc')])).code).toBe(0);
    const r = await cli(['doctor', at('doc'), '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      backend: 'postgres',
      reachable: true,
      server: expect.stringMatching(/^PostgreSQL 18/),
      schema: { name: schema, version: 3, supported: 3 },
      writable: true,
      journal: { id: 'doc', found: true, head: null },
      problems: [],
      // The test server runs without fsync (test/setup/pg-runner.mjs): doctor says what that costs.
      durability: { fsync: 'off', warning: expect.stringContaining('fsync is off') },
    });
    const text = await cli(['doctor', at('doc')]);
    expect(text.stderr).toMatch(/healthy[\s\S]*backend\s+postgres[\s\S]*writable\s+yes/);
  });

  test.each([
    ['a wrong password', { env: { PGPASSWORD: 'wrong' } }, () => at('doc'), 'AUTH_FAILED'],
    [
      'no server',
      {},
      () => {
        const u = new URL(at('doc'));
        u.port = '1';
        return u.toString();
      },
      'SERVER_UNREACHABLE',
    ],
  ])('%s: exit 1 with the coded problem, no stack trace', async (_l, options, location, codeName) => {
    const r = await cli(['doctor', location(), '--json'], options);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, reachable: false, problems: [{ code: codeName }] });
    noStack(r.stderr);
  });

  test('a directory journal', async () => {
    const j = join(dir, 'docdir');
    expect((await cli(['init', j])).code).toBe(0);
    const r = await cli(['doctor', j, '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ok: true,
      backend: 'file',
      writable: true,
      journal: { id: 'docdir', found: true },
    });
  });
});

describe('servers that cannot be used, from any verb', () => {
  test.each([
    ['wrong password', ['log'], { PGPASSWORD: 'wrong' }, (l: string) => l, 'AUTH_FAILED'],
    [
      'no server',
      ['append'],
      {},
      (l: string) => {
        const u = new URL(l);
        u.port = '1';
        return u.toString();
      },
      'SERVER_UNREACHABLE',
    ],
    ['no journal named', ['head'], {}, (l: string) => l.replace(/journal=[^&]+&?/, ''), 'OPTION_INVALID'],
  ])('%s: exit 2, the code on stderr and in --json, no stack trace', async (_l, verb, env, mangle, codeName) => {
    const r = await cli([...verb, mangle(at('run')), '--json'], { env, input: '{"input":1}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(codeName);
    expect(JSON.parse(r.stdout).error.code).toBe(codeName);
    noStack(r.stderr);
  });

  test('a schema from a newer stepchain: SCHEMA_TOO_NEW, and nothing changes', async () => {
    const newer = `clitest_${process.pid}_newer`;
    const loc = at('j', { schema: newer });
    expect((await cli(['init', loc])).code).toBe(0);
    await admin.query(`INSERT INTO "${newer}".migrations (version, description) VALUES (99, 'future')`);
    for (const verb of [['head'], ['append']]) {
      const r = await cli([...verb, loc], { input: '{"input":1}' });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/SCHEMA_TOO_NEW.*version 99/);
      noStack(r.stderr);
    }
    const doctor = await cli(['doctor', loc, '--json']);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout).problems.map((p: { code: string }) => p.code)).toContain('SCHEMA_TOO_NEW');
  });

  test('a password typed into the location works, is warned about, and is never printed', async () => {
    const u = new URL(at('run'));
    u.password = password;
    const r = await cli(['head', u.toString(), '--json'], { env: { PGPASSWORD: '' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('process list');
    expect(r.stdout + r.stderr).not.toContain(password);
  });
});
