/**
 * The one receipt verifier (src/verifier/index.ts, issue 38): it reads what a receipt carries and runs
 * every check for it. For every vector receipt — plain (receipts.json), proven (proof-receipts.json),
 * time-stamped and co-signed (time.json) — and for crafted published and published+proven receipts, its
 * verdict equals the verdict of the path that checked that kind before (the separate verifiers and their
 * hooks); its report carries the section for what the receipt is; hostile bytes give a report, never a throw.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseTsaCertificate, receiptAttestHooks, type TsaCertificate } from '../../src/attest/index.js';
import { parseVerifierKey } from '../../src/proofs/index.js';
import { verifyProvenReceipt } from '../../src/proofs/receipt.js';
import { verifyReceipt as verifyPlain, type VerifyReceiptOptions } from '../../src/receipt/index.js';
import { publishedReceiptHooks, verifyPublishedReceipt } from '../../src/redact/index.js';
import { REQUIREMENT_UNMET } from '../../src/verifier/index.js';
import { verifyReceipt, type ReceiptVerdict } from '../../src/verify.js';
import { loadVectors } from '../helpers/vectors.js';
import { craft, marker } from '../redact/crafted.js';
import { published } from '../redact/v3-helpers.js';

const bytesOf = (base64: string): Uint8Array => new Uint8Array(Buffer.from(base64, 'base64'));
/** What a verdict is: the answer, and the problems' codes in order. */
const verdictOf = (r: { ok: boolean; verdict: string; problems: ReadonlyArray<{ code: string }> }) => ({
  ok: r.ok,
  verdict: r.verdict,
  codes: r.problems.map((p) => p.code),
});

interface ReceiptCase {
  id: string;
  base64: string;
  options: VerifyReceiptOptions;
}
const receipts = loadVectors<ReceiptCase>('receipts.json');

interface ProofCase {
  id: string;
  base64: string;
  policy?: string;
  trusted?: { origin: string; size: number; root: string };
  consistency?: string;
}
const proofVectors = loadVectors<ProofCase>('proof-receipts.json');
const policies = proofVectors.policies as Record<string, { log: string; witnesses: string[]; quorum: number }>;

interface TimeCase {
  id: string;
  base64: string;
  tsa_certs?: string[];
  cosigners?: Array<{ name: string; public_key: string }>;
  threshold?: number;
}
const timeVectors = loadVectors<TimeCase>('time.json');

describe('plain receipts (vectors/receipts.json)', () => {
  test.each(receipts.cases)('$id: the same verdict as the receipt verifier, and no other section', async (c) => {
    const old = await verifyPlain(bytesOf(c.base64), c.options);
    const r = await verifyReceipt(bytesOf(c.base64), {
      ...(c.options.publicKey !== undefined ? { publicKey: c.options.publicKey } : {}),
      ...(c.options.expectHead !== undefined ? { expectHead: c.options.expectHead } : {}),
    });
    expect(verdictOf(r)).toEqual(verdictOf(old));
    expect(r.signed_by).toBe(old.signed_by);
    expect(r.tlog).toBeUndefined();
    expect(r.attest).toBeUndefined();
    expect(r.anchor).toBeUndefined();
  });
});

describe('proven receipts (vectors/proof-receipts.json)', () => {
  test.each(proofVectors.cases)('$id: the same verdict as verifyProvenReceipt, with the tlog section', async (c) => {
    const p = c.policy ? policies[c.policy]! : null;
    const log = p
      ? { log: parseVerifierKey(p.log), witnesses: p.witnesses.map(parseVerifierKey), quorum: p.quorum }
      : undefined;
    const checkpoint = c.trusted ? { ...c.trusted, root: bytesOf(c.trusted.root) } : undefined;
    const old = await verifyProvenReceipt(bytesOf(c.base64), {
      ...(log ? { policy: log } : {}),
      ...(checkpoint ? { trusted: checkpoint } : {}),
      ...(c.consistency ? { consistency: c.consistency } : {}),
    });
    const r = await verifyReceipt(bytesOf(c.base64), {
      ...(log ? { log } : {}),
      ...(checkpoint ? { checkpoint } : {}),
      ...(c.consistency ? { consistencyProof: c.consistency } : {}),
    });
    expect(verdictOf(r)).toEqual(verdictOf(old));
    expect(r.tlog).toEqual(old.tlog);
  });
});

