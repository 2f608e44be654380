/**
 * The fast paths of commitment hashing (record/commitments.ts: the per-profile plan behind sealCommitted and
 * both forms' step hash) against the straightforward definitions of FORMAT §12 (slotSalts, slotDigest,
 * committedPreimage, preimageOfTexts), on generated records with awkward values; and every single-byte
 * tamper of a sealed v2 line is still detected.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { checkLine } from '../../src/chain/line.js';
import {
  committedPreimage,
  preimageOfTexts,
  sealCommitted,
  slotDigest,
  slotSalts,
} from '../../src/record/commitments.js';
import { JOURNAL_V2, RECORD_KINDS, STEP_V2 } from '../../src/record/v2.js';
import type { Envelope, StepTexts } from '../../src/record/profile.js';
import { awkwardValue } from '../helpers/awkward-json.js';

const SLOTS = STEP_V2.redactable;

/** The seal as FORMAT §12.3 states it: clear members and one digest per slot, sorted by JCS, nothing precomputed. */
function referenceSeal(texts: StepTexts, e: Envelope, salt: string): { stepHash: string; line: string } {
  const clear: Record<string, string> = {
    prev_hash: JSON.stringify(e.prevHash),
    seq: JSON.stringify(e.seq),
    step_id: JSON.stringify(e.stepId),
    ts: JSON.stringify(e.ts),
    v: '2',
    kind: texts.kind!,
    ref: texts.ref!,
  };
  const salts = slotSalts(salt, SLOTS);
  const digests = Object.fromEntries(SLOTS.map((s, i) => [s, slotDigest(salts[i]!, s, texts[s])]));
  const stepHash = digestUtf8(committedPreimage(clear, digests, SLOTS));
  const all: Record<string, string> = { ...clear, salt: JSON.stringify(salt), step_hash: JSON.stringify(stepHash) };
  for (const s of SLOTS) if (texts[s] !== undefined) all[s] = texts[s];
  const names = Object.keys(all).sort();
  return { stepHash, line: '{' + names.map((n) => JSON.stringify(n) + ':' + all[n]).join(',') + '}\n' };
}

const jcs = (v: unknown): string => canonicalJsonTrusted(v as never);
const hex32 = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
const record = fc.record({
  kind: fc.constantFrom(...RECORD_KINDS),
  ref: fc.option(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/), { nil: null }),
  input: awkwardValue,
  model: awkwardValue,
  prompt: awkwardValue,
  tool_call: awkwardValue,
  result: awkwardValue,
  error: awkwardValue,
  meta: fc.option(fc.dictionary(fc.string({ maxLength: 6 }), awkwardValue, { maxKeys: 4 }), { nil: undefined }),
  seq: fc.nat({ max: Number.MAX_SAFE_INTEGER }),
  stepId: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,30}$/),
  ts: fc
    .date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
  prevHash: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => 'sha256:' + Buffer.from(b).toString('hex')),
  salt: hex32,
});
type Generated = typeof record extends fc.Arbitrary<infer T> ? T : never;

function textsOf(r: Generated): StepTexts {
  const texts: Record<string, string> = {};
  for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'] as const)
    texts[f] = jcs(r[f]);
  if (r.meta !== undefined) texts.meta = jcs(r.meta);
  return texts;
}
const envelopeOf = (r: Generated): Envelope => ({ seq: r.seq, stepId: r.stepId, ts: r.ts, prevHash: r.prevHash });

describe('commitment hashing: the fast paths equal the definitions (FORMAT §12)', () => {
  test('sealCommitted (the plan) gives the reference line and step hash (fast-check)', () => {
    fc.assert(
      fc.property(record, (r) => {
        expect(sealCommitted(STEP_V2, textsOf(r), envelopeOf(r), r.salt)).toEqual(
          referenceSeal(textsOf(r), envelopeOf(r), r.salt),
        );
      }),
      { numRuns: 300 },
    );
  });

  test("the stored line's step hash from its spans is the hash of preimageOfTexts, and the line verifies (fast-check)", () => {
    fc.assert(
      fc.property(record, (r) => {
        const { line, stepHash } = sealCommitted(STEP_V2, textsOf(r), envelopeOf(r), r.salt);
        const text = line.slice(0, -1);
        const members = scanCanonical(text).members!;
        const memberTexts = Object.fromEntries(
          [...members].filter(([n]) => n !== 'step_hash').map(([n, [a, b]]) => [n, text.slice(a, b)]),
        );
        expect(STEP_V2.stepHashOf(text, members.get('step_hash')!, members)).toBe(
          digestUtf8(preimageOfTexts(STEP_V2, memberTexts)),
        );
        expect(STEP_V2.stepHashOf(text, members.get('step_hash')!, members)).toBe(stepHash);
        // Member rules and relations aside (generated kinds and refs need not agree), the hash always holds.
        expect(checkLine(text, JOURNAL_V2).problems.filter((p) => p.code === 'HASH_MISMATCH')).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  test('every single-byte change of a sealed line is detected (fast-check)', () => {
    const texts = {
      kind: '"step"',
      ref: 'null',
      input: '{"n":[1,2.5,true],"pin":"4821"}',
      model: '"m"',
      prompt: '"hello"',
      tool_call: 'null',
      result: '{"ok":1}',
      error: 'null',
      meta: '{"a":1}',
    };
    const e = { seq: 7, stepId: 'step-7', ts: '2026-01-01T00:00:00.000Z', prevHash: 'sha256:' + 'ab'.repeat(32) };
    const text = sealCommitted(STEP_V2, texts, e, '00112233445566778899aabbccddeeff').line.slice(0, -1);
    expect(checkLine(text, JOURNAL_V2).problems).toEqual([]);
    const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(fc.nat({ max: text.length - 1 }), printable, (at, c) => {
        fc.pre(text[at] !== c);
        const tampered = text.slice(0, at) + c + text.slice(at + 1);
        expect(checkLine(tampered, JOURNAL_V2).problems.length).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });
});
