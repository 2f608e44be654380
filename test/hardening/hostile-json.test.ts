/**
 * Hostile JSON through the whole pipeline (issue 8): prototype-named members, nesting at and past the
 * limits, a single 100 MB value, every Unicode edge and IEEE 754 edge numbers. Each value goes through the
 * real file store (append → read → verify), a real receipt (export → verifyReceipt → read back) and the
 * diff engine, and must come back exactly as data without touching any prototype.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { FileStore, StoreError, type Journal } from '../../src/store/index.js';
import { exportReceipt, openReceiptSource, verifyReceiptFile } from '../../src/receipt/index.js';
import { diff } from '../../src/diff/index.js';
import { ChainVerifier, verifyChain, verifyFile, type ChainReport } from '../../src/chain/index.js';
import { canonicalJson, CanonicalError, MAX_RECORD_DEPTH, MAX_VALUE_DEPTH } from '../../src/canonical/index.js';
import { compilePolicy, redactStep, seededSalts } from '../../src/redact/index.js';
import type { Json } from '../../src/record/index.js';
import type { JsonInput } from '../../src/record/input.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, runNode } from './support.js';
import { buildChain } from '../helpers/chains.js';

const root = tempDir('stepchain-hostile-');
const store = new FileStore(root, { fsync: 'none' });
const open: Journal[] = [];
afterAll(async () => {
  for (const j of open) await j.close();
});

async function journal(id: string): Promise<Journal> {
  const j = await store.create(id);
  open.push(j);
  return j;
}

async function readAll(j: { read(): AsyncIterable<unknown> }): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const s of j.read()) out.push(s);
  return out;
}

async function textsOf(src: { lines(): AsyncIterable<{ text: string }> }): Promise<string[]> {
  const out: string[] = [];
  for await (const l of src.lines()) out.push(l.text);
  return out;
}

function expectClean(report: ChainReport<string>): void {
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}

/** No prototype anywhere gained a member from the data. */
function expectNoPollution(): void {
  const probes: object[] = [
    {},
    [],
    Object.prototype,
    Array.prototype,
    Function.prototype,
    Object.create(null) as object,
  ];
  for (const p of probes) {
    expect((p as Record<string, unknown>).polluted).toBeUndefined();
    expect((p as Record<string, unknown>).isAdmin).toBeUndefined();
  }
  expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  expect(typeof Object.prototype.toString).toBe('function');
  expect(typeof {}.constructor).toBe('function');
}

/** Appends `values` as step inputs, reads them back, verifies the journal, exports and verifies a receipt. */
async function roundTrip(id: string, values: unknown[]): Promise<{ j: Journal; receipt: string; back: unknown[] }> {
  const j = await journal(id);
  // Hostile on purpose: what plain JavaScript could pass, past the types.
  for (const v of values) await j.append({ input: v as JsonInput, result: v as JsonInput });
  const back = (await readAll(j)) as Array<{ input: unknown; result: unknown }>;
  expect(back.length).toBe(values.length);
  expectClean(await j.verify());
  const receipt = join(root, `${id}.tar.gz`);
  await exportReceipt(j, { out: receipt });
  const report = await verifyReceiptFile(receipt);
  expectClean(report);
  expect(report.steps).toBe(values.length);
  // The receipt carries the journal's stored lines byte for byte.
  const src = await openReceiptSource(receipt);
  expect(await textsOf(src)).toEqual(await textsOf(j));
  return { j, receipt, back: back.map((s) => s.input) };
}

