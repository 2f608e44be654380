/**
 * The parallel feeder's and the batch's rules (chain/feeder.ts, chain/batch.ts; spec/FORMAT.md §6.3: the
 * per-line check is independent for every line, the links are checked in chain order): the same report and
 * the same observed lines on any number of threads and at any batch cut, whatever kind of line is fed (bytes,
 * a string, a torn final line, an over-long line); a batch's facts packed as the module documents them; batches
 * cut at the size asked for; a pool with no threads is no pool; and the feeding thread's promises — what
 * `settle` passes to the verifier, how many batches it leaves in flight, when the feeding thread checks a
 * batch itself. Written from the mutation run of 2026-11-23 22:50 (test/mutation/SURVIVORS.md, src/chain).
 */
import { describe, expect, test } from 'vitest';
import {
  checkBatch,
  unpackFacts,
  type LineBatch,
  type LineCheckPool,
  type PackedFacts,
} from '../../src/chain/batch.js';
import { ChainFeeder } from '../../src/chain/feeder.js';
import { ChainVerifier, checkLineBytes } from '../../src/chain/index.js';
import { journalFormat } from '../../src/record/formats.js';
import { buildChain, seenLine, type BuiltChain, type ContentSpec } from '../helpers/chains.js';

const enc = new TextEncoder();
const D = (c: string): string => `sha256:${c.repeat(64)}`;
/** A chain's stored lines, without their newlines, as bytes. */
const lineBytes = (chain: BuiltChain): Uint8Array[] => chain.lines.map((l) => enc.encode(l.slice(0, -1)));

const seen = seenLine;

/** Lines back to back, as a LineBatch. */
function batchOf(format: string, lines: Uint8Array[]): LineBatch {
  const ends = new Uint32Array(lines.length);
  let at = 0;
  lines.forEach((l, i) => void (ends[i] = at += l.length));
  const bytes = new Uint8Array(at);
  at = 0;
  for (const l of lines) {
    bytes.set(l, at);
    at += l.length;
  }
  return { format, bytes, ends };
}

/** A pool whose batches wait until the test answers (or fails) them, in the order sent; it keeps a copy of each. */
function manualPool(threads: number, callerChecks = false) {
  const waiting: Array<{ batch: LineBatch; resolve: (f: PackedFacts | null) => void; reject: (e: Error) => void }> = [];
  const received: LineBatch[] = [];
  let allocated = 0;
  const pool: LineCheckPool = {
    threads,
    callerChecks,
    allocate: (bytes) => (allocated++, new Uint8Array(bytes)),
    check(batch) {
      const copy = { format: batch.format, bytes: batch.bytes.slice(), ends: batch.ends.slice() };
      received.push(copy);
      return new Promise((resolve, reject) => void waiting.push({ batch: copy, resolve, reject }));
    },
  };
  return {
    pool,
    received,
    waiting,
    allocated: () => allocated,
    answer(): void {
      const w = waiting.shift()!;
      w.resolve(checkBatch(w.batch));
    },
    fail(): void {
      waiting.shift()!.reject(new Error('worker lost'));
    },
  };
}

/** Finishes a feeder over a manual pool, answering each batch the pool is given, until the report comes. */
async function finishAnswering(feeder: ChainFeeder, m: ReturnType<typeof manualPool>) {
  let done = false;
  const finished = feeder.finish().finally(() => void (done = true));
  while (!done) {
    while (m.waiting.length > 0) m.answer();
    await new Promise((r) => setTimeout(r, 0));
  }
  return finished;
}

/** Lets promise callbacks and timers queued so far run. */
const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

/** The steps a sequence of calls makes, as the feeder and the verifier both take them. */
type Call = ['segment', string, number | null] | ['line', Uint8Array | string, boolean] | ['long', number];

function runSequential(genesis: BuiltChain['genesis'], calls: Call[]) {
  const lines: unknown[] = [];
  let each = 0;
  const v = new ChainVerifier({ genesis, onLine: (l) => void lines.push(seen(l)) });
  for (const c of calls) {
    if (c[0] === 'segment') v.beginSegment(c[1], c[2]);
    else if (c[0] === 'line') (v.line(c[1], c[2]), each++);
    else (v.longLine(c[1]), each++);
  }
  return { report: v.finish(), lines, each };
}

