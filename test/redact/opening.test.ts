/**
 * Openings of a published v2 receipt and its publication block, rule by rule (spec/REDACTION.md §12.4,
 * §12.6): openingDefect and publicationDefect on one good document and each member broken alone; openSlot's
 * argument and source errors; verifyOpening's refusals that test/redact/committed.test.ts does not reach.
 */
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import {
  COMMITTED_PUBLICATION_FORMAT,
  RedactError,
  compilePolicy,
  openSlot,
  openingDefect,
  planCommittedPublication,
  preparePublication,
  publicationBytes,
  publicationDefect,
  seededSalts,
  verifyOpening,
} from '../../src/redact/index.js';
import { SAMPLE_POLICY, memoryJournal, sampleSteps } from './helpers.js';

const D = `sha256:${'ab'.repeat(32)}`;
const good = {
  format: 'stepchain-opening/v1',
  manifest_digest: D,
  seq: 0,
  slot: 'prompt',
  salt: '0f'.repeat(16),
  value: 'v',
};

describe('REDACTION §12.6 step 1: openingDefect', () => {
  test.each([
    ['the good opening', good],
    ['an absent slot: no value', { ...good, value: undefined }],
    ['a blob with its reference', { ...good, value: { '$stepchain:blob': { digest: D, size: 3 } }, blob: 'abc' }],
  ])('%s is accepted', (_what, p) => {
    expect(openingDefect(JSON.parse(JSON.stringify(p)))).toBeNull();
  });

  test.each([
    ['not an object', [good], /JSON object/],
    ['an unknown member', { ...good, proof: 1 }, /unknown member "proof"/],
    ['another format', { ...good, format: 'stepchain-opening/v2' }, /^format/],
    ['a manifest digest that is not one', { ...good, manifest_digest: 'sha256:xyz' }, /^manifest_digest/],
    ['a negative seq', { ...good, seq: -1 }, /^seq/],
    ['a fractional seq', { ...good, seq: 0.5 }, /^seq/],
    ['a seq that is a string', { ...good, seq: '0' }, /^seq/],
    ['an empty slot', { ...good, slot: '' }, /^slot/],
    ['a slot that is not a string', { ...good, slot: 1 }, /^slot/],
    ['a salt of 31 hex digits', { ...good, salt: '0'.repeat(31) }, /^salt/],
    ['an upper-case salt', { ...good, salt: 'AB'.repeat(16) }, /^salt/],
    ['a blob without the value', { ...good, value: undefined, blob: 'x' }, /^blob comes with the value/],
    [
      'a blob holding a reserved member name',
      { ...good, value: { '$stepchain:blob': { digest: D, size: 3 } }, blob: { '$stepchain:redacted': {} } },
      /^blob must be an I-JSON value/,
    ],
  ])('%s', (_what, p, why) => {
    expect(openingDefect(JSON.parse(JSON.stringify(p)))).toMatch(why);
  });

  test('a value that is not I-JSON (a lone surrogate)', () => {
    expect(openingDefect({ ...good, value: '\ud800' })).toMatch(/^value must be an I-JSON value/);
  });
});

describe('REDACTION §12.4: publicationDefect', () => {
  test.each([
    ['the good block', { format: COMMITTED_PUBLICATION_FORMAT, policy_digest: D }, null],
    ['not an object', 'x', /^publication must be/],
    ['an extra member', { format: COMMITTED_PUBLICATION_FORMAT, policy_digest: D, anchor: {} }, /^publication must be/],
    ['a member missing', { format: COMMITTED_PUBLICATION_FORMAT }, /^publication must be/],
    [
      'another format',
      { format: 'stepchain-redaction/v2', policy_digest: D },
      /^publication\.format is "stepchain-redaction\/v2"/,
    ],
    [
      'a policy digest that is not one',
      { format: COMMITTED_PUBLICATION_FORMAT, policy_digest: 'sha256:' },
      /^publication\.policy_digest/,
    ],
    // The rule is the set of members, not the order a parser met them in.
    ['the two members given in the other order', { policy_digest: D, format: COMMITTED_PUBLICATION_FORMAT }, null],
  ])('%s', (_what, block, why) => {
    if (why === null) expect(publicationDefect(block)).toBeNull();
    else expect(publicationDefect(block)).toMatch(why);
  });
});

const POLICY = compilePolicy({ rules: [...SAMPLE_POLICY.rules, { id: 'meta', paths: ['/meta'], seq: { from: 2 } }] });
async function published() {
  const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
  const pub = await planCommittedPublication(j, { policy: POLICY, salts: seededSalts('opening-rules') });
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(pub.plan)) parts.push(Uint8Array.from(chunk));
  return { j, pub, bytes: concatBytes(parts), md: pub.plan.manifestDigest };
}
const code = async (p: Promise<unknown>): Promise<string> =>
  (
    (await p.then(
      () => null,
      (e: unknown) => e,
    )) as RedactError
  ).code;

