/**
 * Whatever `export` and `publish` write, `verify` accepts (issue 14 item 3). The writers and the verifier
 * share limits (spec/RECEIPT.md §6); a bound the verifier enforced that the writer did not know — a
 * 256:1 compression ratio — made a 40 MB log line of one character unverifiable. Journals here mix
 * arbitrary steps with large repetitive values (up to 24 MiB, and one run of 40 MiB), in bare tar and gzip,
 * whole and partial, signed and unsigned.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { StepInput } from '../../src/record/index.js';
import { publish, RedactError, verifyPublishedFile } from '../../src/redact/index.js';
import { exportReceipt, keyPairFromSeed, verifyReceiptFile } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { step } from '../../src/testing/arbitraries.js';
import { tempDir } from '../helpers/tmp.js';
import { testSeed } from './fixture.js';

const dir = tempDir('stepchain-writes-verify-');
const key = keyPairFromSeed(testSeed(3));
const MiB = 1024 * 1024;

/** A value that compresses extremely well: one short unit repeated to `mib` MiB. */
const repetitive = fc
  .record({ unit: fc.constantFrom('a', '0', 'ab', ' \n', '{"k":1},'), mib: fc.integer({ min: 1, max: 24 }) })
  .map(({ unit, mib }) => unit.repeat(Math.ceil((mib * MiB) / unit.length)));

/** Steps, printed in a counterexample by their sizes: a 24 MiB value would drown the report. */
function stepsOf(steps: StepInput[]): StepInput[] {
  return Object.assign(steps, {
    [fc.toStringMethod]: () =>
      `[${steps
        .map((s) => {
          const t = JSON.stringify(s);
          return t.length > 200 ? `<step of ${t.length} characters: ${t.slice(0, 80)}…>` : t;
        })
        .join(', ')}]`,
  });
}

const journalSteps = fc
  .tuple(fc.array(step(), { minLength: 1, maxLength: 6 }), fc.option(fc.tuple(repetitive, fc.nat()), { freq: 2 }))
  .map(([steps, big]) => {
    if (big) {
      const [value, at] = big;
      const i = at % steps.length;
      steps[i] = { ...steps[i]!, result: { log: value } };
    }
    return stepsOf(steps);
  });

let runs = 0;
async function journalOf(steps: StepInput[]) {
  const j = await new MemoryStore().create(`j${runs++}`, {
    journalId: 'writes-verify',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  for (const s of steps) await j.append(s);
  return j;
}

/** The issue's case: a 40 MB log of one character. */
const forty = stepsOf([
  { input: { q: 'before' }, model: 'm', prompt: 'p', tool_call: null, result: 1 },
  { input: { q: 'log' }, model: 'm', prompt: 'p', tool_call: null, result: { log: 'a'.repeat(40 * 1024 * 1024) } },
]);

describe('what the writers write, the verifier accepts', () => {
  test('export: every journal, range, compression and signing verifies, pinned to its key and head', async () => {
    await fc.assert(
      fc.asyncProperty(
        journalSteps,
        fc.boolean(),
        fc.boolean(),
        fc.nat(),
        fc.nat(),
        async (steps, gzip, sign, a, b) => {
          const j = await journalOf(steps);
          const from = Math.min(a, b) % steps.length;
          const to = from + (Math.max(a, b) % (steps.length - from));
          const out = join(dir, `export-${runs}.${gzip ? 'tar.gz' : 'tar'}`);
          const result = await exportReceipt(j, { out, from, to, ...(sign ? { sign: key.privateKey } : {}) });
          const report = await verifyReceiptFile(out, {
            expectHead: result.head.step_hash,
            ...(sign ? { publicKey: key.publicKey } : {}),
          });
          expect(report.problems).toEqual([]);
          expect(report.ok).toBe(true);
          expect(report.steps).toBe(to - from + 1);
        },
      ),
      { numRuns: 14, endOnFailure: true, examples: [[forty, true, false, 0, 1]] },
    );
  }, 240_000);

  test('publish: every journal that publishes gives a receipt that verifies as a published receipt', async () => {
    let published = 0;
    await fc.assert(
      fc.asyncProperty(journalSteps, fc.boolean(), async (steps, gzip) => {
        const j = await journalOf(steps);
        const out = join(dir, `publish-${runs}.${gzip ? 'tar.gz' : 'tar'}`);
        try {
          await publish(j, {
            policy: { rules: [{ id: 'models', paths: ['/model'] }] },
            optIn: true,
            out,
            sign: key.privateKey,
          });
        } catch (e) {
          // A refusal (a leak the sweep found in random text) writes nothing, so there is nothing to verify.
          if (e instanceof RedactError) return;
          throw e;
        }
        published++;
        const report = await verifyPublishedFile(out, { publicKey: key.publicKey });
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
      }),
      { numRuns: 10, endOnFailure: true, examples: [[forty, true]] },
    );
    expect(published).toBeGreaterThanOrEqual(6);
  }, 240_000);
});
