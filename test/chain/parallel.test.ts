/**
 * Parallel verification (chain/feeder.ts, src/parallel): the per-line checks on worker threads, the links
 * in order on one thread, must give the sequential verifier's report — every problem's code, location and
 * message, in the same order — and show observers the same lines in the same order. Checked over the
 * chains.json vectors and over damaged chains (fast-check), with real worker threads (dist/, built by
 * `npm test` first) and with an in-process pool whose batches finish out of order or fail.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkBatch, type LineBatch, type LineCheckPool, type PackedFacts } from '../../src/chain/batch.js';
import { ChainFeeder } from '../../src/chain/feeder.js';
import { ChainVerifier, declaredFirstSeq, LineSplitter, type ChainVerifierOptions } from '../../src/chain/index.js';
import type { Genesis } from '../../src/record/index.js';
import { buildChain, seenLine, type ContentSpec } from '../helpers/chains.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';
import type { WorkerLineCheckPool } from '../../src/parallel/pool.js';

interface ChainCase {
  id: string;
  genesis?: Genesis;
  start?: { seq: number; prev_hash: string };
  expect_head?: string;
  files: Array<{ name: string; text?: string; base64?: string }>;
}

type Files = Array<{ name: string; bytes: Uint8Array }>;

const seen = seenLine;

/** The sequential verifier, a whole file at a time. */
function sequential(options: ChainVerifierOptions, files: Files) {
  const lines: unknown[] = [];
  const v = new ChainVerifier({ ...options, onLine: (l) => void lines.push(seen(l)) });
  for (const f of files) {
    v.beginSegment(f.name, declaredFirstSeq(f.name));
    const splitter = new LineSplitter(1 << 16);
    splitter.split(f.bytes, (bytes, tooLong, start, end) =>
      tooLong ? v.longLine(end - start - 1) : v.line(bytes, true),
    );
    const torn = splitter.end();
    if (torn !== null) v.line(torn.bytes, false);
  }
  return { report: v.finish(), lines };
}

/** The same lines through a ChainFeeder over `pool`, fed in pieces of `piece` bytes, settling between pieces as a reader does. */
async function parallel(
  options: ChainVerifierOptions,
  files: Files,
  pool: LineCheckPool,
  batchBytes: number,
  piece: number,
) {
  const lines: unknown[] = [];
  const feeder = new ChainFeeder(new ChainVerifier({ ...options, onLine: (l) => void lines.push(seen(l)) }), pool, {
    batchBytes,
  });
  for (const f of files) {
    feeder.beginSegment(f.name, declaredFirstSeq(f.name));
    const splitter = new LineSplitter(1 << 16);
    for (let at = 0; at < f.bytes.length; at += piece) {
      // A reused buffer, as a stream reader's: the feeder must copy what it keeps.
      const scratch = f.bytes.slice(at, at + piece);
      splitter.split(scratch, (bytes, tooLong, start, end) =>
        tooLong ? feeder.longLine(end - start - 1) : feeder.line(bytes, true),
      );
      scratch.fill(0x7b);
      await feeder.settle();
    }
    const torn = splitter.end();
    if (torn !== null) feeder.line(torn.bytes, false);
  }
  return { report: await feeder.finish(), lines };
}

/**
 * An in-process pool: checkBatch on this thread, but each batch finishes after a random number of
 * turns of the event loop, so batches complete out of order; `failEvery` makes some fail outright.
 */
function shufflingPool(
  seed: number,
  failEvery = 0,
  threads = 3,
  callerChecks = false,
): LineCheckPool & { batches: number; failed: number; onAnswer?: () => void } {
  let state = seed >>> 0 || 1;
  const next = (): number => (state = (state * 1103515245 + 12345) >>> 0) % 4;
  const pool: LineCheckPool & { batches: number; failed: number; onAnswer?: () => void } = {
    threads,
    callerChecks,
    batches: 0,
    failed: 0,
    check(batch: LineBatch): Promise<PackedFacts | null> {
      const n = ++pool.batches;
      const copy = { format: batch.format, bytes: batch.bytes.slice(), ends: batch.ends.slice() };
      return new Promise((resolve, reject) => {
        let turns = next();
        const tick = (): void => {
          if (turns-- > 0) return void setTimeout(tick, 0);
          if (failEvery > 0 && n % failEvery === 0) {
            pool.failed++;
            reject(new Error('worker lost'));
          } else {
            resolve(checkBatch(copy));
            // After the feeder's own reaction to this answer (queued by resolve, so it runs first).
            if (pool.onAnswer) queueMicrotask(pool.onAnswer);
          }
        };
        tick();
      });
    },
  };
  return pool;
}

