/**
 * Policy rules of spec/REDACTION.md §3 the table in policy.test.ts does not reach: the limits (256 rules,
 * 256 patterns a rule, distinct tools), the seq range's edges and defaults, the digest over the policy
 * exactly as validated, and the JSON text's own defects named with their pointer.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import {
  PolicyError,
  compilePolicy,
  parsePolicyText,
  POLICY_FORMAT,
  redactStep,
  seededSalts,
} from '../../src/redact/index.js';

function failure(run: () => unknown): PolicyError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(PolicyError);
    return e as PolicyError;
  }
  throw new Error('expected a PolicyError');
}

const many = (n: number, f: (i: number) => string): string[] => Array.from({ length: n }, (_, i) => f(i));

describe('limits (§3.1)', () => {
  test('256 rules are accepted, 257 are POLICY_INVALID at /rules', () => {
    const rules = (n: number) => many(n, (i) => `r${i}`).map((id) => ({ id, paths: ['/prompt'] }));
    expect(compilePolicy({ rules: rules(256) }).rules.length).toBe(256);
    const e = failure(() => compilePolicy({ rules: rules(257) }));
    expect([e.code, e.location.path]).toEqual(['POLICY_INVALID', '/rules']);
  });

  test("256 patterns in a rule are accepted, 257 are RULE_INVALID at the rule's paths", () => {
    const paths = (n: number) => many(n, (i) => `/input/k${i}`);
    expect(compilePolicy({ rules: [{ id: 'a', paths: paths(256) }] }).document.rules[0]!.paths!.length).toBe(256);
    const e = failure(() => compilePolicy({ rules: [{ id: 'a', paths: paths(257) }] }));
    expect([e.code, e.location.path]).toEqual(['RULE_INVALID', '/rules/0/paths']);
  });

  test.each([
    ['a tool listed twice', { id: 'a', paths: ['/prompt'], tools: ['http', 'http'] }, '/rules/0/tools'],
    ['an empty tools list', { id: 'a', paths: ['/prompt'], tools: [] }, '/rules/0/tools'],
    ['a pattern listed twice', { id: 'a', paths: ['/prompt', '/prompt'] }, '/rules/0/paths'],
    ['an empty seq range', { id: 'a', paths: ['/prompt'], seq: {} }, '/rules/0/seq'],
    ['a seq end that is not an integer', { id: 'a', paths: ['/prompt'], seq: { to: 1.5 } }, '/rules/0/seq'],
    ['a seq start that is a string', { id: 'a', paths: ['/prompt'], seq: { from: '1' } }, '/rules/0/seq'],
    ['a mode that is not a string', { id: 'a', detectors: ['jwt'], mode: 1 }, '/rules/0/mode'],
    ['tools holding a number among strings', { id: 'a', paths: ['/prompt'], tools: ['http', 1] }, '/rules/0/tools'],
    [
      'a seq range with an unknown member beside a known one',
      { id: 'a', paths: ['/prompt'], seq: { from: 1, start: 2 } },
      '/rules/0/seq',
    ],
  ])('%s is RULE_INVALID', (_what, rule, path) => {
    const e = failure(() => compilePolicy({ rules: [rule] }));
    expect([e.code, e.location.path]).toEqual(['RULE_INVALID', path]);
  });

  test('the first token of a pattern: a content field, meta or a wildcard; never the envelope', () => {
    for (const p of ['/*/x', '/**', '/meta/a', '/tool_call', '/model'])
      expect(compilePolicy({ rules: [{ id: 'a', paths: [p] }] }).rules.length).toBe(1);
    for (const p of ['/step_id', '/seq', '/prev_hash', '/v'])
      expect(failure(() => compilePolicy({ rules: [{ id: 'a', paths: [p] }] })).code).toBe('PATH_INVALID');
  });
});

test('mode "value" may be written on a rule with paths only (it is their default)', () => {
  expect(compilePolicy({ rules: [{ id: 'a', paths: ['/prompt'], mode: 'value' }] }).rules[0]!.mode).toBe('value');
});

test('errors name the file ("policy" unless given) and carry a hint where there is something to do', () => {
  const e = failure(() => compilePolicy({ rules: [{ id: 'a', paths: ['/prompt'], detector: ['jwt'] }] }));
  expect([e.code, e.location.file]).toEqual(['UNKNOWN_MEMBER', 'policy']);
  expect(e.hint).toMatch(/misspelt/);
  expect(failure(() => parsePolicyText('{"rules": [')).location.file).toBe('policy');
  expect(failure(() => compilePolicy([], 'p.json')).location.file).toBe('p.json');
});

describe('the seq range (§3.1, §3.3)', () => {
  const rule = (seq: unknown) => compilePolicy({ rules: [{ id: 'a', paths: ['/prompt'], seq }] }).rules[0]!;
  test('either end may be left out: from 0, to the last safe integer; from = to is one step', () => {
    expect([rule({ to: 3 }).from, rule({ to: 3 }).to]).toEqual([0, 3]);
    expect([rule({ from: 2 }).from, rule({ from: 2 }).to]).toEqual([2, Number.MAX_SAFE_INTEGER]);
    expect([rule({ from: 4, to: 4 }).from, rule({ from: 4, to: 4 }).to]).toEqual([4, 4]);
    const none = compilePolicy({ rules: [{ id: 'a', paths: ['/prompt'] }] }).rules[0]!;
    expect([none.from, none.to]).toEqual([0, Number.MAX_SAFE_INTEGER]);
  });

  test('a rule applies exactly to the steps in its range, both ends included', () => {
    const policy = compilePolicy({ rules: [{ id: 'a', paths: ['/prompt'], seq: { from: 2, to: 3 } }] });
    const redacted = [0, 1, 2, 3, 4].map(
      (seq) => redactStep(policy, seq, { prompt: 'p' }, seededSalts('policy-rules')).redactions.length,
    );
    expect(redacted).toEqual([0, 0, 1, 1, 0]);
  });
});

describe('the digest is over the policy exactly as validated, no defaults filled in (§3.1)', () => {
  test.each([
    ['paths only', { rules: [{ id: 'a', paths: ['/prompt'] }] }],
    ['with the format', { format: POLICY_FORMAT, rules: [{ id: 'a', paths: ['/prompt'] }] }],
    [
      'every member',
      {
        rules: [
          {
            id: 'b',
            paths: ['/input/**'],
            detectors: ['jwt', 'email'],
            tools: ['http', 'crm'],
            seq: { from: 1, to: 9 },
            mode: 'value',
          },
        ],
      },
    ],
    ['a seq start only', { rules: [{ id: 'c', detectors: ['email'], seq: { from: 1 } }] }],
    [
      'a seq end only, mode substring',
      { rules: [{ id: 'c', detectors: ['email'], seq: { to: 0 }, mode: 'substring' }] },
    ],
  ])('%s', (_what, document) => {
    const p = compilePolicy(document);
    expect(p.document).toEqual(document);
    expect(p.digest).toBe(digestUtf8(canonicalJson(document as never)));
  });

  test('a mode equal to the default still changes the digest: it is written in the policy', () => {
    const a = compilePolicy({ rules: [{ id: 'a', detectors: ['jwt'] }] });
    const b = compilePolicy({ rules: [{ id: 'a', detectors: ['jwt'], mode: 'substring' }] });
    expect(a.rules[0]!.mode).toBe(b.rules[0]!.mode);
    expect(a.digest).not.toBe(b.digest);
  });
});

describe('policy text (§3.1: I-JSON)', () => {
  test('formatting is not a defect; a duplicate member is, at its pointer', () => {
    expect(parsePolicyText('{\n  "rules": [ {"paths": ["/prompt"], "id": "a"} ]\n}').rules[0]!.id).toBe('a');
    const e = failure(() =>
      parsePolicyText('{"rules": [{"id": "a", "paths": ["/prompt"], "paths": ["/input"]}]}', 'p.json'),
    );
    expect(e.code).toBe('POLICY_INVALID');
    expect(e.location).toMatchObject({ file: 'p.json', path: '/rules/0/paths' });
  });

  test('a lone surrogate is not I-JSON', () => {
    expect(failure(() => parsePolicyText('{"rules": [{"id": "a", "paths": ["/input/\\ud800"]}]}')).code).toBe(
      'POLICY_INVALID',
    );
  });
});
