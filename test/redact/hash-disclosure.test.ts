/**
 * Hash disclosure (spec/REDACTION.md §8.5), every way it fails: a failing check reports `ok: false`, no
 * step hash, no `head`, nothing proved, and exactly one problem with its code — PROOF_INVALID for each
 * member broken alone, RECEIPT_INVALID, MANIFEST_MISMATCH, NOT_REDACTED (past the end, before the first
 * redaction), ANCHOR_MISMATCH (a wrong salt, a wrong hash, another step's opening). And the builder:
 * the default seq is the highest committed one, a step with no commitment is NOT_REDACTED. Written from
 * the surviving mutants of src/redact/disclose-hash.ts (test/mutation/SURVIVORS.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { keyPairFromSeed, receiptBytes } from '../../src/receipt/index.js';
import {
  discloseHashFromSecrets,
  publish,
  verifyHashDisclosure,
  HASH_DISCLOSURE_FORMAT,
  type HashDisclosureProof,
  type HashDisclosureReport,
  type SecretsFile,
} from '../../src/redact/index.js';
import type { Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { SAMPLE_POLICY, memoryJournal, sampleSteps } from './helpers.js';

const dir = tempDir('stepchain-hash-disclosure-');
const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 40));
// Only step 1's api_key is redacted: the anchor commits to steps 1–3 (redacted_from 1), step 0 is published unchanged.
const POLICY = { rules: [{ id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] }] };

let journal: Journal;
let receipt: Uint8Array;
let unsigned: Uint8Array;
let secrets: SecretsFile;
let unsignedSecrets: SecretsFile;
let hashes: string[];

beforeAll(async () => {
  journal = await memoryJournal();
  hashes = [];
  for await (const r of journal.read()) hashes.push(r.step_hash);
  await publish(journal, {
    policy: POLICY,
    optIn: true,
    out: join(dir, 'signed.tar'),
    secretsOut: join(dir, 'signed.json'),
    sign: key.privateKey,
  });
  await publish(journal, {
    policy: POLICY,
    optIn: true,
    out: join(dir, 'unsigned.tar'),
    secretsOut: join(dir, 'unsigned.json'),
  });
  receipt = readFileSync(join(dir, 'signed.tar'));
  unsigned = readFileSync(join(dir, 'unsigned.tar'));
  secrets = JSON.parse(readFileSync(join(dir, 'signed.json'), 'utf8')) as SecretsFile;
  unsignedSecrets = JSON.parse(readFileSync(join(dir, 'unsigned.json'), 'utf8')) as SecretsFile;
});

const proofOf = (seq?: number): HashDisclosureProof => discloseHashFromSecrets(secrets, seq);

/** A failed check: the report's one problem, and everything that only a success fills left empty. */
function expectFailure(r: HashDisclosureReport, code: string): void {
  expect(r.problems.map((p) => p.code)).toEqual([code]);
  expect(r.ok).toBe(false);
  expect(r.step_hash).toBeNull();
  expect(r.head).toBe(false);
  expect(r.proves).toEqual([]);
}

