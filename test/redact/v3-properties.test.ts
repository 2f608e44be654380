/**
 * Properties of v3 publication (REDACTION.md §13): for any journal, any policy and any single change to any
 * byte of what a publication shows (its public records), verification against the original head fails —
 * also when the outsider recomputes every manifest digest; and every publication round trips.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { published, reforge, v3Journal } from './v3-helpers.js';

const word = fc.constantFrom(
  'alice',
  'bob',
  'pay',
  'yes',
  'no',
  '4711',
  'carol@example.com',
  'note',
  'a "quoted" word',
  'ünïcödé ✓',
  'tab\there',
);
const text = fc.array(word, { minLength: 1, maxLength: 24 }).map((w) => w.join(' '));
const leaf = fc.oneof(text, fc.integer({ min: -1000, max: 1000 }), fc.boolean(), fc.constant(null));
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('to', 'amount', 'pin', 'email', 'list', 'x'), tie('v'), { maxKeys: 3 }),
  ),
})).v;
const step = fc.record(
  {
    input: value,
    prompt: fc.oneof(
      text,
      fc.array(fc.record({ role: fc.constantFrom('user', 'system'), content: text }), { maxLength: 3 }),
    ),
    result: value,
    tool_call: fc.record({ name: fc.constantFrom('pay', 'http'), arguments: value }),
  },
  { requiredKeys: ['input'] },
);

const POLICIES = [
  { rules: [{ id: 'none', paths: ['/input/nothing-here'] }] },
  {
    rules: [
      { id: 'pin', paths: ['/input/pin', '/**/email'] },
      { id: 'secrets', detectors: ['email'] },
    ],
  },
  {
    rules: [
      { id: 'msgs', paths: ['/prompt/1', '/tool_call/arguments/*'], tools: ['pay'] },
      { id: 'meta', paths: ['/meta'] },
    ],
  },
  {
    rules: [
      { id: 'slots', paths: ['/result', '/input/list/0'] },
      { id: 'secrets', detectors: ['email'], paths: ['/input'] },
    ],
  },
].map((p) => compilePolicy(p));

describe('v3 publication properties', () => {
  it('round trips, and any single changed byte of a public record fails against the original head', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 3 }),
        fc.nat(POLICIES.length - 1),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (steps, p, which, at, delta) => {
          const j = await v3Journal(
            steps.map((s, i) => ({ ...s, step_id: `s${i}`, ts: `2026-01-01T00:00:0${i}.000Z` })),
          );
          let made: Awaited<ReturnType<typeof published>>;
          try {
            made = await published(j, POLICIES[p]!);
          } catch (e) {
            // The publisher refuses a policy that selects a value in one place and shows it in another.
            if ((e as { code?: string }).code === 'LEAK_DETECTED') return;
            throw e;
          }
          const { pub, bytes, head } = made;
          expect((await verifyPublishedReceipt(bytes, { expectHead: head })).problems).toEqual([]);
          // No salt of a withheld unit is in the public bytes (hex or base64url).
          const all = Buffer.from(bytes).toString('latin1');
          for (const w of pub.withheld) {
            expect(all).not.toContain(Buffer.from(w.salt).toString('base64url'));
            expect(all).not.toContain(Buffer.from(w.salt).toString('hex'));
          }
          const seq = which % pub.lines.length;
          const line = Buffer.from(pub.lines[seq]!, 'utf8');
          const pos = at % line.length;
          line[pos] = (line[pos]! + delta) % 256;
          const forged = reforge(bytes, (lines) => {
            lines[seq] = line as unknown as string;
          });
          const report = await verifyPublishedReceipt(forged, { expectHead: head });
          expect(report.ok).toBe(false);
        },
      ),
      { numRuns: Number(process.env.V3_PROPERTY_RUNS ?? 60) },
    );
  });
});
