/**
 * The second outsider's erasure findings (black box, built CLI), kept as attacks that must fail: each runs the
 * finding's steps as real `stepchain` processes (dist/) and asserts the fixed behaviour.
 *
 * - 5: an erased value survived in the saved run state (.run-state.json, SQLite's run_state row) and
 *   `effect list` printed it after erase said "erased".
 * - 3: an ordinary `append` of a kind "erasure" record (digest read from a public receipt) was carried out by the
 *   next, unrelated erase: a value deleted and attributed to someone who never asked.
 * - 4: `approve` on a malformed request printed "granting request … the call: {…}" before refusing it.
 * - 2: an ordinary `append` of a step with step_id `erasure:<seq>:<digest>` blocked that erasure for good
 *   (STEP_ID_CONFLICT on every try).
 * - 1: `fork --from-step K` / `export --to K` for K between an erased record and its erasure record called the
 *   journal corrupt ("do not verify"); now refused RANGE_SPLITS_ERASURE naming the steps that work (ERASURE.md
 *   §6.5), also when the fork races the erase.
 * - 8: a partial receipt starting after an erased record reported its completed erasure as ERASURE_PENDING
 *   ("run --resume"); now ERASURE_OUT_OF_RANGE (the range cannot see the target).
 * - 6: after one argument of a pending approval request was erased (which the spec allows), `approve --list`
 *   showed name "" and arguments null, and the call printed when deciding was the same blank.
 * - 7: `copy` refused every journal holding an erased value (JOURNAL_CORRUPT, ERASURE_UNRECORDED) though it
 *   verified: it judged each sealed record before reading its erasure record, and could not re-append one.
 */
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { unitAt } from '../../src/record/v3/erasure.js';
import { FileStore } from '../../src/store/file/store.js';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-erasure-outsider2-');
const server = new URL(inject('pgUrl'));
const schema = `erasure_outsider2_${process.pid}`;
const admin = new pg.Client({ connectionString: server.toString() });
await admin.connect();
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});
/** A Postgres location of this file's schema (the password goes by PGPASSWORD, never on a command line). */
function pgLocation(journal: string): string {
  const u = new URL(server.toString());
  u.password = '';
  u.searchParams.set('journal', journal);
  u.searchParams.set('schema', schema);
  return u.toString();
}

// In one process of the CLI (its calls one at a time), but for the race below, whose two calls start processes.
const { feed: run, started } = cliIn(dir, { PGPASSWORD: decodeURIComponent(server.password) }, { inProcess: true });

/** Every byte under `path` (a file or a folder, walked), as text: where an erased value must not be. */
function bytesUnder(path: string): string {
  if (!statSync(path).isDirectory()) return readFileSync(path, 'latin1');
  return readdirSync(path)
    .map((n) => bytesUnder(join(path, n)))
    .join('');
}

const SECRET = 'victim@secret.example';

