/**
 * Whole-step proofs rule by rule (spec/REDACTION.md §8.4), on a publication whose first redaction is at
 * step 2 of 4: the proof's shape with each member broken alone, which openings each step needs (before,
 * at and after redacted_from), the values against the declarations and markers, and what a good proof
 * says it proves.
 */
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import type { Json } from '../../src/canonical/json.js';
import { keyPairFromSeed } from '../../src/receipt/index.js';
import { planReceipt, writeReceipt } from '../../src/receipt/writer.js';
import { sealRecord } from '../../src/record/seal.js';
import {
  commitment, discloseStepFromSecrets, preparePublication, publicationBytes, saltToHex, secretsFile, verifyStepDisclosure, RedactError,
  STEP_DISCLOSURE_FORMAT, type StepDisclosureProof,
} from '../../src/redact/index.js';
import { memoryJournal, ts } from './helpers.js';

const POLICY = { rules: [{ id: 'late', paths: ['/prompt', '/input'], seq: { from: 2 } }] };

async function published(sign?: Uint8Array) {
  const j = await memoryJournal();
  const pub = await preparePublication(j, { policy: POLICY, optIn: true, ...(sign ? { sign } : {}) });
  const bytes = await publicationBytes(pub);
  const secrets = JSON.parse(JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)));
  return { j, pub, bytes, secrets };
}
const codes = async (bytes: Uint8Array, proof: unknown) => (await verifyStepDisclosure(bytes, proof)).problems.map((p) => p.code);

describe('discloseStepFromSecrets: the openings each step needs (§8.4)', () => {
  test('before the first redaction none; at it, its own salt; after it, its own and the previous step\'s opening', async () => {
    const { secrets, pub } = await published();
    expect(pub.anchor.redacted_from).toBe(2);
    const [p0, p1, p2, p3] = [0, 1, 2, 3].map((s) => discloseStepFromSecrets(secrets, s));
    expect([p0!.salt, p0!.prev, p0!.values]).toEqual([null, null, []]);
    expect([p1!.salt, p1!.prev]).toEqual([null, null]);
    expect(p2!.salt).toBe(pub.steps[0]!.salt);
    expect(p2!.prev).toBeNull();
    expect(p3!.salt).toBe(pub.steps[1]!.salt);
    expect(p3!.prev).toEqual({ salt: pub.steps[0]!.salt, step_hash: pub.steps[0]!.step_hash });
    expect(p2!.values.map((v) => v.path)).toEqual(['/input', '/prompt']);
  });

  test('a bad seq: ARGUMENT_INVALID; a damaged opening: SECRETS_INVALID', async () => {
    const { secrets } = await published();
    for (const seq of [-1, 1.5]) expect(() => discloseStepFromSecrets(secrets, seq)).toThrow(RedactError);
    const damaged = { ...secrets, steps: secrets.steps.map((s: object) => ({ ...s, salt: 'x' })) };
    expect(() => discloseStepFromSecrets(damaged, 3)).toThrow(/SECRETS_INVALID/);
  });

  test('every step verifies, and re-assembles its original record', async () => {
    const { j, bytes, secrets } = await published();
    for await (const line of j.lines()) {
      const r = await verifyStepDisclosure(bytes, discloseStepFromSecrets(secrets, line.seq));
      expect(r.problems, `step ${line.seq}`).toEqual([]);
      expect(r.record).toEqual(JSON.parse(line.text));
    }
  });
});

