import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { sealRecord, type Genesis, type StepRecord } from '../../src/record/index.js';
import type { Problem } from '../../src/chain/report.js';
import { ChainVerifier, declaredFirstSeq, verifyChain } from '../../src/chain/index.js';
import { buildChain, type ContentSpec } from '../helpers/chains.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface ChainCase {
  id: string;
  genesis?: Genesis;
  start?: { seq: number; prev_hash: string };
  expect_head?: string;
  files: Array<{ name: string; text?: string; base64?: string }>;
  expect: {
    ok: boolean;
    head: string | null;
    head_seq: number | null;
    steps: number;
    problems: Array<Record<string, unknown>>;
  };
}

const chains = loadVectors<ChainCase>('chains.json');

function summarize(problems: Problem[]) {
  return problems.map((p) => {
    const { file, line, column, seq, field } = p.location;
    return {
      code: p.code,
      ...(file !== undefined ? { file } : {}),
      ...(line !== undefined ? { line } : {}),
      ...(column !== undefined ? { column } : {}),
      ...(seq !== undefined ? { seq } : {}),
      ...(field !== undefined ? { field } : {}),
    };
  });
}

describe('chains.json vectors', () => {
  test.each(chains.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const report = verifyChain({
      genesis: c.genesis ?? chains.genesis,
      ...(c.start ? { start: c.start } : {}),
      ...(c.expect_head ? { expectHead: c.expect_head } : {}),
      files: c.files.map((f) => ({ name: f.name, bytes: vectorBytes(f) })),
    });
    expect({
      ok: report.ok,
      head: report.head,
      head_seq: report.head_seq,
      steps: report.steps,
      problems: summarize(report.problems),
    }).toEqual(c.expect);
    for (const p of report.problems) expect(p.message.length).toBeGreaterThan(10);
  });

  test('feeding lines one at a time gives the same report as whole files', () => {
    for (const c of chains.cases) {
      const opts = {
        genesis: c.genesis ?? chains.genesis,
        ...(c.start ? { start: c.start } : {}),
        ...(c.expect_head ? { expectHead: c.expect_head } : {}),
      };
      const whole = verifyChain({ ...opts, files: c.files.map((f) => ({ name: f.name, bytes: vectorBytes(f) })) });
      const v = new ChainVerifier(opts);
      for (const f of c.files) {
        v.beginSegment(f.name, declaredFirstSeq(f.name));
        const bytes = vectorBytes(f);
        let start = 0;
        for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
          v.line(bytes.subarray(start, nl), true);
          start = nl + 1;
        }
        if (start < bytes.length) v.line(bytes.subarray(start), false);
      }
      expect(v.finish()).toEqual(whole);
    }
  });
});

const content = fc.record({
  input: fc.jsonValue({ maxDepth: 3 }),
  model: fc.constantFrom('gpt-4o', 'claude-sonnet-4', 'llama-3.1-70b'),
  prompt: fc.string({ maxLength: 80 }),
  tool_call: fc.option(
    fc.record({
      name: fc.constantFrom('search', 'http', 'read_file'),
      arguments: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    }),
    { nil: null },
  ),
  result: fc.jsonValue({ maxDepth: 3 }),
});

const FIELDS = [
  'input',
  'model',
  'prompt',
  'tool_call',
  'result',
  'meta',
  'v',
  'seq',
  'step_id',
  'ts',
  'prev_hash',
  'step_hash',
] as const;

/** A different, well-typed value for a field, so the line stays canonical and the damage is semantic. */
function mutate(record: StepRecord, field: (typeof FIELDS)[number], salt: number): StepRecord {
  const r: Record<string, unknown> = { ...record };
  switch (field) {
    case 'v':
      r.v = 2;
      break;
    case 'seq':
      r.seq = record.seq + 1 + salt;
      break;
    case 'step_id':
      r.step_id = `${record.step_id}x`;
      break;
    case 'ts':
      r.ts = new Date(Date.parse(record.ts) + 1 + salt).toISOString();
      break;
    case 'prev_hash':
    case 'step_hash': {
      const h = r[field] as string;
      const last = h.at(-1) === '0' ? '1' : '0';
      r[field] = h.slice(0, -1) + last;
      break;
    }
    case 'meta':
      r.meta = { ...(record.meta ?? {}), mutated: salt };
      break;
    default:
      r[field] = { was: record[field], mutated: salt };
  }
  return r as unknown as StepRecord;
}

/** The field a verifier can name: structurally checked envelope members name themselves; any other edit is witnessed only by the hash (spec/FORMAT.md §6.3 step 5). */
const WITNESS: Record<string, string> = { v: 'v', seq: 'seq', prev_hash: 'prev_hash', step_hash: 'step_hash' };

