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
  commitment,
  compilePolicy,
  discloseStepFromSecrets,
  planCommittedPublication,
  preparePublication,
  publicationBytes,
  saltToHex,
  secretsFile,
  verifyStepDisclosure,
  RedactError,
  STEP_DISCLOSURE_FORMAT,
  type StepDisclosureProof,
} from '../../src/redact/index.js';
import { memoryJournal, ts } from './helpers.js';

const POLICY = { rules: [{ id: 'late', paths: ['/prompt', '/input'], seq: { from: 2 } }] };

async function published(sign?: Uint8Array) {
  const j = await memoryJournal();
  const pub = await preparePublication(j, { policy: POLICY, optIn: true, ...(sign ? { sign } : {}) });
  const bytes = await publicationBytes(pub);
  const secrets = JSON.parse(
    JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)),
  );
  return { j, pub, bytes, secrets };
}
const codes = async (bytes: Uint8Array, proof: unknown) =>
  (await verifyStepDisclosure(bytes, proof)).problems.map((p) => p.code);

describe('REDACTION §8.4: discloseStepFromSecrets, the openings each step needs', () => {
  test("before the first redaction none; at it, its own salt; after it, its own and the previous step's opening", async () => {
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
    const thrown = (run: () => unknown): unknown => {
      try {
        run();
      } catch (e) {
        return e;
      }
      return 'no error';
    };
    for (const seq of [-1, 1.5]) {
      const e = thrown(() => discloseStepFromSecrets(secrets, seq));
      expect(e).toBeInstanceOf(RedactError);
      expect((e as RedactError).code).toBe('ARGUMENT_INVALID');
    }
    const damaged = { ...secrets, steps: secrets.steps.map((s: object) => ({ ...s, salt: 'x' })) };
    const e = thrown(() => discloseStepFromSecrets(damaged, 3));
    expect(e).toBeInstanceOf(RedactError);
    expect((e as RedactError).code).toBe('SECRETS_INVALID');
  });

  test('blob_fields come sorted and hold field names only, whatever order a hand-edited secrets file lists them in (§8.4: sorted)', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'late', paths: ['/result', '/input'], seq: { from: 2 } }] },
      optIn: true,
    });
    const secrets = JSON.parse(
      JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)),
    );
    const listed = secrets.unblobbed.find((u: { seq: number }) => u.seq === 2) as { fields: unknown[] };
    expect(listed.fields).toEqual(['input', 'result']);
    listed.fields = ['result', 7, 'input'];
    const proof = discloseStepFromSecrets(secrets, 2);
    expect(proof.blob_fields).toEqual(['input', 'result']);
    expect((await verifyStepDisclosure(await publicationBytes(pub), proof)).problems).toEqual([]);
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

describe("REDACTION §8.4: verifyStepDisclosure, the proof's shape (PROOF_INVALID)", () => {
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
    const r = await verifyStepDisclosure(
      bytes,
      JSON.parse(JSON.stringify(change(discloseStepFromSecrets(secrets, 3)))),
    );
    expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
    expect([r.ok, r.seq, r.record, r.receipt, r.proves]).toEqual([false, null, null, null, []]);
  });

  // Step 1 discloses no value, so nothing but the proof's own members can refuse these.
  test.each<[string, (p: StepDisclosureProof) => unknown]>([
    ['a manifest digest that is not one', (p) => ({ ...p, manifest_digest: 'x' })],
    ['a negative seq', (p) => ({ ...p, seq: -1 })],
    ['a fractional seq', (p) => ({ ...p, seq: 1.5 })],
  ])('no values, %s', async (_what, change) => {
    const { bytes, secrets } = await published();
    const proof = discloseStepFromSecrets(secrets, 1);
    expect(proof.values).toEqual([]);
    expect(await codes(bytes, change(proof))).toEqual(['PROOF_INVALID']);
  });

  test('the withdrawn format is named as such', async () => {
    const { bytes, secrets } = await published();
    const r = await verifyStepDisclosure(bytes, {
      ...discloseStepFromSecrets(secrets, 3),
      format: 'stepchain-step-disclosure/v1',
    });
    expect(r.problems[0]!.message).toMatch(/withdrawn/);
  });
});

