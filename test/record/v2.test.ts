/**
 * The run journal's rules one at a time (spec/FORMAT.md §11.1–§11.3): each member rule of a v2 record
 * on good and bad values (as the per-line check calls it: the member's canonical text), the rules between
 * members (an outcome names its start in ref and nothing else does; a failure carries its error and
 * nothing else does), the v2 genesis and its run identity with every limit at and past its edge. Written
 * from the surviving mutants of src/record/v2.ts (npm run mutate; test/mutation/SURVIVORS.md): the v2
 * journals' own tests live in test/runtime and test/store, outside the mutation set.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import {
  JOURNAL_V2,
  MAX_AGENT_NAME,
  MAX_LABEL_VALUE,
  MAX_LABELS,
  RECORD_KINDS,
  STEP_V2,
  STEP_V2_PUBLIC,
  endsStarted,
  runIdentityDefect,
} from '../../src/record/v2.js';
import { checkStepInput } from '../../src/record/input.js';
import { genesisDefect, makeGenesis } from '../../src/record/formats.js';

/** A member rule's verdict on a value, as the per-line check asks it: over the value's canonical text inside a line. */
function rule(name: string, value: unknown): { code?: string; message: string } | null {
  const m = STEP_V2.members.find((r) => r.name === name)!;
  const text = `{"${name}":${canonicalJson(value as never)}}`;
  const start = name.length + 4;
  return m.check!(text, start, text.length - 1) as { code?: string; message: string } | null;
}
const D = 'sha256:' + 'a'.repeat(64);

describe('FORMAT §11.2: member rules of a v2 record', () => {
  test.each<[string, unknown[], unknown[]]>([
    ['kind', [...RECORD_KINDS], ['run', 'tool.start', 'Step', '', null, 1, ['step']]],
    ['ref', [null, 'a', 'step-1', 'x'.repeat(128)], ['', '.x', 'x'.repeat(129), 1, { id: 'a' }]],
    [
      'prev_hash',
      [D],
      ['sha256:' + 'A'.repeat(64), 'sha256:' + 'a'.repeat(63), D + 'a', 'sha257:' + 'a'.repeat(64), null],
    ],
    ['step_hash', [D], ['sha256:' + 'G'.repeat(64), 'x'.repeat(71), null]],
    ['seq', [0, 1, 2 ** 53 - 1], [-1, 1.5, 2 ** 53, '0', null]],
    ['step_id', ['a', 'A.b:c_d-e'], ['', '-a', 'a b', 1]],
    ['ts', ['2026-01-01T00:00:00.000Z'], ['2026-01-01T00:00:00Z', '2026-02-30T00:00:00.000Z', 1]],
    ['meta', [{}, { a: 1 }], [[], 'm', 1, null]],
  ])('%s: the good values pass, each bad one is FIELD_INVALID', (name, good, bad) => {
    for (const v of good) expect(rule(name, v), JSON.stringify(v)).toBeNull();
    for (const v of bad) {
      const r = rule(name, v);
      expect(r, JSON.stringify(v)).not.toBeNull();
      expect(r!.code, JSON.stringify(v)).toBeUndefined(); // FIELD_INVALID, the default
      expect(r!.message.length).toBeGreaterThan(0);
    }
  });

  test('a digest text of the right length but not a digest is refused (length alone does not decide)', () => {
    const upper = 'sha256:' + 'A'.repeat(64);
    expect(canonicalJson(upper).length).toBe(73);
    expect(rule('prev_hash', upper)).not.toBeNull();
    expect(rule('step_hash', 'x'.repeat(71))).not.toBeNull();
  });

  test('v: 2 passes; another number is UNSUPPORTED_VERSION; anything else FIELD_INVALID', () => {
    expect(rule('v', 2)).toBeNull();
    expect(rule('v', 1)).toMatchObject({
      code: 'UNSUPPORTED_VERSION',
      message: expect.stringContaining('record version 1'),
    });
    expect(rule('v', 3)).toMatchObject({ code: 'UNSUPPORTED_VERSION' });
    for (const v of ['2', null, [2]]) expect(rule('v', v)).toEqual({ message: expect.any(String) });
  });

  test('the public form holds the same member rules for kind and ref', () => {
    for (const name of ['kind', 'ref', 'v', 'prev_hash'])
      expect(STEP_V2_PUBLIC.members.find((r) => r.name === name)?.check).toBe(
        STEP_V2.members.find((r) => r.name === name)!.check,
      );
  });
});

