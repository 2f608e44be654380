/**
 * The outsider's erasure findings (black box, built CLI), kept as attacks that must fail: each runs the
 * finding's own steps as real `stepchain` processes (dist/) and asserts the fixed behaviour.
 *
 * - 6: erasing a value of a record that also holds a part reference (any value of 1 KiB or more) appended the
 *   erasure record and then failed MARKER_INVALID, leaving it pending for good and every later erase stuck.
 * - 11: erasing a member, then the object that held it, left the first erasure record without its marker:
 *   the journal INVALID (ERASURE_MISMATCH) and every later erase failing.
 * - 1: erasing personal data from an approval's reason voided the approver's signature and turned a valid
 *   journal INVALID ("never executed" for a call that ran).
 * - 18: a member named "__proto__" vanished from show and log, and erasing another member of its object got
 *   stuck (SEALED_INVALID after the erasure record).
 * - ERASURE.md §4 step 7: a part that only the erased value referenced is deleted with its index entry.
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refuseUnerasable, unitAt } from '../../src/record/v3/erasure.js';
import { FileStore } from '../../src/store/file/store.js';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { cliIn, type Run as Ran } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-erasure-outsider-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const { feed: run } = cliIn(dir, {}, { inProcess: true });
const bucketText = (j: string): string =>
  readdirSync(join(dir, j, 'buckets'))
    .filter((n) => n.endsWith('.jsonl'))
    .map((n) => readFileSync(join(dir, j, 'buckets', n), 'utf8'))
    .join('');
const record = (j: string, seq: number): Record<string, unknown> =>
  JSON.parse(bucketText(j).split('\n')[seq]!) as Record<string, unknown>;

async function init(j: string, ...steps: unknown[]): Promise<void> {
  expect((await run(['init', j, '--format', 'v3'])).code).toBe(0);
  for (const s of steps) expect((await run(['append', j], JSON.stringify(s))).code).toBe(0);
}
async function verify(
  j: string,
  extra: string[] = [],
): Promise<{ code: number | null; ok: boolean; warnings: string[]; problems: string[] }> {
  const r = await run(['verify', j, '--json', ...extra]);
  const doc = JSON.parse(r.stdout) as {
    ok: boolean;
    report: { warnings: Array<{ code: string }>; problems: Array<{ code: string }> };
  };
  return {
    code: r.code,
    ok: doc.ok,
    warnings: doc.report.warnings.map((w) => w.code),
    problems: doc.report.problems.map((p) => p.code),
  };
}
const erase = (j: string, seq: number, path: string, env: Record<string, string> = {}): Promise<Ran> =>
  run(['erase', j, '--seq', String(seq), '--path', path, '--reason', 'GDPR Art. 17'], undefined, env);
/** Every part file of a journal (addresses), without the dedupe index and the key. */
const partFiles = (j: string): string[] => {
  const root = join(dir, j, 'parts');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(root, d)).map((f) => d + f));
};
const indexEntries = (j: string): number => {
  const root = join(dir, j, 'parts', 'index');
  return existsSync(root) ? readdirSync(root).flatMap((d) => readdirSync(join(root, d))).length : 0;
};

/**
 * Appends an erasure record as the erase writer (or an older writer, before ERASURE.md §3.1 reserved them) could:
 * `stepchain append` refuses them now (ERASURE_RESERVED).
 */
async function appendByHand(j: string, step: Record<string, unknown>): Promise<void> {
  const journal = await new FileStore(dir).open(j);
  try {
    await journal.append({ ...step, [ERASURE_WRITER]: true } as never);
  } finally {
    await journal.close();
  }
}

const BIG = 'Q'.repeat(1100);