async function runFeeder(
  genesis: BuiltChain['genesis'],
  calls: Call[],
  pool: LineCheckPool | null,
  batchBytes: number,
) {
  const lines: unknown[] = [];
  let each = 0;
  const feeder = new ChainFeeder(new ChainVerifier({ genesis, onLine: (l) => void lines.push(seen(l)) }), pool, {
    batchBytes,
    onEach: () => void each++,
  });
  for (const c of calls) {
    if (c[0] === 'segment') feeder.beginSegment(c[1], c[2]);
    else if (c[0] === 'line') {
      // The caller's buffer is reused after the call: the feeder keeps a copy of what it needs.
      const given = typeof c[1] === 'string' ? c[1] : c[1].slice();
      feeder.line(given, c[2]);
      if (typeof given !== 'string') given.fill(0x7b);
    } else feeder.longLine(c[1]);
    await feeder.settle();
  }
  return { report: await feeder.finish(), lines, each };
}

/** A pool that answers every batch a turn later, in order. */
function answeringPool(threads: number): LineCheckPool & { batches: number } {
  const pool = {
    threads,
    batches: 0,
    check(batch: LineBatch): Promise<PackedFacts | null> {
      pool.batches++;
      const copy = { format: batch.format, bytes: batch.bytes.slice(), ends: batch.ends.slice() };
      return new Promise((resolve) => setTimeout(() => resolve(checkBatch(copy)), 0));
    },
  };
  return pool;
}

describe('FORMAT §6.3 steps 2–5 off the linking thread: checkBatch packs a batch as PackedFacts documents', () => {
  const chain = buildChain([
    { input: 1 },
    { result: { '$stepchain:blob': { digest: D('a'), size: 3 } } },
    { input: 2 },
    { result: { '$stepchain:redacted': { commitment: D('b'), rule: 'secrets' } } },
    { input: 3 },
  ]);
  const format = journalFormat(chain.genesis.format)!;
  const lines = lineBytes(chain);
  lines[4] = enc.encode(new TextDecoder().decode(lines[4]).replace('"seq":4', '"seq":"4"'));

  test('a clean line travels as its seq and two digests; a line with a marker or a problem travels whole, in order', () => {
    const packed = checkBatch(batchOf(chain.genesis.format, lines))!;
    const facts = lines.map((l) => checkLineBytes(l, format));
    // The redacted marker alone (no blob) is enough to send a line whole: its markers must reach observers.
    expect(facts[3]!.markers.length).toBe(1);
    expect(facts[3]!.blobs).toEqual([]);
    expect(facts[3]!.problems).toEqual([]);
    expect(facts[4]!.problems.length).toBeGreaterThan(0);
    expect([...packed.seqs]).toEqual([0, -1, 2, -2, -3]);
    expect(packed.others).toEqual([facts[1], facts[3], facts[4]]);
    expect(packed.hashes).toBe(
      [0, 1, 2, 3, 4]
        .map((i) => ([0, 2].includes(i) ? chain.records[i]!.prev_hash + chain.records[i]!.step_hash : ' '.repeat(142)))
        .join(''),
    );
    lines.forEach((_, i) => expect(unpackFacts(packed, i), `line ${i}`).toEqual(facts[i]));
  });

  test('a sound chain packs with nothing whole', () => {
    const sound = buildChain(Array.from({ length: 6 }, (_, i) => ({ input: i, prompt: `p${i}` }) as ContentSpec));
    const packed = checkBatch(batchOf(sound.genesis.format, lineBytes(sound)))!;
    expect(packed.others).toEqual([]);
    expect([...packed.seqs]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(packed.hashes.length).toBe(6 * 142);
  });

  test('a format this implementation does not read by name: null, and the caller checks the lines', () => {
    expect(checkBatch(batchOf('stepchain/v0-unknown', lines))).toBeNull();
  });
});

describe('FORMAT §6.4: the same report on any number of threads and any batch cut, whatever is fed', () => {
  const chain = buildChain(
    Array.from(
      { length: 8 },
      (_, i) =>
        ({
          input: { i },
          result: i === 5 ? { '$stepchain:redacted': { commitment: D('c'), rule: 'secrets' } } : null,
        }) as ContentSpec,
    ),
  );
  const lines = lineBytes(chain);
  const calls: Call[] = [
    ['segment', '0000000000000000.jsonl', 0],
    ['line', lines[0]!, true],
    ['line', chain.lines[1]!.slice(0, -1), true], // a line given as a string
    ['line', lines[2]!, true],
    ['long', 5_000_000], // an over-long line, never read (LINE_TOO_LONG at its place)
    ['line', lines[3]!, true],
    ['segment', '0000000000000004.jsonl', 4],
    ['line', lines[4]!, true],
    ['line', chain.lines[5]!.slice(0, -1), true],
    ['line', lines[6]!, true],
  ];
  const tornBytes: Call[] = [...calls, ['line', lines[7]!, false]];
  const tornString: Call[] = [...calls, ['line', chain.lines[7]!.slice(0, -1), false]];

  test.each([
    ['a torn final line as bytes (the caller reuses its buffer)', tornBytes],
    ['a torn final line given as a string', tornString],
    ['no torn line', calls],
  ])('%s', async (_, c) => {
    const want = runSequential(chain.genesis, c);
    expect(want.report.ok).toBe(false);
    for (const batchBytes of [1, 400, 1 << 20]) {
      for (const threads of [1, 2, 3])
        expect(
          await runFeeder(chain.genesis, c, answeringPool(threads), batchBytes),
          `${threads} threads, batches of ${batchBytes}`,
        ).toEqual(want);
    }
    expect(await runFeeder(chain.genesis, c, null, 1)).toEqual(want);
  });

  test('without a pool and without onEach: every kind of call goes straight to the verifier', async () => {
    const want = runSequential(chain.genesis, tornBytes).report;
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), null);
    for (const c of tornBytes) {
      if (c[0] === 'segment') feeder.beginSegment(c[1], c[2]);
      else if (c[0] === 'line') feeder.line(c[1], c[2]);
      else feeder.longLine(c[1]);
    }
    expect(await feeder.finish()).toEqual(want);
  });

  test('a torn final line is TRUNCATED_LINE, never a step, on any number of threads', async () => {
    for (const c of [tornBytes, tornString]) {
      const got = await runFeeder(chain.genesis, c, answeringPool(2), 1);
      expect(got.report.problems.at(-1)!.code).toBe('TRUNCATED_LINE');
      expect(got.report.steps).toBe(8); // seven lines read and the over-long one
    }
  });
});

