/**
 * Value disclosure rule by rule (spec/REDACTION.md §8.1–§8.3): the marker text's fit against a reference
 * (fast-check), the proof's shape (§8.3 step 1) with each member broken alone, the secrets file's
 * refusals, and the steps of verification test/redact/publish.test.ts does not reach (RECEIPT_INVALID,
 * the report's members on success and failure).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  DISCLOSURE_FORMAT,
  RedactError,
  commitment,
  discloseFromSecrets,
  preparePublication,
  proofDefect,
  publicationBytes,
  saltFromHex,
  secretsFile,
  textFits,
  verifyDisclosure,
  verifyPublishedReceipt,
} from '../../src/redact/index.js';
import type { Json } from '../../src/record/index.js';
import { keyPairFromSeed } from '../../src/receipt/index.js';
import { SAMPLE_POLICY, SECRETS, memoryJournal } from './helpers.js';
import { R, craft } from './crafted.js';

/** §8.3 step 7 as a regular expression: the pieces in order, each placeholder standing for 1+ characters. */
function fitsReference(text: string, value: string): boolean {
  const parts = text.split(/\[REDACTED:[a-z][a-z-]*\]/);
  if (parts.length < 2) return false;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${parts.map(escape).join('[^]+')}$`).test(value);
}

describe('REDACTION §8.3 step 7: textFits', () => {
  const unit = fc.constantFrom('a', 'b', 'x', '[', ']', '\n');
  const placeholder = fc.constantFrom('[REDACTED:email]', '[REDACTED:api-key]', '[REDACTED:x]');
  test('agrees with the reference on texts made from the value and on unrelated texts (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 14 }),
        fc.array(fc.tuple(fc.nat(), fc.nat({ max: 4 }), placeholder), { maxLength: 4 }),
        fc.string({ unit, maxLength: 10 }),
        fc.boolean(),
        (value, cuts, other, fromValue) => {
          let text = value;
          if (fromValue) {
            // Replace spans of the value (possibly empty ones, which must not fit) with placeholders.
            for (const [at, len, p] of cuts) {
              const i = at % (text.length + 1);
              text = text.slice(0, i) + p + text.slice(i + len);
            }
          } else {
            text = other + cuts.map(([, , p], k) => p + other.slice(k)).join('');
          }
          expect(textFits(text, value)).toBe(fitsReference(text, value));
        },
      ),
      { numRuns: 5000 },
    );
  });

  test.each([
    ['the secret replaced', 'mail [REDACTED:email] now', `mail ${SECRETS.email} now`, true],
    ['no placeholder hides nothing', 'mail me now', 'mail me now', false],
    ['a placeholder for nothing', 'ab[REDACTED:email]cd', 'abcd', false],
    ['a placeholder at each end', '[REDACTED:email] and [REDACTED:jwt]', 'a and b', true],
    ['the same piece twice', 'x[REDACTED:email]x[REDACTED:email]x', 'xaxbx', true],
    ['the pieces out of order', 'b[REDACTED:email]a', 'ab', false],
    ['the last piece must be a suffix', 'a[REDACTED:email]b', 'a1b2', false],
    ['overlapping prefix and suffix', 'ab[REDACTED:email]ba', 'aba', false],
  ])('%s', (_what, text, value, fits) => {
    expect(textFits(text, value)).toBe(fits);
  });
});

const D = `sha256:${'ab'.repeat(32)}`;
const goodProof = {
  commitment: D,
  format: 'stepchain-disclosure/v1',
  manifest_digest: D,
  path: '/input',
  rule: 'r',
  salt: 'cd'.repeat(32),
  seq: 0,
  value: 'v',
};

describe('REDACTION §8.3 step 1: proofDefect', () => {
  test('the good proof', () => expect(proofDefect(goodProof)).toBeNull());
  test('a value nested as deep as a record may be (128 levels with the record itself) is a value', () => {
    let deep: unknown = 'v';
    for (let i = 0; i < 120; i++) deep = [deep];
    expect(proofDefect({ ...goodProof, value: deep })).toBeNull();
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(proofDefect({ ...goodProof, value: deep })).toMatch(/^value must be I-JSON/);
  });
  test.each([
    ['not an object', 'x', /exactly the members/],
    ['an extra member', { ...goodProof, text: 'x' }, /exactly the members/],
    ['a member missing', { ...goodProof, value: undefined }, /exactly the members/],
    ['another format', { ...goodProof, format: 'stepchain-disclosure/v2' }, /^format is "stepchain-disclosure\/v2"/],
    ['a manifest digest that is not one', { ...goodProof, manifest_digest: 'x' }, /^manifest_digest/],
    ['a commitment that is not one', { ...goodProof, commitment: 'x' }, /^commitment/],
    ['a negative seq', { ...goodProof, seq: -1 }, /^seq/],
    ['the empty path', { ...goodProof, path: '' }, /^path/],
    ['a path that is not a pointer', { ...goodProof, path: 'input' }, /^path/],
    ['a rule that is not an id', { ...goodProof, rule: '' }, /^rule/],
    ['a salt of 32 hex digits', { ...goodProof, salt: 'cd'.repeat(16) }, /^salt/],
    ['a value with a reserved member name', { ...goodProof, value: { '$stepchain:redacted': 1 } }, /^value/],
  ])('%s', (_what, proof, why) => {
    expect(proofDefect(JSON.parse(JSON.stringify(proof)))).toMatch(why);
  });
});

async function published() {
  const pub = await preparePublication(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true });
  const bytes = await publicationBytes(pub);
  const secrets = JSON.parse(
    JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)),
  );
  return { pub, bytes, secrets };
}
const failure = (run: () => unknown): RedactError => {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(RedactError);
    return e as RedactError;
  }
  throw new Error('expected a RedactError');
};

describe('REDACTION §8.1: discloseFromSecrets', () => {
  test('a file that is not a secrets file, or one of a withdrawn publication: SECRETS_INVALID', async () => {
    const { secrets } = await published();
    for (const bad of [
      null,
      [],
      { ...secrets, format: 'x' },
      { ...secrets, manifest_digest: 'x' },
      { ...secrets, redactions: {} },
      { ...secrets, steps: null },
    ]) {
      expect(failure(() => discloseFromSecrets(bad, 1, '/prompt')).code).toBe('SECRETS_INVALID');
    }
    const old = failure(() =>
      discloseFromSecrets({ ...secrets, format: 'stepchain-redaction-secrets/v1' }, 1, '/prompt'),
    );
    expect([old.code, /withdrawn/.test(old.message)]).toEqual(['SECRETS_INVALID', true]);
  });

  test("a bad seq or path: ARGUMENT_INVALID; a location not redacted: NOT_REDACTED, listing the step's redacted paths", async () => {
    const { secrets } = await published();
    for (const [seq, path] of [
      [-1, '/prompt'],
      [0.5, '/prompt'],
      [1, ''],
      [1, 'prompt'],
    ] as const) {
      expect(failure(() => discloseFromSecrets(secrets, seq, path)).code).toBe('ARGUMENT_INVALID');
    }
    const e = failure(() => discloseFromSecrets(secrets, 0, '/input'));
    expect(e.code).toBe('NOT_REDACTED');
    expect(e.message).toMatch(/redacted paths in that step: \/prompt$|redacted paths in that step: \/prompt[^,]/);
    expect(failure(() => discloseFromSecrets(secrets, 9, '/input')).message).not.toMatch(/redacted paths/);
  });

  test('NOT_REDACTED locates the seq and path asked for', async () => {
    const { secrets } = await published();
    expect(failure(() => discloseFromSecrets(secrets, 0, '/input')).location).toEqual({ seq: 0, path: '/input' });
  });

  test('a damaged entry: SECRETS_INVALID', async () => {
    const { secrets } = await published();
    const at = secrets.redactions.findIndex((r: { seq: number; path: string }) => r.seq === 1 && r.path === '/prompt');
    const damaged = (change: Record<string, unknown>) => ({
      ...secrets,
      redactions: secrets.redactions.map((r: object, i: number) => (i === at ? { ...r, ...change } : r)),
    });
    for (const change of [
      { salt: 'x' },
      { commitment: 'x' },
      { rule: '-' },
      { value: 'not the value' },
      { salt: 'ab'.repeat(32) },
    ]) {
      expect(failure(() => discloseFromSecrets(damaged(change), 1, '/prompt')).code).toBe('SECRETS_INVALID');
    }
    // A value that is not I-JSON (a lone surrogate) cannot be committed to.
    expect(failure(() => discloseFromSecrets(damaged({ value: '\ud800' }), 1, '/prompt')).code).toBe('SECRETS_INVALID');
    const { value: _v, ...noValue } = secrets.redactions[at];
    expect(failure(() => discloseFromSecrets({ ...secrets, redactions: [noValue] }, 1, '/prompt')).code).toBe(
      'SECRETS_INVALID',
    );
  });
});

describe('REDACTION §8.3: verifyDisclosure', () => {
  test('a good proof: ok, with seq, path, rule, value, the manifest digest and what it proves', async () => {
    const { bytes, secrets, pub } = await published();
    const proof = discloseFromSecrets(secrets, 1, '/prompt');
    const r = await verifyDisclosure(bytes, proof);
    expect(r).toMatchObject({
      ok: true,
      problems: [],
      seq: 1,
      path: '/prompt',
      rule: 'prompts',
      value: 'Call the API.',
      manifest_digest: pub.plan.manifestDigest,
    });
    expect(r.proves).toEqual([expect.stringMatching(/^The value redacted at seq 1, \/prompt \(rule "prompts"\)/)]);
    expect(r.receipt?.ok).toBe(true);
  });

  test("a proof naming the marker's rule but another commitment: MARKER_MISMATCH, even with the right salt and value", async () => {
    const { bytes, secrets } = await published();
    const proof = discloseFromSecrets(secrets, 1, '/prompt');
    const r = await verifyDisclosure(bytes, { ...proof, commitment: `sha256:${'0'.repeat(64)}` });
    expect(r.problems.map((p) => p.code)).toEqual(['MARKER_MISMATCH']);
    expect(r.ok).toBe(false);
  });

  test('a signed receipt: what the proof proves says who signed it', async () => {
    const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 3));
    const pub = await preparePublication(await memoryJournal(), {
      policy: SAMPLE_POLICY,
      optIn: true,
      sign: key.privateKey,
    });
    const secrets = JSON.parse(
      JSON.stringify(secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps)),
    );
    const r = await verifyDisclosure(await publicationBytes(pub), discloseFromSecrets(secrets, 1, '/prompt'));
    expect(r.ok).toBe(true);
    expect(r.proves).toEqual([
      expect.stringMatching(/^The value redacted at seq 1/),
      `That receipt is signed by ${r.receipt!.signed_by!}.`,
    ]);
    expect(r.receipt!.signed_by).toMatch(/\S/);
  });

  test('a proof that is not one: PROOF_INVALID, nothing else filled in', async () => {
    const { bytes } = await published();
    const r = await verifyDisclosure(bytes, { ...goodProof, seq: -1 });
    expect(r).toMatchObject({ ok: false, seq: null, path: null, rule: null, value: null, receipt: null, proves: [] });
    expect(r.problems.map((p) => p.code)).toEqual(['PROOF_INVALID']);
  });

  test('a receipt that does not verify: RECEIPT_INVALID, quoting its first problem', async () => {
    const { bytes, secrets } = await published();
    const proof = discloseFromSecrets(secrets, 1, '/prompt');
    const damaged = bytes.slice(0, bytes.length - 100);
    const r = await verifyDisclosure(damaged, proof);
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.code)).toEqual(['RECEIPT_INVALID']);
    expect(r.problems[0]!.message).toMatch(/: [A-Z_]+: /);
    expect([r.seq, r.path, r.value]).toEqual([1, '/prompt', null]);
  });
});

describe("REDACTION §8.3 step 7: a dishonest publisher's marker text is TEXT_MISMATCH", () => {
  // A substring marker whose commitment opens to the value, but whose text the value cannot have become:
  // only a hand-built receipt holds one (test/redact/crafted.ts), since the publisher writes texts from values.
  const salt = saltFromHex('ab'.repeat(32))!;
  async function disclose(value: Json, markerText: string) {
    const body = { commitment: commitment(salt, value), rule: 'secrets', text: markerText };
    const bytes = craft({
      contents: [{ input: 'a' }, { input: { note: { [R]: body } } }],
      redactions: [{ seq: 1, path: '/input/note', rule: 'secrets' }],
    });
    const published = await verifyPublishedReceipt(bytes);
    expect(published.problems).toEqual([]);
    const proof = {
      commitment: body.commitment,
      format: DISCLOSURE_FORMAT,
      manifest_digest: published.manifest_digest,
      path: '/input/note',
      rule: 'secrets',
      salt: 'ab'.repeat(32),
      seq: 1,
      value,
    };
    return verifyDisclosure(bytes, proof);
  }

  test('a text that fits: the value is disclosed', async () => {
    expect(await disclose('mail bob@example.org now', 'mail [REDACTED:email] now')).toMatchObject({
      ok: true,
      value: 'mail bob@example.org now',
      problems: [],
    });
  });

  test.each([
    ['text around the placeholder that the value lacks', 'mail bob@example.org now', 'call [REDACTED:email] now'],
    ['a placeholder standing for nothing', 'mail  now', 'mail [REDACTED:email] now'],
    ['a text without a placeholder', 'mail bob@example.org now', 'mail bob@example.org now'],
    ['a value that is not a string', 42, '[REDACTED:email]'],
    ['a value that is an object', { a: 'x' }, '[REDACTED:email]'],
  ])('%s: TEXT_MISMATCH, nothing disclosed', async (_what, value, markerText) => {
    const r = await disclose(value as Json, markerText);
    expect(r.problems.map((p) => p.code)).toEqual(['TEXT_MISMATCH']);
    expect(r).toMatchObject({ ok: false, value: null, proves: [] });
  });
});
