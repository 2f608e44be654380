/**
 * A thread's checkpoint tree read from its records (spec/LANGGRAPH.md §4): in journal order, each
 * checkpoint with its parent, whether it is a fork, and whether its parent pointer holds. Needs no
 * serializer and no saver: an auditor runs it over the records of a verified receipt or journal.
 */
import type { StepRecord } from '../../journal.js';
import { readRecord } from './records.js';

export interface ThreadCheckpoint {
  seq: number;
  step_hash: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  /**
   * True when the parent is not the checkpoint of the latest checkpoint record before this one: the thread
   * went back in time (a replay or an `updateState` on an old checkpoint) and a new branch starts here.
   */
  fork: boolean;
  /**
   * True when the parent pointer names an earlier record that holds that checkpoint with that step hash, or
   * names none (seq and step_hash null) and no earlier record holds that checkpoint.
   */
  parent_ok: boolean;
  /** `metadata.source` when the metadata is stored as JSON text (LangGraph's serializer): input, loop, update or fork. */
  source: string | null;
}

export async function readThread(
  records: Iterable<StepRecord> | AsyncIterable<StepRecord>,
): Promise<ThreadCheckpoint[]> {
  const out: ThreadCheckpoint[] = [];
  const seen = new Map<string, { seq: number; step_hash: string }>();
  let previous: string | null = null;
  for await (const rec of records) {
    const r = readRecord(rec);
    if (r?.kind !== 'langgraph.checkpoint') continue;
    const p = r.parent;
    const held = p === null ? undefined : seen.get(p.checkpoint_id);
    const parentOk =
      p === null ||
      (held === undefined
        ? p.seq === null && p.step_hash === null
        : held.seq === p.seq && held.step_hash === p.step_hash);
    out.push({
      seq: rec.seq,
      step_hash: rec.step_hash,
      checkpoint_id: r.checkpoint_id,
      parent_checkpoint_id: p?.checkpoint_id ?? null,
      fork: p !== null && previous !== null && p.checkpoint_id !== previous,
      parent_ok: parentOk,
      source: sourceOf(r.metadata),
    });
    seen.set(r.checkpoint_id, { seq: rec.seq, step_hash: rec.step_hash });
    previous = r.checkpoint_id;
  }
  return out;
}

function sourceOf(metadata: { type: string; text?: string }): string | null {
  if (metadata.type !== 'json' || typeof metadata.text !== 'string') return null;
  try {
    const m = JSON.parse(metadata.text) as { source?: unknown };
    return typeof m.source === 'string' ? m.source : null;
  } catch {
    return null;
  }
}
