/** toJournalValue (spec/RUNS.md §4): one conversion of agent values, the same at every depth. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJsonChecked } from '../../src/canonical/jcs.js';
import { RuntimeError } from '../../src/index.js';
import { toJournalValue } from '../../src/runtime.js';

function refused(value: unknown, field?: string): RuntimeError {
  try {
    toJournalValue(value, field === undefined ? {} : { field });
  } catch (e) {
    expect(e).toBeInstanceOf(RuntimeError);
    expect((e as RuntimeError).code).toBe('VALUE_UNREPRESENTABLE');
    return e as RuntimeError;
  }
  throw new Error('not refused');
}

describe('toJournalValue', () => {
  test('Dates, BigInts, undefined members, binary, Errors, Maps and Sets, at every level', () => {
    const bytes = new Uint8Array([104, 105]);
    const cause = new RangeError('inner');
    const err = Object.assign(new Error('outer', { cause }), { status: 502 });
    expect(
      toJournalValue(
        {
          when: new Date('2026-01-02T03:04:05.678Z'),
          tokens: 2n ** 70n,
          gone: undefined,
          list: [undefined, 1n, new Date(0)],
          image: bytes,
          err,
          map: new Map([['k', { deep: undefined, n: 1 }]]),
          set: new Set(['a', 'b']),
          url: new URL('https://x.test/a'),
        },
        { field: 'result' },
      ),
    ).toEqual({
      when: '2026-01-02T03:04:05.678Z',
      tokens: '1180591620717411303424',
      list: [null, '1', '1970-01-01T00:00:00.000Z'],
      image: {
        type: 'bytes',
        digest: 'sha256:8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4',
        size: 2,
        base64: 'aGk=',
      },
      err: { name: 'Error', message: 'outer', status: 502, cause: { name: 'RangeError', message: 'inner' } },
      map: { k: { n: 1 } },
      set: ['a', 'b'],
      url: 'https://x.test/a',
    });
    expect(toJournalValue(undefined)).toBeNull();
    expect((toJournalValue(new Error('x'), { errorStack: true }) as { stack: string }).stack).toContain('Error: x');
  });

  test.each([
    [
      'a cycle',
      (() => {
        const o: Record<string, unknown> = { a: { b: 1 } };
        (o.a as Record<string, unknown>).self = o;
        return o;
      })(),
      '/result/a/self',
    ],
    ['a function', { f: () => 1 }, '/result/f'],
    ['a symbol', [Symbol('s')], '/result/0'],
    ['a symbol key', { [Symbol('k')]: 1 }, '/result'],
    ['NaN', { n: NaN }, '/result/n'],
    ['an unsafe integer', { n: 2 ** 53 }, '/result/n'],
    ['an invalid Date', { d: new Date('nope') }, '/result/d'],
    ['a Map with a non-string key', new Map([[1, 'x']]), '/result/1'],
  ])('refuses %s, naming the field and pointer', (_name, value, path) => {
    const e = refused(value, 'result');
    expect(e.location.path).toBe(path);
    expect(e.message).toContain(path);
  });

  test('a value shared twice (not a cycle) is converted twice', () => {
    const shared = { x: 1 };
    expect(toJournalValue({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });

  test('its output is always I-JSON the journal accepts, and converting it again changes nothing (fast-check)', () => {
    const leaf = fc.oneof(
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      fc.constant(undefined),
      fc
        .double({ noNaN: true, noDefaultInfinity: true })
        .filter((d) => !Number.isInteger(d) || Number.isSafeInteger(d)),
      fc.maxSafeInteger(),
      fc.bigInt(),
      fc.date({ noInvalidDate: true, min: new Date(0), max: new Date('9999-12-31') }),
      fc.uint8Array({ maxLength: 8 }),
      fc.string().map((m) => new Error(m)),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(
          fc.string().filter((k) => !k.startsWith('$stepchain:')),
          tie('node'),
          { maxKeys: 4 },
        ),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const once = toJournalValue(v);
        expect(() => canonicalJsonChecked(once, { basePath: ['result'] })).not.toThrow();
        expect(toJournalValue(once)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });
});

describe('types that help', () => {
  test('StepInput refuses at compile time what append refuses at run time; toolCallOf reads tool_call.name without a cast', async () => {
    const { MemoryStore } = await import('../../src/index.js');
    const { toolCallOf } = await import('../../src/runtime.js');
    const { startRun } = await import('../../src/index.js');
    type Strict = import('../../src/index.js').StepInput;
    // @ts-expect-error a BigInt is not JSON
    const big: Strict = { result: 1n };
    // @ts-expect-error a Date is not JSON (only ts may be one)
    const date: Strict = { input: { when: new Date(0) } };
    // @ts-expect-error a function is not JSON
    const fn: Strict = { tool_call: { name: 'x', run: () => 1 } };
    // An undefined member type-checks (an optional member looks the same to the compiler); append refuses it.
    const hole: Strict = { input: { a: [1, { c: undefined }] } };
    // @ts-expect-error a caller never chooses a record salt (FORMAT §12.2)
    const salted: Strict = { input: 1, salt: 'chosen' };
    // @ts-expect-error nor a record seed (FORMAT §14.4)
    const seeded: Strict = { input: 1, seed: 'chosen' };
    const ok: Strict = {
      input: { a: [1, 'b', null, { c: true }] },
      ts: new Date(0),
      tool_call: { name: 'x', arguments: {} },
    };
    const j = await new MemoryStore().create('typed');
    await expect(j.append(big)).rejects.toThrow();
    await expect(j.append(date)).rejects.toThrow();
    await expect(j.append(fn)).rejects.toThrow();
    await expect(j.append(hole)).rejects.toThrow();
    // Untyped JavaScript still gets the coded refusals: a salt or seed is checked, never taken as given.
    await expect(j.append(salted)).rejects.toMatchObject({ code: 'FIELD_INVALID' });
    await expect(j.append(seeded)).rejects.toMatchObject({ code: 'FIELD_INVALID' });
    await expect(j.append(ok)).resolves.toMatchObject({ seq: 0 });
    const run = await startRun(new MemoryStore(), { runId: 'typed' });
    const e = await run.beginTool({ name: 'search', args: { q: 'x' }, idempotencyKey: 'k' });
    const rec = (await run.journal.get(e.seq))!;
    const call = toolCallOf(rec);
    expect(call?.name).toBe('search');
    expect(call).toEqual({ name: 'search', arguments: { q: 'x' }, idempotency_key: 'k' });
    expect(toolCallOf({ tool_call: ['not', 'a', 'call'] })).toBeNull();
    expect(ok.ts).toBeInstanceOf(Date);
  });
});

test('a member named "__proto__" stays a member (found by the property test)', () => {
  const v = toJournalValue(JSON.parse('{"__proto__":{"x":1}}') as unknown);
  expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
  expect(Object.keys(v as object)).toEqual(['__proto__']);
  expect(canonicalJsonChecked(v, { basePath: ['result'] })).toBe('{"__proto__":{"x":1}}');
});