describe('prototype-named members are data', () => {
  // JSON.parse makes "__proto__" an own member; an object literal would set the prototype instead.
  const hostile = [
    JSON.parse('{"__proto__":{"polluted":"yes","isAdmin":true}}'),
    JSON.parse('{"constructor":{"prototype":{"polluted":"yes"}}}'),
    JSON.parse('{"prototype":{"polluted":1},"a":{"__proto__":[{"__proto__":{"isAdmin":true}}]}}'),
    JSON.parse('[{"__proto__":null},{"constructor":"x","toString":1,"hasOwnProperty":2,"valueOf":{"__proto__":3}}]'),
    JSON.parse('{"__defineGetter__":"g","__lookupSetter__":"s","__proto__":"string"}'),
  ];

  test('they survive append → read → verify → export → verifyReceipt → diff exactly, and pollute nothing', async () => {
    const { j, receipt, back } = await roundTrip('proto', hostile);
    back.forEach((v, i) => {
      expect(canonicalJson(v)).toBe(canonicalJson(hostile[i]));
      // Still an own data member after the trip, not a prototype swap.
      if (
        v !== null &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        Object.prototype.hasOwnProperty.call(hostile[i], '__proto__')
      ) {
        expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true);
        expect(Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null).toBe(true);
      }
    });
    expectNoPollution();

    // diff: the journal against itself is the same; against the receipt too; a change under __proto__ is seen.
    expect((await diff(j, j)).same).toBe(true);
    expect((await diff(j, await openReceiptSource(receipt))).same).toBe(true);
    const other = await journal('proto-other');
    for (const v of hostile) await other.append({ input: v, result: v });
    await other.append({ input: JSON.parse('{"__proto__":{"polluted":"no"}}') });
    const d = await diff(j, other, { all: true });
    expect(d.same).toBe(false);
    expect(JSON.stringify(d)).toContain('__proto__');
    expectNoPollution();
  });

  test('the verifier reads a hand-sealed chain of prototype members without pollution', () => {
    const chain = buildChain(hostile.map((v) => ({ input: v, meta: JSON.parse('{"__proto__":{"polluted":true}}') })));
    const seen: string[] = [];
    const report = verifyChain({
      genesis: chain.genesis,
      files: [{ name: '0000000000000000.jsonl', bytes: chain.bytes }],
      onLine: (l) => seen.push(l.text),
    });
    expectClean(report);
    expect(seen.length).toBe(hostile.length);
    expectNoPollution();
  });

  test('diff sees a change under __proto__, and an ignore pattern through __proto__ reaches it', async () => {
    const a = buildChain([{ input: JSON.parse('{"__proto__":{"a":1},"b":0}') }]).records;
    const b = buildChain([{ input: JSON.parse('{"__proto__":{"a":2},"b":0}') }]).records;
    const d = await diff(a, b);
    expect(d.same).toBe(false);
    expect(d.divergences).toEqual([
      { kind: 'changed', seq_a: 0, seq_b: 0, fields: [{ path: '/input/__proto__/a', kind: 'changed', a: 1, b: 2 }] },
    ]);
    expect((await diff(a, b, { ignore: ['/input/b'] })).same).toBe(false);
    expect((await diff(a, b, { ignore: ['/input/__proto__/a'] })).same).toBe(true);
    expectNoPollution();
  });

  test('the redaction walk redacts below a __proto__ member as data and pollutes nothing', () => {
    const policy = compilePolicy({
      rules: [
        { id: 'p', paths: ['/input/__proto__/secret'] },
        { id: 'd', detectors: ['aws-access-key'] },
      ],
    });
    const input = JSON.parse('{"__proto__":{"secret":"hunter2","keep":1,"k":"AKIAIOSFODNN7EXAMPLE"},"x":1}') as Json;
    const out = redactStep(policy, 0, { input }, seededSalts('hardening'));
    const text = canonicalJson(out.fields, { refuseReserved: false });
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(text).toContain('"__proto__":{"k":{"$stepchain:redacted"');
    expect(text).toContain('"keep":1');
    expect(out.redactions.length).toBe(2);
    expectNoPollution();
  });

  test('the CLI appends and shows prototype-named members as data', async () => {
    const cwd = tempDir('stepchain-hostile-cli-');
    expect((await runNode([CLI, 'init', 'j'], { cwd })).code).toBe(0);
    const step = '{"input":{"__proto__":{"polluted":1}},"result":{"constructor":{"prototype":{"polluted":2}}}}';
    const a = await runNode([CLI, 'append', 'j'], { cwd, input: step });
    expect(a.code, a.stderr).toBe(0);
    const show = await runNode([CLI, 'show', 'j', '0', '--json'], { cwd });
    expect(show.code, show.stderr).toBe(0);
    const shown = JSON.parse(show.stdout) as { step: Record<string, unknown> };
    expect(canonicalJson({ input: shown.step.input, result: shown.step.result })).toBe(canonicalJson(JSON.parse(step)));
    const v = await runNode([CLI, 'verify', 'j'], { cwd });
    expect(v.code, v.stderr).toBe(0);
  });
});