describe('erasure: the second outsider findings (real processes)', { timeout: 300_000 }, () => {
  for (const [name, location, files] of [
    ['file store', 'rf', 'rf'],
    ['SQLite', `sqlite:${join(dir, 'rs.db')}?journal=r1`, 'rs.db'],
  ] as const) {
    it(`finding 5 (${name}): an erased argument of a pending effect is gone from the saved run state and from effect list`, async () => {
      expect((await run(['init', location, '--run', '--format', 'v3'])).code).toBe(0);
      const begun = await run([
        'effect',
        'begin',
        location,
        '--tool',
        'send_email',
        '--args',
        JSON.stringify({ to: SECRET }),
        '--idempotency-key',
        'mail-1',
      ]);
      expect(begun.code).toBe(0);
      // effect list before the erasure: the run state is saved with the value in it.
      expect(
        (await run(['effect', 'list', location])).stderr + (await run(['effect', 'list', location])).stdout,
      ).toContain(SECRET);
      const erased = await run([
        'erase',
        location,
        '--seq',
        '1',
        '--path',
        '/tool_call/arguments/to',
        '--reason',
        'GDPR',
      ]);
      expect(erased.code).toBe(0);
      const listed = await run(['effect', 'list', location]);
      expect(listed.code).toBe(0);
      expect(listed.stdout + listed.stderr).not.toContain(SECRET);
      expect(listed.stdout + listed.stderr).toContain('send_email');
      // Nowhere in the store's files (the SQLite file's WAL is truncated after the erasure).
      expect(bytesUnder(join(dir, files))).not.toContain(SECRET);
      // Another reader saves the run state afresh: folded from the sealed record.
      expect((await run(['effect', 'list', location, '--json'])).code).toBe(0);
      expect(bytesUnder(join(dir, files))).not.toContain(SECRET);
    });
  }

  it('findings 3 and 2: a plain append may neither write an erasure record nor take an erasure step_id (ERASURE_RESERVED), and the erase then works', async () => {
    expect((await run(['init', 'j', '--format', 'v3'])).code).toBe(0);
    const steps = [0, 1].map((i) => JSON.stringify({ step_id: `s${i}`, result: { email: 'alice@example.org', n: i } }));
    expect((await run(['append', 'j', '--jsonl'], steps.join('\n') + '\n')).code).toBe(0);
    const digest = `sha256:${'ab'.repeat(32)}`;
    const forged = {
      step_id: `erasure:1:${digest.slice(7, 39)}`,
      kind: 'erasure',
      input: { target: 1, path: '/result/email', digest, reason: 'GDPR', by: 'dpo@example.org' },
    };
    const squat = { step_id: `erasure:1:${digest.slice(7, 39)}`, input: { note: 'squat' } };
    const byKind = { step_id: 'mine', kind: 'erasure', input: forged.input };
    for (const step of [forged, squat, byKind]) {
      const r = await run(['append', 'j', '--json'], JSON.stringify(step));
      expect(r.code).toBe(2);
      expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe('ERASURE_RESERVED');
      const many = await run(['append', 'j', '--jsonl'], JSON.stringify(step) + '\n');
      expect(many.code).not.toBe(0);
      expect(many.stderr).toContain('ERASURE_RESERVED');
    }
    const erased = await run(['erase', 'j', '--seq', '1', '--path', '/result/email', '--reason', 'GDPR']);
    expect(erased.code).toBe(0);
    expect(erased.stderr).not.toContain('recorded earlier');
    const verified = await run(['verify', 'j', '--json']);
    expect(verified.code).toBe(0);
    const warnings = (JSON.parse(verified.stdout) as { report: { warnings: Array<{ code: string }> } }).report.warnings;
    expect(warnings.map((w) => w.code)).toEqual(['VALUE_ERASED']);
  });

  it('finding 3: an erasure recorded earlier by another writer (before the reservation) is carried out by the next erase, and said', async () => {
    expect((await run(['init', 'old', '--format', 'v3'])).code).toBe(0);
    const steps = [0, 1].map((i) => JSON.stringify({ step_id: `s${i}`, result: { email: `a${i}@example.org` } }));
    expect((await run(['append', 'old', '--jsonl'], steps.join('\n') + '\n')).code).toBe(0);
    const record = JSON.parse(
      readFileSync(join(dir, 'old', 'buckets', readdirSync(join(dir, 'old', 'buckets'))[0]!), 'utf8').split('\n')[0]!,
    ) as Record<string, unknown>;
    const digest = 'sha256:' + Buffer.from(unitAt(record, '/result/email').unit.digest).toString('hex');
    const journal = await new FileStore(dir).open('old');
    try {
      await journal.append({
        [ERASURE_WRITER]: true,
        step_id: `erasure:0:${digest.slice(7, 39)}`,
        kind: 'erasure',
        input: { target: 0, path: '/result/email', digest, reason: 'forged', by: 'dpo@example.org' },
      } as never);
    } finally {
      await journal.close();
    }
    // A copy reproduces the recorded (pending) erasure record: the reservation is not in its way.
    const copied = await run(['copy', 'old', 'old-copy']);
    expect(copied.stderr).not.toContain('ERASURE_RESERVED');
    expect(copied.code).toBe(0);
    const erased = await run(['erase', 'old', '--seq', '1', '--path', '/result/email', '--reason', 'GDPR']);
    expect(erased.code).toBe(0);
    expect(erased.stderr).toMatch(
      /completed an erasure recorded earlier \(not by this call\): old seq 0 \/result\/email .*erasure record seq 2/,
    );
    expect(erased.stderr).toMatch(/erased old seq 1 \/result\/email/);
  });

  it('finding 4: approve on a malformed request prints no call before refusing', async () => {
    expect((await run(['init', 'ap', '--run', '--format', 'v3'])).code).toBe(0);
    const request = {
      step_id: 'req',
      kind: 'approval.requested',
      input: {
        presented: { name: 'pay', arguments: { eur: 120 } },
        expires_at: null,
        note: 'a member no request has',
      },
    };
    expect((await run(['append', 'ap'], JSON.stringify(request))).code).toBe(0);
    expect((await run(['keygen', '-o', 'ap.key'])).code).toBe(0);
    const r = await run(['approve', 'ap', 'req', '--key', 'ap.key', '--approve', '--name', 'alice', '--reason', 'ok']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('APPROVAL_INVALID');
    expect(r.stderr).not.toContain('the call:');
    expect(r.stderr).not.toContain('granting');
  });

  it('finding 7: an erased journal copies directory -> SQLite -> Postgres -> directory, sealed lines byte for byte, same head, same erased report', async () => {
    expect((await run(['init', 'cj', '--format', 'v3'])).code).toBe(0);
    const steps = [0, 1, 2].map((i) =>
      JSON.stringify({ step_id: `s${i}`, result: { email: i === 1 ? SECRET : `other${i}@example.org`, plan: i } }),
    );
    expect((await run(['append', 'cj', '--jsonl'], steps.join('\n') + '\n')).code).toBe(0);
    expect((await run(['erase', 'cj', '--seq', '1', '--path', '/result/email', '--reason', 'GDPR'])).code).toBe(0);
    const report = async (at: string): Promise<{ ok: boolean; head: string; warnings: string[] }> => {
      const r = await run(['verify', at, '--json']);
      const doc = JSON.parse(r.stdout) as {
        ok: boolean;
        report: { head: string; warnings: Array<{ code: string; location: { seq: number; path?: string } }> };
      };
      const w = doc.report.warnings.map((x) => `${x.code} ${x.location.seq} ${x.location.path ?? ''}`);
      return { ok: doc.ok, head: doc.report.head, warnings: w };
    };
    const source = await report('cj');
    expect(source).toMatchObject({ ok: true, warnings: ['VALUE_ERASED 1 /result/email'] });
    const chain = ['cj', 'cj-copy', `sqlite:${join(dir, 'copies.db')}?journal=cj`, pgLocation('cj'), 'cj-back'];
    for (let i = 1; i < chain.length; i++) {
      const copied = await run(['copy', chain[i - 1]!, chain[i]!]);
      expect(copied.stderr).not.toMatch(/JOURNAL_CORRUPT|ERASURE_UNRECORDED/);
      expect(copied.code).toBe(0);
      expect(await report(chain[i]!)).toEqual(source);
    }
    // Copying again finds the whole copy there (identical, the sealed line included): nothing appended.
    const again = await run(['copy', 'cj', chain[1]!]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('0 steps copied, 4 already there');
    // Byte for byte: the round trip through SQLite and Postgres gives the source's bucket.
    const bucket = (j: string): string => bytesUnder(join(dir, j, 'buckets'));
    expect(bucket('cj-back')).toBe(bucket('cj'));
    expect(bucket('cj-back')).not.toContain(SECRET);
  });

  it('findings 1 and 8: a fork or receipt ending between an erased record and its erasure record is refused RANGE_SPLITS_ERASURE (never "corrupt"); a partial receipt after the target says ERASURE_OUT_OF_RANGE', async () => {
    expect((await run(['init', 'fj', '--format', 'v3'])).code).toBe(0);
    const steps = [0, 1, 2, 3].map((i) =>
      JSON.stringify({ step_id: `s${i}`, result: { customer: { email: `c${i}@example.org` }, plan: i } }),
    );
    expect((await run(['append', 'fj', '--jsonl'], steps.join('\n') + '\n')).code).toBe(0);
    const erase = ['erase', 'fj', '--seq', '1', '--path', '/result/customer/email', '--reason', 'GDPR'];
    expect((await run(erase)).code).toBe(0); // its erasure record is seq 4
    for (const args of [
      ['fork', 'fj', '--from-step', '2', 'fk2'],
      ['export', 'fj', '--to', '3', '-o', 'to3.tar.gz'],
      ['export', 'fj', '--from', '1', '--to', '2', '-o', 'r12.tar.gz'],
    ]) {
      const r = await run(args);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('RANGE_SPLITS_ERASURE');
      expect(r.stderr).toContain('a step before seq 1, or seq 4 or later');
      expect(r.stderr).not.toMatch(/JOURNAL_CORRUPT|CHAIN_INVALID|not verify \(/);
    }
    // The ends it names work, and what they make verifies.
    expect((await run(['fork', 'fj', '--from-step', '0', 'fk0'])).code).toBe(0);
    expect((await run(['fork', 'fj', '--from-step', '4', 'fk4'])).code).toBe(0);
    expect((await run(['export', 'fj', '--to', '4', '-o', 'to4.tar.gz'])).code).toBe(0);
    for (const at of ['fk0', 'fk4', 'to4.tar.gz']) {
      const verified = await run(['verify', at]);
      expect(verified.code).toBe(0);
      if (at !== 'fk0') expect(verified.stdout + verified.stderr).toContain('VALUE_ERASED');
    }
    // Finding 8: a receipt from seq 2 holds the erasure record, not its target.
    expect((await run(['export', 'fj', '--from', '2', '-o', 'from2.tar.gz'])).code).toBe(0);
    const partial = await run(['verify', 'from2.tar.gz', '--json']);
    expect(partial.code).toBe(0);
    const codes = (JSON.parse(partial.stdout) as { report: { warnings: Array<{ code: string }> } }).report.warnings.map(
      (w) => w.code,
    );
    expect(codes).toContain('ERASURE_OUT_OF_RANGE');
    expect(codes).not.toContain('ERASURE_PENDING');
    // A marker that no later record explains is still corruption: rename the erasure record (seq 4) in place.
    const bucketDir = join(dir, 'fj', 'buckets');
    const bucketFile = join(
      bucketDir,
      readdirSync(bucketDir).find((n) => n.endsWith('.jsonl'))!,
    );
    const lines = readFileSync(bucketFile, 'utf8').split('\n');
    lines[4] = lines[4]!.replace('"step_id":"erasure:1:', '"step_id":"renamed:1:');
    writeFileSync(bucketFile, lines.join('\n'));
    const forged = await run(['fork', 'fj', '--from-step', '2', 'fk-forged']);
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toContain('JOURNAL_CORRUPT');
    expect(forged.stderr).not.toContain('RANGE_SPLITS_ERASURE');
  });

  it('finding 1: a fork racing an erase either copies the value (forked first) or is refused RANGE_SPLITS_ERASURE, never called corrupt', async () => {
    for (const round of [0, 1]) {
      const id = `race${round}`;
      expect((await run(['init', id, '--format', 'v3'])).code).toBe(0);
      const steps = [0, 1, 2].map((i) => JSON.stringify({ step_id: `s${i}`, result: { email: `r${i}@example.org` } }));
      expect((await run(['append', id, '--jsonl'], steps.join('\n') + '\n')).code).toBe(0);
      const [erased, forked] = await Promise.all([
        started(['erase', id, '--seq', '1', '--path', '/result/email', '--reason', 'GDPR']),
        started(['fork', id, '--from-step', '2', `${id}-fork`]),
      ]);
      expect(erased.code).toBe(0);
      if (forked.code === 0) expect((await run(['verify', `${id}-fork`])).code).toBe(0);
      else expect(forked.stderr).toContain('RANGE_SPLITS_ERASURE');
      expect(forked.stderr).not.toMatch(/JOURNAL_CORRUPT|not verify \(/);
    }
  });

  it('finding 6: a pending request with an erased argument is listed with what remains (erased parts marked) and can be granted or denied', async () => {
    expect((await run(['init', 'aj', '--run', '--format', 'v3'])).code).toBe(0);
    const request = (id: string): string =>
      JSON.stringify({
        step_id: id,
        kind: 'approval.requested',
        input: { presented: { name: 'pay', arguments: { iban: `${id}-${SECRET}`, eur: 5 } }, expires_at: null },
      });
    expect((await run(['append', 'aj', '--jsonl'], `${request('rq1')}\n${request('rq2')}\n`)).code).toBe(0);
    expect((await run(['keygen', '-o', 'aj.key'])).code).toBe(0);
    for (const seq of ['1', '2']) {
      const erased = await run([
        'erase',
        'aj',
        '--seq',
        seq,
        '--path',
        '/input/presented/arguments/iban',
        '--reason',
        'GDPR',
      ]);
      expect(erased.code).toBe(0);
    }
    const listed = await run(['approve', 'aj', '--list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('"rq1"  seq 1  pending  "pay"  (values erased: not compared with what runs)');
    expect(listed.stdout).toContain('{"arguments":{‹1 erased›,"eur":5},"name":"pay"}');
    expect(listed.stdout + listed.stderr).not.toContain(SECRET);
    const json = JSON.parse((await run(['approve', 'aj', '--list', '--json'])).stdout) as {
      requests: Array<{ request: string; tool: string; arguments: Record<string, unknown>; erased?: true }>;
    };
    expect(json.requests[0]).toMatchObject({ request: 'rq1', tool: 'pay', erased: true });
    expect(json.requests[0]!.arguments.eur).toBe(5);
    expect(json.requests[0]!.arguments['$stepchain:erased']).toHaveLength(1);
    const granted = await run([
      'approve',
      'aj',
      'rq1',
      '--key',
      'aj.key',
      '--approve',
      '--name',
      'alice',
      '--reason',
      'ok',
    ]);
    expect(granted.stderr).not.toContain('APPROVAL_INVALID');
    expect(granted.code).toBe(0);
    expect(granted.stderr).toContain('{"arguments":{‹1 erased›,"eur":5},"name":"pay"}');
    const denied = await run([
      'approve',
      'aj',
      'rq2',
      '--key',
      'aj.key',
      '--deny',
      '--name',
      'alice',
      '--reason',
      'no',
    ]);
    expect(denied.code).toBe(0);
    const verified = await run(['verify', 'aj']);
    expect(verified.code).toBe(0);
  });
});
