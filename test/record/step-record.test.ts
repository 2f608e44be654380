/**
 * The record helpers at edges no other test reached (spec/FORMAT.md §5; each case a mutant that survived,
 * test/mutation/SURVIVORS.md): timestamps past year 9999, the genesis's exact members, a caller's step that
 * is not an object or has an explicitly undefined or non-object meta, where step_hash lands in the line,
 * computeStepHash, and how a problem's location reads.
 */
import { describe, expect, test } from 'vitest';
import { CanonicalError } from '../../src/canonical/errors.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { RecordError } from '../../src/record/errors.js';
import { formatTimestamp, isValidTimestamp } from '../../src/record/fields.js';
import { genesisDefect, genesisHash, makeGenesis } from '../../src/record/formats.js';
import { checkStepInput } from '../../src/record/input.js';
import { computeStepHash, sealMemberTexts, sealRecord } from '../../src/record/seal.js';
import { describeLocation } from '../../src/chain/report.js';

describe('FORMAT §5.1 ts: timestamps', () => {
  test.each([
    ['2026-01-31T12:00:00.000Z', true],
    ['0000-01-01T00:00:00.000Z', true],
    ['9999-12-31T23:59:59.999Z', true],
    ['+010000-01-01T00:00:00.000Z', false], // a real instant JavaScript prints this way, past year 9999
    ['-000001-01-01T00:00:00.000Z', false],
    ['2026-02-30T00:00:00.000Z', false],
    ['2026-01-31T12:00:00Z', false],
    [1_769_860_800_000, false],
    [new Date(0), false],
  ])('isValidTimestamp(%j) is %s', (value, expected) => {
    expect(isValidTimestamp(value)).toBe(expected);
  });

  test('formatTimestamp refuses a date past year 9999 and formats any other', () => {
    expect(() => formatTimestamp(new Date(Date.UTC(10000, 0, 1)))).toThrow(RangeError);
    expect(formatTimestamp(new Date(Date.UTC(2026, 0, 31, 12)))).toBe('2026-01-31T12:00:00.000Z');
  });
});

describe('FORMAT §6.1: the genesis object', () => {
  const g = makeGenesis({ journalId: 'j', createdAt: '2026-01-01T00:00:00.000Z' });
  test.each([
    ['an extra member', { ...g, extra: 1 }],
    [
      'an own __proto__ member',
      JSON.parse(`{"__proto__":1,"created_at":"${g.created_at}","format":"${g.format}","journal_id":"j"}`) as unknown,
    ],
    ['a member missing', { format: g.format, journal_id: 'j' }],
    ['no members', {}],
  ])('%s is a defect', (_what, value) => {
    expect(genesisDefect(value)).toMatch(/exactly the members/);
  });

  test('the valid genesis has none', () => {
    expect(genesisDefect(g)).toBeNull();
  });
});

describe("FORMAT §3.2, §5.1: a caller's step (checkStepInput)", () => {
  test.each([[null], [[]], ['input'], [1]])('%j is not a step', (step) => {
    const e = (() => {
      try {
        checkStepInput(step as never);
      } catch (err) {
        return err;
      }
      return null;
    })();
    expect(e).toBeInstanceOf(RecordError);
    expect((e as RecordError).code).toBe('FIELD_INVALID');
  });

  test('meta given as undefined is no meta', () => {
    const checked = checkStepInput({ input: 1, meta: undefined });
    expect(checked.meta).toBeUndefined();
    expect(checked.texts.meta).toBeUndefined();
  });

  test.each([['x'], [null], [[1]], [3]])('meta %j is refused at /meta', (meta) => {
    expect(() => checkStepInput({ meta } as never)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/meta' } }),
    );
  });
});

describe('FORMAT §5.2: where step_hash lands in the sealed line', () => {
  test.each([
    ['before every other member', { ts: '"x"', v: '1' }, '{"step_hash":"H","ts":"x","v":1}'],
    ['after every other member', { input: '1', seq: '0' }, '{"input":1,"seq":0,"step_hash":"H"}'],
    ['alone', {}, '{"step_hash":"H"}'],
    ['between', { seq: '0', step_id: '"a"' }, '{"seq":0,"step_hash":"H","step_id":"a"}'],
  ])('%s', (_what, texts, shape) => {
    const { stepHash, line } = sealMemberTexts(texts);
    const members = Object.fromEntries(Object.entries(texts).map(([k, t]) => [k, JSON.parse(t) as unknown]));
    expect(stepHash).toBe(digestUtf8(canonicalJson(members)));
    expect(line).toBe(shape.replace('"H"', JSON.stringify(stepHash)) + '\n');
  });
});

test('computeStepHash is the hash sealRecord gives, for records with markers and deep values', () => {
  const g = makeGenesis({ journalId: 'j', createdAt: '2026-01-01T00:00:00.000Z' });
  let deep: unknown = 1;
  for (let i = 0; i < 120; i++) deep = [deep];
  const record = {
    v: 1 as const,
    seq: 0,
    step_id: 'a',
    ts: '2026-01-01T00:00:00.000Z',
    prev_hash: genesisHash(g),
    input: { '$stepchain:blob': { digest: 'sha256:' + '0'.repeat(64), size: 1 } },
    model: null,
    prompt: deep as never,
    tool_call: null,
    result: null,
  };
  expect(computeStepHash(record as never)).toBe(sealRecord(record as never).record.step_hash);
  expect(() => computeStepHash({ ...record, result: Number.NaN } as never)).toThrow(CanonicalError);
});

describe("FORMAT §6.4: describeLocation, how a problem's location reads", () => {
  test.each([
    [{}, ''],
    [{ file: 'b.jsonl' }, 'b.jsonl'],
    [{ file: 'b.jsonl', line: 3 }, 'b.jsonl:3'],
    [{ file: 'b.jsonl', line: 3, column: 7 }, 'b.jsonl:3:7'],
    [{ line: 3 }, 'line 3'],
    [{ line: 3, column: 7 }, 'line 3'],
    [{ seq: 5 }, 'seq 5'],
    [{ file: 'b.jsonl', line: 3, seq: 5, field: 'ts' }, 'b.jsonl:3, seq 5, ts'],
    [{ seq: 5, field: 'input', path: '/input/a' }, 'seq 5, /input/a'],
    [{ path: '' }, 'the record'],
    [{ field: 'v' }, 'v'],
  ])('%j reads %j', (loc, text) => {
    expect(describeLocation(loc)).toBe(text);
  });
});
