/** Builds real chains (genesis + sealed lines) for tests, with deterministic ids and times. */
import {
  genesisHash,
  makeGenesis,
  sealRecord,
  type Genesis,
  type Json,
  type StepRecord,
} from '../../src/record/index.js';

export interface BuiltChain {
  genesis: Genesis;
  records: StepRecord[];
  lines: string[];
  bytes: Uint8Array;
}

export interface ContentSpec {
  input?: Json;
  model?: Json;
  prompt?: Json;
  tool_call?: Json;
  result?: Json;
  meta?: { [k: string]: Json };
}

export function buildChain(
  contents: ContentSpec[],
  genesis: Genesis = makeGenesis({ journalId: 'test-journal', createdAt: '2026-01-01T00:00:00.000Z' }),
): BuiltChain {
  let prev = genesisHash(genesis);
  const records: StepRecord[] = [];
  const lines: string[] = [];
  contents.forEach((c, seq) => {
    const { record, line } = sealRecord({
      v: 1,
      seq,
      step_id: `step-${seq}`,
      ts: new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString(),
      prev_hash: prev,
      input: c.input ?? null,
      model: c.model ?? null,
      prompt: c.prompt ?? null,
      tool_call: c.tool_call ?? null,
      result: c.result ?? null,
      ...(c.meta ? { meta: c.meta } : {}),
    });
    prev = record.step_hash;
    records.push(record);
    lines.push(line);
  });
  return { genesis, records, lines, bytes: new TextEncoder().encode(lines.join('')) };
}