describe('time-stamped and co-signed receipts (vectors/time.json)', () => {
  const pins = (c: TimeCase) => ({
    ...(c.tsa_certs
      ? { tsa: c.tsa_certs.map((pem) => (parseTsaCertificate(pem) as { ok: true; tsa: TsaCertificate }).tsa) }
      : {}),
    ...(c.cosigners ? { cosigners: c.cosigners.map((k) => ({ key: bytesOf(k.public_key), name: k.name })) } : {}),
    ...(c.threshold !== undefined ? { threshold: c.threshold } : {}),
  });
  test.each(timeVectors.cases)('$id: the same verdict as the attest hooks, with the attest section', async (c) => {
    const hooks = receiptAttestHooks(pins(c));
    const old = await hooks.finish(
      await verifyPlain(bytesOf(c.base64), { extensions: hooks.extensions, onLine: hooks.onLine }),
    );
    const { tsa, ...rest } = pins(c);
    const r = await verifyReceipt(bytesOf(c.base64), { ...rest, ...(tsa ? { tsaCerts: tsa } : {}) });
    expect(verdictOf(r)).toEqual(verdictOf(old));
    expect(r.attest).toEqual(old.attest);
    expect(r.attest).toBeDefined();
  });
});

describe('published receipts', () => {
  const declared = () =>
    craft({
      contents: [{ input: 'a' }, { input: { k: marker() } }],
      redactions: [{ seq: 1, path: '/input/k', rule: 'r' }],
    });
  const undeclared = () => craft({ contents: [{ input: 'a' }, { input: { k: marker() } }], redactions: [] });

  test.each([
    ['declared', declared],
    ['undeclared', undeclared],
  ] as const)('a %s crafted v2 publication: the same verdict as verifyPublishedReceipt', async (_name, make) => {
    const old = await verifyPublishedReceipt(make());
    const r = await verifyReceipt(make());
    expect(verdictOf(r)).toEqual(verdictOf(old));
    expect(r.anchor).toEqual(old.anchor);
    expect(r.redactions).toBe(old.redactions);
  });

  test('a valid publication reports its publication section', async () => {
    const r = await verifyReceipt(declared());
    expect(r.ok).toBe(true);
    expect(r.anchor).toMatchObject({ redacted_from: 1, length: 2 });
    expect(r.redactions).toBe(1);
  });

  test('a published v3 receipt: the same verdict as verifyPublishedReceipt, and its head pin holds', async () => {
    const { bytes, head } = await published();
    const old = await verifyPublishedReceipt(bytes, { expectHead: head });
    const r = await verifyReceipt(bytes, { expectHead: head });
    expect(verdictOf(r)).toEqual(verdictOf(old));
    expect(r.verdict).toBe('authenticated');
    expect(r.unbound_count).toBe(old.unbound_count);
  });

  test('published and proven at once: the composition the CLI used, now one call', async () => {
    for (const bytes of [declared(), undeclared()]) {
      const old = await verifyProvenReceipt(bytes, {}, publishedReceiptHooks().options);
      const r = await verifyReceipt(bytes);
      expect(verdictOf(r)).toEqual(verdictOf(old));
      expect(r.tlog).toEqual(old.tlog);
    }
  });
});