describe('verifyStepDisclosure: the proof\'s shape (PROOF_INVALID)', () => {
  test.each<[string, (p: StepDisclosureProof) => unknown]>([
    ['not an object', () => 'x'],
    ['an extra member', (p) => ({ ...p, extra: 1 })],
    ['the withdrawn version-1 format', (p) => ({ ...p, format: 'stepchain-step-disclosure/v1' })],
    ['another format', (p) => ({ ...p, format: 'stepchain-step-disclosure/v3' })],
    ['a manifest digest that is not one', (p) => ({ ...p, manifest_digest: 'x' })],
    ['a negative seq', (p) => ({ ...p, seq: -1 })],
    ['blob_fields naming a member that is never a blob', (p) => ({ ...p, blob_fields: ['meta'] })],
    ['blob_fields repeated', (p) => ({ ...p, blob_fields: ['input', 'input'] })],
    ['blob_fields not an array', (p) => ({ ...p, blob_fields: 'input' })],
    ['prev with an extra member', (p) => ({ ...p, prev: { ...p.prev, seq: 2 } })],
    ['prev with a bad salt', (p) => ({ ...p, prev: { ...p.prev, salt: 'AB'.repeat(32) } })],
    ['prev with a bad step hash', (p) => ({ ...p, prev: { ...p.prev, step_hash: 'x' } })],
    ['a bad salt', (p) => ({ ...p, salt: 'ab' })],
    ['values not an array', (p) => ({ ...p, values: {} })],
    ['a value entry with an extra member', (p) => ({ ...p, values: [{ ...p.values[0], seq: 3 }] })],
    ['a value entry with a bad path', (p) => ({ ...p, values: [{ ...p.values[0], path: 'input' }] })],
    ['the same path twice', (p) => ({ ...p, values: [p.values[0], p.values[0]] })],
  ])('%s', async (_what, change) => {
    const { bytes, secrets } = await published();
    const r = await verifyStepDisclosure(bytes, JSON.parse(JSON.stringify(change(discloseStepFromSecrets(secrets, 3)))));
    expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
    expect([r.ok, r.seq, r.record, r.receipt]).toEqual([false, null, null, null]);
  });

  test('the withdrawn format is named as such', async () => {
    const { bytes, secrets } = await published();
    const r = await verifyStepDisclosure(bytes, { ...discloseStepFromSecrets(secrets, 3), format: 'stepchain-step-disclosure/v1' });
    expect(r.problems[0]!.message).toMatch(/withdrawn/);
  });
});

describe('verifyStepDisclosure: openings and values (§8.4)', () => {
  test.each<[string, number, (p: StepDisclosureProof, o: { salt: string; step_hash: string }) => unknown, string]>([
    ['before the first redaction, a salt', 1, (p, o) => ({ ...p, salt: o.salt }), 'PROOF_INVALID'],
    ['at the first redaction, a prev', 2, (p, o) => ({ ...p, prev: o }), 'PROOF_INVALID'],
    ['at the first redaction, no salt', 2, (p) => ({ ...p, salt: null }), 'INCOMPLETE_DISCLOSURE'],
    ['after it, no prev', 3, (p) => ({ ...p, prev: null }), 'INCOMPLETE_DISCLOSURE'],
    ['after it, a prev that does not open the commitment', 3, (p, o) => ({ ...p, prev: { ...p.prev!, step_hash: o.step_hash.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } }), 'ANCHOR_MISMATCH'],
    ['after it, its own salt swapped for the previous one', 3, (p, o) => ({ ...p, salt: o.salt }), 'ANCHOR_MISMATCH'],
    // The right original hash of step 2 under another salt: the record re-assembles right, but prev must
    // open the anchor's commitment itself (step 5), not merely name the hash.
    ['after it, a prev with the right step hash under another salt', 3, (p, o) => ({ ...p, prev: { salt: p.salt, step_hash: o.step_hash } }), 'ANCHOR_MISMATCH'],
    ['blob_fields naming a content field the step does not have', 3, (p) => ({ ...p, blob_fields: [...p.blob_fields, 'meta'].sort() }), 'PROOF_INVALID'],
    ['a value at a path nothing redacted', 3, (p) => ({ ...p, values: [...p.values, { ...p.values[0]!, path: '/result' }] }), 'NOT_REDACTED'],
    ['a value naming another rule', 3, (p) => ({ ...p, values: p.values.map((v) => ({ ...v, rule: 'other' })) }), 'MARKER_MISMATCH'],
    // The right salt and value, but a commitment other than the marker's: the marker does not match the proof.
    ['a value naming another commitment', 3, (p) => ({ ...p, values: p.values.map((v) => ({ ...v, commitment: `sha256:${'0'.repeat(64)}` })) }), 'MARKER_MISMATCH'],
    ['a step the receipt lacks', 4, (p) => p, 'NOT_REDACTED'],
  ])('%s: %s', async (_what, seq, change, code) => {
    const { bytes, secrets, pub } = await published();
    const base = discloseStepFromSecrets(secrets, Math.min(seq, 3));
    const proof = change({ ...base, seq }, { salt: pub.steps[0]!.salt, step_hash: pub.steps[0]!.step_hash });
    expect(await codes(bytes, proof)).toEqual([code]);
  });

  test('a receipt that does not verify: RECEIPT_INVALID', async () => {
    const { bytes, secrets } = await published();
    expect(await codes(bytes.slice(0, 600), discloseStepFromSecrets(secrets, 3))).toEqual(['RECEIPT_INVALID']);
  });
});