describe('discloseHashFromSecrets', () => {
  test("by default the last committed step, the original head; the secrets file's order does not matter", () => {
    expect(proofOf()).toEqual({
      format: HASH_DISCLOSURE_FORMAT,
      manifest_digest: secrets.manifest_digest,
      salt: secrets.steps.at(-1)!.salt,
      seq: 3,
      step_hash: hashes[3],
    });
    const shuffled = { ...secrets, steps: [secrets.steps[2]!, secrets.steps[0]!, secrets.steps[1]!] };
    expect(discloseHashFromSecrets(shuffled).seq).toBe(3);
    expect(discloseHashFromSecrets(shuffled, 2)).toMatchObject({
      seq: 2,
      step_hash: hashes[2],
      salt: secrets.steps[1]!.salt,
    });
  });

  test('a step before the first redaction has no commitment: NOT_REDACTED at its seq', () => {
    expect(secrets.steps.map((o) => o.seq)).toEqual([1, 2, 3]);
    expect(() => proofOf(0)).toThrow(expect.objectContaining({ code: 'NOT_REDACTED', location: { seq: 0 } }));
    // The message says why for a seq asked for: the step is published with its original hash.
    expect(() => proofOf(0)).toThrow(
      /the anchor commits to no hash of step 0: steps before the first redaction are published with their original hashes/,
    );
  });

  test('step 0 when it is redacted (redacted_from 0): its opening, which verifies', async () => {
    await publish(journal, {
      policy: SAMPLE_POLICY,
      optIn: true,
      out: join(dir, 'all.tar'),
      secretsOut: join(dir, 'all.json'),
    });
    const all = JSON.parse(readFileSync(join(dir, 'all.json'), 'utf8')) as SecretsFile;
    const proof = discloseHashFromSecrets(all, 0);
    expect(proof).toMatchObject({ seq: 0, step_hash: hashes[0] });
    expect(await verifyHashDisclosure(readFileSync(join(dir, 'all.tar')), proof)).toMatchObject({
      ok: true,
      seq: 0,
      step_hash: hashes[0],
      head: false,
    });
  });

  test('nothing redacted: no commitment at all, NOT_REDACTED', () => {
    expect(() => discloseHashFromSecrets({ ...secrets, redactions: [], steps: [] })).toThrow(
      expect.objectContaining({ code: 'NOT_REDACTED' }),
    );
    // With no seq asked for, the message says that the original head is the published head.
    expect(() => discloseHashFromSecrets({ ...secrets, redactions: [], steps: [] })).toThrow(
      /nothing was redacted, so the anchor commits to no step hash: the original head is the published head/,
    );
  });

  test("a journal whose only commitment is step 0's: the default is step 0 (the search for the highest seq starts below 0)", async () => {
    const one = await memoryJournal(sampleSteps().slice(0, 1));
    await publish(one, {
      policy: SAMPLE_POLICY,
      optIn: true,
      out: join(dir, 'one.tar'),
      secretsOut: join(dir, 'one.json'),
    });
    const s = JSON.parse(readFileSync(join(dir, 'one.json'), 'utf8')) as SecretsFile;
    expect(s.steps.map((o) => o.seq)).toEqual([0]);
    const proof = discloseHashFromSecrets(s);
    expect(proof.seq).toBe(0);
    expect(await verifyHashDisclosure(readFileSync(join(dir, 'one.tar')), proof)).toMatchObject({
      ok: true,
      seq: 0,
      head: true,
    });
  });

  test('entries of the secrets file that are not openings (null, a seq that is not an integer, a negative seq) do not count for the default', () => {
    const junk = [null, { seq: 9.5 }, { seq: '9' }, { seq: -1, salt: secrets.steps[0]!.salt, step_hash: hashes[0] }];
    expect(discloseHashFromSecrets({ ...secrets, steps: [...junk, ...secrets.steps] } as never).seq).toBe(3);
    // With no opening but those, nothing is committed: NOT_REDACTED, not an "opening" of seq −1.
    expect(() => discloseHashFromSecrets({ ...secrets, steps: junk } as never)).toThrow(
      expect.objectContaining({ code: 'NOT_REDACTED' }),
    );
  });

  test.each([-1, 1.5, '1', null])('seq %j is ARGUMENT_INVALID', (seq) => {
    expect(() => discloseHashFromSecrets(secrets, seq as never)).toThrow(
      expect.objectContaining({ code: 'ARGUMENT_INVALID' }),
    );
  });
});