describe('what the caller requires', () => {
  const plain = () => bytesOf(receipts.cases.find((c) => c.id === 'valid-complete-unsigned')!.base64);

  test('an intact but unpinned receipt fails `require.authenticated` with a coded problem', async () => {
    const r = await verifyReceipt(plain(), { require: { authenticated: true } });
    expect(verdictOf(r)).toEqual({ ok: false, verdict: 'invalid', codes: [REQUIREMENT_UNMET] });
    expect(r.proves).toEqual([]);
    const pinned = await verifyReceipt(plain(), {
      expectHead: (await verifyReceipt(plain())).head!,
      require: { authenticated: true },
    });
    expect(verdictOf(pinned)).toEqual({ ok: true, verdict: 'authenticated', codes: [] });
  });

  test('a plain receipt is not published, proven, time-stamped or co-signed', async () => {
    const r = await verifyReceipt(plain(), {
      require: { published: true, proven: true, timestamped: true, cosigned: true },
    });
    expect(r.problems.map((p) => p.code)).toEqual(Array(4).fill(REQUIREMENT_UNMET));
    expect(r.ok).toBe(false);
  });

  test('each requirement holds on a receipt that carries it', async () => {
    const stamped = timeVectors.cases.find((c) => c.id === 'timestamp-unpinned')!;
    expect(verdictOf(await verifyReceipt(bytesOf(stamped.base64), { require: { timestamped: true } })).ok).toBe(true);
    const proven = proofVectors.cases.find((c) => c.id === 'partial-proof-log')!;
    const p = policies[proven.policy!]!;
    const log = { log: parseVerifierKey(p.log), witnesses: p.witnesses.map(parseVerifierKey), quorum: p.quorum };
    expect(verdictOf(await verifyReceipt(bytesOf(proven.base64), { log, require: { proven: true } })).ok).toBe(true);
  });

  // Outsider finding (approvals v2 round, F6): a checkpoint signed by a key the forger just made met `proven`.
  test('`proven` needs the proof checked against a pinned log key: an unpinned one does not meet it', async () => {
    const unpinned = proofVectors.cases.find((c) => c.id === 'partial-proof-unpinned')!;
    const r = await verifyReceipt(bytesOf(unpinned.base64), { require: { proven: true } });
    expect(verdictOf(r)).toEqual({ ok: false, verdict: 'invalid', codes: [REQUIREMENT_UNMET] });
  });

  // F6 and F9: what a plain-JavaScript caller may pass is reported, never thrown, never silently ignored.
  test('a requirement that is not an object of flags is unmet; null options and a string maxProblems never throw', async () => {
    const asString = await verifyReceipt(plain(), { require: 'authenticated' as never });
    expect(verdictOf(asString)).toEqual({ ok: false, verdict: 'invalid', codes: [REQUIREMENT_UNMET] });
    const withNull = await verifyReceipt(plain(), null);
    expect(verdictOf(withNull)).toEqual(verdictOf(await verifyReceipt(plain())));
    const tampered = bytesOf(receipts.cases.find((c) => c.id === 'invalid-chain-edited')!.base64);
    const r = await verifyReceipt(tampered, { maxProblems: '0' as never });
    expect(r.ok).toBe(false);
  });
});

describe('hostile bytes', () => {
  const report = (r: ReceiptVerdict) => {
    expect(r.ok).toBe(false);
    expect(r.verdict).toBe('invalid');
    expect(r.problems.length).toBeGreaterThan(0);
    for (const p of r.problems) expect(p.code).toMatch(/^[A-Z][A-Z0-9_]+$/);
  };

  test('arbitrary bytes, empty input, and an empty stream give a report of problems', async () => {
    report(await verifyReceipt(new Uint8Array(0)));
    report(await verifyReceipt(new ReadableStream<Uint8Array>({ start: (c) => c.close() })));
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (bytes) => report(await verifyReceipt(bytes))),
      { numRuns: 50 },
    );
  });

  test('a byte flipped anywhere in a published, a proven or an attested receipt never throws', async () => {
    const sources = [
      (await published()).bytes,
      bytesOf(proofVectors.cases.find((c) => c.id === 'partial-proof-unpinned')!.base64),
      bytesOf(timeVectors.cases.find((c) => c.id === 'cosign-unpinned')!.base64),
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...sources),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (source, at, xor) => {
          const bytes = source.slice();
          bytes[at % bytes.length]! ^= xor;
          const r = await verifyReceipt(bytes, { require: { authenticated: true } });
          expect(typeof r.ok).toBe('boolean');
          for (const p of r.problems) expect(p.code).toMatch(/^[A-Z][A-Z0-9_]+$/);
        },
      ),
      { numRuns: 60 },
    );
  });
});
