/** Builds real chains (genesis + sealed lines) for tests, with deterministic ids and times. */
import type { LineBatch } from '../../src/chain/batch.js';
import type { VerifiedLine } from '../../src/chain/index.js';
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

/** `lines` (each a text or its bytes, without its newline) packed as one batch for chain/batch.ts checkBatch. */
export function lineBatch(format: string, lines: readonly (string | Uint8Array)[]): LineBatch {
  const bytes = lines.map((l) => (typeof l === 'string' ? new TextEncoder().encode(l) : l));
  const ends = new Uint32Array(bytes.length);
  let at = 0;
  bytes.forEach((b, i) => void (ends[i] = at += b.length));
  const all = new Uint8Array(at);
  at = 0;
  for (const b of bytes) all.set(b, (at += b.length) - b.length);
  return { format, bytes: all, ends };
}

/** The fields of a bare v1 record at `seq` after `prev` (model "m", the result `result`), for sealRecord. */
export function v1Fields(seq: number, prev: string, result: unknown = seq): Record<string, unknown> {
  return {
    v: 1,
    seq,
    step_id: `s-${seq}`,
    ts: '2026-01-01T00:00:00.000Z',
    prev_hash: prev,
    input: null,
    model: 'm',
    prompt: null,
    tool_call: null,
    result,
  };
}

/** What an observer sees of a verified line, its text included. */
export function seenLine(l: VerifiedLine) {
  return {
    file: l.file,
    line: l.line,
    text: l.text,
    seq: l.seq,
    step_hash: l.step_hash,
    clean: l.clean,
    blobs: l.blobs,
    markers: l.markers,
  };
}
