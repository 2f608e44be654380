// The sequencer's precommit (RecordProfile.precommit): a v3 batch's roots are hashed together before the
// batch is sequenced; every line must be the line sealV3 gives that record alone, and a record whose seal
// throws fails its own group only, as when each record was sealed in turn.
import { describe, expect, test } from 'vitest';
import { STEP_V3, sealV3 } from '../../src/record/v3.js';
import { CommitError } from '../../src/record/v3/commit.js';
import { prepareSteps } from '../../src/store/prepare.js';
import { NO_STEPS, sequenceBatch } from '../../src/store/sequencer.js';

const NOW = '2026-01-01T00:00:01.000Z';
const TAIL = { seq: -1, hash: 'sha256:' + '0'.repeat(64) };
const inputs = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({
    step_id: `${tag}-${i}`,
    input: { i, note: `step ${i} of ${tag} `.repeat(8) },
    tool_call: { name: 'send', arguments: { to: `user-${i}`, amount: i } },
    // A copy's seed on some records: the precommit must take it, not draw one.
    ...(i % 3 === 0 ? { seed: (i % 16).toString(16).repeat(64) } : {}),
  }));

describe('sequenceBatch: v3 roots worked out for the whole batch first', () => {
  test('every line equals the record sealed alone with its seed; a malformed part reference fails its group only', () => {
    const first = prepareSteps(inputs(40, 'a'), 65536, STEP_V3);
    const [bad] = prepareSteps([{ input: 'x' }], 65536, STEP_V3);
    const broken = { ...bad!, texts: { ...bad!.texts, input: '{"$stepchain:part":{"digest":"sha256:nope"}}' } };
    const last = prepareSteps(inputs(30, 'c'), 65536, STEP_V3);
    const batch = sequenceBatch([{ steps: first }, { steps: [broken] }, { steps: last }], TAIL, NO_STEPS, NOW);

    expect(batch.outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const failed = batch.outcomes[1] as { ok: false; error: unknown };
    expect(failed.error).toBeInstanceOf(CommitError);
    expect((failed.error as CommitError).code).toBe('MARKER_INVALID');

    const steps = [...first, ...last];
    expect(batch.lines).toHaveLength(steps.length);
    let prev = TAIL.hash;
    batch.lines.forEach((line, k) => {
      const record = JSON.parse(line.text) as { seed: string; step_id: string; prev_hash: string };
      expect(record.prev_hash).toBe(prev);
      const step = steps[k]!;
      if (step.seed !== undefined) expect(record.seed).toBe(step.seed);
      const alone = sealV3(step.texts, { seq: k, stepId: record.step_id, ts: NOW, prevHash: prev, seed: record.seed });
      expect(line.text).toBe(alone.line);
      expect(line.hash).toBe(alone.stepHash);
      prev = line.hash;
    });
    expect(steps.filter((s) => s.seed !== undefined).length).toBeGreaterThan(0);
    // Drawn seeds are distinct (each record its own).
    const seeds = batch.lines.map((l) => (JSON.parse(l.text) as { seed: string }).seed);
    const drawn = seeds.filter((_, k) => steps[k]!.seed === undefined);
    expect(new Set(drawn).size).toBe(drawn.length);
  });
});
