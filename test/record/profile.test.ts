import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { CanonicalError } from '../../src/canonical/errors.js';
import {
  CONTENT_FIELDS,
  JOURNAL_V1,
  STEP_V1,
  checkStepInput,
  formatOf,
  genesisDefect,
  genesisHash,
  makeGenesis,
  RecordError,
  sealMemberTexts,
  sealRecord,
  type Genesis,
  type JournalFormat,
  type RecordProfile,
  type StepTexts,
  type UnsealedRecord,
} from '../../src/record/index.js';
import { verifyChain } from '../../src/chain/index.js';
import * as arb from '../../src/testing/arbitraries.js';
import { loadVectors } from '../helpers/vectors.js';

interface StepHashCase {
  id: string;
  record: UnsealedRecord;
  preimage: string;
  step_hash: string;
  line: string;
}

const vectors = loadVectors<StepHashCase>('step-hashes.json');

describe('step-hashes.json vectors', () => {
  test('genesis hash', () => {
    const genesis = vectors.genesis as Genesis;
    expect(canonicalJson(genesis)).toBe(vectors.genesis_jcs);
    expect(genesisHash(genesis)).toBe(vectors.genesis_hash);
  });
  test.each(vectors.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const { record, line } = sealRecord(c.record);
    expect(record.step_hash).toBe(c.step_hash);
    expect(line).toBe(c.line);
    expect(canonicalJson(c.record, { refuseReserved: false })).toBe(c.preimage);
  });
});

