import { describe, expect, test } from 'vitest';
import { verifyChain } from '../../src/chain/index.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import {
  committedStepHash,
  isSaltHex,
  newRecordSalt,
  sealCommitted,
  slotDigest,
  slotSalt,
  slotSalts,
  UNDECIDED,
  slotStates,
} from '../../src/record/commitments.js';
import { genesisHash, makeGenesis } from '../../src/record/index.js';
import { STEP_V2, JOURNAL_V2, STEP_V2_PUBLIC } from '../../src/record/v2.js';
import { MemoryStore } from '../../src/store/memory.js';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { checkLine } from '../../src/chain/line.js';
import { REDACTED_MARKER } from '../../src/record/markers.js';
import type { StepTexts } from '../../src/record/profile.js';

const encoder = new TextEncoder();
const genesis = makeGenesis({ journalId: 'v2-test', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v2' });

async function v2Journal(steps: Array<Record<string, unknown>>) {
  const store = new MemoryStore();
  const j = await store.create('j', {
    format: 'stepchain/v2',
    journalId: 'v2-test',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  for (const s of steps) await j.append(s as never);
  const lines: string[] = [];
  for await (const l of j.lines()) lines.push(l.text);
  return { j, lines };
}

const verify = (lines: readonly string[]) =>
  verifyChain({
    genesis,
    files: [{ name: 'chain.jsonl', bytes: encoder.encode(lines.map((l) => l + '\n').join('')) }],
  });

describe('FORMAT §12: the stepchain/v2 step hash commits to salted slot digests', () => {
  test('a v2 journal verifies; every line carries a 128-bit record salt; the step hash is the committed one', async () => {
    const { j, lines } = await v2Journal([
      { input: { pin: '4821' }, model: 'm', prompt: 'p', tool_call: null, result: true },
      {
        input: 1,
        model: 'm',
        prompt: 'p',
        tool_call: { name: 'http', arguments: { api_key: 'k' } },
        result: null,
        meta: { a: 1 },
      },
    ]);
    expect((await j.verify()).ok).toBe(true);
    expect(verify(lines).ok).toBe(true);
    for (const line of lines) {
      const r = JSON.parse(line) as Record<string, unknown>;
      expect(r.v).toBe(2);
      expect(isSaltHex(r.salt)).toBe(true);
      // Recomputed from the spec's definition, member by member.
      const slots = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'];
      expect(STEP_V2.redactable).toEqual(slots);
      const digests = Object.fromEntries(
        slots.map((s) => [
          s,
          slotDigest(slotSalt(r.salt as string, s, slots), s, s in r ? JSON.stringify(r[s]) : undefined),
        ]),
      );
      const clear = {
        kind: JSON.stringify(r.kind),
        prev_hash: JSON.stringify(r.prev_hash),
        ref: JSON.stringify(r.ref),
        seq: String(r.seq),
        step_id: JSON.stringify(r.step_id),
        ts: JSON.stringify(r.ts),
        v: '2',
      };
      expect(committedStepHash(clear, digests, slots)).toBe(r.step_hash);
    }
    expect(JSON.parse(lines[0]!).prev_hash).toBe(genesisHash(genesis));
  });

  test('the slot digest is SHA-256 of tag, slot salt and JCS([name, value]); absence commits to JCS([name])', () => {
    const salt = '00112233445566778899aabbccddeeff';
    expect(slotDigest(salt, 'input', '{"a":1}')).toBe(
      digestUtf8('stepchain/v2 slot\n00112233445566778899aabbccddeeff\n["input",{"a":1}]'),
    );
    expect(slotDigest(salt, 'meta', undefined)).toBe(
      digestUtf8('stepchain/v2 slot\n00112233445566778899aabbccddeeff\n["meta"]'),
    );
    // Slots error, input, meta, …: block 0 serves error (first half) and input (second half), block 1 meta.
    const block0 = digestUtf8('stepchain/v2 salt\n00112233445566778899aabbccddeeff\n0');
    expect(slotSalt(salt, 'error', STEP_V2.redactable)).toBe(block0.slice(7, 39));
    expect(slotSalt(salt, 'input', STEP_V2.redactable)).toBe(block0.slice(39, 71));
    expect(slotSalt(salt, 'meta', STEP_V2.redactable)).toBe(
      digestUtf8('stepchain/v2 salt\n00112233445566778899aabbccddeeff\n1').slice(7, 39),
    );
    expect(slotSalts(salt, STEP_V2.redactable)).toEqual(
      STEP_V2.redactable.map((s) => slotSalt(salt, s, STEP_V2.redactable)),
    );
  });

  test.each([
    ['a value', (l: string) => l.replace('"4821"', '"4822"')],
    [
      'the record salt',
      (l: string) => l.replace(/"salt":"([0-9a-f])/, (_m, c: string) => `"salt":"${c === '0' ? '1' : '0'}`),
    ],
    ['meta added', (l: string) => l.replace('"model":', '"meta":{},"model":')],
    ['the ts', (l: string) => l.replace(/"ts":"2/, '"ts":"1')],
  ])('changing %s breaks the step hash (HASH_MISMATCH)', async (_what, edit) => {
    const { lines } = await v2Journal([
      { input: { pin: '4821' }, model: 'm', prompt: 'p', tool_call: null, result: true },
    ]);
    const edited = edit(lines[0]!);
    expect(edited).not.toBe(lines[0]);
    const report = verify([edited]);
    expect(report.problems.map((p) => p.code)).toContain('HASH_MISMATCH');
  });

  test('a stored line without its salt is MISSING_FIELD and cannot be hashed', async () => {
    const { lines } = await v2Journal([{ input: 1, model: 'm', prompt: 'p', tool_call: null, result: null }]);
    const report = verify([lines[0]!.replace(/,"salt":"[0-9a-f]{32}"/, '')]);
    expect(report.problems.map((p) => p.code)).toEqual(['MISSING_FIELD', 'HASH_MISMATCH']);
  });

  test('record salts are fresh: 2000 draws, no repeat, every one 32 hex digits', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(newRecordSalt());
    expect(seen.size).toBe(2000);
    for (const s of seen) expect(isSaltHex(s)).toBe(true);
  });

  test('the profile seal equals sealCommitted with the salt it drew', () => {
    const texts = {
      kind: '"step"',
      ref: 'null',
      input: '1',
      model: '"m"',
      prompt: 'null',
      tool_call: 'null',
      result: '[]',
      error: 'null',
    };
    const e = { seq: 0, stepId: 's', ts: '2026-01-01T00:00:00.000Z', prevHash: genesisHash(genesis) };
    const { line, stepHash } = STEP_V2.seal(texts, e);
    const salt = (JSON.parse(line) as { salt: string }).salt;
    expect(sealCommitted(STEP_V2, texts, e, salt)).toEqual({ line, stepHash });
  });
});

/**
 * Commitment hashing's rules on crafted lines (src/record/commitments.ts): the public form of a v2 record
 * (spec/REDACTION.md §12.2–§12.3) slot state by slot state — disclosed with or without a value, withheld
 * whole, a redacted view, and every way of being in no state or two — where `commitments` stands among the
 * other members of the preimage (FORMAT §12.3), and the rules between members reading a withheld slot as
 * unknown; and the salts (src/record/salts.ts). Each public line is made from a sealed stored line as a
 * publisher makes it. Written from the surviving mutants of commitments.ts and salts.ts (npm run mutate;
 * test/mutation/SURVIVORS.md).
 */
const SLOTS = STEP_V2.redactable;
const SALT = '00112233445566778899aabbccddeeff';
const E = { seq: 3, stepId: 's-3', ts: '2026-01-01T00:00:00.000Z', prevHash: 'sha256:' + 'ab'.repeat(32) };
/** A step without meta: its meta slot commits to absence (FORMAT §12.2). */
const TEXTS: StepTexts = {
  kind: '"step"',
  ref: 'null',
  input: '{"pin":"4821","user":"u-17"}',
  model: '"m"',
  prompt: '"Check the PIN."',
  tool_call: 'null',
  result: '{"ok":true}',
  error: 'null',
};
const D = 'sha256:' + 'c'.repeat(64);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** How the public form shows one slot (REDACTION §12.2's table); a slot not named is disclosed. */
type State = { withheld: string } | { view: Json };
const marker = (commitment: Json, rule: Json = 'r'): Json => ({ [REDACTED_MARKER]: { commitment, rule } });

/** The stored record, its slot salts and slot digests. */
function stored(texts: StepTexts = TEXTS) {
  const { line, stepHash } = sealCommitted(STEP_V2, texts, E, SALT);
  const salts = slotSalts(SALT, SLOTS);
  const digests = Object.fromEntries(SLOTS.map((s, i) => [s, slotDigest(salts[i]!, s, texts[s])]));
  return {
    record: JSON.parse(line) as Record<string, Json>,
    stepHash,
    salts: Object.fromEntries(SLOTS.map((s, i) => [s, salts[i]!])),
    digests,
  };
}

/** The public form of the stored record as a publisher writes it, then `edit` applied to the record. */
function publicLine(
  states: Readonly<Record<string, State>> = {},
  edit: (r: Record<string, Json>) => void = () => {},
  texts: StepTexts = TEXTS,
) {
  const s = stored(texts);
  const r: Record<string, Json> = { ...s.record };
  delete r.salt;
  const salts: Record<string, Json> = {};
  const digests: Record<string, Json> = {};
  for (const slot of SLOTS) {
    const state = states[slot];
    if (state === undefined) salts[slot] = s.salts[slot]!;
    else if ('withheld' in state) r[slot] = marker(s.digests[slot]!, state.withheld);
    else {
      r[slot] = state.view;
      digests[slot] = s.digests[slot]!;
    }
  }
  r.salts = salts;
  if (Object.keys(digests).length > 0) r.digests = digests;
  edit(r);
  return { text: canonicalJsonTrusted(r as never), stepHash: s.stepHash, s };
}

/** The step hash a profile computes for a line, from its member spans, as the per-line check asks it. */
function hashOf(profile: typeof STEP_V2, text: string): string {
  const spans = scanCanonical(text).members!;
  return profile.stepHashOf(text, spans.get('step_hash') ?? [0, 0], spans);
}
const codes = (text: string) =>
  checkLine(text, JOURNAL_V2).problems.map((p) => `${p.code}${p.location.field ? ' ' + p.location.field : ''}`);

describe('REDACTION §12.2, §12.3: the public form, each slot in exactly one state', () => {
  test('disclosed, withheld whole and a redacted view together hash to the stored step hash, with no problem', () => {
    const { text, stepHash } = publicLine({
      prompt: { withheld: 'prompts' },
      input: { view: { pin: marker(D, 'pin'), user: 'u-17' } as Json },
    });
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    expect(codes(text)).toEqual([]);
  });

  test('a slot withheld whole contributes the digest its marker names, copied as it stands', () => {
    const { text, stepHash, s } = publicLine({ result: { withheld: 'results' } });
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    // Another digest in the marker: the record hashes to something else, and exactly as if that were the digest.
    const other = text.replace(s.digests.result!, D);
    const clear = {
      kind: '"step"',
      prev_hash: JSON.stringify(E.prevHash),
      ref: 'null',
      seq: '3',
      step_id: '"s-3"',
      ts: JSON.stringify(E.ts),
      v: '2',
    };
    expect(hashOf(STEP_V2_PUBLIC, other)).toBe(committedStepHash(clear, { ...s.digests, result: D }, SLOTS));
    expect(codes(other)).toEqual(['HASH_MISMATCH step_hash']);
  });

  test('a redacted view contributes the digest in `digests`, whatever the view holds', () => {
    const { text, stepHash } = publicLine({ result: { view: { ok: marker(D) } as Json } });
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    expect(codes(text.replace('"ok":{', '"ok2":{'))).toEqual([]);
  });

  test('disclosed and absent: the salt in `salts` and no member commit to absence (JCS([name])), so the step hash holds', () => {
    const { text, stepHash } = publicLine();
    expect('meta' in JSON.parse(text)).toBe(false);
    expect(JSON.parse(text).salts.meta).toMatch(/^[0-9a-f]{32}$/);
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    expect(codes(text)).toEqual([]);
    // A meta member appearing, even an empty one, is no longer the committed absence.
    const added = publicLine({}, (r) => void (r.meta = {})).text;
    expect(codes(added)).toEqual(['HASH_MISMATCH step_hash']);
  });

  test('disclosed and present: dropping the member commits to absence instead, which breaks the step hash', () => {
    const texts = { ...TEXTS, meta: '{"latency_ms":12}' };
    const { text, stepHash } = publicLine({}, () => {}, texts);
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    const dropped = publicLine({}, (r) => void delete r.meta, texts).text;
    expect(hashOf(STEP_V2_PUBLIC, dropped)).not.toBe(stepHash);
    expect(hashOf(STEP_V2_PUBLIC, dropped)).not.toBe(UNDECIDED);
    expect(codes(dropped)).toEqual(['HASH_MISMATCH step_hash']);
  });

  test('meta withheld whole stands for the commitment to absence as well (§12.2 step 2)', () => {
    const { text, stepHash } = publicLine({ meta: { withheld: 'meta' } });
    expect(JSON.parse(text).meta).toEqual(marker(stored().digests.meta!, 'meta'));
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    expect(codes(text)).toEqual([]);
  });

  // A record whose slot is in no state or in two has no step hash: HASH_MISMATCH (§12.2).
  test.each<[string, State | undefined, (r: Record<string, Json>, s: ReturnType<typeof stored>) => void]>([
    [
      'no state: neither a salt, nor a marker, nor a digest',
      undefined,
      (r) => void delete (r.salts as Record<string, Json>).result,
    ],
    [
      'no state, and absent',
      undefined,
      (r) => {
        delete (r.salts as Record<string, Json>).result;
        delete r.result;
      },
    ],
    [
      'two: a salt and a whole marker',
      { withheld: 'r' },
      (r, s) => void ((r.salts as Record<string, Json>).result = s.salts.result!),
    ],
    ['two: a salt and a digest', undefined, (r, s) => void (r.digests = { result: s.digests.result! })],
    [
      'two: a whole marker and a digest (a view is never a whole marker)',
      { withheld: 'r' },
      (r, s) => void (r.digests = { result: s.digests.result! }),
    ],
    [
      'three: a whole marker, a salt and a digest',
      { withheld: 'r' },
      (r, s) => {
        (r.salts as Record<string, Json>).result = s.salts.result!;
        r.digests = { result: s.digests.result! };
      },
    ],
    ['a digest in `digests` and no redacted view', { view: 1 }, (r) => void delete r.result],
    // A marker body that is not a redaction's is no whole marker: the slot is then in no state.
    [
      'a marker whose rule is not a string',
      undefined,
      (r, s) => {
        delete (r.salts as Record<string, Json>).result;
        r.result = marker(s.digests.result!, 7);
      },
    ],
    [
      'a marker whose commitment is not a string',
      undefined,
      (r) => {
        delete (r.salts as Record<string, Json>).result;
        r.result = marker(null);
      },
    ],
    [
      'a marker without a rule',
      undefined,
      (r, s) => {
        delete (r.salts as Record<string, Json>).result;
        r.result = { [REDACTED_MARKER]: { commitment: s.digests.result! } };
      },
    ],
    [
      'a marker whose body is a string',
      undefined,
      (r, s) => {
        delete (r.salts as Record<string, Json>).result;
        r.result = { [REDACTED_MARKER]: s.digests.result! };
      },
    ],
    [
      'a marker whose body is null',
      undefined,
      (r) => {
        delete (r.salts as Record<string, Json>).result;
        r.result = { [REDACTED_MARKER]: null };
      },
    ],
  ])('%s: the step hash is undecided (HASH_MISMATCH)', (_what, state, edit) => {
    const { text } = publicLine(state === undefined ? {} : { result: state }, (r) => edit(r, stored()));
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(UNDECIDED);
    expect(codes(text)).toContain('HASH_MISMATCH step_hash');
  });

  test('an object holding the marker name beside another member is no marker (FORMAT §3.5: exactly one member), so no withheld slot', () => {
    // Disclosed by its salt, it hashes as the value it is; the line's one problem is the invalid marker.
    const texts = { ...TEXTS, result: canonicalJsonTrusted({ [REDACTED_MARKER]: { commitment: D, rule: 'r' }, z: 1 }) };
    const { text, stepHash } = publicLine({}, () => {}, texts);
    expect(hashOf(STEP_V2_PUBLIC, text)).toBe(stepHash);
    expect(codes(text)).toEqual(['MARKER_INVALID result']);
    // Without its salt it is in no state at all.
    expect(
      hashOf(STEP_V2_PUBLIC, publicLine({}, (r) => void delete (r.salts as Record<string, Json>).result, texts).text),
    ).toBe(UNDECIDED);
  });
});

describe('FORMAT §12.2: what is not a record salt, or not a slot map, leaves the step hash undecided and is reported, never thrown', () => {
  // FORMAT §12.2: a record without a valid salt has no step hash (HASH_MISMATCH).
  test.each<[string, Json]>([
    ['uppercase hex', SALT.toUpperCase()],
    ['31 digits', SALT.slice(1)],
    ['33 digits', SALT + 'a'],
    ['a number', 1],
    ['null', null],
  ])('a stored line whose salt is %s', (_what, salt) => {
    const text = canonicalJsonTrusted({ ...stored().record, salt } as never);
    expect(hashOf(STEP_V2, text)).toBe(UNDECIDED);
    expect(codes(text)).toEqual(['FIELD_INVALID salt', 'HASH_MISMATCH step_hash']);
  });

  test.each<[string, Json]>([
    ['null', null],
    ['an array', ['x']],
    ['a string', 'result'],
  ])('a public line whose salts or digests is %s', (_what, v) => {
    for (const name of ['salts', 'digests']) {
      const { text } = publicLine({ prompt: { view: 'p' } }, (r) => void (r[name] = v));
      expect(hashOf(STEP_V2_PUBLIC, text)).toBe(UNDECIDED);
      expect(codes(text)).toEqual([`FIELD_INVALID ${name}`, 'HASH_MISMATCH step_hash']);
    }
  });

  test('each member of digests is a digest string: one wrapped in an array is FIELD_INVALID (REDACTION §12.2: "each a digest")', () => {
    const { text } = publicLine(
      { input: { view: 'i' } },
      (r) => void (r.digests = { input: [(r.digests as Record<string, Json>).input!] }),
    );
    expect(codes(text)[0]).toBe('FIELD_INVALID digests');
    // The same digest as a string: the view holds.
    expect(codes(publicLine({ input: { view: 'i' } }).text)).toEqual([]);
  });
});

describe("REDACTION §12.2: slotStates, each slot's state by the table", () => {
  test('disclosed (present or absent), withheld with its digest and rule, a view with its digest, or invalid', () => {
    const s = stored();
    const { text } = publicLine(
      { prompt: { withheld: 'prompts' }, input: { view: { pin: marker(D, 'pin') } as Json } },
      (r) => void delete (r.salts as Record<string, Json>).error,
    );
    const states = slotStates(STEP_V2_PUBLIC, text, scanCanonical(text).members!);
    expect([...states.keys()]).toEqual(SLOTS);
    expect(states.get('result')).toEqual({ kind: 'disclosed', salt: s.salts.result, present: true });
    expect(states.get('meta')).toEqual({ kind: 'disclosed', salt: s.salts.meta, present: false });
    expect(states.get('prompt')).toEqual({ kind: 'withheld', digest: s.digests.prompt, rule: 'prompts' });
    expect(states.get('input')).toEqual({ kind: 'view', digest: s.digests.input });
    expect(states.get('error')).toEqual({ kind: 'invalid', why: expect.stringContaining('error') });
  });
});

describe('FORMAT §12.3: where `commitments` stands in the preimage (JCS of the record less step_hash, salt(s) and slots, plus commitments)', () => {
  const clearOf = (text: string, skip: readonly string[]) => {
    const spans = scanCanonical(text).members!;
    return Object.fromEntries(
      [...spans].filter(([n]) => !skip.includes(n)).map(([n, [a, b]]) => [n, text.slice(a, b)]),
    );
  };
  const privateSkip = ['step_hash', 'salt', ...SLOTS];

  test.each([
    ['before every member', { aa: 1 }],
    ['after every member', { zz: [1] }],
    ['on both sides', { a: 'x', commitment: 0, commitmentz: true, w: null }],
  ])(
    'members the profile does not know, sorting %s, are hashed in their JCS places (and reported UNKNOWN_FIELD)',
    (_where, extra) => {
      const s = stored();
      const storedText = canonicalJsonTrusted({ ...s.record, ...extra } as never);
      const expected = committedStepHash(clearOf(storedText, privateSkip), s.digests, SLOTS);
      expect(hashOf(STEP_V2, storedText)).toBe(expected);
      expect(expected).not.toBe(s.stepHash);
      const { text } = publicLine({ prompt: { withheld: 'p' } }, (r) => Object.assign(r, extra));
      expect(hashOf(STEP_V2_PUBLIC, text)).toBe(expected);
      // With its step_hash set to that hash, the only problem is the unknown member itself.
      const sealed = storedText.replace(s.stepHash, expected);
      expect(codes(sealed)).toEqual(Object.keys(extra).map((k) => `UNKNOWN_FIELD ${k}`));
    },
  );

  test('a record of nothing but its salt(s) hashes to {"commitments":{…}}, every slot committed absent', () => {
    const salts = slotSalts(SALT, SLOTS);
    const absent = Object.fromEntries(SLOTS.map((s, i) => [s, slotDigest(salts[i]!, s, undefined)]));
    const expected = committedStepHash({}, absent, SLOTS);
    expect(hashOf(STEP_V2, `{"salt":"${SALT}"}`)).toBe(expected);
    expect(
      hashOf(STEP_V2_PUBLIC, canonicalJsonTrusted({ salts: Object.fromEntries(SLOTS.map((s, i) => [s, salts[i]!])) })),
    ).toBe(expected);
    // One member before commitments, none after.
    expect(hashOf(STEP_V2, `{"a":1,"salt":"${SALT}"}`)).toBe(committedStepHash({ a: '1' }, absent, SLOTS));
  });
});

describe('REDACTION §12.2, FORMAT §11.3: rules between members read a withheld slot as unknown', () => {
  test('a step record whose error slot is withheld breaks no relation; a tool.failed one neither', () => {
    expect(codes(publicLine({ error: { withheld: 'e' } }).text)).toEqual([]);
    const failed = { ...TEXTS, kind: '"tool.failed"', ref: '"s-1"', error: '{"message":"boom"}' };
    expect(codes(publicLine({ error: { withheld: 'e' } }, () => {}, failed).text)).toEqual([]);
  });

  test.each<[string, Json]>([
    ['an object of one ordinary member', { x: 1 }],
    ['an object that holds a marker member and another', { [REDACTED_MARKER]: { commitment: D, rule: 'r' }, z: 1 }],
    ['a one-character string', 'a'],
    ['a redaction marker with a digest inside a view', [marker(D)]],
  ])('a disclosed or viewed error of a step record that is %s is a value: FIELD_INVALID at error', (_what, error) => {
    const texts = { ...TEXTS, error: canonicalJsonTrusted(error) };
    expect(codes(publicLine({}, () => {}, texts).text)).toContain('FIELD_INVALID error');
  });

  test('a clear member is never read as withheld: a tool.completed record with ref null in public form is FIELD_INVALID at ref', () => {
    const texts = { ...TEXTS, kind: '"tool.completed"' };
    expect(codes(publicLine({ error: { withheld: 'e' } }, () => {}, texts).text)).toEqual(['FIELD_INVALID ref']);
  });
});

describe('FORMAT §12.2, REDACTION §12.2: the two profiles of a committed record kind (commitProfiles)', () => {
  test('the public form is never appended: its seal throws', () => {
    expect(() => STEP_V2_PUBLIC.seal(TEXTS, E)).toThrow(TypeError);
    expect(() => STEP_V2_PUBLIC.seal(TEXTS, E)).toThrow(
      /step\/v2: a public-form record is written by the publisher, never appended/,
    );
  });

  test("each form's members are checked in UTF-16 order (FORMAT §6.3 step 4): salt among the stored members, salts and digests among the public ones", () => {
    const s = stored();
    const storedText = canonicalJsonTrusted({ ...s.record, kind: 'bogus', salt: 'X', seq: -1 } as never);
    expect(codes(storedText)).toEqual([
      'FIELD_INVALID kind',
      'FIELD_INVALID salt',
      'FIELD_INVALID seq',
      'HASH_MISMATCH step_hash',
    ]);
    const { text } = publicLine({}, (r) =>
      Object.assign(r, { digests: {}, kind: 'bogus', salts: { nope: SALT }, ts: 'x' }),
    );
    expect(codes(text)).toEqual([
      'FIELD_INVALID digests',
      'FIELD_INVALID kind',
      'FIELD_INVALID salts',
      'FIELD_INVALID ts',
      'HASH_MISMATCH step_hash',
    ]);
  });
});

describe('FORMAT §12.2: salts (record/salts.ts)', () => {
  test("a salt is a string of 32 lowercase hex digits: the same digits inside an array are none, in the public form's salts too", () => {
    expect(isSaltHex(SALT)).toBe(true);
    expect(isSaltHex([SALT])).toBe(false);
    const { text } = publicLine({}, (r) => void ((r.salts as Record<string, Json>).result = [SALT]));
    expect(codes(text)[0]).toBe('FIELD_INVALID salts');
  });

  test('one salt per slot, for an even number of slots as for an odd one: block j serves slots 2j and 2j + 1', () => {
    for (const slots of [
      ['a', 'b'],
      ['a', 'b', 'c', 'd', 'e', 'f'],
      ['a', 'b', 'c'],
    ]) {
      const salts = slotSalts(SALT, slots);
      expect(salts).toHaveLength(slots.length);
      expect(salts).toEqual(slots.map((s) => slotSalt(SALT, s, slots)));
    }
  });

  test('the salt of a name that is not a slot is a RangeError, not a salt', () => {
    expect(() => slotSalt(SALT, 'nope', SLOTS)).toThrow(RangeError);
  });
});