describe('erasure: the outsider findings (real processes)', { timeout: 300_000 }, () => {
  it('finding 6: a value of a record that also holds a part (another slot, the same object, an array) is erased, and later erasures still work', async () => {
    await init(
      'f6',
      { input: { page: BIG }, result: { email: 'jane.doe@example.org', doc: 'R'.repeat(1100), list: [BIG, 'x'] } },
      { input: { other: 'bob@example.org' } },
    );
    expect(bucketText('f6')).toContain('$stepchain:part');
    for (const path of ['/result/email', '/result/list/1', '/input/page']) {
      const r = await erase('f6', 0, path);
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.code).toBe(0);
    }
    expect((await erase('f6', 1, '/input/other')).code).toBe(0);
    expect(bucketText('f6')).not.toContain('jane.doe@example.org');
    expect(bucketText('f6')).not.toContain('bob@example.org');
    const v = await verify('f6', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
    expect(v.warnings.filter((c) => c === 'VALUE_ERASED')).toHaveLength(4);
  });

  it('finding 6: an erasure recorded but not carried out in a record holding a part (the stuck state) is completed by erase --resume', async () => {
    await init('f6r', { input: { page: BIG }, result: { email: 'jane.doe@example.org' } });
    const killed = await erase('f6r', 0, '/result/email', { STEPCHAIN_TEST_ERASE_FAULT: 'after-record' });
    expect(killed.code).not.toBe(0);
    expect((await verify('f6r')).warnings).toContain('ERASURE_PENDING');
    const resumed = await run(['erase', 'f6r', '--resume']);
    expect(resumed.stderr).toMatch(/1 interrupted erasure|completed/);
    expect(resumed.code).toBe(0);
    expect(bucketText('f6r')).not.toContain('jane.doe@example.org');
    const v = await verify('f6r', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
    expect(v.warnings).toContain('VALUE_ERASED');
  });

  it('a stuck erasure blocks nothing: an erasure record no writer can carry out (appended by hand) stays pending, is reported by --resume, and later erases work', async () => {
    await init('stuck', { result: { email: 'jane@example.org', phone: '+33 6 12 34 56 78' } });
    const bogus = {
      kind: 'erasure',
      step_id: 'erasure:0:bogus',
      input: { target: 0, path: '/result/nothing', digest: 'sha256:' + 'a'.repeat(64), reason: 'x', by: null },
    };
    await appendByHand('stuck', bogus);
    expect((await verify('stuck')).warnings).toContain('ERASURE_PENDING');
    const r = await erase('stuck', 0, '/result/email');
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(bucketText('stuck')).not.toContain('jane@example.org');
    const resumed = await run(['erase', 'stuck', '--resume', '--json']);
    expect(resumed.code).toBe(1);
    const doc = JSON.parse(resumed.stdout) as { ok: boolean; stuck: Array<{ code: string; erasure: { seq: number } }> };
    expect(doc.ok).toBe(false);
    expect(doc.stuck).toEqual([
      expect.objectContaining({ code: 'ERASURE_TARGET_INVALID', erasure: expect.objectContaining({ seq: 1 }) }),
    ]);
    expect((await run(['erase', 'stuck', '--resume'])).stderr).toContain('cannot carry out erasure record seq 1');
    expect((await erase('stuck', 0, '/result/phone')).code).toBe(0);
    const v = await verify('stuck', ['--deep']);
    // The real erasures verify; the hand-made record, checkable now that its target is sealed, is caught lying (§5 step 4).
    expect(v.warnings.filter((c) => c === 'VALUE_ERASED')).toHaveLength(2);
    expect(v.problems).toEqual(['ERASURE_MISMATCH']);
  });

  it('ERASURE.md §4 step 7: the part only the erased value referenced is deleted with its index entry; a part still referenced stays', async () => {
    await init(
      'parts',
      { result: { doc: 'D'.repeat(1100), keep: 'K'.repeat(1100) } },
      { result: { again: 'K'.repeat(1100) } },
    );
    expect(partFiles('parts')).toHaveLength(2);
    const indexBefore = indexEntries('parts');
    expect(indexBefore).toBe(2);
    const doc = (record('parts', 0).result as Record<string, { '$stepchain:part': { digest: string } }>).doc![
      '$stepchain:part'
    ].digest.slice(7);
    const r = await run([
      'erase',
      'parts',
      '--seq',
      '0',
      '--path',
      '/result/doc',
      '--reason',
      'GDPR Art. 17',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { parts_deleted: string[] }).parts_deleted).toEqual([`sha256:${doc}`]);
    expect(partFiles('parts')).toHaveLength(1);
    expect(partFiles('parts')).not.toContain(doc);
    expect(indexEntries('parts')).toBe(indexBefore - 1);
    // The other part is referenced by seq 0 and seq 1: erasing it from seq 0 keeps the file for seq 1.
    expect((await erase('parts', 0, '/result/keep')).code).toBe(0);
    expect(partFiles('parts')).toHaveLength(1);
    expect((await run(['show', 'parts', '1'])).stdout).toContain('K'.repeat(1100));
    expect((await verify('parts', ['--deep'])).problems).toEqual([]);
  });

  it('finding 11: erasing the object that holds an erased member is refused before anything is written; the journal stays valid and erasable', async () => {
    await init(
      'f11',
      { result: { customer: { email: 'jane@example.org', id: 7 }, other: 'x' } },
      { result: { phone: '+33 6 12 34 56 78' } },
    );
    expect((await erase('f11', 0, '/result/customer/email')).code).toBe(0);
    const before = bucketText('f11');
    for (const path of ['/result/customer', '/result']) {
      const r = await erase('f11', 0, path);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('ERASURE_TARGET_INVALID');
      expect(r.stderr).toContain('erased earlier');
      expect(bucketText('f11')).toBe(before);
    }
    // Its remaining members can still be erased one by one.
    expect((await erase('f11', 0, '/result/customer/id')).code).toBe(0);
    expect((await erase('f11', 1, '/result/phone')).code).toBe(0);
    const v = await verify('f11', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.warnings.filter((c) => c === 'VALUE_ERASED')).toHaveLength(3);
  });

  it('findings 6, 11, 18 in a SQLite store: erased beside a part and a "__proto__" member; the holder of an erased member refused', async () => {
    const at = `sqlite:${join(dir, 'store.db')}?journal=k`;
    expect((await run(['init', at, '--format', 'v3'])).code).toBe(0);
    expect(
      (
        await run(
          ['append', at],
          JSON.stringify({
            input: { page: BIG },
            result: { customer: { email: 'jane@example.org', id: 7 }, ['__proto__']: { isAdmin: true } },
          }),
        )
      ).code,
    ).toBe(0);
    const first = await erase(at, 0, '/result/customer/email');
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    const nested = await erase(at, 0, '/result/customer');
    expect(nested.code).not.toBe(0);
    expect(nested.stderr).toContain('ERASURE_TARGET_INVALID');
    const v = await verify(at, ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
    expect(v.warnings.filter((c) => c === 'VALUE_ERASED')).toHaveLength(1);
    expect((await run(['show', at, '0'])).stdout).toContain('isAdmin');
  });

  it('finding 11, raced: a recorded erasure of an object whose member was erased meanwhile stays pending (reported), the journal valid', async () => {
    // Two erases racing: each read the record before the other changed it, both recorded; the member's was
    // carried out first. The object's erasure record (appended here as the racing writer did) must not be
    // carried out over the member's marker.
    await init('race', { result: { customer: { email: 'jane@example.org', id: 7 } } });
    expect((await erase('race', 0, '/result/customer/email')).code).toBe(0);
    const digest = 'sha256:' + Buffer.from(unitAt(record('race', 0), '/result/customer').unit.digest).toString('hex');
    const parent = {
      kind: 'erasure',
      step_id: `erasure:0:${digest.slice(7, 39)}`,
      input: { target: 0, path: '/result/customer', digest, reason: 'GDPR Art. 17', by: null },
    };
    await appendByHand('race', parent);
    const resumed = await run(['erase', 'race', '--resume', '--json']);
    expect(resumed.code).toBe(1);
    expect((JSON.parse(resumed.stdout) as { stuck: Array<{ code: string }> }).stuck).toEqual([
      expect.objectContaining({ code: 'ERASURE_TARGET_INVALID' }),
    ]);
    const v = await verify('race', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.ok).toBe(true);
    expect(v.warnings).toContain('ERASURE_PENDING');
    expect(v.warnings).toContain('VALUE_ERASED');
    // The member can still be erased one by one.
    expect((await erase('race', 0, '/result/customer/id')).code).toBe(0);
  });

  it('finding 1: a member of a signed decision (approval.granted / approval.denied input or meta) is refused as ERASURE_SIGNED', () => {
    const granted = {
      kind: 'approval.granted',
      seq: 2,
      input: { reason: 'called jane@example.org', decision: 'granted' },
      meta: { approver: { name: 'alice' }, signature: 'x' },
    };
    for (const path of ['/input/reason', '/input', '/meta/approver/name', '/meta/signature', '/meta']) {
      expect(() => refuseUnerasable(granted, path)).toThrow(expect.objectContaining({ code: 'ERASURE_SIGNED' }));
      expect(() => refuseUnerasable({ ...granted, kind: 'approval.denied' }, path)).toThrow(
        expect.objectContaining({ code: 'ERASURE_SIGNED' }),
      );
    }
    // A request's presented call is not signed by the approver: erasable (the verifier reports APPROVAL_UNCHECKED).
    expect(() =>
      refuseUnerasable(
        { kind: 'approval.requested', seq: 1, input: { presented: { arguments: { to: 'x' } } } },
        '/input/presented/arguments/to',
      ),
    ).not.toThrow();
    expect(() => refuseUnerasable({ ...granted, result: { note: 'x' } }, '/result/note')).not.toThrow();
  });

  // The approval verbs land from another branch; where this build has them, the finding's own steps run.
  it('finding 1 (CLI): erasing an approval reason is refused before writing and the journal stays valid', async (ctx) => {
    if (!(await run(['approve', '--help'])).stdout.includes('--approve')) ctx.skip();
    expect((await run(['keygen', '-o', 'alice.key'])).code).toBe(0);
    const args = { amount: 120 };
    await init('f1', {
      kind: 'approval.requested',
      step_id: 'req-1',
      input: { presented: { name: 'pay', arguments: args }, expires_at: null },
    });
    expect(
      (
        await run([
          'approve',
          'f1',
          'req-1',
          '--key',
          'alice.key',
          '--approve',
          '--reason',
          'called Jane Doe jane@example.org',
          '--name',
          'alice',
        ])
      ).code,
    ).toBe(0);
    const requestHash = record('f1', 0).step_hash as string;
    expect(
      (
        await run(
          ['append', 'f1'],
          JSON.stringify({
            kind: 'tool.started',
            step_id: 'eff-1',
            tool_call: { name: 'pay', arguments: args },
            meta: { approval: { request: 'req-1', request_hash: requestHash } },
          }),
        )
      ).code,
    ).toBe(0);
    expect((await verify('f1', ['--approver', 'alice.key.pub'])).code).toBe(0);
    const before = bucketText('f1');
    const r = await erase('f1', 1, '/input/reason');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('ERASURE_SIGNED');
    expect(bucketText('f1')).toBe(before);
    const v = await verify('f1', ['--approver', 'alice.key.pub']);
    expect(v.code).toBe(0);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
  });

  it('finding 18: a "__proto__" member is shown by show and log, and erasing a member beside it works', async () => {
    await init('f18', { result: { ['__proto__']: { isAdmin: true }, email: 'jane@example.org' } });
    // JSON.stringify of an object literal with a computed "__proto__" key keeps it as a member.
    expect(bucketText('f18')).toContain('"__proto__":{"isAdmin":true}');
    const show = await run(['show', 'f18', '0']);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('"__proto__"');
    expect(show.stdout).toContain('isAdmin');
    const shown = await run(['show', 'f18', '0', '--json']);
    expect(JSON.stringify((JSON.parse(shown.stdout) as { step: { result: unknown } }).step.result)).toBe(
      '{"__proto__":{"isAdmin":true},"email":"jane@example.org"}',
    );
    const log = await run(['log', 'f18']);
    expect(log.stdout + log.stderr).toContain('isAdmin');
    const r = await erase('f18', 0, '/result/email');
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.code).toBe(0);
    expect(bucketText('f18')).not.toContain('jane@example.org');
    const v = await verify('f18', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
    expect(v.warnings).toContain('VALUE_ERASED');
    // The "__proto__" member itself is erasable too.
    expect((await erase('f18', 0, '/result/__proto__')).code).toBe(0);
    expect(bucketText('f18')).not.toContain('isAdmin');
    expect((await verify('f18', ['--deep'])).problems).toEqual([]);
  });

  it('finding 18: an erasure beside a "__proto__" member recorded but not carried out (the stuck state) is completed by erase --resume', async () => {
    await init('f18r', { result: { ['__proto__']: { isAdmin: true }, email: 'jane@example.org' } });
    expect((await erase('f18r', 0, '/result/email', { STEPCHAIN_TEST_ERASE_FAULT: 'after-record' })).code).not.toBe(0);
    expect((await verify('f18r')).warnings).toContain('ERASURE_PENDING');
    const resumed = await run(['erase', 'f18r', '--resume']);
    expect(resumed.stderr).not.toMatch(/error/i);
    expect(resumed.code).toBe(0);
    expect(bucketText('f18r')).not.toContain('jane@example.org');
    const v = await verify('f18r', ['--deep']);
    expect(v.problems).toEqual([]);
    expect(v.warnings).not.toContain('ERASURE_PENDING');
    expect(v.warnings).toContain('VALUE_ERASED');
  });
});
