/**
 * The redaction walk (src/redact/redact.ts, spec/REDACTION.md §5.1–§5.3), rule by rule: which rules apply
 * to a step, the precedence at a node (a path rule without detectors, then secrets in member names, then
 * strings), detector scope under a path, value and substring modes, what the sweep is told to search, the
 * order salts are drawn in, and that the input is never changed.
 */
import { describe, expect, test } from 'vitest';
import type { Json } from '../../src/canonical/json.js';
import { commitment, compilePolicy, redactStep, type SaltSource } from '../../src/redact/index.js';
import { SECRETS } from './helpers.js';

const M = '$stepchain:redacted';
/** Salts 0, 1, 2, … as 32 bytes each, and how many were drawn. */
function counting(): SaltSource & { drawn: number } {
  const f = (() => new Uint8Array(32).fill(f.drawn++)) as SaltSource & { drawn: number };
  f.drawn = 0;
  return f;
}
const run = (policy: unknown, fields: Record<string, Json>, seq = 0) =>
  redactStep(compilePolicy(policy), seq, fields, counting());
const marker = (v: unknown) => (v as Record<string, { rule: string; commitment: string; text?: string }>)[M]!;

function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

describe('which rules apply to a step (§3.3)', () => {
  test('a tools rule applies only to a step whose tool_call names a listed tool; never to a step without one', () => {
    const policy = { rules: [{ id: 't', paths: ['/input'], tools: ['http'] }] };
    expect(run(policy, { input: 'x', tool_call: { name: 'http', arguments: {} } }).redactions.length).toBe(1);
    expect(run(policy, { input: 'x', tool_call: { name: 'ftp', arguments: {} } }).redactions.length).toBe(0);
    expect(run(policy, { input: 'x', tool_call: null }).redactions.length).toBe(0);
    expect(run(policy, { input: 'x' }).redactions.length).toBe(0);
  });
});

describe('precedence at a node (§5.1)', () => {
  test('a path rule without detectors redacts the whole node even when a detector rule comes first in the policy', () => {
    const { fields, redactions } = run(
      {
        rules: [
          { id: 'd', detectors: ['email'] },
          { id: 'p', paths: ['/input/a'] },
        ],
      },
      { input: { a: `to ${SECRETS.email}`, b: `cc ${SECRETS.email}` } },
    );
    const input = fields.input as Record<string, unknown>;
    expect(marker(input.a).rule).toBe('p');
    expect(marker(input.a).text).toBeUndefined();
    expect(marker(input.b)).toMatchObject({ rule: 'd', text: 'cc [REDACTED:email]' });
    expect(redactions.map((r) => [r.path, r.rule, r.detected])).toEqual([
      ['/input/a', 'p', false],
      ['/input/b', 'd', true],
    ]);
  });

  test('the first path rule in policy order names the marker; nothing below it is visited', () => {
    const { fields, redactions } = run(
      {
        rules: [
          { id: 'outer', paths: ['/input'] },
          { id: 'inner', paths: ['/input/a'] },
          { id: 'd', detectors: ['email'] },
        ],
      },
      { input: { a: SECRETS.email } },
    );
    expect(marker(fields.input).rule).toBe('outer');
    expect(redactions.length).toBe(1);
  });

  test('an object with a secret in a member name is redacted whole, by the first rule whose detector finds it; the names are what the sweep searches', () => {
    const value = { [SECRETS['aws-access-key']]: 'x', [`k ${SECRETS.email}`]: 'y', plain: 'z' };
    const { fields, redactions } = run(
      {
        rules: [
          { id: 'mail', detectors: ['email'] },
          { id: 'aws', detectors: ['aws-access-key'] },
        ],
      },
      { result: { inner: value } },
    );
    expect(marker((fields.result as Record<string, unknown>).inner).rule).toBe('mail');
    expect(redactions).toHaveLength(1);
    expect(redactions[0]).toMatchObject({
      path: '/result/inner',
      rule: 'mail',
      value,
      matched: [SECRETS.email],
      detected: true,
    });
  });

  test('a value-mode rule redacts the whole string; the first such rule names it; the matches are searched', () => {
    const s = `key ${SECRETS['api-key']} and ${SECRETS.email}`;
    const { fields, redactions } = run(
      {
        rules: [
          { id: 'sub', detectors: ['email'] },
          { id: 'whole', detectors: ['api-key'], mode: 'value' },
          { id: 'whole2', detectors: ['email'], mode: 'value' },
        ],
      },
      { input: s },
    );
    expect(marker(fields.input).rule).toBe('whole');
    expect(marker(fields.input).text).toBeUndefined();
    expect(redactions[0]).toMatchObject({ rule: 'whole', value: s, matched: [SECRETS['api-key']], detected: true });
  });

  test("substring mode: every span of every matching rule's detectors, merged; the marker names the first matching rule and commits to the whole string", () => {
    const s = `a ${SECRETS.email} b ${SECRETS['aws-access-key']} c`;
    const { fields, redactions } = run(
      {
        rules: [
          { id: 'none', detectors: ['jwt'] },
          { id: 'mail', detectors: ['email'] },
          { id: 'aws', detectors: ['aws-access-key'] },
        ],
      },
      { input: s },
    );
    expect(marker(fields.input)).toEqual({
      rule: 'mail',
      text: 'a [REDACTED:email] b [REDACTED:aws-access-key] c',
      commitment: commitment(new Uint8Array(32).fill(0), s),
    });
    expect(redactions[0]!.matched).toEqual([SECRETS.email, SECRETS['aws-access-key']]);
  });
});