describe('REDACTION §8.4: verifyStepDisclosure, openings and values', () => {
  test.each<[string, number, (p: StepDisclosureProof, o: { salt: string; step_hash: string }) => unknown, string]>([
    ['before the first redaction, a salt', 1, (p, o) => ({ ...p, salt: o.salt }), 'PROOF_INVALID'],
    ['at the first redaction, a prev', 2, (p, o) => ({ ...p, prev: o }), 'PROOF_INVALID'],
    ['at the first redaction, no salt', 2, (p) => ({ ...p, salt: null }), 'INCOMPLETE_DISCLOSURE'],
    ['after it, no prev', 3, (p) => ({ ...p, prev: null }), 'INCOMPLETE_DISCLOSURE'],
    [
      'after it, a prev that does not open the commitment',
      3,
      (p, o) => ({ ...p, prev: { ...p.prev!, step_hash: o.step_hash.replace(/.$/, (c) => (c === '0' ? '1' : '0')) } }),
      'ANCHOR_MISMATCH',
    ],
    ['after it, its own salt swapped for the previous one', 3, (p, o) => ({ ...p, salt: o.salt }), 'ANCHOR_MISMATCH'],
    // The right original hash of step 2 under another salt: the record re-assembles right, but prev must
    // open the anchor's commitment itself (step 5), not merely name the hash.
    [
      'after it, a prev with the right step hash under another salt',
      3,
      (p, o) => ({ ...p, prev: { salt: p.salt, step_hash: o.step_hash } }),
      'ANCHOR_MISMATCH',
    ],
    [
      'a value at a path nothing redacted',
      3,
      (p) => ({ ...p, values: [...p.values, { ...p.values[0]!, path: '/result' }] }),
      'NOT_REDACTED',
    ],
    [
      'a value naming another rule',
      3,
      (p) => ({ ...p, values: p.values.map((v) => ({ ...v, rule: 'other' })) }),
      'MARKER_MISMATCH',
    ],
    // The right salt and value, but a commitment other than the marker's: the marker does not match the proof.
    [
      'a value naming another commitment',
      3,
      (p) => ({ ...p, values: p.values.map((v) => ({ ...v, commitment: `sha256:${'0'.repeat(64)}` })) }),
      'MARKER_MISMATCH',
    ],
    ['a step the receipt lacks', 4, (p) => p, 'NOT_REDACTED'],
    // Step 1's input was inline: as a blob reference the record hashes otherwise (step 7, Q < K).
    [
      'before the first redaction, blob_fields naming a field that was inline',
      1,
      (p) => ({ ...p, blob_fields: ['input'] }),
      'ANCHOR_MISMATCH',
    ],
  ])('%s: %s', async (_what, seq, change, code) => {
    const { bytes, secrets, pub } = await published();
    const base = discloseStepFromSecrets(secrets, Math.min(seq, 3));
    const proof = change({ ...base, seq }, { salt: pub.steps[0]!.salt, step_hash: pub.steps[0]!.step_hash });
    expect(await codes(bytes, proof)).toEqual([code]);
  });

  test('a receipt published against its original head (a v2 journal, §12) has no anchor: RECEIPT_INVALID', async () => {
    const j = await memoryJournal(undefined, 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, { policy: compilePolicy(POLICY) });
    const parts: Uint8Array[] = [];
    for await (const chunk of writeReceipt(pub.plan)) parts.push(Uint8Array.from(chunk));
    const proof: StepDisclosureProof = {
      blob_fields: [],
      format: STEP_DISCLOSURE_FORMAT,
      manifest_digest: pub.plan.manifestDigest,
      prev: null,
      salt: null,
      seq: 0,
      values: [],
    };
    const r = await verifyStepDisclosure(concatBytes(parts), proof);
    expect([r.receipt?.ok, r.problems.map((p) => p.code)]).toEqual([true, ['RECEIPT_INVALID']]);
  });

  test('a receipt that does not verify: RECEIPT_INVALID', async () => {
    const { bytes, secrets } = await published();
    expect(await codes(bytes.slice(0, 600), discloseStepFromSecrets(secrets, 3))).toEqual(['RECEIPT_INVALID']);
  });
});

describe('REDACTION §8.4: what a good proof proves', () => {
  test('the head: the original head the anchor commits to; an earlier step: linked only through the commitments; signed receipts say so', async () => {
    const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 9));
    const { bytes, secrets } = await published(key.privateKey);
    const head = await verifyStepDisclosure(bytes, discloseStepFromSecrets(secrets, 3));
    expect(head.proves).toEqual([
      expect.stringMatching(/^Step 3 of the original run .*opens the anchor's commitment/),
      expect.stringMatching(/^That hash is the original head .*publisher's signed claim/),
    ]);
    const before = await verifyStepDisclosure(bytes, discloseStepFromSecrets(secrets, 1));
    expect(before.proves).toEqual([
      expect.stringMatching(/^Step 1 of the original run .*precedes the first redaction/),
      expect.stringMatching(
        /links to the original head only through the anchor's commitments \(the publisher's signed claim\)/,
      ),
    ]);
    const unsigned = await published();
    const u = await verifyStepDisclosure(unsigned.bytes, discloseStepFromSecrets(unsigned.secrets, 2));
    expect(u.proves).toEqual([
      expect.stringMatching(/^Step 2 of the original run .*opens the anchor's commitment/),
      expect.stringMatching(
        /^That hash links to the original head only through the anchor's commitments \(the publisher's claim\)/,
      ),
    ]);
  });

  test('a last step before the first redaction has no commitment: it is not said to be the head the anchor commits to', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'nothing', paths: ['/prompt/absent'] }] },
      optIn: true,
    });
    expect([pub.anchor.redacted_from, pub.anchor.length]).toEqual([4, 4]);
    const secrets = JSON.parse(
      JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)),
    );
    const r = await verifyStepDisclosure(await publicationBytes(pub), discloseStepFromSecrets(secrets, 3));
    expect(r.ok).toBe(true);
    expect(r.proves).toEqual([
      expect.stringMatching(/precedes the first redaction/),
      expect.stringMatching(/^That hash links to the original head only through/),
    ]);
  });
});