const contentArb = fc.record(
  {
    input: fc.oneof(
      fc.constant(null),
      fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), fc.string({ maxLength: 20 })), { maxKeys: 3 }),
    ),
    model: fc.oneof(fc.constant('m'), fc.string({ maxLength: 10 })),
    result: fc.oneof(
      fc.constant(null),
      fc.string({ maxLength: 200 }),
      fc.constant({ '$stepchain:blob': { digest: `sha256:${'ab'.repeat(32)}`, size: 3 } }),
    ),
  },
  { requiredKeys: [] },
);

/** One kind of damage to a chain's bytes. */
const damageArb = fc.record({
  how: fc.constantFrom(
    'flip',
    'delete',
    'insert',
    'drop-line',
    'repeat-line',
    'swap-lines',
    'bad-utf8',
    'cut-tail',
    'none',
  ),
  at: fc.nat(),
  byte: fc.integer({ min: 1, max: 255 }),
});

function damage(bytes: Uint8Array, d: { how: string; at: number; byte: number }): Uint8Array {
  const i = d.at % Math.max(1, bytes.length);
  const lines = new TextDecoder().decode(bytes).split(/(?<=\n)/);
  const li = d.at % lines.length;
  const enc = (s: string[]): Uint8Array => new TextEncoder().encode(s.join(''));
  switch (d.how) {
    case 'flip': {
      const b = bytes.slice();
      b[i] = b[i]! ^ d.byte;
      return b;
    }
    case 'delete':
      return new Uint8Array([...bytes.subarray(0, i), ...bytes.subarray(i + 1)]);
    case 'insert':
      return new Uint8Array([...bytes.subarray(0, i), d.byte, ...bytes.subarray(i)]);
    case 'drop-line':
      return enc(lines.filter((_, k) => k !== li));
    case 'repeat-line':
      return enc([...lines.slice(0, li + 1), ...lines.slice(li)]);
    case 'swap-lines':
      return li + 1 < lines.length
        ? enc([...lines.slice(0, li), lines[li + 1]!, lines[li]!, ...lines.slice(li + 2)])
        : bytes;
    case 'bad-utf8':
      return new Uint8Array([...bytes.subarray(0, i), 0xff, 0xfe, ...bytes.subarray(i)]);
    case 'cut-tail':
      return bytes.subarray(0, i);
    default:
      return bytes;
  }
}

/** Splits a chain's lines into segments of `sizes` lines each, named as buckets (or not), keeping the rest in the last. */
function segments(bytes: Uint8Array, cuts: number[], bucketNames: boolean): Files {
  const out: Files = [];
  let from = 0;
  let seqGuess = 0;
  for (const c of cuts) {
    let to = from;
    for (let k = 0; k < c && to < bytes.length; k++) to = bytes.indexOf(10, to) + 1 || bytes.length;
    if (to === from) break;
    out.push({
      name: bucketNames ? `${String(seqGuess).padStart(16, '0')}.jsonl` : `part-${out.length}`,
      bytes: bytes.subarray(from, to),
    });
    seqGuess += c;
    from = to;
  }
  out.push({
    name: bucketNames ? `${String(seqGuess).padStart(16, '0')}.jsonl` : `part-${out.length}`,
    bytes: bytes.subarray(from),
  });
  return out;
}

const chains = loadVectors<ChainCase>('chains.json');
const caseOptions = (c: ChainCase): ChainVerifierOptions => ({
  genesis: c.genesis ?? chains.genesis,
  ...(c.start ? { start: c.start } : {}),
  ...(c.expect_head ? { expectHead: c.expect_head } : {}),
});
const caseFiles = (c: ChainCase): Files => c.files.map((f) => ({ name: f.name, bytes: vectorBytes(f) }));

/** Feeds one bucket's lines four at a time, letting the pool answer between pieces, as a reader's chunks do. */
async function feedInPieces(
  feeder: ChainFeeder,
  file: { name: string; bytes: Uint8Array },
  perPiece: number,
): Promise<void> {
  feeder.beginSegment(file.name, 0);
  const split: Uint8Array[] = [];
  new LineSplitter(1 << 16).split(file.bytes, (bytes) => void split.push(bytes));
  for (let at = 0; at < split.length; at += perPiece) {
    for (const bytes of split.slice(at, at + perPiece)) feeder.line(bytes, true);
    await feeder.settle();
  }
}