describe('detector scope under a path (§5.1 step 2)', () => {
  test('a rule with paths and detectors finds secrets at and below its patterns only', () => {
    const policy = { rules: [{ id: 'body', paths: ['/result/body'], detectors: ['email'] }] };
    const { fields } = run(policy, {
      result: { body: { to: SECRETS.email, list: [`x ${SECRETS.email}`] }, head: SECRETS.email },
      input: SECRETS.email,
    });
    const result = fields.result as { body: { to: unknown; list: unknown[] }; head: unknown };
    expect(marker(result.body.to).rule).toBe('body');
    expect(marker(result.body.list[0]).text).toBe('x [REDACTED:email]');
    expect(result.head).toBe(SECRETS.email);
    expect(fields.input).toBe(SECRETS.email);
  });

  test('a pattern ending at a string in scope: the string itself is searched', () => {
    const { fields } = run(
      { rules: [{ id: 's', paths: ['/input/note'], detectors: ['email'] }] },
      { input: { note: SECRETS.email, other: SECRETS.email } },
    );
    const input = fields.input as Record<string, unknown>;
    expect(marker(input.note).rule).toBe('s');
    expect(input.other).toBe(SECRETS.email);
  });

  test('a member name outside the scope is not searched', () => {
    const { fields } = run(
      { rules: [{ id: 's', paths: ['/input/in'], detectors: ['email'] }] },
      { input: { in: { k: 'v' }, out: { [SECRETS.email]: 1 } } },
    );
    expect(fields.input).toEqual({ in: { k: 'v' }, out: { [SECRETS.email]: 1 } });
  });
});

describe('scope when another rule is in scope (§5.1 step 2)', () => {
  // "everywhere" puts a detector in scope at every node, so the walk looks at strings and member names
  // everywhere; "inner" is in scope only under /input/in.
  const policy = {
    rules: [
      { id: 'everywhere', detectors: ['jwt'] },
      { id: 'inner', paths: ['/input/in'], detectors: ['email'] },
    ],
  };
  test('a rule out of scope neither redacts a string nor an object by a member name', () => {
    const { fields, redactions } = run(policy, { input: { out: { text: `to ${SECRETS.email}`, [SECRETS.email]: 1 } } });
    expect(fields.input).toEqual({ out: { text: `to ${SECRETS.email}`, [SECRETS.email]: 1 } });
    expect(redactions).toEqual([]);
  });
  test('where a pattern brings a rule into scope, the rules already in scope stay so', () => {
    const { fields } = run(policy, { input: { in: `${SECRETS.jwt} ${SECRETS.email}` } });
    expect(marker((fields.input as Record<string, unknown>).in).text).toBe('[REDACTED:jwt] [REDACTED:email]');
  });
});

