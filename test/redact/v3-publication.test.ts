import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { sealV3 } from '../../src/record/v3.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { checkPublicRecordV3, publicRecordV3 } from '../../src/redact/v3-public.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { published } from './v3-helpers.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

// The worked example of docs/design/format-v3.md §1 (seed fixed there for reproducibility).
const seed = sha('stepchain/v3 example seed (fixed for the example only)');
const content = {
  error: null,
  input: { note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.' },
  kind: 'step',
  model: 'gpt-4o-2024-08-06',
  prompt: 'Call the API.',
  ref: null,
  result: { status: 200 },
  tool_call: { arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' }, name: 'http' },
};
const texts = Object.fromEntries(Object.entries(content).map(([k, v]) => [k, canonicalJson(v)]));
const sealed = sealV3(texts, {
  seq: 0,
  stepId: 's0',
  ts: '2026-11-27T10:00:00.000Z',
  prevHash: 'sha256:' + sha('example genesis'),
  seed,
});
const policy = compilePolicy({
  rules: [
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'secrets', detectors: ['email'] },
  ],
});

describe('v3 public form of one record', () => {
  it('is the design example byte for byte', () => {
    const record = JSON.parse(sealed.line);
    const pub = publicRecordV3(record, sealed.bind, policy);
    const line = canonicalJson(pub.record, { refuseReserved: false });
    const design = readFileSync(new URL('../../docs/design/format-v3.md', import.meta.url), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('{"bind":'));
    expect(line).toBe(design);
    expect(line).toContain(
      '"tool_call":{"arguments":{"$stepchain:withheld":["sha256:918b581c0716a85d9d0cd076d56db99bc7a8283f5b65de0e73265c07465aaf4e"]',
    );
    expect(pub.declarations).toEqual([
      { seq: 0, path: '/input/note', rule: 'secrets', chunk: 0 },
      { seq: 0, path: '/tool_call/arguments/api_key', rule: 'tool-secrets' },
    ]);
    expect(checkPublicRecordV3(pub.record, { stepHash: true })).toEqual([]);
    expect(line).not.toContain('alice');
    expect(line).not.toContain('k-live');
  });
});

describe('a published v3 receipt against the original head', () => {
  it('round trips: valid with the original head; every withheld unit declared where it stands', async () => {
    const { pub, bytes, head } = await published();
    const report = await verifyPublishedReceipt(bytes, { expectHead: head });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.verdict).toBe('authenticated');
    expect(report.unbound_count).toBe(0);
    // meta is withheld in every step, present (seq 2) or not: absence is committed, so the absent ones are decoys.
    expect(pub.declarations).toEqual([
      { seq: 0, path: '/meta', rule: 'meta' },
      { seq: 1, path: '/meta', rule: 'meta' },
      { seq: 1, path: '/prompt/1', rule: 'user-msg' },
      { seq: 1, path: '/tool_call/arguments/api_key', rule: 'tool-secrets' },
      { seq: 2, path: '/input/approved', rule: 'pin' },
      { seq: 2, path: '/input/note', rule: 'secrets', chunk: 0 },
      { seq: 2, path: '/input/pin', rule: 'pin' },
      { seq: 2, path: '/meta', rule: 'meta' },
      { seq: 2, path: '/result/contact', rule: 'secrets' },
      { seq: 3, path: '/meta', rule: 'meta' },
    ]);
    expect(report.redactions).toBe(pub.declarations.length);
    expect(
      (await verifyPublishedReceipt(bytes, { expectHead: 'sha256:' + '0'.repeat(64) })).problems.map((p) => p.code),
    ).toContain('HEAD_MISMATCH');
  });

  it('shows the rest of the long note proven, the e-mail chunk withheld', async () => {
    const { pub } = await published();
    const r = JSON.parse(pub.lines[2]!);
    expect(r.input.note['$stepchain:chunks'][0]).toEqual({ '$stepchain:withheld': expect.stringMatching(/^sha256:/) });
    expect(r.input.note['$stepchain:chunks'].slice(1).join('')).toBe('invoice INV-9 before Friday.');
  });
});

describe('diff of two v3 publications', () => {
  it('names withheld units as withheld and shows the proven text around a withheld chunk', async () => {
    const { renderValue, describeField } = await import('../../src/diff/summary.js');
    const { pub } = await published();
    const r = JSON.parse(pub.lines[2]!);
    // pin and approved are withheld members: one entry, their names withheld too.
    expect(renderValue(r.input, 500)).toBe('{"note":‹withheld›"invoice INV-9 before Friday.",‹2 withheld›}');
    expect(renderValue(r.meta, 50)).toBe('‹withheld›');
    expect(
      describeField(
        { path: '/input/$stepchain:withheld', kind: 'removed', a: r.input['$stepchain:withheld'] } as never,
        100,
      ),
    ).toMatch(/^input \(its withheld members\) removed/);
  });
});

describe('opening one withheld unit of a v3 publication', () => {
  it('opens a member, a chunk and a slot; a wrong value, salt or place is refused; it reveals that unit only', async () => {
    const { openUnitV3, verifyUnitOpening } = await import('../../src/redact/v3-opening.js');
    const { j, pub, bytes } = await published();
    const md = pub.plan.manifestDigest;
    const pin = await openUnitV3(j, 2, '/input/pin', md);
    expect(await verifyUnitOpening(bytes, pin)).toMatchObject({ ok: true, value: '4711' });
    const chunk = await openUnitV3(j, 2, '/input/note', md, 0);
    expect(chunk.value).toBe('Please contact alice.liddell+test@example.org about the overdue ');
    expect((await verifyUnitOpening(bytes, chunk)).ok).toBe(true);
    const meta = await openUnitV3(j, 2, '/meta', md);
    expect(await verifyUnitOpening(bytes, meta)).toMatchObject({ ok: true, value: { operator: 'ops' } });
    const codeOf = async (p: unknown) => (await verifyUnitOpening(bytes, p)).problems[0]?.code;
    expect(await codeOf({ ...pin, value: '4712' })).toBe('COMMITMENT_MISMATCH');
    expect(await codeOf({ ...pin, salts: 'AAAAAAAAAAAAAAAAAAAAAA' })).toBe('COMMITMENT_MISMATCH');
    expect(
      await codeOf({
        ...pin,
        salts: Buffer.concat([Buffer.from(pin.salts, 'base64url'), Buffer.alloc(16)]).toString('base64url'),
      }),
    ).toBe('COMMITMENT_MISMATCH');
    expect(await codeOf({ ...pin, path: '/result/price' })).toBe('NOT_REDACTED');
    expect(await codeOf({ ...pin, manifest_digest: 'sha256:' + '0'.repeat(64) })).toBe('MANIFEST_MISMATCH');
    expect(await codeOf({ ...pin, extra: 1 })).toBe('PROOF_INVALID');
    // The member opening binds the name as well: the same salt and value under another name do not open it.
    expect(await codeOf({ ...pin, path: '/input/approved' })).toBe('COMMITMENT_MISMATCH');
  });
});