describe('nesting at and past the limits', () => {
  const nest = (depth: number): JsonInput => {
    let v: JsonInput = 0;
    for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
    return v;
  };

  test('append accepts depth 100 and refuses 101 and 100 000 with DEPTH_LIMIT naming the path', async () => {
    expect(MAX_VALUE_DEPTH).toBe(100);
    const j = await journal('depth');
    await j.append({ input: nest(MAX_VALUE_DEPTH) });
    for (const depth of [MAX_VALUE_DEPTH + 1, 100_000]) {
      const err = await j.append({ tool_call: nest(depth) }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CanonicalError);
      expect((err as CanonicalError).code).toBe('DEPTH_LIMIT');
      const path = (err as CanonicalError).location.path ?? '';
      expect(path.startsWith('/tool_call/')).toBe(true);
      expect((err as Error).message).toContain('DEPTH_LIMIT');
    }
    expect((await j.head())?.seq).toBe(0);
    expectClean(await j.verify());
    const [back] = (await readAll(j)) as Array<{ input: unknown }>;
    expect(canonicalJson(back!.input)).toBe(canonicalJson(nest(MAX_VALUE_DEPTH)));
  });

  test('the verifier refuses a 129-deep line and a 1 000 000-deep one without recursing', () => {
    expect(MAX_RECORD_DEPTH).toBe(128);
    for (const depth of [MAX_RECORD_DEPTH + 1, 1_000_000]) {
      // The record object is depth 1, so input holds depth - 1 levels.
      const inner = '['.repeat(depth - 1) + ']'.repeat(depth - 1);
      const line = `{"input":${inner},"model":null,"prev_hash":"sha256:${'0'.repeat(64)}","prompt":null,"result":null,"seq":0,"step_hash":"sha256:${'0'.repeat(64)}","step_id":"a","tool_call":null,"ts":"2026-01-01T00:00:00.000Z","v":1}\n`;
      const v = new ChainVerifier({
        genesis: { format: 'stepchain/v1', journal_id: 'j', created_at: '2026-01-01T00:00:00.000Z' },
      });
      verifyFile(v, '0000000000000000.jsonl', new TextEncoder().encode(line));
      const report = v.finish();
      expect(report.ok).toBe(false);
      expect(report.problems.map((p) => p.code)).toContain('DEPTH_LIMIT');
    }
  });
});

describe('one 100 MB value', () => {
  test('is stored as a blob, read back intact and verified; a receipt refuses it with LIMIT_EXCEEDED and carries the rest', async () => {
    const j = await journal('huge');
    // 100 MB of text with a repeating non-ASCII pattern so an off-by-one anywhere changes the digest.
    const unit = 'stepchain-é-\u2028-';
    const big = unit.repeat(Math.ceil(100e6 / unit.length)).slice(0, 100_000_000);
    await j.append({ input: 'before' });
    const r = await j.append({ result: big });
    await j.append({ input: 'after' });
    const blobs = readdirSync(join(root, 'huge', 'blobs'));
    expect(blobs.length).toBe(1);
    const back = (await j.get(r.seq))!;
    expect(typeof back.result).toBe('string');
    expect((back.result as string).length).toBe(big.length);
    expect(back.result === big).toBe(true);
    expectClean(await j.verify());
    // Receipts hold a blob in memory to check it, so they cap blobs at 64 MiB (spec/RECEIPT.md §6): the
    // exporter refuses clearly rather than write a receipt no verifier would accept.
    const out = join(root, 'huge.tar');
    const err = await exportReceipt(j, { out }).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('LIMIT_EXCEEDED');
    expect(readdirSync(root).includes('huge.tar')).toBe(false);
    await exportReceipt(j, { out, from: r.seq + 1 });
    const report = await verifyReceiptFile(out);
    expectClean(report);
    expect(report.scope).toBe('partial');
    // The bucket itself stays small: the value is not inlined.
    const bucket = readdirSync(join(root, 'huge', 'buckets'))[0]!;
    expect(readFileSync(join(root, 'huge', 'buckets', bucket)).length).toBeLessThan(10_000);
  }, 120_000);
});