describe('FORMAT §12.2, REDACTION §12.2: the commitment members salt, salts, digests', () => {
  /** A rule of the given profile on a value, over its canonical text inside a line. */
  function ruleOf(profile: typeof STEP_V2, name: string, value: unknown): unknown {
    const m = profile.members.find((r) => r.name === name)!;
    const text = `{"${name}":${canonicalJson(value as never)}}`;
    return m.check!(text, name.length + 4, text.length - 1);
  }
  const SALT = '0123456789abcdef'.repeat(2);

  test('the record salt: 32 lowercase hex digits, nothing else', () => {
    expect(ruleOf(STEP_V2, 'salt', SALT)).toBeNull();
    for (const v of [
      SALT.toUpperCase(),
      SALT.slice(1),
      SALT + '0',
      'g'.repeat(32),
      'x'.repeat(32) + '',
      1,
      null,
      ['a'],
    ])
      expect(ruleOf(STEP_V2, 'salt', v), JSON.stringify(v)).not.toBeNull();
    // 34 characters of text that are not a salt (length alone does not decide).
    expect(ruleOf(STEP_V2, 'salt', 'Z'.repeat(32))).not.toBeNull();
  });

  test.each<[string, unknown[], unknown[]]>([
    [
      'salts',
      [{}, { input: SALT }, { error: SALT, result: SALT }],
      [
        [],
        'x',
        { input: SALT.toUpperCase() },
        { input: 1 },
        { kind: SALT },
        { nope: SALT },
        { input: SALT, result: 'x' },
      ],
    ],
    [
      'digests',
      [{ input: D }, { input: D, meta: D }],
      [
        {},
        [],
        { input: 'x' + D },
        { input: D + 'a' },
        { input: D.toUpperCase() },
        { input: 1 },
        { nope: D },
        { kind: D },
      ],
    ],
  ])("the public form's %s: an object of slots, each a salt or a digest", (name, good, bad) => {
    for (const v of good) expect(ruleOf(STEP_V2_PUBLIC, name, v), JSON.stringify(v)).toBeNull();
    for (const v of bad)
      expect(ruleOf(STEP_V2_PUBLIC, name, v), JSON.stringify(v)).toEqual({ message: expect.any(String) });
  });
});

