/** The built-in detectors (spec/REDACTION.md §4): what each finds and does not, and their cost on hostile input. */
import { describe, expect, test } from 'vitest';
import { DETECTORS, DETECTOR_IDS, findSecrets } from '../../src/redact/index.js';
import { SECRETS } from './helpers.js';

const found = (id: string, s: string): string[] =>
  DETECTORS.get(id)!
    .find(s)
    .map(([a, b]) => s.slice(a, b));

describe('each detector finds its kind', () => {
  test.each([
    ['api-key', `x ${SECRETS['api-key']} y`, [SECRETS['api-key']]],
    ['api-key', 'sk-ant-api03-' + 'a'.repeat(40), ['sk-ant-api03-' + 'a'.repeat(40)]],
    ['api-key', 'token=ghp_' + 'A'.repeat(36), ['ghp_' + 'A'.repeat(36)]],
    ['api-key', 'github_pat_' + '1'.repeat(30), ['github_pat_' + '1'.repeat(30)]],
    ['api-key', 'xoxb-' + '1234567890-abc', ['xoxb-1234567890-abc']],
    ['api-key', 'AIza' + 'B'.repeat(35), ['AIza' + 'B'.repeat(35)]],
    ['api-key', 'a task-assessment-for-the-quarter-2026 note', []],
    ['api-key', 'sk-short', []],
    ['aws-access-key', `key=${SECRETS['aws-access-key']};`, [SECRETS['aws-access-key']]],
    ['aws-access-key', 'ASIA' + 'Z'.repeat(16), ['ASIA' + 'Z'.repeat(16)]],
    ['aws-access-key', 'XAKIA' + 'Z'.repeat(16), []],
    ['aws-access-key', 'AKIA' + 'Z'.repeat(17), []],
    ['bearer-token', `Authorization: ${SECRETS['bearer-token']}`, [SECRETS['bearer-token']]],
    ['bearer-token', 'authorization: bearer abcdefgh12345', ['bearer abcdefgh12345']],
    ['bearer-token', 'the bearer of bad news', []],
    ['jwt', `t=${SECRETS.jwt}`, [SECRETS.jwt]],
    ['jwt', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.', ['eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.']],
    ['jwt', 'eyJonly.one', []],
    ['private-key', `pem:\n${SECRETS['private-key']}\nafter`, [SECRETS['private-key']]],
    ['private-key', '-----BEGIN EC PRIVATE KEY-----\nAAAA', ['-----BEGIN EC PRIVATE KEY-----\nAAAA']],
    ['private-key', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----', []],
    ['email', `mail ${SECRETS.email}.`, [SECRETS.email]],
    ['email', 'a@b.co, c.d@e-f.example.com', ['a@b.co', 'c.d@e-f.example.com']],
    ['email', 'user@localhost @handle x@y.1', []],
    // §4's e-mail scan, edge by edge: leading dots of the local part and trailing dots and hyphens of the
    // domain dropped, no empty label, the last label 2+ letters and nothing else, never reaching back into
    // the previous match.
    ['email', '.a@b.co', ['a@b.co']],
    ['email', '@handle a@b.co', ['a@b.co']],
    ['email', '..@b.co', []],
    ['email', 'a@b.co.', ['a@b.co']],
    ['email', 'a@b.co-', ['a@b.co']],
    ['email', 'a@b..co a@.b.co', []],
    ['email', 'x@y.c x@y.1ab x@y.ab1', []],
    ['email', 'x@y.abc', ['x@y.abc']],
    ['email', 'a@b.com@c.de', ['a@b.com']],
    ['email', 'a@b.co d@e.fg', ['a@b.co', 'd@e.fg']],
  ])('%s in %j', (id, s, expected) => {
    expect(found(id, s)).toEqual(expected);
  });
});

test('findSecrets merges overlapping spans and names the first', () => {
  const s = `Bearer ${SECRETS.jwt} ok`;
  const m = findSecrets(s, ['jwt', 'bearer-token']);
  expect(m).toEqual([{ start: 0, end: 7 + SECRETS.jwt.length, detector: 'bearer-token' }]);
});

test('findSecrets: a span inside another keeps the outer end; touching spans merge; a tie is named by the earlier detector in the list (§4)', () => {
  // The bearer span runs on over the "==" the JWT inside it stops before.
  const inner = 'Bearer eyJhbGc.eyJzdWI.sig==';
  expect(findSecrets(inner, ['bearer-token', 'jwt'])).toEqual([
    { start: 0, end: inner.length, detector: 'bearer-token' },
  ]);
  // A PEM key ending where an AWS key id begins: one span.
  const pem = '-----BEGIN PRIVATE KEY-----\nAAA\n-----END PRIVATE KEY-----';
  expect(findSecrets(pem + SECRETS['aws-access-key'], ['aws-access-key', 'private-key'])).toEqual([
    { start: 0, end: pem.length + 20, detector: 'private-key' },
  ]);
  // An api key that is also an e-mail's local part: both start at 0.
  const both = 'sk-' + 'a'.repeat(22) + '@b.co';
  expect(findSecrets(both, ['email', 'api-key'])).toEqual([{ start: 0, end: both.length, detector: 'email' }]);
  expect(findSecrets(both, ['api-key', 'email'])).toEqual([{ start: 0, end: both.length, detector: 'api-key' }]);
  // Apart, each keeps its own span and name, in order.
  const apart = `${SECRETS.email} and ${SECRETS['aws-access-key']}`;
  expect(findSecrets(apart, ['aws-access-key', 'email']).map((m) => m.detector)).toEqual(['email', 'aws-access-key']);
  expect(findSecrets('nothing here', ['email'])).toEqual([]);
});

// Linear time on hostile input. No stopwatch here (a loaded machine makes any fixed limit flake; the time per
// MiB is measured in bench/detectors.mjs): at 1 MiB a super-linear pattern needs hours, a linear scan
// milliseconds, so the test's own timeout is the bound, with a margin of orders of magnitude either way.
describe('cost on hostile input: 1 MiB strings finish', () => {
  const MiB = 1 << 20;
  test.each([
    ['runs of key characters', 'a'.repeat(MiB)],
    ['many sk- prefixes', 'sk-'.repeat(MiB / 3)],
    ['many eyJ without dots', 'eyJ'.repeat(MiB / 3)],
    ['eyJ segments with one dot', ('eyJ' + 'a'.repeat(50) + '.').repeat(MiB / 54)],
    ['many @', 'a@'.repeat(MiB / 2)],
    ['local part then @ without domain', 'a'.repeat(MiB) + '@'],
    ['BEGIN without END', '-----BEGIN PRIVATE KEY-----'.repeat(MiB / 27)],
    ['bearer words', 'Bearer '.repeat(MiB / 7)],
  ])('%s', (_name, s) => {
    const matches = findSecrets(s, DETECTOR_IDS);
    for (const m of matches) expect(m.end).toBeGreaterThan(m.start);
  });
});
