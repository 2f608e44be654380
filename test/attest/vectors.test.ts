/**
 * vectors/time.json (spec/TIME.md §9): every case's receipt, verified with its pins through the library's
 * hooks, gives the expected ok and problem codes in order — and the valid timestamp case names the TSA.
 */
import { describe, expect, test } from 'vitest';
import {
  parseTsaCertificate,
  receiptAttestHooks,
  type AttestOptions,
  type TsaCertificate,
} from '../../src/attest/index.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import { loadVectors } from '../helpers/vectors.js';

interface TimeCase {
  id: string;
  base64: string;
  tsa_certs?: string[];
  cosigners?: Array<{ name: string; public_key: string }>;
  threshold?: number;
  expect: { ok: boolean; codes: string[] };
}

const vectors = loadVectors<TimeCase>('time.json');

async function verify(c: TimeCase) {
  const options: AttestOptions = {};
  if (c.tsa_certs)
    options.tsa = c.tsa_certs.map((pem) => (parseTsaCertificate(pem) as { ok: true; tsa: TsaCertificate }).tsa);
  if (c.cosigners)
    options.cosigners = c.cosigners.map((k) => ({
      key: new Uint8Array(Buffer.from(k.public_key, 'base64')),
      name: k.name,
    }));
  if (c.threshold !== undefined) options.threshold = c.threshold;
  const hooks = receiptAttestHooks(options);
  return hooks.finish(
    await verifyReceipt(new Uint8Array(Buffer.from(c.base64, 'base64')), {
      extensions: hooks.extensions,
      onLine: hooks.onLine,
    }),
  );
}

describe('vectors/time.json', () => {
  test.each(vectors.cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const r = await verify(c);
    expect({ ok: r.ok, codes: r.problems.map((p) => p.code) }).toEqual(c.expect);
  });

  test('the valid token names its TSA and time in what the receipt proves', async () => {
    const r = await verify(vectors.cases.find((c) => c.id === 'timestamp-valid')!);
    expect(r.proves.join('\n')).toMatch(
      /^Steps 0–5 existed no later than 20\d\d-[^ ]+Z, per TSA stepchain vectors TSA: /m,
    );
  });
});
