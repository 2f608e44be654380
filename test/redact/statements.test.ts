/**
 * What a published receipt proves and does not prove beyond a receipt's own sentences (spec/REDACTION.md
 * §7): the declarations' completeness, where the first redaction is, what a signer vouches for, and what
 * the anchor keeps hidden — for a redaction in every step (k = 0), from step 1 (signed), only in the last
 * step, and none at all (signed). Each sentence is pinned whole: the CLI and the page print them. Each case
 * was a surviving mutant of src/redact/verify.ts (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { keyPairFromSeed } from '../../src/receipt/index.js';
import {
  preparePublication,
  publicationBytes,
  verifyPublishedReceipt,
  type PublishedReport,
} from '../../src/redact/index.js';
import { testSeed } from '../receipt/fixture.js';
import { memoryJournal } from './helpers.js';

const key = keyPairFromSeed(testSeed(8));

async function published(path: string, sign: boolean, expectHead?: string): Promise<PublishedReport> {
  const j = await memoryJournal(); // 4 steps
  const bytes = await publicationBytes(
    await preparePublication(j, {
      policy: { rules: [{ id: 'r', paths: [path] }] },
      optIn: true,
      ...(sign ? { sign: key.privateKey } : {}),
    }),
  );
  return verifyPublishedReceipt(bytes, expectHead === undefined ? {} : { expectHead });
}

const declared = (n: number) =>
  `Every redaction marker in the chain is declared in the manifest, and every declared redaction (${n}) has its marker: nothing was dropped or left in silently.`;
const hidden = (steps: string) =>
  `The original head, or the original hashes of ${steps}: the anchor holds them only as salted commitments, so that no reader can test guesses of the redacted values against them. The publisher can open the head's commitment (stepchain disclose --hash-only) for someone who already holds the original head.`;
const claim = (what: string, signed: boolean) =>
  `That the original run is the one the anchor describes (${what}): the anchor is the publisher's ${signed ? 'signed ' : ''}claim. Compare it with a head pinned out of band, or with the original journal (compareAnchor in the library).`;
const TAIL = [
  'That the redacted steps carry the original content outside the markers: the published chain is a new chain from the first redaction on; only a disclosure (or the original journal) can show what a marker hides.',
  'That the policy removed every secret: it proves only that what was redacted is declared.',
];
const vouches = (r: PublishedReport, what: string) =>
  `The signer of the manifest vouches for the anchor: an original run of 4 steps from genesis ${r.anchor!.genesis_hash}, redacted by policy ${r.anchor!.policy_digest}, ${what}.`;

describe('proves / does_not_prove of a published receipt (REDACTION §7)', () => {
  test('redactions in every step (redacted_from 0), unsigned', async () => {
    const r = await published('/prompt', false);
    expect(r.anchor).toMatchObject({ redacted_from: 0, length: 4 });
    expect(r.proves.slice(2)).toEqual([declared(4)]);
    expect(r.does_not_prove.slice(3)).toEqual([
      hidden('steps 0–3'),
      claim('the hashes its commitments hide', false),
      ...TAIL,
    ]);
  });

  test('the first redaction in step 1, signed: step 0 as published, and what the signer vouches for', async () => {
    const r = await published('/tool_call/arguments/api_key', true);
    expect(r.anchor).toMatchObject({ redacted_from: 1, length: 4 });
    expect(r.proves.slice(3)).toEqual([
      declared(1),
      'Step 0 holds no redaction; the first redaction is in step 1.',
      vouches(r, 'with salted commitments to the original hashes of steps 1–3'),
    ]);
    expect(r.does_not_prove.slice(3)).toEqual([
      hidden('steps 1–3'),
      claim('step 0 as published, the hashes its commitments hide', true),
      ...TAIL,
    ]);
  });

  test('a redaction only in the last step, unsigned', async () => {
    const r = await published('/input/big', false);
    expect(r.anchor).toMatchObject({ redacted_from: 3, length: 4 });
    expect(r.proves.slice(2)).toEqual([declared(1), 'Steps 0–2 hold no redaction; the first redaction is in step 3.']);
    expect(r.does_not_prove.slice(3)).toEqual([
      hidden('step 3'),
      claim('steps 0–2 as published, the hashes its commitments hide', false),
      ...TAIL,
    ]);
  });

  test('nothing redacted, signed: nothing is hidden, and the claim is about this head', async () => {
    const r = await published('/input/nothing', true);
    expect(r.anchor).toMatchObject({ redacted_from: 4, length: 4 });
    expect(r.proves.slice(3)).toEqual([declared(0), 'Nothing was redacted.', vouches(r, 'with nothing redacted')]);
    expect(r.does_not_prove.slice(3)).toEqual([claim('steps 0–3 as published, this head', true), ...TAIL]);
  });

  test('a published receipt that fails proves nothing, and says so', async () => {
    const r = await published('/prompt', false, 'sha256:' + 'c'.repeat(64));
    expect(r.ok).toBe(false);
    expect(r.proves).toEqual([]);
    expect(r.does_not_prove).toEqual([
      'Anything: the published receipt failed verification, so none of its contents can be relied on.',
    ]);
  });
});
