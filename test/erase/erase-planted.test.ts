/**
 * Records an older writer or another program may have left in a journal (spec/ERASURE.md §3.1: the
 * reservation is the writer's, not the format's), against the erase writer. Outsider 12 planted both:
 * an erasure record naming a seq past the journal's end made every erase of the journal crash ("undefined"
 * is not valid JSON), and a store-wide erase stop before the other journals; a record holding the step_id an
 * erasure is named by made every erase of that unit fail STEP_ID_CONFLICT, on a journal that verifies.
 * Planted here through the writer's own flag (ERASURE_WRITER), on the file and the SQLite store.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { FileStore } from '../../src/store/file/store.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
type Store = FileStore | SqliteStore;
import { eraseMatching, eraseValue, erasureStepId, resumeErasures, type StuckErasure } from '../../src/erase.js';
import { unitAt } from '../../src/record/v3/erasure.js';
import { exportReceipt, verifyReceipt } from '../../src/index.js';
import { publish } from '../../src/publish.js';
import type { Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { cliIn } from '../helpers/cli-in.js';

const EMAIL = 'olga.planted@example.org';
const PATH = '/result/email';

const stores: [string, () => Store][] = [
  ['file', () => new FileStore(tempDir('stepchain-erase-planted-'))],
  ['sqlite', () => new SqliteStore(join(tempDir('stepchain-erase-planted-'), 'agents.db'))],
];

/** A v3 journal `id` whose seq 0 holds EMAIL, then the steps `planted` appended as the erase writer would. */
async function journalWith(store: Store, id: string, planted: (digest: string) => object[]): Promise<void> {
  const j = await store.create(id, { format: 'stepchain/v3' } as never);
  await j.append({ step_id: `${id}-0`, result: { email: EMAIL } });
  let line = '';
  for await (const l of j.lines({ from: 0, to: 0 })) line = l.text;
  const digest = 'sha256:' + Buffer.from(unitAt(JSON.parse(line), PATH).unit.digest).toString('hex');
  for (const step of planted(digest)) await j.append({ [ERASURE_WRITER]: true, ...step } as never);
  await j.close();
}

/** Whether any stored line of journal `id` holds EMAIL. */
async function holdsEmail(store: Store, id: string): Promise<boolean> {
  const j = await store.open(id, { readOnly: true });
  try {
    for await (const l of j.lines()) if (l.text.includes(EMAIL)) return true;
    return false;
  } finally {
    await j.close();
  }
}

/**
 * A fork from step 2, a receipt and a publication of `journal` are made at once (no wait for an erase that can
 * never come: under 1.2 s in all) and each verifies.
 */
async function expectCopiesMade(store: FileStore, journal: Journal): Promise<void> {
  const started = Date.now();
  await (await store.fork(journal, { fromStep: 2, to: 'fork' })).close();
  const receipt = join(store.root, 'r.tar');
  await exportReceipt(journal, { out: receipt });
  const publication = join(store.root, 'p.tar');
  await publish(journal, { policy: { rules: [{ id: 'models', paths: ['/model'] }] }, optIn: true, out: publication });
  expect(Date.now() - started).toBeLessThan(1200);
  expect((await store.verify('fork')).ok).toBe(true);
  for (const out of [receipt, publication]) expect((await verifyReceipt(readFileSync(out))).ok, out).toBe(true);
}

describe.each(stores)('planted records against the erase writer (%s store)', (_name, makeStore) => {
  it('an erasure record naming a seq past the end is reported, and blocks no erase of the journal or the store', async () => {
    const store = makeStore();
    const beyond = (digest: string) => [
      {
        step_id: 'erasure:20:planted',
        kind: 'erasure',
        input: { target: 20, path: PATH, digest, reason: 'planted', by: null },
      },
    ];
    await journalWith(store, 'a-planted', beyond);
    await journalWith(store, 'z-good', () => []);
    const stuck: StuckErasure[] = [];
    await resumeErasures(store, 'a-planted', stuck);
    expect(stuck.map((s) => [s.code, s.erasure.seq])).toEqual([['ERASURE_TARGET_INVALID', 1]]);
    const report = await eraseMatching(store, { matchPath: PATH, value: EMAIL, reason: 'GDPR Art. 17' });
    expect(report.failed).toEqual([]);
    expect(report.erased.map((o) => o.journal).sort()).toEqual(['a-planted', 'z-good']);
    for (const id of ['a-planted', 'z-good']) expect(await holdsEmail(store, id)).toBe(false);
    // It erased nothing, and verify says so; the genuine erasure verifies.
    const verdict = await store.verify('a-planted');
    expect(verdict.problems.map((p) => [p.code, p.location.seq])).toEqual([['ERASURE_MISMATCH', 1]]);
    expect((await store.verify('z-good')).ok).toBe(true);
  });

  it("a record holding an erasure's step_id does not keep the unit from being erased", async () => {
    const store = makeStore();
    const squatter = (digest: string) => [
      { step_id: erasureStepId(0, digest), kind: 'note', input: { text: 'holds the name' } },
    ];
    await journalWith(store, 'j', squatter);
    const done = await eraseValue(store, 'j', { seq: 0, path: PATH, reason: 'GDPR Art. 17' });
    expect(done.erasure.step_id).toMatch(/^erasure:0:[0-9a-f]{32}:2$/);
    expect(await holdsEmail(store, 'j')).toBe(false);
    const verdict = await store.verify('j');
    expect(verdict.ok).toBe(true);
    expect(verdict.warnings.map((n) => n.code)).toContain('VALUE_ERASED');
  });
});

