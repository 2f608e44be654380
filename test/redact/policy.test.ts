/** Policy validation (spec/REDACTION.md §3): table-driven, malformed rows beside good ones. */
import { describe, expect, test } from 'vitest';
import {
  PolicyError,
  compilePolicy,
  parsePolicyText,
  POLICY_FORMAT,
  redactStep,
  seededSalts,
} from '../../src/redact/index.js';
import { SAMPLE_POLICY } from './helpers.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';

describe('REDACTION §3.1: valid policies', () => {
  test.each([
    ['the issue example', SAMPLE_POLICY],
    [
      'every member',
      {
        format: 'stepchain-redaction-policy/v1',
        rules: [
          {
            id: 'r.1:x-y',
            paths: ['/result/**/email', '/meta/*'],
            detectors: ['email', 'jwt'],
            tools: ['crm'],
            seq: { from: 2, to: 9 },
            mode: 'value',
          },
        ],
      },
    ],
    ['open seq range', { rules: [{ id: 'r', paths: ['/input'], seq: { to: 3 } }] }],
    ['wildcard first token', { rules: [{ id: 'r', paths: ['/**/password'] }] }],
  ])('%s', (_name, policy) => {
    const p = compilePolicy(policy);
    expect(p.rules.map((r) => r.id)).toEqual(policy.rules.map((r) => r.id));
    expect(p.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  test('defaults: substring for detectors, value for paths; the digest ignores formatting', () => {
    const p = compilePolicy(SAMPLE_POLICY);
    expect(p.rules.map((r) => r.mode)).toEqual(['value', 'value', 'substring']);
    expect(parsePolicyText(JSON.stringify(SAMPLE_POLICY, null, 2)).digest).toBe(p.digest);
  });
});

describe('REDACTION §3.1, §3.2: invalid policies name the rule and the member', () => {
  test.each([
    ['not an object', [], 'POLICY_INVALID', /a policy is a JSON object/, ''],
    ['no rules', { rules: [] }, 'POLICY_INVALID', /non-empty "rules"/, '/rules'],
    [
      'unknown top-level member',
      { rules: [{ id: 'a', paths: ['/prompt'] }], rule: [] },
      'UNKNOWN_MEMBER',
      /unknown member "rule"/,
      '/rule',
    ],
    [
      'typo in a rule member',
      {
        rules: [
          { id: 'a', paths: ['/prompt'] },
          { id: 'keys', detector: ['jwt'] },
        ],
      },
      'UNKNOWN_MEMBER',
      /rule "keys" \(rules\[1\]\) member "detector"/,
      '/rules/1/detector',
    ],
    ['rule not an object', { rules: ['prompt'] }, 'RULE_INVALID', /rules\[0\]/, '/rules/0'],
    ['missing id', { rules: [{ paths: ['/prompt'] }] }, 'RULE_ID_INVALID', /rules\[0\] member "id"/, '/rules/0/id'],
    [
      'bad id',
      { rules: [{ id: '-x', paths: ['/prompt'] }] },
      'RULE_ID_INVALID',
      /rules\[0\] member "id"/,
      '/rules/0/id',
    ],
    [
      'duplicate id',
      {
        rules: [
          { id: 'a', paths: ['/prompt'] },
          { id: 'a', paths: ['/input'] },
        ],
      },
      'RULE_ID_DUPLICATE',
      /rule "a" \(rules\[1\]\).*rules\[0\]/,
      '/rules/1/id',
    ],
    [
      'selects nothing',
      { rules: [{ id: 'a', tools: ['http'] }] },
      'RULE_INVALID',
      /rule "a".*selects nothing/,
      '/rules/0',
    ],
    [
      'paths not an array',
      { rules: [{ id: 'a', paths: '/prompt' }] },
      'RULE_INVALID',
      /rule "a" \(rules\[0\]\) member "paths"/,
      '/rules/0/paths',
    ],
    ['empty paths', { rules: [{ id: 'a', paths: [] }] }, 'RULE_INVALID', /member "paths"/, '/rules/0/paths'],
    [
      'pattern without slash',
      { rules: [{ id: 'a', paths: ['prompt'] }] },
      'PATH_INVALID',
      /rule "a".*paths\/0.*"prompt"/,
      '/rules/0/paths/0',
    ],
    [
      'star inside a token',
      { rules: [{ id: 'a', paths: ['/result/api_*'] }] },
      'PATH_INVALID',
      /paths\/0/,
      '/rules/0/paths/0',
    ],
    [
      'envelope field',
      { rules: [{ id: 'a', paths: ['/prompt', '/ts'] }] },
      'PATH_INVALID',
      /paths\/1.*envelope field "ts"/,
      '/rules/0/paths/1',
    ],
    [
      'unknown detector',
      { rules: [{ id: 'a', detectors: ['email', 'ssn'] }] },
      'DETECTOR_UNKNOWN',
      /rule "a".*"ssn" is not a built-in detector/,
      '/rules/0/detectors',
    ],
    [
      'repeated detector',
      { rules: [{ id: 'a', detectors: ['email', 'email'] }] },
      'RULE_INVALID',
      /same entry twice/,
      '/rules/0/detectors',
    ],
    [
      'tools not strings',
      { rules: [{ id: 'a', paths: ['/prompt'], tools: [1] }] },
      'RULE_INVALID',
      /member "tools"/,
      '/rules/0/tools',
    ],
    [
      'seq not an object',
      { rules: [{ id: 'a', paths: ['/prompt'], seq: 3 }] },
      'RULE_INVALID',
      /member "seq"/,
      '/rules/0/seq',
    ],
    [
      'seq with unknown member',
      { rules: [{ id: 'a', paths: ['/prompt'], seq: { start: 3 } }] },
      'RULE_INVALID',
      /member "seq"/,
      '/rules/0/seq',
    ],
    [
      'seq backwards',
      { rules: [{ id: 'a', paths: ['/prompt'], seq: { from: 5, to: 2 } }] },
      'RULE_INVALID',
      /from 5 is after to 2/,
      '/rules/0/seq',
    ],
    [
      'negative seq',
      { rules: [{ id: 'a', paths: ['/prompt'], seq: { from: -1 } }] },
      'RULE_INVALID',
      /member "seq"/,
      '/rules/0/seq',
    ],
    [
      'bad mode',
      { rules: [{ id: 'a', detectors: ['jwt'], mode: 'whole' }] },
      'RULE_INVALID',
      /member "mode"/,
      '/rules/0/mode',
    ],
    [
      'substring without detectors',
      { rules: [{ id: 'a', paths: ['/prompt'], mode: 'substring' }] },
      'RULE_INVALID',
      /"substring" needs detectors/,
      '/rules/0/mode',
    ],
    ['bad format', { format: 'v2', rules: [{ id: 'a', paths: ['/prompt'] }] }, 'POLICY_INVALID', /format/, '/format'],
  ])('%s', (_name, policy, code, message, path) => {
    let err: unknown;
    try {
      compilePolicy(policy);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PolicyError);
    expect((err as PolicyError).code).toBe(code);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message.startsWith(`${code}: `)).toBe(true);
    expect((err as PolicyError).location.path).toBe(path);
  });

  test('policy text: not JSON, and duplicate members, are refused with the position', () => {
    expect(() => parsePolicyText('{"rules": [', 'p.json')).toThrow(/POLICY_INVALID: p.json is not valid I-JSON/);
    expect(() =>
      parsePolicyText('{"rules": [{"id": "a", "paths": ["/prompt"], "paths": ["/input"]}]}', 'p.json'),
    ).toThrow(/POLICY_INVALID.*character 46/);
  });
});

/**
 * Policy rules of spec/REDACTION.md §3 the table in policy.test.ts does not reach: the limits (256 rules,
 * 256 patterns a rule, distinct tools), the seq range's edges and defaults, the digest over the policy
 * exactly as validated, and the JSON text's own defects named with their pointer.
 */
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

describe('REDACTION §3.1: limits', () => {
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

describe('REDACTION §3.1, §3.3: the seq range', () => {
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

describe('REDACTION §3.1: the digest is over the policy exactly as validated, no defaults filled in', () => {
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

describe('REDACTION §3.1: policy text is I-JSON', () => {
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
