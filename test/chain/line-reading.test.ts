/**
 * What a batch's thread reads of each run record for the thread that links the chain (chain/line-reading.ts):
 * whether its kind is "step", its step_id, and its call as the approval check reads it before the first
 * request. Property: for any sealed v3 line — any kind, any step_id (quotes and backslashes included), any
 * call, with look-alikes of the call's tail nested in its values — the batch's reading is exactly what
 * record/line-members.ts and approval/calls.ts read from the text (the call's compared form as its digest),
 * and the rest of the line's facts are the per-line check's.
 */
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storedCall, storedKey } from '../../src/approval/calls.js';
import { checkBatch, unpackFacts, type LineCheckPool } from '../../src/chain/batch.js';
import { checkLine, type LineFacts } from '../../src/chain/line.js';
import { kindIsStep, stepIdOf } from '../../src/record/line-members.js';
import { journalFormat } from '../../src/record/formats.js';
import { FORMAT_V1 } from '../../src/record/v1.js';
import { FORMAT_V3 } from '../../src/record/v3.js';
import { buildChain, lineBatch as batchOf } from '../helpers/chains.js';
import { sealedV3 as sealed, trickyValue as value } from '../helpers/sealed-lines.js';
import { alice, tempDir, v3Run } from '../approval/helpers.js';

/** What the linking thread read from the text before (verifier.ts, cli/run-notes.ts). */
function fromText(text: string): LineFacts['reading'] {
  const kindAndId = { kindIsStep: kindIsStep(text), stepId: stepIdOf(text) };
  // The text's own reading (APPROVALS.md §5 steps 3, 4): a null tool_call dates the chain by the record's ts,
  // any other call is read from the line or the line is parsed; a tool.started is parsed (its call may be in input).
  const end = text.lastIndexOf(',"ts":"');
  const started = (JSON.parse(text) as { kind: unknown }).kind === 'tool.started';
  if (!started && end > 0 && text.startsWith('"tool_call":null', end - '"tool_call":null'.length))
    return { ...kindAndId, call: null, ts: (JSON.parse(text) as { ts: string }).ts };
  const call = storedCall(text);
  return {
    ...kindAndId,
    call: call === null ? 'parse' : { id: call.id, seq: call.seq, ts: call.ts, ...storedKey(call.form) },
  };
}

/** A reading with its call's digest as its own 32 characters (unpacked, it is read in place in the batch's digests). */
function ownDigest(reading: LineFacts['reading']): LineFacts['reading'] {
  const call = reading?.call;
  if (typeof call !== 'object' || call === null) return reading;
  return { ...reading!, call: { ...call, digest: call.digest.slice(call.digestAt, call.digestAt + 32), digestAt: 0 } };
}

const record = fc.record({
  kind: fc.constantFrom('step', 'tool.started', 'tool.completed', 'model.started', 'approval.requested', 'steps'),
  stepId: fc.oneof(fc.string({ minLength: 1 }), fc.constantFrom('a"b', 'a\\b', 'é\u2028', 'x')),
  call: fc.option(
    fc.record({
      name: fc.string(),
      arguments: value,
      extra: fc.option(fc.record({ call_id: fc.string(), id: fc.string() }), { nil: undefined }),
    }),
    { nil: undefined },
  ),
  input: fc.option(value, { nil: undefined }),
  meta: fc.option(fc.constantFrom({ approval: { request: 'r' } }, { agent: 'a' }), { nil: undefined }),
  seq: fc.nat({ max: 1_000_000 }),
});

describe("a batch's reading of each run record", () => {
  it("is what the linking thread reads from the text, beside the per-line check's facts", () => {
    const format = journalFormat(FORMAT_V3)!;
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 8 }), (recs) => {
        const lines = recs.map((r) =>
          sealed(
            {
              kind: r.kind,
              input: r.input,
              tool_call:
                r.call === undefined
                  ? null
                  : { ...(r.call.extra ?? {}), arguments: r.call.arguments, name: r.call.name },
              meta: r.meta,
            },
            r.seq,
            r.stepId,
            '2026-11-27T10:00:00.000Z',
          ),
        );
        const packed = checkBatch(batchOf(FORMAT_V3, lines))!;
        lines.forEach((text, i) => {
          const { reading, ...facts } = unpackFacts(packed, i);
          expect(ownDigest(reading)).toEqual(fromText(text));
          const alone = checkLine(text, format);
          expect(alone.reading).toBeUndefined();
          expect(facts.problems).toEqual(alone.problems);
          expect([facts.seq, facts.prevHash, facts.stepHash]).toEqual([alone.seq, alone.prevHash, alone.stepHash]);
        });
      }),
      { numRuns: 150 },
    );
  });

  it('is absent for a format without run records (v1), and for a line that is not readable', () => {
    const chain = buildChain([{ prompt: 'a' }, { prompt: 'b' }]);
    const v1 = checkBatch(
      batchOf(
        FORMAT_V1,
        chain.lines.map((l) => l.slice(0, -1)),
      ),
    )!;
    expect(v1.readings).toBeUndefined();
    expect(unpackFacts(v1, 0).reading).toBeUndefined();
    const v3 = checkBatch(batchOf(FORMAT_V3, ['{"kind":"step"', 'not json']))!;
    expect(unpackFacts(v3, 0).reading).toBeUndefined();
    expect(unpackFacts(v3, 1).reading).toBeUndefined();
  });
});

describe('the approval check from the readings', () => {
  it('finds a call run before its request (and the same report) when the lines are checked in batches', async () => {
    const dir = tempDir();
    try {
      const { run } = await v3Run(dir);
      await run.beginTool({ name: 'lookup', args: { q: 'x' } }).then((e) => e.complete({ ok: true }));
      const call = { name: 'wire_money', args: { to: 'mallory', eur: 9000 } };
      const early = await run.beginTool(call);
      await early.complete({ sent: true });
      const req = await run.requestApproval(call);
      await run.decideApproval(req, 'denied', { key: alice.privateKey, name: 'alice', reason: 'no' });
      const approvers = [{ key: alice.publicKey, name: 'alice' }];
      const alone = await run.journal.verify({ approvers });
      // A pool that checks each batch on this thread, as a worker would: small batches, several lines each.
      const pool: LineCheckPool = { threads: 1, batchBytes: 900, check: (b) => Promise.resolve(checkBatch(b)) };
      const batched = await run.journal.verify({ approvers, pool });
      expect(alone.problems.map((p) => [p.code, p.location.seq])).toEqual([['APPROVAL_MISSING', early.seq]]);
      expect(batched.problems).toEqual(alone.problems);
      expect(batched.approvals).toEqual(alone.approvals);
      await run.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