describe('FORMAT §11.3: rules between members', () => {
  const relation = (kind: unknown, ref: unknown, error: unknown) =>
    STEP_V2.relationDefect!((name) => (({ kind, ref, error }) as Record<string, unknown>)[name]);
  const ENDS = ['model.completed', 'model.failed', 'tool.updated', 'tool.completed', 'tool.failed'];
  const FAILED = ['run.failed', 'model.failed', 'tool.failed'];

  test.each([...RECORD_KINDS])('%s: ref and error as the kind requires', (kind) => {
    const ends = ENDS.includes(kind);
    const failed = FAILED.includes(kind);
    expect(endsStarted(kind)).toBe(ends);
    const good = { ref: ends ? 'start-1' : null, error: failed ? { message: 'x' } : null };
    expect(relation(kind, good.ref, good.error)).toBeNull();
    // ref: required exactly for an outcome.
    expect(relation(kind, ends ? null : 'start-1', good.error)).toMatchObject({
      field: 'ref',
      message: expect.stringContaining(kind),
    });
    // error: required exactly for a failure.
    expect(relation(kind, good.ref, failed ? null : 'boom')).toMatchObject({
      field: 'error',
      message: expect.stringContaining(kind),
    });
    // An absent member (a public record withholding it) is not judged.
    if (!ends) expect(relation(kind, undefined, good.error)).toBeNull();
    if (!failed) expect(relation(kind, good.ref, undefined)).toBeNull();
  });

  test('a kind the member rule refuses is left to it (no relation defect)', () => {
    for (const kind of ['nope', 1, null, undefined]) expect(relation(kind, 'x', 'y')).toBeNull();
  });

  test('checkStepInput: the rule between members is FIELD_INVALID at the member it names; kind defaults to "step"', () => {
    expect(() => checkStepInput({ kind: 'tool.completed', ref: null }, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/ref' } }),
    );
    expect(() => checkStepInput({ kind: 'tool.failed', ref: 'a' }, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/error' } }),
    );
    expect(() => checkStepInput({ kind: 'tool.finished' }, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/kind' } }),
    );
    expect(() => checkStepInput({ ref: '.bad' }, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/ref' } }),
    );
    expect(checkStepInput({ input: 1 }, STEP_V2)).toMatchObject({
      content: { kind: 'step', ref: null, error: null },
      texts: { kind: '"step"', ref: 'null', error: 'null' },
    });
    expect(checkStepInput({ input: 1, kind: undefined }, STEP_V2).content.kind).toBe('step');
    expect(checkStepInput({ kind: 'tool.failed', ref: 'a', error: 'e' }, STEP_V2).texts).toMatchObject({
      kind: '"tool.failed"',
      ref: '"a"',
      error: '"e"',
    });
  });
});

describe('FORMAT §11.1: the v2 genesis and its run identity', () => {
  const g = (changes: Record<string, unknown> = {}) => ({
    format: 'stepchain/v2',
    journal_id: 'run-1',
    created_at: '2026-01-01T00:00:00.000Z',
    run: {},
    ...changes,
  });

  test('makeGenesis: v2 when the v2 format is asked for; a run with no format is the format of new journals (v3); else v1', () => {
    expect(makeGenesis({ journalId: 'a', createdAt: '2026-01-01T00:00:00.000Z' }).format).toBe('stepchain/v1');
    expect(makeGenesis({ journalId: 'a', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v2' })).toEqual(
      g({ journal_id: 'a' }),
    );
    expect(
      makeGenesis({
        journalId: 'a',
        createdAt: '2026-01-01T00:00:00.000Z',
        run: { agent: 'x' },
        format: 'stepchain/v2',
      }),
    ).toEqual(g({ journal_id: 'a', run: { agent: 'x' } }));
    expect(makeGenesis({ journalId: 'a', createdAt: '2026-01-01T00:00:00.000Z', run: { agent: 'x' } })).toEqual({
      ...g({ journal_id: 'a', run: { agent: 'x' } }),
      format: 'stepchain/v3',
    });
    // A v1 journal has no run identity: asking for both is refused, not silently a v2 journal as before.
    expect(() => makeGenesis({ journalId: 'a', run: {}, format: 'stepchain/v1' })).toThrow(
      expect.objectContaining({ code: 'GENESIS_INVALID' }),
    );
    expect(() => makeGenesis({ journalId: 'a', run: { agent: '' } })).toThrow(
      expect.objectContaining({ code: 'GENESIS_INVALID' }),
    );
  });

  test.each<[string, Record<string, unknown>]>([
    ['a member missing', { run: undefined }],
    ['an extra member', { extra: 1 }],
    ['journal_id invalid', { journal_id: '.x' }],
    ['created_at invalid', { created_at: '2026-01-01' }],
    ['run not an object', { run: [] }],
  ])('%s: refused', (_name, changes) => {
    const genesis = g(changes);
    for (const k of Object.keys(genesis))
      if ((genesis as Record<string, unknown>)[k] === undefined) delete (genesis as Record<string, unknown>)[k];
    expect(JOURNAL_V2.genesisDefect(genesis as never)).toEqual(expect.any(String));
    expect(genesisDefect(genesis)).toEqual(expect.any(String));
  });

  test('a good genesis passes, with every run member at its limit', () => {
    const labels = Object.fromEntries(
      Array.from({ length: MAX_LABELS }, (_, i) => [`l${i}`, 'v'.repeat(MAX_LABEL_VALUE)]),
    );
    const run = { agent: 'a'.repeat(MAX_AGENT_NAME), conversation_id: 'c-1', parent_run_id: 'p-1', labels };
    expect(runIdentityDefect(run)).toBeNull();
    expect(JOURNAL_V2.genesisDefect(g({ run }) as never)).toBeNull();
    expect(runIdentityDefect({})).toBeNull();
    expect(runIdentityDefect({ labels: {} })).toBeNull();
    expect(runIdentityDefect({ agent: 'a' })).toBeNull();
  });

  test.each<[string, unknown]>([
    ['not an object', 'run'],
    ['null', null],
    ['an unknown member', { name: 'x' }],
    ['conversation_id invalid', { conversation_id: '' }],
    ['conversation_id a number', { conversation_id: 1 }],
    ['parent_run_id invalid', { parent_run_id: 'a b' }],
    ['agent empty', { agent: '' }],
    ['agent too long', { agent: 'a'.repeat(MAX_AGENT_NAME + 1) }],
    ['agent not a string', { agent: 1 }],
    ['labels not an object', { labels: ['a'] }],
    ['labels null', { labels: null }],
    [
      'one label too many',
      { labels: Object.fromEntries(Array.from({ length: MAX_LABELS + 1 }, (_, i) => [`l${i}`, 'v'])) },
    ],
    ['a label name invalid', { labels: { '-x': 'v' } }],
    ['a label value not a string', { labels: { a: 1 } }],
    ['a label value too long', { labels: { a: 'v'.repeat(MAX_LABEL_VALUE + 1) } }],
  ])('run %s: refused', (_name, run) => {
    expect(runIdentityDefect(run)).toEqual(expect.any(String));
    expect(JOURNAL_V2.genesisDefect(g({ run }) as never)).toEqual(expect.any(String));
  });
});