describe('parallel verification gives the sequential report', () => {
  test('chains.json vectors, batches finishing out of order', async () => {
    for (const c of chains.cases) {
      const want = sequential(caseOptions(c), caseFiles(c));
      for (const batchBytes of [1, 300, 5000]) {
        const pool = shufflingPool(c.id.length + batchBytes);
        expect(
          await parallel(caseOptions(c), caseFiles(c), pool, batchBytes, 97),
          `${c.id}, batches of ${batchBytes} bytes`,
        ).toEqual(want);
      }
    }
  });

  test('damaged chains in segments, any batch size, batches out of order (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(contentArb, { minLength: 1, maxLength: 12 }),
        fc.array(damageArb, { maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 4000 }),
        fc.integer({ min: 1, max: 3000 }),
        fc.nat(),
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        async (contents, damages, cuts, bucketNames, batchBytes, piece, seed, pinHead, threads, callerChecks) => {
          const chain = buildChain(contents as ContentSpec[]);
          const bytes = damages.reduce(damage, chain.bytes);
          const files = segments(bytes, cuts, bucketNames);
          const options: ChainVerifierOptions = {
            genesis: chain.genesis,
            ...(pinHead ? { expectHead: chain.records.at(-1)!.step_hash } : {}),
          };
          // Few threads and small batches: the feeding thread checks some batches itself before the pool's
          // first answer, and with callerChecks after it too, interleaved with the workers' batches.
          const pool = shufflingPool(seed, 0, threads, callerChecks);
          expect(await parallel(options, files, pool, batchBytes, piece)).toEqual(sequential(options, files));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a batch whose worker fails is checked on the calling thread: the same report', async () => {
    let failed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(contentArb, { minLength: 2, maxLength: 10 }),
        damageArb,
        fc.integer({ min: 1, max: 3 }),
        fc.nat(),
        async (contents, d, failEvery, seed) => {
          const chain = buildChain(contents as ContentSpec[]);
          const files = [{ name: '0000000000000000.jsonl', bytes: damage(chain.bytes, d) }];
          const pool = shufflingPool(seed, failEvery);
          expect(await parallel({ genesis: chain.genesis }, files, pool, 200, 512)).toEqual(
            sequential({ genesis: chain.genesis }, files),
          );
          failed += pool.failed;
        },
      ),
      { numRuns: 60 },
    );
    expect(failed).toBeGreaterThan(0);
  });

  test('while no worker has answered and each holds three batches, the feeding thread checks the next itself: the same report', async () => {
    const contents = Array.from({ length: 40 }, (_, i) => ({
      input: { i },
      result: i % 7 === 3 ? 'x'.repeat(i) : null,
    }));
    const chain = buildChain(contents as ContentSpec[]);
    const files = [{ name: '0000000000000000.jsonl', bytes: damage(chain.bytes, { how: 'flip', at: 1500, byte: 4 }) }];
    const want = sequential({ genesis: chain.genesis }, files);
    const lines: unknown[] = [];
    // One thread whose batches finish a few turns later: while five lines are fed in one piece, three batches wait.
    const pool = shufflingPool(5, 0, 1);
    const feeder = new ChainFeeder(
      new ChainVerifier({ genesis: chain.genesis, onLine: (l) => void lines.push(seen(l)) }),
      pool,
      { batchBytes: 1 },
    );
    await feedInPieces(feeder, files[0]!, 5);
    expect({ report: await feeder.finish(), lines }).toEqual(want);
    expect(want.report.ok).toBe(false);
    expect(feeder.checkedHere).toBeGreaterThan(0);
    expect(pool.batches).toBeGreaterThan(0);
    expect(feeder.checkedHere + pool.batches).toBe(40);
  });

  test.each([false, true])(
    'callerChecks %s: the feeding thread checks batches after the first answer only when the pool leaves it a core',
    async (callerChecks) => {
      const contents = Array.from({ length: 60 }, (_, i) => ({
        input: { i },
        result: i % 5 === 2 ? 'z'.repeat(3 * i) : null,
      }));
      const chain = buildChain(contents as ContentSpec[]);
      const files = [
        { name: '0000000000000000.jsonl', bytes: damage(chain.bytes, { how: 'repeat-line', at: 33, byte: 1 }) },
      ];
      const want = sequential({ genesis: chain.genesis }, files);
      const lines: unknown[] = [];
      const pool = shufflingPool(7, 0, 1, callerChecks);
      const feeder = new ChainFeeder(
        new ChainVerifier({ genesis: chain.genesis, onLine: (l) => void lines.push(seen(l)) }),
        pool,
        { batchBytes: 1 },
      );
      // How many batches the feeding thread had checked itself when the first answer reached it.
      let beforeFirstAnswer: number | null = null;
      pool.onAnswer = () => void (beforeFirstAnswer ??= feeder.checkedHere);
      await feedInPieces(feeder, files[0]!, 4);
      expect({ report: await feeder.finish(), lines }).toEqual(want);
      expect(beforeFirstAnswer).not.toBeNull();
      expect(feeder.checkedHere + pool.batches).toBe(61);
      if (callerChecks) expect(feeder.checkedHere).toBeGreaterThan(beforeFirstAnswer!);
      else expect(feeder.checkedHere).toBe(beforeFirstAnswer);
    },
  );

  test('settle called again before the last one ended, and finish without awaiting it: the same report', async () => {
    const contents = Array.from({ length: 30 }, (_, i) => ({ input: { i } }));
    const chain = buildChain(contents as ContentSpec[]);
    const files = [
      { name: '0000000000000000.jsonl', bytes: damage(chain.bytes, { how: 'swap-lines', at: 11, byte: 1 }) },
    ];
    const want = sequential({ genesis: chain.genesis }, files);
    const lines: unknown[] = [];
    const feeder = new ChainFeeder(
      new ChainVerifier({ genesis: chain.genesis, onLine: (l) => void lines.push(seen(l)) }),
      shufflingPool(9, 0, 1),
      { batchBytes: 1 },
    );
    feeder.beginSegment(files[0]!.name, 0);
    let fed = 0;
    new LineSplitter(1 << 16).split(files[0]!.bytes, (bytes) => {
      feeder.line(bytes, true);
      if (++fed % 3 === 0) void feeder.settle();
    });
    expect({ report: await feeder.finish(), lines }).toEqual(want);
  });

  test('a chain smaller than one batch never reaches the pool', async () => {
    const chain = buildChain([{ input: 1 }, { input: 2 }]);
    const pool = shufflingPool(1);
    const files = [{ name: '0000000000000000.jsonl', bytes: chain.bytes }];
    expect(await parallel({ genesis: chain.genesis }, files, pool, 1 << 20, 64)).toEqual(
      sequential({ genesis: chain.genesis }, files),
    );
    expect(pool.batches).toBe(0);
  });

  test('a format the workers do not know by name is checked on the calling thread', async () => {
    const chain = buildChain([{ input: 1 }, { input: 2 }, { input: 3 }]);
    const verifier = new ChainVerifier({ genesis: chain.genesis });
    const own = { ...verifier.format };
    const pool = shufflingPool(2);
    const feeder = new ChainFeeder(new ChainVerifier({ genesis: chain.genesis, format: own }), pool, { batchBytes: 1 });
    feeder.beginSegment('0000000000000000.jsonl', 0);
    for (const line of chain.lines) feeder.line(new TextEncoder().encode(line.slice(0, -1)), true);
    const report = await feeder.finish();
    expect(report.ok).toBe(true);
    expect(report.steps).toBe(3);
    expect(pool.batches).toBe(0);
  });
});