describe('chain verification properties', () => {
  test('every single-field mutation of any step is reported at that step, naming the field where it can be named', () => {
    fc.assert(
      fc.property(
        fc.array(content, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.constantFrom(...FIELDS),
        fc.nat({ max: 5 }),
        (contents, pick, field, salt) => {
          const chain = buildChain(contents as ContentSpec[]);
          const k = pick % chain.records.length;
          const damaged = mutate(chain.records[k]!, field, salt);
          const lines = [...chain.lines];
          lines[k] = canonicalJson(damaged, { refuseReserved: false }) + '\n';
          const report = verifyChain({
            genesis: chain.genesis,
            files: [{ name: '0000000000000000.jsonl', bytes: new TextEncoder().encode(lines.join('')) }],
          });
          expect(report.ok).toBe(false);
          const first = report.problems[0]!;
          expect(first.location.line).toBe(k + 1);
          const atStep = report.problems.filter((p) => p.location.line === k + 1).map((p) => p.location.field);
          expect(atStep).toContain(WITNESS[field] ?? 'step_hash');
        },
      ),
      { numRuns: 600 },
    );
  });

  test('any byte flipped, deleted or inserted in a chain is detected at or before the damaged line', () => {
    fc.assert(
      fc.property(
        fc.array(content, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('flip', 'delete', 'insert'),
        (contents, at, byte, how) => {
          const chain = buildChain(contents as ContentSpec[]);
          const bytes = chain.bytes;
          const i = at % bytes.length;
          let damaged: Uint8Array;
          if (how === 'flip') {
            damaged = bytes.slice();
            damaged[i] = damaged[i]! ^ byte;
          } else if (how === 'delete') damaged = new Uint8Array([...bytes.subarray(0, i), ...bytes.subarray(i + 1)]);
          else damaged = new Uint8Array([...bytes.subarray(0, i), byte, ...bytes.subarray(i)]);
          const head = chain.records.at(-1)!.step_hash;
          const report = verifyChain({
            genesis: chain.genesis,
            expectHead: head,
            files: [{ name: '0000000000000000.jsonl', bytes: damaged }],
          });
          expect(report.ok).toBe(false);
          const damagedLine = bytes.subarray(0, i).filter((b) => b === 10).length + 1;
          expect(report.problems[0]!.location.line ?? Infinity).toBeLessThanOrEqual(damagedLine + 1);
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('the verifier never throws on arbitrary bytes, and reports them as problems', () => {
    const genesis = buildChain([]).genesis;
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 3 }), (files) => {
        const report = verifyChain({
          genesis,
          files: files.map((bytes, i) => ({ name: `${String(i).padStart(16, '0')}.jsonl`, bytes })),
        });
        if (files.some((f) => f.length > 0)) expect(report.ok).toBe(false);
        expect(Array.isArray(report.problems)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test('the verifier never throws on arbitrary genesis values and partial starts', () => {
    const chain = buildChain([{ model: 'm' }]);
    fc.assert(
      fc.property(fc.anything(), (genesis) => {
        const report = verifyChain({ genesis, files: [{ name: 'x.jsonl', bytes: chain.bytes }] });
        expect(typeof report.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  test('valid chains verify, and the head is the last step hash', () => {
    fc.assert(
      fc.property(fc.array(content, { maxLength: 8 }), (contents) => {
        const chain = buildChain(contents as ContentSpec[]);
        const report = verifyChain({
          genesis: chain.genesis,
          files: [{ name: '0000000000000000.jsonl', bytes: chain.bytes }],
        });
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        expect(report.head).toBe(chain.records.at(-1)?.step_hash ?? null);
        expect(report.steps).toBe(contents.length);
      }),
      { numRuns: 300 },
    );
  });

  test('the problem list is capped, and a capped report is never ok', () => {
    const genesis = buildChain([]).genesis;
    const garbage = new TextEncoder().encode('x\n'.repeat(5000));
    const report = verifyChain({ genesis, maxProblems: 100, files: [{ name: 'g.jsonl', bytes: garbage }] });
    expect(report.problems).toHaveLength(100);
    expect(report.problems_truncated).toBe(true);
    expect(report.ok).toBe(false);
  });

  test('a sealed record verifies whatever the content, including markers', () => {
    const chain = buildChain([
      { result: { '$stepchain:blob': { digest: 'sha256:' + 'a'.repeat(64), size: 3 } } as never },
    ]);
    const report = verifyChain({
      genesis: chain.genesis,
      files: [{ name: '0000000000000000.jsonl', bytes: chain.bytes }],
    });
    expect(report.ok).toBe(true);
    const { step_hash, ...unsealed } = chain.records[0]!;
    expect(sealRecord(unsealed).record.step_hash).toBe(step_hash);
  });
});
