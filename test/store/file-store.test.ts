/**
 * What only the file store has: its directory layout (spec/FILE-STORE.md), crash repair, the head
 * cache, blobs on disk, the lock, and the durability modes. Real files, real child processes, no mocks.
 */
import {
  existsSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  appendFileSync,
  mkdirSync,
  renameSync,
} from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { genesisHash, sealRecord } from '../../src/record/index.js';
import { FileStore, StoreError, type Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { runChild } from './helpers.js';
import { code } from '../helpers/outcomes.js';

const root = tempDir('stepchain-file-');
let n = 0;
function fresh(options: ConstructorParameters<typeof FileStore>[1] = {}): {
  store: FileStore;
  dir: (id: string) => string;
} {
  const r = join(root, `s${n++}`);
  return { store: new FileStore(r, options), dir: (id) => join(r, id) };
}

async function fill(j: Journal, count: number, extra: Record<string, unknown> = {}): Promise<void> {
  for (let i = 0; i < count; i++) await j.append({ input: { i }, ...extra });
}

const bucketsOf = (dir: string): string[] => readdirSync(join(dir, 'buckets')).sort();

/**
 * Waits until no writer holds the journal's lock. A writer keeps it for lockLingerMs after its last commit
 * (spec/FILE-STORE.md §9) and brings head.json up to date before it lets go, so this is the moment another
 * process could take the lock and the moment head.json names the head.
 */
async function lockFree(dir: string): Promise<void> {
  // A generous bound (the linger is 5 ms), only there to name the lock file if it never goes.
  const deadline = Date.now() + 30_000;
  while (existsSync(join(dir, 'journal.lock'))) {
    if (Date.now() > deadline) throw new Error(`${dir}/journal.lock is still held after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('layout', () => {
  test('journal.json, buckets named by their first seq and rotated by size, head.json', async () => {
    const { store, dir } = fresh({ segmentBytes: 4096 });
    const j = await store.create('j', { journalId: 'agent-1', createdAt: '2026-01-01T00:00:00.000Z' });
    await fill(j, 40, { result: 'r'.repeat(300) });
    const d = dir('j');
    const meta = JSON.parse(readFileSync(join(d, 'journal.json'), 'utf8'));
    expect(meta).toEqual({
      format: 'stepchain-journal/v1',
      genesis: { format: 'stepchain/v1', journal_id: 'agent-1', created_at: '2026-01-01T00:00:00.000Z' },
      config: { bucket_bytes: 4096, blob_threshold: 65536 },
      lineage: null,
    });
    const names = bucketsOf(d);
    expect(names.length).toBeGreaterThan(3);
    let expectedFirst = 0;
    for (const name of names) {
      expect(name).toBe(`${String(expectedFirst).padStart(16, '0')}.jsonl`);
      const text = readFileSync(join(d, 'buckets', name), 'utf8');
      expect(statSync(join(d, 'buckets', name)).size).toBeLessThanOrEqual(4096);
      const lines = text.split('\n').slice(0, -1);
      expect(JSON.parse(lines[0]!).seq).toBe(expectedFirst);
      expectedFirst += lines.length;
    }
    expect(expectedFirst).toBe(40);
    const head = await j.head();
    await lockFree(d);
    expect(readFileSync(join(d, 'head.json'), 'utf8')).toBe(`{"seq":39,"step_hash":"${head!.step_hash}"}\n`);
  });

  test('one appendMany batch split across buckets by UTF-8 bytes: every split where the shared rule puts it, multi-byte text intact', async () => {
    const segmentBytes = 4096;
    const { store, dir } = fresh({ segmentBytes });
    const j = await store.create('j');
    // Multi-byte text (2-, 3- and 4-byte UTF-8) so that bytes and UTF-16 lengths differ; a second, larger
    // batch reuses and grows the writer's buffer; a third (300 lines of about 15 KB) passes the size it keeps between batches.
    const step = (i: number, pad: number) => ({ input: { i }, result: `é€😀-${i}-`.repeat(pad) });
    const batches = [
      Array.from({ length: 40 }, (_, i) => step(i, 30)),
      Array.from({ length: 200 }, (_, i) => step(40 + i, 45)),
      Array.from({ length: 300 }, (_, i) => step(240 + i, 1000)),
    ];
    for (const b of batches) await j.appendMany(b);
    const d = dir('j');
    const names = bucketsOf(d);
    expect(names.length).toBeGreaterThan(20);
    const sizes: number[][] = [];
    let expectedFirst = 0;
    for (const name of names) {
      expect(name).toBe(`${String(expectedFirst).padStart(16, '0')}.jsonl`);
      const bytes = readFileSync(join(d, 'buckets', name));
      const lines = bytes.toString('utf8').split('\n').slice(0, -1);
      sizes.push(lines.map((l) => Buffer.byteLength(l, 'utf8') + 1));
      lines.forEach((l, k) => {
        const record = JSON.parse(l);
        expect(record.seq).toBe(expectedFirst + k);
        expect(record.result).toBe(batches.flat()[record.seq]!.result);
      });
      expectedFirst += lines.length;
    }
    expect(expectedFirst).toBe(540);
    for (let b = 0; b < sizes.length; b++) {
      const total = sizes[b]!.reduce((x, y) => x + y, 0);
      // Only a single line larger than segmentBytes makes a larger bucket, and each bucket is cut at the
      // first line that would not fit (the next bucket's first line).
      if (sizes[b]!.length > 1) expect(total).toBeLessThanOrEqual(segmentBytes);
      if (b + 1 < sizes.length) expect(total + sizes[b + 1]![0]!).toBeGreaterThan(segmentBytes);
    }
    expect(await j.verify()).toMatchObject({ ok: true, steps: 540 });
  });

  test('a range opens only the buckets it needs', async () => {
    const { store, dir } = fresh({ segmentBytes: 4096 });
    const j = await store.create('j');
    await fill(j, 60, { result: 'r'.repeat(300) });
    const d = dir('j');
    const first = bucketsOf(d)[0]!;
    renameSync(join(d, 'buckets', first), join(root, `moved-${n}`));
    const seqs: number[] = [];
    for await (const r of j.read({ from: 45 })) seqs.push(r.seq);
    expect(seqs).toEqual(Array.from({ length: 15 }, (_, i) => 45 + i));
    expect(
      await code(
        (async () => {
          for await (const _ of j.read({ from: 0, to: 0 })) void _;
        })(),
      ),
    ).not.toBe('no error');
  });

  test('list shows journals only: no staging directories, stray files or invalid names', async () => {
    const { store, dir } = fresh();
    await store.create('a');
    await store.create('b');
    const r = join(dir('a'), '..');
    mkdirSync(join(r, '.staging-deadbeef'));
    mkdirSync(join(r, 'not-a-journal'));
    writeFileSync(join(r, 'file'), 'x');
    expect(await store.list()).toEqual(['a', 'b']);
    expect(await new FileStore(join(root, 'missing-root')).list()).toEqual([]);
  });

  test('an unreadable journal.json is JOURNAL_INVALID', async () => {
    const { store, dir } = fresh();
    await store.create('j');
    writeFileSync(join(dir('j'), 'journal.json'), '{"format":"something-else"}');
    expect(await code(store.open('j'))).toBe('JOURNAL_INVALID');
  });
});

describe('crash repair', () => {
  const torn = '{"input":{"i":99},"meta":null,"mo';

  test('a torn last line is a warning to a reader, and quarantined (not lost) by the next writer', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await fill(j, 5);
    await j.close();
    const bucket = join(dir('j'), 'buckets', '0000000000000000.jsonl');
    const whole = readFileSync(bucket);
    appendFileSync(bucket, torn);

    const ro = await store.open('j', { readOnly: true });
    const report = await ro.verify();
    expect(report.ok).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.warnings.map((w) => w.code)).toEqual(['TRUNCATED_LINE']);
    expect(await ro.head()).toMatchObject({ seq: 4 });
    expect(readFileSync(bucket).toString()).toBe(whole.toString() + torn); // verify wrote nothing
    expect(bucketsOf(dir('j'))).toEqual(['0000000000000000.jsonl']);

    const w = await store.open('j');
    expect(readFileSync(bucket)).toEqual(whole);
    expect(readFileSync(`${bucket}.quarantine-1`, 'utf8')).toBe(torn);
    expect((await w.verify()).warnings).toEqual([]);
    expect((await w.append({ input: 'next' })).seq).toBe(5);

    // A second torn tail goes to a new quarantine file; the first is never overwritten.
    appendFileSync(bucket, 'second torn');
    await store.open('j');
    expect(readFileSync(`${bucket}.quarantine-1`, 'utf8')).toBe(torn);
    expect(readFileSync(`${bucket}.quarantine-2`, 'utf8')).toBe('second torn');
    expect((await w.verify()).ok).toBe(true);
  });

  test('an appender that has the journal open repairs a torn tail left by another process', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await fill(j, 3);
    await lockFree(dir('j')); // the other process held the lock after this one let go, and died writing
    appendFileSync(join(dir('j'), 'buckets', '0000000000000000.jsonl'), torn);
    expect((await j.append({ input: 'after' })).seq).toBe(3);
    expect(existsSync(join(dir('j'), 'buckets', '0000000000000000.jsonl.quarantine-1'))).toBe(true);
    expect((await j.verify()).warnings).toEqual([]);
  });

  test('a bucket holding only a torn line is emptied and reused', async () => {
    const { store, dir } = fresh({ segmentBytes: 4096 });
    const j = await store.create('j');
    await fill(j, 30, { result: 'r'.repeat(300) });
    const names = bucketsOf(dir('j'));
    const head = (await j.head())!.seq;
    const next = join(dir('j'), 'buckets', `${String(head + 1).padStart(16, '0')}.jsonl`);
    expect(names).not.toContain(next);
    writeFileSync(next, torn);
    expect((await (await store.open('j', { readOnly: true })).verify()).ok).toBe(true);
    const w = await store.open('j');
    expect(statSync(next).size).toBe(0);
    expect((await w.append({ input: 'x' })).seq).toBe(head + 1);
    expect(JSON.parse(readFileSync(next, 'utf8')).seq).toBe(head + 1);
    expect((await w.verify()).ok).toBe(true);
  });

  test('a line cut short before a later bucket is damage: a problem to verify, and no writer extends it', async () => {
    const { store, dir } = fresh({ segmentBytes: 4096 });
    const j = await store.create('j');
    await fill(j, 30, { result: 'r'.repeat(300) });
    const first = join(dir('j'), 'buckets', bucketsOf(dir('j'))[0]!);
    const bytes = readFileSync(first);
    writeFileSync(first, bytes.subarray(0, bytes.length - 10));
    const report = await (await store.open('j', { readOnly: true })).verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code)).toContain('TRUNCATED_LINE');
  });

  test('a head cache that is garbage, stale or missing is a warning, and the next writer repairs it', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await fill(j, 4);
    await lockFree(dir('j'));
    const headFile = join(dir('j'), 'head.json');
    const good = readFileSync(headFile, 'utf8');
    const stale = good.replace('"seq":3', '"seq":2');
    for (const bad of ['garbage', stale, null]) {
      if (bad === null) unlinkSync(headFile);
      else writeFileSync(headFile, bad);
      const report = await (await store.open('j', { readOnly: true })).verify();
      expect(report.ok).toBe(true);
      expect(report.warnings.map((w) => w.code)).toEqual(['HEAD_CACHE_STALE']);
      expect(await j.head()).toMatchObject({ seq: 3 }); // the chain is the truth
      await store.open('j');
      await lockFree(dir('j'));
      expect(readFileSync(headFile, 'utf8')).toBe(good);
    }
  });

  test('a writer refuses to extend a chain whose last line does not link', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await fill(j, 3);
    const bucket = join(dir('j'), 'buckets', '0000000000000000.jsonl');
    const lines = readFileSync(bucket, 'utf8').split('\n');
    lines[2] = lines[2]!.replace(/"prev_hash":"sha256:[0-9a-f]/, (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'));
    writeFileSync(bucket, lines.join('\n'));
    const err = await store.open('j').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('JOURNAL_CORRUPT');
    expect((err as StoreError).message).toContain('seq 2');
    const report = await (await store.open('j', { readOnly: true })).verify();
    expect(report.problems.map((p) => p.code)).toContain('HASH_MISMATCH');
  });
});

describe('blobs on disk', () => {
  async function withBlob(): Promise<{ store: FileStore; blob: string; j: Journal }> {
    const { store, dir } = fresh({ blobThreshold: 1024 });
    const j = await store.create('j');
    await j.append({ input: 'small', result: { text: 'x'.repeat(5000) } });
    await j.append({ tool_call: { text: 'x'.repeat(5000) } });
    const blobs = readdirSync(join(dir('j'), 'blobs', 'sha256'));
    expect(blobs).toHaveLength(1); // identical values are stored once
    return { store, j, blob: join(dir('j'), 'blobs', 'sha256', blobs[0]!) };
  }

  test("a blob file holds exactly the value's canonical bytes, named by their SHA-256", async () => {
    const { blob } = await withBlob();
    const bytes = readFileSync(blob);
    expect(bytes.toString()).toBe(`{"text":"${'x'.repeat(5000)}"}`);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(blob.slice(-64));
  });

  test.each([
    ['missing', (p: string) => unlinkSync(p), 'BLOB_MISSING'],
    ['altered', (p: string) => writeFileSync(p, readFileSync(p, 'utf8').replace('xx', 'yx')), 'BLOB_CORRUPT'],
    ['truncated', (p: string) => writeFileSync(p, readFileSync(p).subarray(0, 100)), 'BLOB_CORRUPT'],
  ])(
    'a %s blob is a verification problem with its own code, and reading the step fails',
    async (_l, damage, expected) => {
      const { j, blob } = await withBlob();
      damage(blob);
      const report = await j.verify();
      expect(report.ok).toBe(false);
      expect(report.problems.map((p) => [p.code, p.location.seq, p.location.field])).toEqual([
        [expected, 0, 'result'],
        [expected, 1, 'tool_call'],
      ]);
      expect(await code(j.get(0))).toBe(expected);
      expect((await j.get(0).catch(() => null)) ?? 'threw').toBe('threw');
    },
  );
});

test('a blob whose digest matches but whose bytes are not canonical JSON is BLOB_CORRUPT', async () => {
  const { store, dir } = fresh();
  const j = await store.create('j');
  const bytes = Buffer.from('{ "b": 1, "a": 2 }'); // a hostile writer hashed what it wrote
  const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
  const { line } = sealRecord({
    v: 1,
    seq: 0,
    step_id: 'x',
    ts: '2026-01-01T00:00:00.000Z',
    prev_hash: genesisHash(j.genesis),
    input: { '$stepchain:blob': { digest, size: bytes.length } },
    model: null,
    prompt: null,
    tool_call: null,
    result: null,
  });
  writeFileSync(join(dir('j'), 'buckets', '0000000000000000.jsonl'), line);
  writeFileSync(join(dir('j'), 'blobs', 'sha256', digest.slice(7)), bytes);
  const report = await j.verify();
  expect(report.problems.map((p) => p.code)).toEqual(['BLOB_CORRUPT']);
  expect(report.problems[0]!.message).toContain('NONCANONICAL_LINE');
});

describe('the lock', () => {
  // The two tests below pin lockTimeoutMs by order, not by a stopwatch (a loaded machine made `390 ms ≤
  // wait < 3 s` flake): a waiter gives up while the holder still holds the lock, and a waiter whose timeout
  // outlasts a short hold by far gets the lock once the hold ends.
  test('contention past lockTimeoutMs fails with LOCK_TIMEOUT naming the lock file', async () => {
    const { store, dir } = fresh({ lockTimeoutMs: 400 });
    const j = await store.create('j');
    const child = runChild('hold-lock.mjs', [dir('j'), '600000']);
    await child.waitFor((l) => l === 'locked');
    const err = await j.append({ input: 1 }).catch((e: unknown) => e);
    expect((err as StoreError).code).toBe('LOCK_TIMEOUT');
    expect((err as StoreError).message).toContain(join(dir('j'), 'journal.lock'));
    expect(existsSync(join(dir('j'), 'journal.lock.waiting'))).toBe(true); // it polled before giving up
    expect(child.proc.exitCode).toBeNull(); // and gave up while the lock was still held
    child.proc.kill('SIGKILL');
    await child.exited;
    expect(await j.head()).toBeNull();
  });

  test('a waiter does not give up before lockTimeoutMs: it outlasts a hold far shorter than its timeout', async () => {
    const { store, dir } = fresh({ lockTimeoutMs: 30_000 });
    const j = await store.create('j');
    const child = runChild('hold-lock.mjs', [dir('j'), '300']);
    await child.waitFor((l) => l === 'locked');
    const appended = j.append({ input: 'after the hold' });
    expect((await child.exited).code).toBe(0); // the holder let go by exiting ...
    expect((await appended).seq).toBe(0); // ... and the waiter, still waiting, then took the lock
    expect(existsSync(join(dir('j'), 'journal.lock.waiting'))).toBe(true);
    await j.close();
  });

  test('a lock left by a dead process on this host is taken over at once, without waiting for staleness', async () => {
    // stale 60 s and a contention timeout of 5 s: a writer that waited for staleness would fail with LOCK_TIMEOUT.
    const { store, dir } = fresh({ staleMs: 60_000, lockTimeoutMs: 5000 });
    await store.create('j');
    const child = runChild('hold-lock.mjs', [dir('j'), 'die', '60000']);
    await child.waitFor((l) => l === 'locked').catch(() => undefined);
    const { signal } = await child.exited;
    expect(signal).toBe('SIGKILL');
    const left = readdirSync(join(dir('j'), 'journal.lock'));
    expect(left).toEqual([expect.stringMatching(/^holder-[0-9a-f]{32}\.json$/)]);
    expect(JSON.parse(readFileSync(join(dir('j'), 'journal.lock', left[0]!), 'utf8')).pid).toBe(child.proc.pid);
    const j = await store.open('j');
    expect((await j.append({ input: 'after the dead writer' })).seq).toBe(0);
    await j.close();
    expect(existsSync(join(dir('j'), 'journal.lock'))).toBe(false);
  });

  test('a writer keeps the lock across commits only briefly: it lets go once appends stop, head.json up to date', async () => {
    const { store, dir } = fresh({ lockLingerMs: 5 });
    const j = await store.create('j');
    const r = await j.append({ input: 1 });
    await lockFree(dir('j'));
    expect(readFileSync(join(dir('j'), 'head.json'), 'utf8')).toBe(`{"seq":0,"step_hash":"${r.step_hash}"}\n`);
    const r2 = await j.append({ input: 2 });
    await j.close(); // close lets go at once, without lingering
    expect(existsSync(join(dir('j'), 'journal.lock'))).toBe(false);
    expect(readFileSync(join(dir('j'), 'head.json'), 'utf8')).toBe(`{"seq":1,"step_hash":"${r2.step_hash}"}\n`);
  });

  test('a writer streaming appends gives the lock up after lockHoldMs, so another writer gets in before it finishes', async () => {
    const { store } = fresh({ lockHoldMs: 20 });
    await store.create('j');
    const busy = await store.open('j');
    const other = await store.open('j');
    const busySeqs: number[] = [];
    let otherSeq = -1;
    await Promise.all([
      (async () => {
        for (let i = 0; i < 400; i++) {
          busySeqs.push((await busy.append({ input: { busy: i } })).seq);
          if (i === 10) void other.append({ input: 'other' }).then((r) => (otherSeq = r.seq));
        }
      })(),
    ]);
    await other.close();
    // Without the hand-off the busy writer would keep the lock for its whole stream (each append follows the
    // previous acknowledgement within microseconds) and the other writer's step would come after all 400.
    expect(otherSeq).toBeGreaterThan(10);
    expect(otherSeq).toBeLessThan(400);
    expect(busySeqs).not.toContain(otherSeq);
    expect((await busy.verify()).ok).toBe(true);
  });

  test('a writer alone keeps the lock past lockHoldMs: no hand-off without a waiting mark', async () => {
    const { store, dir } = fresh({ lockHoldMs: 10, lockLingerMs: 1000 });
    const j = await store.create('j');
    await j.append({ input: 'first' });
    await j.close(); // lets the lock go, so head.json names seq 0
    const headFile = join(dir('j'), 'head.json');
    const before = readFileSync(headFile, 'utf8');
    const w = await store.open('j');
    const started = Date.now();
    let appended = 0;
    while (Date.now() - started < 150) {
      await w.append({ input: appended++ });
      // Each hand-off rewrites head.json; nobody waits, so the writer never lets go mid-stream.
      expect(readFileSync(headFile, 'utf8')).toBe(before);
      expect(existsSync(join(dir('j'), 'journal.lock'))).toBe(true);
    }
    await w.close();
    expect(JSON.parse(readFileSync(headFile, 'utf8')).seq).toBe(appended);
    expect(existsSync(join(dir('j'), 'journal.lock.waiting'))).toBe(false);
  });

  test('a waiting writer leaves a fresh waiting mark at each poll', async () => {
    // The holder holds until it is told to stop, after the three marks are seen, so no deadline is needed
    // (a 2 s one flaked on a loaded machine): the test's own timeout bounds the wait.
    const { store, dir } = fresh({ lockTimeoutMs: 600_000, staleMs: 2000 });
    await store.create('j');
    const waiter = await store.open('j');
    const child = runChild('hold-lock.mjs', [dir('j'), '600000']);
    await child.waitFor((l) => l === 'locked');
    const pending = waiter.append({ input: 'waits' });
    const markFile = join(dir('j'), 'journal.lock.waiting');
    const marks = new Set<string>();
    while (marks.size < 3) {
      if (existsSync(markFile)) marks.add(readFileSync(markFile, 'utf8'));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(marks.size).toBeGreaterThanOrEqual(3);
    child.proc.kill('SIGTERM');
    await child.exited;
    expect((await pending).seq).toBe(0);
    await waiter.close();
  });

  test('two Journal instances in one process share the journal through the lock', async () => {
    const { store } = fresh();
    await store.create('j');
    const a = await store.open('j');
    const b = await store.open('j');
    await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).append({ input: i })));
    const report = await a.verify();
    expect(report).toMatchObject({ ok: true, steps: 50 });
  });
});