describe('worker threads (dist/parallel)', () => {
  let pool: WorkerLineCheckPool;
  beforeAll(async () => {
    // Worker threads run JavaScript: the built pool, as the CLI runs it (`npm test` builds first).
    const { createLineCheckPool } = (await import(
      '../../dist/parallel/index.js' as string
    )) as typeof import('../../src/parallel/index.js');
    pool = createLineCheckPool({ threads: 2 });
  });
  afterAll(async () => {
    await pool?.close();
  });

  test('chains.json vectors through real workers', async () => {
    const before = pool.answered;
    for (const c of chains.cases) {
      expect(await parallel(caseOptions(c), caseFiles(c), pool, 256, 1000), c.id).toEqual(
        sequential(caseOptions(c), caseFiles(c)),
      );
    }
    expect(pool.answered).toBeGreaterThan(before);
  });

  test('one worker started before the first batch, the feeding thread checking beside it: the same reports', async () => {
    const { createLineCheckPool } = (await import(
      '../../dist/parallel/index.js' as string
    )) as typeof import('../../src/parallel/index.js');
    const one = createLineCheckPool({ threads: 1, callerChecks: true });
    try {
      one.start();
      one.start(); // once started, again is nothing
      for (const c of chains.cases) {
        expect(await parallel(caseOptions(c), caseFiles(c), one, 128, 1000), c.id).toEqual(
          sequential(caseOptions(c), caseFiles(c)),
        );
      }
      expect(one.answered).toBeGreaterThan(0);
    } finally {
      await one.close();
    }
    expect(() => one.start()).toThrow('closed');
  });

  test('damaged chains through real workers (fast-check)', async () => {
    const before = pool.answered;
    await fc.assert(
      fc.asyncProperty(
        fc.array(contentArb, { minLength: 1, maxLength: 20 }),
        fc.array(damageArb, { maxLength: 2 }),
        fc.integer({ min: 1, max: 2000 }),
        async (contents, damages, batchBytes) => {
          const chain = buildChain(contents as ContentSpec[]);
          const files = segments(damages.reduce(damage, chain.bytes), [7], true);
          expect(await parallel({ genesis: chain.genesis }, files, pool, batchBytes, 4096)).toEqual(
            sequential({ genesis: chain.genesis }, files),
          );
        },
      ),
      { numRuns: 40 },
    );
    expect(pool.answered).toBeGreaterThan(before);
  });
});