describe('what a good proof proves (§8.4)', () => {
  test('the head: the original head the anchor commits to; an earlier step: linked only through the commitments; signed receipts say so', async () => {
    const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 9));
    const { bytes, secrets } = await published(key.privateKey);
    const head = await verifyStepDisclosure(bytes, discloseStepFromSecrets(secrets, 3));
    expect(head.proves).toEqual([expect.stringMatching(/^Step 3 of the original run .*opens the anchor's commitment/), expect.stringMatching(/^That hash is the original head .*publisher's signed claim/)]);
    const before = await verifyStepDisclosure(bytes, discloseStepFromSecrets(secrets, 1));
    expect(before.proves).toEqual([expect.stringMatching(/^Step 1 of the original run .*precedes the first redaction/), expect.stringMatching(/links to the original head only through the anchor's commitments \(the publisher's signed claim\)/)]);
    const unsigned = await published();
    const u = await verifyStepDisclosure(unsigned.bytes, discloseStepFromSecrets(unsigned.secrets, 2));
    expect(u.proves).toEqual([expect.stringMatching(/^Step 2 of the original run .*opens the anchor's commitment/), expect.stringMatching(/^That hash links to the original head only through the anchor's commitments \(the publisher's claim\)/)]);
  });

  test('a last step before the first redaction has no commitment: it is not said to be the head the anchor commits to', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, { policy: { rules: [{ id: 'nothing', paths: ['/prompt/absent'] }] }, optIn: true });
    expect([pub.anchor.redacted_from, pub.anchor.length]).toEqual([4, 4]);
    const secrets = JSON.parse(JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)));
    const r = await verifyStepDisclosure(await publicationBytes(pub), discloseStepFromSecrets(secrets, 3));
    expect(r.ok).toBe(true);
    expect(r.proves).toEqual([expect.stringMatching(/precedes the first redaction/), expect.stringMatching(/^That hash links to the original head only through/)]);
  });
});

describe('a dishonest publisher\'s receipt: the re-assembled step must be a record (§8.4 step 6; the verifier never throws)', () => {
  /** A value of `levels` nested arrays around a string. */
  const nested = (levels: number): Json => {
    let v: Json = 'x';
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  /**
   * One step whose published marker at /input/a commits to `value` under a known salt: the publisher
   * re-sealed the line and wrote the receipt itself, so the receipt verifies; the anchor still commits to
   * the original step.
   */
  async function dishonest(value: Json, blobFields: string[] = []) {
    const j = await memoryJournal([{ step_id: 'd-0', ts: ts(0), model: 'm', input: { a: 'x', b: 'y' } }]);
    const pub = await preparePublication(j, { policy: { rules: [{ id: 'a', paths: ['/input/a'] }] }, optIn: true });
    const salt = new Uint8Array(32).fill(7);
    const c = commitment(salt, value);
    const record = JSON.parse(pub.lines[0]!) as Record<string, Json> & { input: { a: Record<string, { commitment: string }> } };
    record.input.a['$stepchain:redacted']!.commitment = c;
    delete record.step_hash;
    const { line } = sealRecord(record as never);
    const plan = await planReceipt({
      genesis: j.genesis, from: 0, to: 0, blob: async () => null,
      extra: JSON.parse(JSON.stringify({ anchor: pub.anchor, redactions: pub.plan.manifest.redactions })) as Record<string, Json>,
      lines: async function* () { yield { segment: '0000000000000000', seq: 0, text: line.slice(0, -1) }; },
    });
    const parts: Uint8Array[] = [];
    for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
    const proof: StepDisclosureProof = {
      blob_fields: blobFields, format: STEP_DISCLOSURE_FORMAT, manifest_digest: plan.manifestDigest, prev: null, salt: pub.steps[0]!.salt, seq: 0,
      values: [{ commitment: c, path: '/input/a', rule: 'a', salt: saltToHex(salt), value }],
    };
    return verifyStepDisclosure(concatBytes(parts), proof);
  }

  test('a shallow value opens the marker but not the anchor: ANCHOR_MISMATCH (the receipt itself verifies)', async () => {
    expect((await dishonest('not the original')).problems.map((p) => p.code)).toEqual(['ANCHOR_MISMATCH']);
  });

  test.each([
    ['put back', []],
    ['put back inside a field named in blob_fields', ['input']],
  ])('a value as deep as a value may be (128 levels), two levels down, %s: PROOF_INVALID, not I-JSON', async (_what, blobFields) => {
    const r = await dishonest(nested(128), blobFields);
    expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
    expect(r.problems[0]!.message).toMatch(/not I-JSON/);
  });
});