describe('durability modes', () => {
  test.each(['always', 'batch', 'none'] as const)(
    "fsync '%s': an acknowledged step is in the file for any other reader",
    async (fsync) => {
      const { store } = fresh({ fsync, batchSyncMs: 10 });
      const j = await store.create('j');
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => j.append({ input: i })));
      const other = await store.open('j', { readOnly: true });
      expect(await other.head()).toEqual({ seq: 19, step_hash: rs[19]!.step_hash });
      await j.close();
      expect((await other.verify()).ok).toBe(true);
    },
  );

  test('an unknown mode is refused', () => {
    expect(() => new FileStore(root, { fsync: 'sometimes' as never })).toThrow(/OPTION_INVALID/);
  });
});

// Keep the tree tidy for the next file's runs.
test('temporary files never remain after commits', async () => {
  const { store, dir } = fresh({ blobThreshold: 1024 });
  const j = await store.create('j');
  await Promise.all(Array.from({ length: 10 }, (_, i) => j.append({ input: 'y'.repeat(2000 + i) })));
  const leftovers = [dir('j'), join(dir('j'), 'buckets'), join(dir('j'), 'blobs', 'sha256')].flatMap((d) =>
    readdirSync(d).filter((f) => f.startsWith('.')),
  );
  expect(leftovers).toEqual([]);
  rmSync(dir('j'), { recursive: true });
});