describe('REDACTION §12.6: openSlot, from the original v2 journal only', () => {
  test('a v1 journal has no slots; a member that is not a slot; a step the journal lacks: ARGUMENT_INVALID', async () => {
    const { j, md } = await published();
    expect(await code(openSlot(await memoryJournal(), 0, 'prompt', md))).toBe('ARGUMENT_INVALID');
    expect(await code(openSlot(j, 0, 'kind', md))).toBe('ARGUMENT_INVALID');
    expect(await code(openSlot(j, 0, 'step_id', md))).toBe('ARGUMENT_INVALID');
    expect(await code(openSlot(j, 4, 'prompt', md))).toBe('ARGUMENT_INVALID');
  });

  test('a blob the journal no longer holds: SOURCE_INVALID', async () => {
    const { j, md } = await published();
    const missing = {
      genesis: j.genesis,
      head: () => j.head(),
      lines: (r?: { from?: number; to?: number }) => j.lines(r),
      blob: async () => null,
    };
    expect(await code(openSlot(missing, 2, 'input', md))).toBe('SOURCE_INVALID');
    expect((await openSlot(j, 2, 'input', md)).blob).toEqual(sampleSteps()[2]!.input);
  });

  test('a line without a record salt (a public-form journal): SOURCE_INVALID', async () => {
    const { j, md } = await published();
    const unsalted = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d: string) => j.blob(d),
      lines: async function* (r?: { from?: number; to?: number }) {
        for await (const l of j.lines(r)) {
          const { salt: _s, ...rest } = JSON.parse(l.text) as Record<string, unknown>;
          yield { ...l, text: JSON.stringify(rest) };
        }
      },
    };
    expect(await code(openSlot(unsalted, 0, 'prompt', md))).toBe('SOURCE_INVALID');
  });

  test('a slot that is not a blob carries no blob member', async () => {
    const { j, md } = await published();
    const o = await openSlot(j, 0, 'prompt', md);
    expect('blob' in o).toBe(false);
    expect(o).toMatchObject({
      format: 'stepchain-opening/v1',
      manifest_digest: md,
      seq: 0,
      slot: 'prompt',
      value: sampleSteps()[0]!.prompt,
    });
  });
});

describe("REDACTION §12.6: verifyOpening's refusals", () => {
  test('a receipt that is not a v2 publication: RECEIPT_INVALID, with the seq and slot reported', async () => {
    const { j, md } = await published();
    const opening = await openSlot(j, 0, 'prompt', md);
    const v1 = await publicationBytes(
      await preparePublication(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true }),
    );
    const r = await verifyOpening(v1, opening);
    expect(r).toMatchObject({ ok: false, seq: 0, slot: 'prompt', present: null, value: null });
    expect(r.problems.map((p) => p.code)).toEqual(['RECEIPT_INVALID']);
    expect((await verifyOpening(new Uint8Array([1, 2, 3]), opening)).problems.map((p) => p.code)).toEqual([
      'RECEIPT_INVALID',
    ]);
  });

  test('a step past the end, and a slot the receipt discloses: NOT_REDACTED', async () => {
    const { j, bytes, md } = await published();
    const opening = await openSlot(j, 0, 'prompt', md);
    expect((await verifyOpening(bytes, { ...opening, seq: 4 })).problems.map((p) => p.code)).toEqual(['NOT_REDACTED']);
    // Step 0's input no rule selects: it is disclosed, there is nothing to open.
    const input = await openSlot(j, 0, 'input', md);
    expect((await verifyOpening(bytes, input)).problems.map((p) => p.code)).toEqual(['NOT_REDACTED']);
  });

  test('a slot name that is not a slot of the step: NOT_REDACTED, reported, not thrown', async () => {
    const { j, bytes, md } = await published();
    const opening = await openSlot(j, 0, 'prompt', md);
    for (const slot of ['step_id', 'no_such_member']) {
      const r = await verifyOpening(bytes, { ...opening, slot });
      expect(r).toMatchObject({ ok: false, seq: 0, slot });
      expect(r.problems.map((p) => p.code)).toEqual(['NOT_REDACTED']);
    }
  });

  test("a blob value of the reference's size but other bytes: COMMITMENT_MISMATCH", async () => {
    const { j, bytes, md } = await published();
    const input = await openSlot(j, 2, 'input', md);
    expect((await verifyOpening(bytes, input)).ok).toBe(true);
    const doc = (input.blob as { doc: string }).doc;
    const forged = { ...input, blob: { doc: `w${doc.slice(1)}` } };
    expect((await verifyOpening(bytes, forged)).problems.map((p) => p.code)).toEqual(['COMMITMENT_MISMATCH']);
  });

  test('blob members where they do not belong: PROOF_INVALID', async () => {
    const { j, bytes, md } = await published();
    const input = await openSlot(j, 2, 'input', md);
    const { blob: _b, ...noBlob } = input;
    expect((await verifyOpening(bytes, noBlob)).problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
    const prompt = await openSlot(j, 0, 'prompt', md);
    expect((await verifyOpening(bytes, { ...prompt, blob: 'x' })).problems.map((p) => p.code)).toEqual([
      'PROOF_INVALID',
    ]);
    expect((await verifyOpening(bytes, 'not an opening')).problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
  });
});
