import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { sealV3 } from '../../src/record/v3.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { checkPublicRecordV3, publicRecordV3 } from '../../src/redact/v3-public.js';

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
const sealed = sealV3(texts, { seq: 0, stepId: 's0', ts: '2026-11-27T10:00:00.000Z', prevHash: 'sha256:' + sha('example genesis'), seed });
const policy = compilePolicy({ rules: [{ id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] }, { id: 'secrets', detectors: ['email'] }] });

describe('v3 public form of one record', () => {
  it('is the design example byte for byte', () => {
    const record = JSON.parse(sealed.line);
    const pub = publicRecordV3(record, sealed.bind, policy);
    const line = canonicalJson(pub.record, { refuseReserved: false });
    const design = readFileSync(new URL('../../docs/design/format-v3.md', import.meta.url), 'utf8').split('\n').find((l) => l.startsWith('{"bind":'));
    expect(line).toBe(design);
    expect(line).toContain('"tool_call":{"arguments":{"$stepchain:withheld":["sha256:918b581c0716a85d9d0cd076d56db99bc7a8283f5b65de0e73265c07465aaf4e"]');
    expect(pub.declarations).toEqual([
      { seq: 0, path: '/input/note', rule: 'secrets', chunk: 0 },
      { seq: 0, path: '/tool_call/arguments/api_key', rule: 'tool-secrets' },
    ]);
    expect(checkPublicRecordV3(pub.record, { stepHash: true })).toEqual([]);
    expect(line).not.toContain('alice');
    expect(line).not.toContain('k-live');
  });
});
