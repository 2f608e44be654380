/**
 * Properties (fast-check) of publishing v2 journals (REDACTION §12): for generated journals and policies,
 * the public receipt verifies against the journal's own head, and no withheld value — no string leaf of a
 * withheld slot or of a value redacted inside a view — nor any private salt appears in the public bytes.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { slotSalt } from '../../src/record/commitments.js';
import { STEP_V2 } from '../../src/record/v2.js';
import type { Json, StepInput } from '../../src/record/index.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { planCommittedPublication } from '../../src/redact/commit-publish.js';
import { openSlot } from '../../src/redact/opening.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { MemoryStore } from '../../src/store/index.js';
import * as arb from '../../src/testing/arbitraries.js';
import { archiveText, CREATED_AT } from './helpers.js';

/** Every string leaf made unique (a counter and a random tail), so a leaf found in the bytes can only be that leaf. */
function uniquify(v: Json, next: () => string): Json {
  if (typeof v === 'string') return `${v}~${next()}`;
  if (Array.isArray(v)) return v.map((x) => uniquify(x, next));
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, uniquify(x, next)]));
  return v;
}

function strings(v: Json, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

const ruleArb = fc.oneof(
  fc
    .constantFrom(
      ['/prompt'],
      ['/meta'],
      ['/input'],
      ['/result/*'],
      ['/tool_call/arguments/**'],
      ['/**'],
      ['/input/*', '/meta/*'],
    )
    .map((paths) => ({ paths })),
  fc.constantFrom(['email'], ['api-key', 'email']).map((detectors) => ({ detectors })),
);
const policyArb = fc
  .array(ruleArb, { minLength: 1, maxLength: 3 })
  .map((rules) => ({ rules: rules.map((r, i) => ({ id: `r${i}`, ...r })) }));
const EMAIL = 'carol.mcgill@example.net';

test('publish → verify against the original head; nothing withheld and no private salt in the public bytes', async () => {
  await fc.assert(
    fc.asyncProperty(
      arb.steps({ minLength: 1, maxLength: 4 }),
      policyArb,
      fc.boolean(),
      async (generated, policyDoc, plantEmail) => {
        let n = 0;
        const tail = Math.random().toString(36).slice(2, 10);
        const next = (): string => `${n++}-${tail}`;
        const steps: StepInput[] = generated.map((s, i) => {
          const u = uniquify(s as unknown as Json, next) as unknown as StepInput;
          return plantEmail && i === 0 ? { ...u, input: { note: `write to ${EMAIL} today`, was: u.input ?? null } } : u;
        });
        const store = new MemoryStore({ blobThreshold: 1024 });
        const j = await store.create('p', { format: 'stepchain/v2', createdAt: CREATED_AT, journalId: 'prop' });
        for (const s of steps) await j.append(s);
        const pub = await planCommittedPublication(j, { policy: compilePolicy(policyDoc) });
        const parts: Uint8Array[] = [];
        for await (const c of writeReceipt(pub.plan)) parts.push(Uint8Array.from(c));
        const bytes = concatBytes(parts);
        const head = (await j.head())!.step_hash;
        const report = await verifyPublishedReceipt(bytes, { expectHead: head });
        expect(report.problems).toEqual([]);
        const text = archiveText(bytes);
        const hidden: string[] = [];
        for (const w of pub.withheld) {
          const o = await openSlot(j, w.seq, w.slot, pub.plan.manifestDigest);
          hidden.push(...strings((o.blob ?? o.value ?? null) as Json), o.salt);
        }
        for (const r of pub.redactions) hidden.push(...strings(r.value));
        for await (const l of j.lines()) {
          const salt = (JSON.parse(l.text) as { salt: string }).salt;
          hidden.push(salt);
          for (const slot of pub.withheld.filter((w) => w.seq === l.seq).map((w) => w.slot))
            hidden.push(slotSalt(salt, slot, STEP_V2.redactable));
        }
        if (plantEmail && policyDoc.rules.some((r) => 'detectors' in r)) expect(text).not.toContain(EMAIL);
        for (const s of hidden) if (s.length >= 6) expect(text.includes(JSON.stringify(s).slice(1, -1)), s).toBe(false);
      },
    ),
    { numRuns: 40 },
  );
}, 120_000);