test('a field given as undefined is left out, as an absent one', () => {
  const out = run({ rules: [{ id: 'p', paths: ['/prompt'] }] }, { input: undefined as never, prompt: 'p' });
  expect(Object.keys(out.fields)).toEqual(['prompt']);
  expect(
    run({ rules: [{ id: 'x', paths: ['/meta'], seq: { from: 5 } }] }, { input: undefined as never }).fields,
  ).toEqual({});
});

describe('what the sweep is told to search (§5.5)', () => {
  test('a path-selected value: its string and number leaves (numbers as JCS writes them), not booleans, null or member names', () => {
    const value = {
      name: 'Alice Example',
      n: 1e21,
      small: 0.5,
      flag: true,
      none: null,
      list: ['x', [7]],
      [`member-name-long`]: 'm',
    };
    const { redactions } = run({ rules: [{ id: 'p', paths: ['/input'] }] }, { input: value });
    expect(redactions[0]!.matched.sort()).toEqual(['Alice Example', '1e+21', '0.5', 'x', '7', 'm'].sort());
    expect(redactions[0]!.detected).toBe(false);
  });
});

describe('order and purity (§5.3)', () => {
  test('salts are drawn in walk order: members in UTF-16 order of their names, elements by index', () => {
    const names = ['b', 'a', 'B', 'é', '\ud83d\ude00', 'ﬀ'];
    const input = Object.fromEntries(names.map((k) => [k, k]));
    const list = Array.from({ length: 12 }, (_, i) => `v${i}`);
    const salts = counting();
    const { redactions } = redactStep(
      compilePolicy({ rules: [{ id: 'p', paths: ['/input/*', '/result/*'] }] }),
      0,
      { input, result: list },
      salts,
    );
    const order = [...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    expect(redactions.map((r) => r.value)).toEqual([...order, ...list]);
    expect(redactions.map((r) => r.salt[0])).toEqual(redactions.map((_, i) => i));
    expect(salts.drawn).toBe(names.length + list.length);
  });

  test('the input is never changed; unchanged values come back as the same objects', () => {
    const fields = deepFreeze({
      input: { a: SECRETS.email, b: { c: 'keep' }, d: [1, { e: 'keep' }] },
      result: { keep: [1, 2] },
      meta: { m: SECRETS.email },
    }) as Record<string, Json>;
    const before = JSON.stringify(fields);
    const out = run({ rules: [{ id: 'mail', detectors: ['email'], paths: ['/input'] }] }, fields);
    expect(JSON.stringify(fields)).toBe(before);
    const input = out.fields.input as Record<string, unknown>;
    expect(input.b).toBe((fields.input as Record<string, unknown>).b);
    expect(input.d).toBe((fields.input as Record<string, unknown>).d);
    expect(out.fields.result).toBe(fields.result);
    expect(out.fields.meta).toBe(fields.meta);
  });

  test('a step no rule applies to: every field as given, no salt drawn', () => {
    const salts = counting();
    const fields = { input: { a: SECRETS.email }, prompt: 'p' };
    const out = redactStep(
      compilePolicy({ rules: [{ id: 'later', detectors: ['email'], seq: { from: 1 } }] }),
      0,
      fields,
      salts,
    );
    expect(out.fields.input).toBe(fields.input);
    expect(out.redactions).toEqual([]);
    expect(salts.drawn).toBe(0);
  });
});
