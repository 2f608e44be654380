/** Policy validation (spec/REDACTION.md §3): table-driven, malformed rows beside good ones. */
import { describe, expect, test } from 'vitest';
import { PolicyError, compilePolicy, parsePolicyText } from '../../src/redact/index.js';
import { SAMPLE_POLICY } from './helpers.js';

describe('valid policies', () => {
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

describe('invalid policies name the rule and the member', () => {
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