describe('FORMAT §6.3: batches', () => {
  test('cut at the size asked for: as many whole lines as fit, a longer line alone, each batch holding exactly its lines', async () => {
    const chain = buildChain(
      Array.from({ length: 7 }, (_, i) => ({ input: i === 4 ? 'x'.repeat(300) : 10 + i }) as ContentSpec),
    );
    const lines = lineBytes(chain);
    expect(new Set([0, 1, 2, 3, 5, 6].map((i) => lines[i]!.length)).size).toBe(1);
    const L = lines[0]!.length;
    const m = manualPool(50);
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), m.pool, { batchBytes: 2 * L });
    feeder.beginSegment('0000000000000000.jsonl', 0);
    for (const l of lines) feeder.line(l, true);
    expect((await finishAnswering(feeder, m)).ok).toBe(true);
    const groups = [[0, 1], [2, 3], [4], [5, 6]];
    expect(m.received).toEqual(
      groups.map((g) =>
        batchOf(
          chain.genesis.format,
          g.map((i) => lines[i]!),
        ),
      ),
    );
    expect(feeder.checkedHere).toBe(0);
  });

  test('a chain of one batch never reaches the pool, even when its one line is longer than a batch', async () => {
    const chain = buildChain([{ input: 'y'.repeat(500) }]);
    const pool = answeringPool(2);
    // No segment begun: the line is the first thing the feeder holds (a segment's start would be a batch of its own).
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), pool, { batchBytes: 64 });
    feeder.line(lineBytes(chain)[0]!, true);
    const report = await feeder.finish();
    expect(report.ok).toBe(true);
    expect(report.steps).toBe(1);
    expect(pool.batches).toBe(0);
    expect(feeder.checkedHere).toBe(0); // checkedHere counts only batches taken from busy workers
  });

  test('a pool with no threads is no pool: every call goes straight to the verifier, the pool is never asked', async () => {
    const chain = buildChain(Array.from({ length: 5 }, (_, i) => ({ input: i }) as ContentSpec));
    const m = manualPool(0);
    let each = 0;
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), m.pool, {
      batchBytes: 1,
      onEach: () => void each++,
    });
    feeder.beginSegment('0000000000000000.jsonl', 0);
    lineBytes(chain).forEach((l, i) => {
      feeder.line(l, true);
      expect(each).toBe(i + 1);
      expect(feeder.settle()).toBeUndefined();
    });
    expect((await feeder.finish()).ok).toBe(true);
    expect(m.received).toEqual([]);
    expect(m.allocated()).toBe(0);
    expect(feeder.checkedHere).toBe(0);
  });
});