describe('a first tail read reads the end of the chain; the idempotency window is read when a step_id asks (issue 45)', () => {
  test('a line broken inside the window, far from the tail: a plain append extends the chain, one with a step_id reads the window and refuses', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await fill(j, 40);
    await j.close();
    const bucket = join(dir('j'), 'buckets', '0000000000000000.jsonl');
    const lines = readFileSync(bucket, 'utf8').split('\n');
    lines[10] = lines[10]!.replace(
      /"prev_hash":"sha256:[0-9a-f]/,
      (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'),
    );
    writeFileSync(bucket, lines.join('\n'));
    // The tail (the last line, linked to the one before it) is whole: a step with no step_id needs no window.
    const w = await store.open('j');
    await expect(w.append({ input: 'plain' })).resolves.toMatchObject({ seq: 40 });
    await w.close();
    // A caller's step_id is looked up in the window, read from the chain with every line linked: refused.
    const v = await store.open('j');
    const err = await v.append({ input: 'keyed', step_id: 'k-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('JOURNAL_CORRUPT');
    expect((err as StoreError).message).toContain('seq 10');
    await v.close();
    const report = await (await store.open('j', { readOnly: true })).verify();
    expect(report.problems.map((p) => p.code)).toContain('HASH_MISMATCH');
  });

  test('an idempotent retry in a fresh open finds a step 40 steps back; a changed one is refused; a new step_id is appended', async () => {
    const { store } = fresh();
    const j = await store.create('j');
    const first = await j.append({ input: 'once', step_id: 'k-1' });
    await fill(j, 40);
    await j.close();
    const again = await store.open('j');
    await expect(again.append({ input: 'once', step_id: 'k-1' })).resolves.toEqual(first);
    await again.close();
    const changed = await store.open('j');
    expect(await code(changed.append({ input: 'other', step_id: 'k-1' }))).toBe('STEP_ID_CONFLICT');
    await expect(changed.append({ input: 'new', step_id: 'k-2' })).resolves.toMatchObject({ seq: 41 });
    await expect(changed.append({ input: 'new', step_id: 'k-2' })).resolves.toMatchObject({ seq: 41 });
    await changed.close();
    expect((await (await store.open('j', { readOnly: true })).verify()).ok).toBe(true);
  });

  test('a journal of one step, and one whose last line is torn: the tail is found and the torn line quarantined', async () => {
    const { store, dir } = fresh();
    const j = await store.create('j');
    await j.append({ input: 0 });
    await j.close();
    await expect((await store.open('j')).append({ input: 1 })).resolves.toMatchObject({ seq: 1 });
    const bucket = join(dir('j'), 'buckets', '0000000000000000.jsonl');
    appendFileSync(bucket, '{"input":"torn');
    const w = await store.open('j');
    await expect(w.append({ input: 2 })).resolves.toMatchObject({ seq: 2 });
    await w.close();
    expect(readdirSync(join(dir('j'), 'buckets')).filter((f) => f.includes('quarantine'))).toHaveLength(1);
    expect((await (await store.open('j', { readOnly: true })).verify()).ok).toBe(true);
  });
});