describe('Unicode edges', () => {
  const strings = [
    '\u{1F600}\u{10FFFF}\u{10000}', // surrogate pairs, including the last code point
    '\uFFFE\uFFFF\uFDD0\uFDEF', // noncharacters
    'a\u2028b\u2029c', // line and paragraph separators (JSON allows them raw, JavaScript once did not)
    'nul\u0000inside\u0001\u001f\u007f', // NUL and other controls
    '\uFEFFbom-first', // a byte order mark as data
    'e\u0301 vs \u00e9', // combining vs precomposed: distinct data, never normalized
    '"\\/\b\f\n\r\t',
  ];

  test('surrogate pairs, noncharacters, U+2028/U+2029, NUL and friends round-trip byte for byte', async () => {
    const values = [...strings, Object.fromEntries(strings.map((s, i) => [s, i])), strings];
    const { back } = await roundTrip('unicode', values);
    back.forEach((v, i) => expect(canonicalJson(v)).toBe(canonicalJson(values[i])));
    expect(back[0]).toBe(strings[0]);
    expect(back[3]).toBe(strings[3]);
  });

  test('a lone surrogate is refused at append with LONE_SURROGATE and nothing is written', async () => {
    const j = await journal('lone');
    for (const s of ['\uD800', 'x\uDFFFy', '\uDBFF']) {
      const err = await j.append({ input: { k: s } }).catch((e: unknown) => e);
      expect((err as CanonicalError).code).toBe('LONE_SURROGATE');
      expect((err as CanonicalError).location.path).toBe('/input/k');
    }
    expect(await j.head()).toBeNull();
  });
});

describe('numbers at the edges of IEEE 754', () => {
  const numbers = [
    5e-324,
    -5e-324,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    1e21,
    1e-7,
    9007199254740993,
    0.1 + 0.2,
    2.2250738585072014e-308,
    123456789012345680000,
    1e20,
    1e-6,
  ];

  test('round-trip exactly (-0 becomes 0, as RFC 8785 serializes it)', async () => {
    const values = [numbers, ...numbers, -0];
    const { back } = await roundTrip('numbers', values);
    expect(back[0]).toEqual(numbers);
    numbers.forEach((n, i) => expect(Object.is(back[i + 1], n)).toBe(true));
    expect(Object.is(back[numbers.length + 1], 0)).toBe(true);
  });

  test('NaN, Infinity and -Infinity are refused with NOT_FINITE_NUMBER', async () => {
    const j = await journal('nonfinite');
    for (const n of [NaN, Infinity, -Infinity]) {
      const err = await j.append({ result: [n] }).catch((e: unknown) => e);
      expect((err as CanonicalError).code).toBe('NOT_FINITE_NUMBER');
    }
    expect(await j.head()).toBeNull();
  });

  test('a step too large to seal is STEP_TOO_LARGE, not a crash (meta is never a blob)', async () => {
    const j = await journal('toolarge');
    const err = await j.append({ meta: { big: 'x'.repeat(17 * 1024 * 1024) } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('STEP_TOO_LARGE');
    expectClean(await j.verify());
  });
});