describe('FORMAT §6.3 order: settle and the feeding thread, memory bounded', () => {
  const chain = buildChain(Array.from({ length: 12 }, (_, i) => ({ input: { i } }) as ContentSpec));
  const lines = lineBytes(chain);

  function start(threads: number, callerChecks = false) {
    const m = manualPool(threads, callerChecks);
    const observed: number[] = [];
    let each = 0;
    const feeder = new ChainFeeder(
      new ChainVerifier({ genesis: chain.genesis, onLine: (l) => void observed.push(l.seq!) }),
      m.pool,
      { batchBytes: 1, onEach: () => void each++ },
    );
    feeder.beginSegment('0000000000000000.jsonl', 0);
    return { m, feeder, observed, each: () => each };
  }

  test('nothing in flight: settle returns undefined, so a reader need not wait', () => {
    const m = manualPool(2);
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), m.pool, { batchBytes: 1 });
    expect(feeder.settle()).toBeUndefined();
    feeder.line(lines[0]!, true); // held, not yet sent
    expect(feeder.settle()).toBeUndefined();
    expect(m.received).toEqual([]);
    expect(new ChainFeeder(new ChainVerifier({ genesis: chain.genesis }), null).settle()).toBeUndefined();
  });

  test('while no worker has answered, each worker gets three batches, then the feeding thread checks the next itself', async () => {
    const { m, feeder } = start(1);
    for (const l of lines.slice(0, 5)) feeder.line(l, true); // one batch a line: four taken once the fifth comes
    expect(m.received.length).toBe(3);
    expect(feeder.checkedHere).toBe(1);
    expect((await finishAnswering(feeder, m)).ok).toBe(true);
  });

  test('while no worker has answered, settle checks the oldest batch itself instead of waiting; the late answer is dropped', async () => {
    const { m, feeder, observed } = start(1);
    // Lines 0–8: batches 0–7 taken, three sent to the worker, five checked here; eight in flight, two over the bound.
    for (const l of lines.slice(0, 9)) feeder.line(l, true);
    expect(m.received.length).toBe(3);
    expect(feeder.checkedHere).toBe(5);
    // No answer comes: settle checks batches 0 and 1 here (a worker still loading its code is not waited for).
    await feeder.settle();
    expect(observed).toEqual([0, 1]);
    expect(feeder.checkedHere).toBe(7);
    // The worker's answers for them arrive later and change nothing; the report is the sequential one.
    for (let k = 0; k < 3; k++) m.answer();
    await turns();
    const report = await finishAnswering(feeder, m);
    expect(report.ok).toBe(true);
    expect(observed).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  });

  test('settle passes each finished batch to the verifier in order, a failed one too, and leaves at most six per thread in flight', async () => {
    const { m, feeder, observed, each } = start(1);
    // Lines 0–2: batches 0 and 1 sent, line 2 held. Batch 0's worker fails: it is finished all the same.
    for (const l of lines.slice(0, 3)) feeder.line(l, true);
    expect(m.received.length).toBe(2);
    m.fail();
    await turns();
    await feeder.settle();
    expect(observed).toEqual([0]);
    expect(each()).toBe(1);
    // Batch 1 answered: the next settle passes it on, not waiting for anything else.
    m.answer();
    await turns();
    await feeder.settle();
    expect(observed).toEqual([0, 1]);
    // Lines 3–11: batches 2–10 sent (a worker has answered and the pool leaves this thread no core: it helps no more).
    for (const l of lines.slice(3, 12)) feeder.line(l, true);
    expect(m.received.length).toBe(11);
    expect(feeder.checkedHere).toBe(0);
    let settled = false;
    const waiting = feeder.settle()!.then(() => void (settled = true));
    await turns();
    expect(settled).toBe(false); // nine unanswered, more than six per thread: the reader waits
    for (let k = 0; k < 2; k++) m.answer();
    await turns();
    expect(settled).toBe(false); // seven still in flight
    m.answer();
    await turns();
    expect(settled).toBe(true); // six in flight: the reader may read on
    await waiting;
    expect(observed).toEqual([0, 1, 2, 3, 4]);
    expect(each()).toBe(5);
    expect((await finishAnswering(feeder, m)).ok).toBe(true);
    expect(observed).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });
});