describe("REDACTION §8.4 steps 3 and 6: a dishonest publisher's receipt (the verifier never throws)", () => {
  /** A value of `levels` nested arrays around a string. */
  const nested = (levels: number): Json => {
    let v: Json = 'x';
    for (let i = 0; i < levels; i++) v = [v];
    return v;
  };
  type Marker = { commitment: string; rule: string; text?: string };
  /**
   * One step, input {a, b}, published by `rule` (redacting /input/a); then the publisher edits the marker
   * at /input/a, re-seals the line and writes the receipt itself, so the receipt verifies while the anchor
   * still commits to the original step. Returns the verdict on a proof disclosing `value` there.
   */
  async function dishonest(
    a: string,
    rule: object,
    edit: (marker: Marker, salt: Uint8Array) => void,
    value: Json,
    blobFields: string[] = [],
  ) {
    const j = await memoryJournal([{ step_id: 'd-0', ts: ts(0), model: 'm', input: { a, b: 'y' } }]);
    const pub = await preparePublication(j, { policy: { rules: [{ id: 'a', ...rule }] }, optIn: true });
    const salt = new Uint8Array(32).fill(7);
    const record = JSON.parse(pub.lines[0]!) as Record<string, Json> & { input: { a: Record<string, Marker> } };
    const marker = record.input.a['$stepchain:redacted']!;
    edit(marker, salt);
    delete record.step_hash;
    const { line } = sealRecord(record as never);
    const plan = await planReceipt({
      genesis: j.genesis,
      from: 0,
      to: 0,
      blob: async () => null,
      extra: JSON.parse(JSON.stringify({ anchor: pub.anchor, redactions: pub.plan.manifest.redactions })) as Record<
        string,
        Json
      >,
      lines: async function* () {
        yield { segment: '0000000000000000', seq: 0, text: line.slice(0, -1) };
      },
    });
    const parts: Uint8Array[] = [];
    for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
    const proof: StepDisclosureProof = {
      blob_fields: blobFields,
      format: STEP_DISCLOSURE_FORMAT,
      manifest_digest: plan.manifestDigest,
      prev: null,
      salt: pub.steps[0]!.salt,
      seq: 0,
      values: [{ commitment: marker.commitment, path: '/input/a', rule: 'a', salt: saltToHex(salt), value }],
    };
    return verifyStepDisclosure(concatBytes(parts), proof);
  }
  /** The marker at /input/a commits to `value` under the fixture's salt. */
  const commitTo = (value: Json) => (m: Marker, salt: Uint8Array) => {
    m.commitment = commitment(salt, value);
  };
  const PATH = { paths: ['/input/a'] };

  test('a value that opens the marker but not the anchor: ANCHOR_MISMATCH (the receipt itself verifies)', async () => {
    const r = await dishonest('x', PATH, commitTo('not the original'), 'not the original');
    expect([r.problems.map((p) => p.code), r.receipt?.ok]).toEqual([['ANCHOR_MISMATCH'], true]);
  });

  test.each([
    ['put back', []],
    ['put back inside a field named in blob_fields', ['input']],
  ])(
    'a value as deep as a value may be (128 levels), two levels down, %s: PROOF_INVALID, not I-JSON',
    async (_what, blobFields) => {
      const r = await dishonest('x', PATH, commitTo(nested(128)), nested(128), blobFields);
      expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
      expect(r.problems[0]!.message).toMatch(/not I-JSON/);
    },
  );

  test("a field of blob_fields 101 levels deep is hashed as a record's field may be (128), not as a writer's value (100): ANCHOR_MISMATCH", async () => {
    const r = await dishonest('x', PATH, commitTo(nested(100)), nested(100), ['input']);
    expect(r.problems.map((p) => p.code)).toEqual(['ANCHOR_MISMATCH']);
  });

  // §8.3 step 7 through §8.4 step 3: a marker's text must be the disclosed string with parts replaced.
  const MAIL = { detectors: ['email'] };
  test("a marker's text the disclosed value does not fit: TEXT_MISMATCH", async () => {
    const r = await dishonest(
      'mail a@b.co now',
      MAIL,
      (m, salt) => {
        commitTo('mail a@b.co now')(m, salt);
        m.text = m.text!.replace('mail', 'post');
      },
      'mail a@b.co now',
    );
    expect(r.problems.map((p) => p.code)).toEqual(['TEXT_MISMATCH']);
  });

  test('a marker with a text committing to a value that is not a string: TEXT_MISMATCH', async () => {
    const r = await dishonest('mail a@b.co now', MAIL, commitTo(42), 42);
    expect(r.problems.map((p) => p.code)).toEqual(['TEXT_MISMATCH']);
  });
});