describe('verifyHashDisclosure', () => {
  test('the head: ok, the step hash, head, the manifest and one sentence naming the signer', async () => {
    const r = await verifyHashDisclosure(receipt, proofOf());
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({
      ok: true,
      seq: 3,
      step_hash: hashes[3],
      head: true,
      manifest_digest: secrets.manifest_digest,
    });
    expect(r.receipt!.ok).toBe(true);
    expect(r.proves).toEqual([
      `The anchor of the published receipt ${secrets.manifest_digest} commits to ${hashes[3]} as the original hash of step 3, the original head (the publisher's claim, signed by ${key.keyId}): compare it with a head obtained independently.`,
    ]);
  });

  test('the first redacted step (index 0 of the commitments): ok, not the head', async () => {
    const r = await verifyHashDisclosure(receipt, proofOf(1));
    expect(r).toMatchObject({ ok: true, seq: 1, step_hash: hashes[1], head: false });
    expect(r.proves[0]).toBe(
      `The anchor of the published receipt ${secrets.manifest_digest} commits to ${hashes[1]} as the original hash of step 1 (the publisher's claim, signed by ${key.keyId}): compare it with a step hash obtained independently.`,
    );
  });

  test("an unsigned publication: the sentence says the claim is unsigned; the signed one's opening does not open it", async () => {
    const r = await verifyHashDisclosure(unsigned, discloseHashFromSecrets(unsignedSecrets));
    expect(r).toMatchObject({
      ok: true,
      seq: 3,
      step_hash: hashes[3],
      head: true,
      manifest_digest: unsignedSecrets.manifest_digest,
    });
    expect(r.proves).toEqual([
      `The anchor of the published receipt ${unsignedSecrets.manifest_digest} commits to ${hashes[3]} as the original hash of step 3, the original head (the publisher's unsigned claim): compare it with a head obtained independently.`,
    ]);
    // Salts are random per publication: the signed one's salt does not open the unsigned one's commitment.
    expectFailure(
      await verifyHashDisclosure(unsigned, { ...proofOf(), manifest_digest: unsignedSecrets.manifest_digest }),
      'ANCHOR_MISMATCH',
    );
  });

  const member = (patch: Record<string, unknown>, drop?: string) => (): unknown => {
    const p: Record<string, unknown> = { ...proofOf(), ...patch };
    if (drop) delete p[drop];
    return p;
  };
  test.each<[string, () => unknown]>([
    ['not an object', () => 'proof'],
    ['null', () => null],
    ['an array', () => [proofOf()]],
    ['format missing', member({}, 'format')],
    ['manifest_digest missing', member({}, 'manifest_digest')],
    ['salt missing', member({}, 'salt')],
    ['seq missing', member({}, 'seq')],
    ['step_hash missing', member({}, 'step_hash')],
    ['an extra member', member({ value: 1 })],
    ['another format', member({ format: 'stepchain-disclosure/v1' })],
    ['manifest_digest not a digest', member({ manifest_digest: 'sha256:xyz' })],
    ['seq negative', member({ seq: -1 })],
    ['seq fractional', member({ seq: 1.5 })],
    ['seq a string', member({ seq: '3' })],
    ['salt in upper case', member({ salt: 'AB'.repeat(32) })],
    ['salt of 31 bytes', member({ salt: 'ab'.repeat(31) })],
    ['step_hash not a digest', member({ step_hash: 'sha256:' + 'g'.repeat(64) })],
  ])('%s: PROOF_INVALID, the receipt never read', async (_name, proof) => {
    const r = await verifyHashDisclosure(receipt, proof());
    expectFailure(r, 'PROOF_INVALID');
    expect(r.receipt).toBeNull();
    expect(r.manifest_digest).toBeNull();
  });

  test('a damaged receipt: RECEIPT_INVALID quoting its first problem, the receipt report attached', async () => {
    const bad = Uint8Array.from(receipt);
    bad[bad.length - 1024 - 600]! ^= 1; // inside the last entry's data
    const r = await verifyHashDisclosure(bad, proofOf());
    expectFailure(r, 'RECEIPT_INVALID');
    expect(r.receipt!.ok).toBe(false);
    expect(r.problems[0]!.message).toContain(`${r.receipt!.problems[0]!.code}: `);
    expect(r.seq).toBe(3);
  });

  test('a plain receipt, not a publication: RECEIPT_INVALID', async () => {
    const r = await verifyHashDisclosure(await receiptBytes(journal), proofOf());
    expectFailure(r, 'RECEIPT_INVALID');
  });

  test('a proof for another receipt: MANIFEST_MISMATCH', async () => {
    expectFailure(
      await verifyHashDisclosure(receipt, { ...proofOf(), manifest_digest: 'sha256:' + 'a'.repeat(64) }),
      'MANIFEST_MISMATCH',
    );
  });

  test.each([
    ["past the end (seq = the anchor's length)", 4],
    ['far past the end', 1000],
    ['before the first redaction', 0],
  ])('%s: NOT_REDACTED', async (_name, seq) => {
    const r = await verifyHashDisclosure(receipt, { ...proofOf(), seq });
    expectFailure(r, 'NOT_REDACTED');
    expect(r.seq).toBe(seq);
  });

  test.each<[string, () => HashDisclosureProof]>([
    ['a wrong salt', () => ({ ...proofOf(), salt: 'ab'.repeat(32) })],
    ["a guessed hash (another step's)", () => ({ ...proofOf(), step_hash: hashes[2]! })],
    ["step 2's opening presented as step 3's", () => ({ ...proofOf(2), seq: 3 })],
    ["step 3's opening presented as step 2's", () => ({ ...proofOf(3), seq: 2 })],
    ["step 1's opening presented as step 2's (the first commitment, off by one)", () => ({ ...proofOf(1), seq: 2 })],
  ])('%s: ANCHOR_MISMATCH', async (_name, proof) => {
    expectFailure(await verifyHashDisclosure(receipt, proof()), 'ANCHOR_MISMATCH');
  });
});