describe('checkStepInput', () => {
  test('absent content fields become null; supplied step_id, ts and meta are kept unchanged', () => {
    const checked = checkStepInput({
      model: 'm',
      step_id: 'Call_01.retry:2',
      ts: '2026-03-04T05:06:07.089Z',
      meta: { run: 1 },
    });
    expect(checked.content).toEqual({ input: null, model: 'm', prompt: null, tool_call: null, result: null });
    expect(checked.step_id).toBe('Call_01.retry:2');
    expect(checked.ts).toBe('2026-03-04T05:06:07.089Z');
    expect(checked.meta).toEqual({ run: 1 });
  });

  test.each([
    ['v', { v: 1 }, 'FIELD_NOT_ALLOWED', '/v'],
    ['seq', { seq: 0 }, 'FIELD_NOT_ALLOWED', '/seq'],
    ['prev_hash', { prev_hash: 'sha256:00' }, 'FIELD_NOT_ALLOWED', '/prev_hash'],
    ['step_hash', { step_hash: 'sha256:00' }, 'FIELD_NOT_ALLOWED', '/step_hash'],
    ['unknown field', { tool: 'x' }, 'FIELD_INVALID', '/tool'],
    ['bad step_id', { step_id: '../etc' }, 'FIELD_INVALID', '/step_id'],
    ['long step_id', { step_id: 'a'.repeat(129) }, 'FIELD_INVALID', '/step_id'],
    ['ts without millis', { ts: '2026-01-01T00:00:00Z' }, 'FIELD_INVALID', '/ts'],
    ['ts not UTC', { ts: '2026-01-01T00:00:00.000+01:00' }, 'FIELD_INVALID', '/ts'],
    ['ts 30 February', { ts: '2026-02-30T00:00:00.000Z' }, 'FIELD_INVALID', '/ts'],
    ['meta array', { meta: [1] }, 'FIELD_INVALID', '/meta'],
    ['meta null', { meta: null }, 'FIELD_INVALID', '/meta'],
  ])('refuses %s', (_name, step, code, path) => {
    expect(() => checkStepInput(step as never)).toThrow(RecordError);
    try {
      checkStepInput(step as never);
    } catch (e) {
      expect((e as RecordError).code).toBe(code);
      expect((e as RecordError).location.path).toBe(path);
    }
  });

  test('bad content names the content field in the pointer', () => {
    try {
      checkStepInput({ tool_call: { arguments: { when: new Date(0) } } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(CanonicalError);
      expect((e as CanonicalError).code).toBe('NOT_PLAIN_OBJECT');
      expect((e as CanonicalError).location.path).toBe('/tool_call/arguments/when');
      expect((e as CanonicalError).message).toContain('/tool_call/arguments/when');
    }
  });

  test('reserved member names are refused in caller data, even deep inside meta', () => {
    expect(() => checkStepInput({ meta: { a: [{ '$stepchain:redacted': 1 }] } })).toThrow(/RESERVED_KEY.*\/meta\/a\/0/);
  });

  test('a content field of depth 100 is accepted and 101 refused', () => {
    let v: unknown = [];
    for (let i = 1; i < 100; i++) v = [v];
    expect(() => checkStepInput({ result: v })).not.toThrow();
    expect(() => checkStepInput({ result: [v] })).toThrow(/DEPTH_LIMIT/);
  });
});

describe('genesis', () => {
  test('makeGenesis refuses an invalid journal id or time', () => {
    expect(() => makeGenesis({ journalId: '' })).toThrow(/GENESIS_INVALID/);
    expect(() => makeGenesis({ createdAt: 'yesterday' })).toThrow(/GENESIS_INVALID/);
  });
  test('a generated genesis has a UUID v4 journal id and a millisecond UTC time', () => {
    const g = makeGenesis();
    expect(g.journal_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(g.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});

describe('sealRecord', () => {
  test('content that imitates the step_hash member does not displace the real one', () => {
    const g = genesisHash(makeGenesis({ journalId: 'j', createdAt: '2026-01-01T00:00:00.000Z' }));
    const unsealed: UnsealedRecord = {
      v: 1,
      seq: 0,
      step_id: 'a',
      ts: '2026-01-01T00:00:00.000Z',
      prev_hash: g,
      input: { a: 1, step_id: 'x', seq: 0 },
      model: ',"step_hash":"x","step_id":',
      prompt: null,
      tool_call: null,
      result: null,
    };
    const { record, line } = sealRecord(unsealed);
    expect(line).toBe(canonicalJson(record) + '\n');
  });
});

/** The texts the v1 profile's seal takes, from a record's own fields. */
function textsOf(record: UnsealedRecord): StepTexts {
  const texts: Record<string, string> = {};
  for (const f of CONTENT_FIELDS) texts[f] = canonicalJsonTrusted(record[f]);
  if (record.meta !== undefined) texts.meta = canonicalJsonTrusted(record.meta);
  return texts as unknown as StepTexts;
}

describe("the v1 profile's seal (the store's seal) equals sealRecord", () => {
  test.each(vectors.cases.map((c) => [c.id, c] as const))('step-hashes.json %s', (_id, c) => {
    const r = c.record;
    expect(STEP_V1.seal(textsOf(r), { seq: r.seq, stepId: r.step_id, ts: r.ts, prevHash: r.prev_hash })).toEqual({
      stepHash: c.step_hash,
      line: c.line,
    });
  });

  test('generated steps, with and without meta (fast-check)', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 });
    fc.assert(
      fc.property(
        arb.step(),
        fc.nat({ max: 2 ** 40 }),
        fc.uuid(),
        fc.date({ min: new Date(0), max: new Date('9999-12-31'), noInvalidDate: true }),
        hex,
        (step, seq, id, date, h) => {
          const { content, meta, texts } = checkStepInput(step);
          const unsealed = {
            v: 1,
            seq,
            step_id: id,
            ts: date.toISOString(),
            prev_hash: `sha256:${h}`,
            ...content,
            ...(meta === undefined ? {} : { meta }),
          } as UnsealedRecord;
          const reference = sealRecord(unsealed);
          expect(STEP_V1.seal(texts, { seq, stepId: id, ts: unsealed.ts, prevHash: unsealed.prev_hash })).toEqual({
            stepHash: reference.record.step_hash,
            line: reference.line,
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('the record profile is the one place the verifier, the sealer and the key read', () => {
  const genesis = makeGenesis({ journalId: 'profile-test', createdAt: '2026-01-01T00:00:00.000Z' });

  test('a genesis of an unknown format is refused by its format, one with wrong members by its members first', () => {
    expect(genesisDefect({ ...genesis, format: 'stepchain/v9' })).toBe(
      'unsupported genesis format "stepchain/v9"; this verifier reads stepchain/v1, stepchain/v2, stepchain/v3',
    );
    expect(genesisDefect({ format: 'stepchain/v9', journal_id: 'x' })).toBe(
      'the genesis must have exactly the members created_at, format, journal_id (found format, journal_id)',
    );
    expect(genesisDefect(genesis)).toBeNull();
    expect(formatOf(genesis)).toBe(JOURNAL_V1);
    expect(formatOf({ format: 'stepchain/v9' })).toBe(JOURNAL_V1);
  });

  test('the idempotency key from member texts equals the key of the parsed record (fast-check)', () => {
    fc.assert(
      fc.property(arb.step(), (step) => {
        const { texts } = checkStepInput(step, STEP_V1);
        const { line } = STEP_V1.seal(texts, {
          seq: 0,
          stepId: 'a',
          ts: '2026-01-01T00:00:00.000Z',
          prevHash: genesisHash(genesis),
        });
        expect(STEP_V1.key(texts)).toBe(STEP_V1.recordKey(JSON.parse(line) as Record<string, unknown>));
      }),
      { numRuns: 300 },
    );
  });

  test('the tool name policies match is tool_call.name, and nothing else (REDACTION.md §4)', () => {
    expect(STEP_V1.toolName({ tool_call: { name: 'http', arguments: {} } })).toBe('http');
    expect(STEP_V1.toolName({ tool_call: { tool: 'http' } })).toBeNull();
    expect(STEP_V1.toolName({ tool_call: { function: { name: 'http' } } })).toBeNull();
    expect(STEP_V1.toolName({ tool_call: null })).toBeNull();
  });

  test('a new version is one profile: the verifier checks records against the profile the format names', () => {
    // A stand-in for a later version: the v1 members with `v` = 2, sealed by the generic seal.
    const rules = STEP_V1.members.map((m) =>
      m.name !== 'v'
        ? m
        : {
            ...m,
            check: (text: string, a: number, b: number) =>
              text.slice(a, b) === '2' ? null : { message: 'v must be 2' },
          },
    );
    const v2: RecordProfile = {
      ...STEP_V1,
      id: 'step/v2-test',
      version: 2,
      members: rules,
      seal: (texts, e) =>
        sealMemberTexts({
          ...texts,
          v: '2',
          seq: String(e.seq),
          step_id: JSON.stringify(e.stepId),
          ts: JSON.stringify(e.ts),
          prev_hash: JSON.stringify(e.prevHash),
        }),
    };
    const format: JournalFormat = { ...JOURNAL_V1, records: [v2], select: () => v2 };
    const { texts } = checkStepInput({ input: 'hi' }, v2);
    const { line } = v2.seal(texts, {
      seq: 0,
      stepId: 'a',
      ts: '2026-01-01T00:00:00.000Z',
      prevHash: genesisHash(genesis),
    });
    const files = [{ name: '0000000000000000.jsonl', bytes: new TextEncoder().encode(line) }];
    expect(verifyChain({ genesis, format, files }).problems).toEqual([]);
    expect(verifyChain({ genesis, files }).problems.map((p) => [p.code, p.location.field, p.message])).toEqual([
      ['UNSUPPORTED_VERSION', 'v', 'record version 2 is not supported; this verifier reads version 1'],
    ]);
  });
});
