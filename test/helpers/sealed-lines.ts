/**
 * Sealed stepchain/v3 lines from any values, and values built to fool a reader of a stored line's tail: what
 * the property tests of the readers that skip parsing share (test/chain/line-reading.test.ts,
 * test/approval/stored-call.test.ts).
 */
import fc from 'fast-check';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { STEP_V3 } from '../../src/record/v3.js';

export const SEED = 'ab'.repeat(32);
export const PREV = 'sha256:' + 'cd'.repeat(32);

/** A value that holds the tail's own shape: `"step_id":…,"tool_call":{…}` nested where a reader could be fooled. */
export const lookalike = fc.record({
  seq: fc.nat(),
  step_hash: fc.constant(PREV),
  step_id: fc.string(),
  tool_call: fc.record({ arguments: fc.jsonValue({ maxDepth: 2 }), name: fc.string() }),
});

/** Any JSON value, a look-alike, or a look-alike nested in a value. */
export const trickyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  lookalike,
  fc.record({ x: lookalike, y: fc.string() }),
);

/** `step` sealed as a v3 line at `seq` (its trailing newline cut), chained to PREV. */
export function sealedV3(step: Record<string, unknown>, seq: number, stepId: string, ts: string): string {
  const texts: Record<string, string> = {};
  for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'])
    texts[f] = canonicalJson(step[f] ?? null);
  if (step.meta !== undefined) texts.meta = canonicalJson(step.meta);
  return STEP_V3.seal(texts as never, { seq, stepId, ts, prevHash: PREV, seed: SEED }).line.slice(0, -1);
}