describe('a planted erasure record with a wrong digest against fork, export and publish', () => {
  it('names no value the journal holds, so none of them waits for it or refuses ERASURE_PENDING', async () => {
    // Outsider 14, F8: an erasure record naming seq 0's /result/email with a digest that unit does not have can
    // never be carried out (resume reports it stuck), yet fork, export and publish counted it pending, waited
    // ~1.3 s and refused ERASURE_PENDING, for good. verify calls the journal valid (the target is private: the
    // record is checked when carried out, ERASURE.md §5 step 4), so each makes its copy, which verifies too.
    const store = new FileStore(tempDir('stepchain-erase-planted-'));
    const wrong = 'sha256:' + '0'.repeat(64);
    await journalWith(store, 'j', () => [
      {
        step_id: 'erasure:0:planted',
        kind: 'erasure',
        input: { target: 0, path: PATH, digest: wrong, reason: 'x', by: null },
      },
      { step_id: 'after', result: { ok: true } },
    ]);
    const verdict = await store.verify('j');
    expect(verdict.ok).toBe(true);
    expect(verdict.warnings.map((n) => n.code)).toContain('ERASURE_PENDING');
    const journal = await store.open('j');
    try {
      await expectCopiesMade(store, journal);
    } finally {
      await journal.close();
    }
  });

  it('an erase of the unit a false record names goes ahead and says why verify now fails at that record', async () => {
    // Outsider 14, 1: the false record (another digest for seq 0's /result/email) is pending while seq 0 is
    // private; the DPO's erase seals seq 0, and verify then holds the record to it (ERASURE_MISMATCH at the
    // record, ERASURE.md §5 step 4). The erase must still remove the value, and must not leave that verdict
    // looking like its own doing: it names the record it contradicts.
    const store = new FileStore(tempDir('stepchain-erase-planted-'));
    const falseRecord = () => [
      {
        step_id: 'erasure:0:planted',
        kind: 'erasure',
        input: { target: 0, path: PATH, digest: 'sha256:' + '0'.repeat(64), reason: 'x', by: null },
      },
    ];
    await journalWith(store, 'j', falseRecord);
    await journalWith(store, 'k', falseRecord);
    const cli = cliIn(store.root);
    const erased = await cli.run('erase', 'j', '--seq', '0', '--path', PATH, '--reason', 'request', '--by', 'dpo');
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stderr).toMatch(/warning: erasure record seq 1 names \/result\/email of seq 0 with a digest/);
    expect(erased.stderr).toContain('ERASURE_MISMATCH at seq 1');
    expect(await holdsEmail(store, 'j')).toBe(false);
    const verdict = await store.verify('j');
    expect(verdict.problems.map((p) => [p.code, p.location.seq])).toEqual([['ERASURE_MISMATCH', 1]]);
    // The whole member around it: the same record is named, in the JSON document too.
    const json = await cli.run('erase', 'k', '--seq', '0', '--path', '/result', '--reason', 'request', '--json');
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as { contradicted_by: { erasure: { seq: number } }[] };
    expect(doc.contradicted_by.map((c) => c.erasure.seq)).toEqual([1]);
    expect(await holdsEmail(store, 'k')).toBe(false);
  });

  it('a replayed copy of a completed erasure record keeps no fork, export or publication waiting for it', async () => {
    // Outsider 14, 2: the same target, path and digest as an erasure carried out (the digest is in every receipt),
    // under another step_id: the marker names the first record, so the copy was counted pending; fork, export
    // and publish refused ERASURE_PENDING ("the value would be carried out in clear") for good, while the value
    // was gone and verify called the journal intact.
    const store = new FileStore(tempDir('stepchain-erase-planted-'));
    await journalWith(store, 'j', () => []);
    const done = await eraseValue(store, 'j', { seq: 0, path: PATH, reason: 'request', by: 'dpo' });
    const journal = await store.open('j');
    try {
      await journal.append({
        [ERASURE_WRITER]: true,
        step_id: 'erasure:0:replayed',
        kind: 'erasure',
        input: { target: 0, path: PATH, digest: done.digest, reason: 'request', by: 'dpo' },
      } as never);
      expect((await store.verify('j')).ok).toBe(true);
      await expectCopiesMade(store, journal);
      expect(await holdsEmail(store, 'fork')).toBe(false);
    } finally {
      await journal.close();
    }
  });
});
