/**
 * A run journal's records for diff with each `ref` (the step_id of the started record an outcome ends, a
 * random UUID per run) replaced by what it points at: how many records back that started record is.
 * DIFF.md §3.1 compares `ref` as a raw value for run journals and its ignore patterns do not accept it
 * yet, so two identical runs could never diff as `same`; everything an adapter records is still compared.
 */
import type { Journal, StepRecord } from '../../src/index.js';

export async function withRefsAsOffsets(journal: Journal): Promise<StepRecord[]> {
  const out: StepRecord[] = [];
  const seqOf = new Map<string, number>();
  for await (const r of journal.read()) {
    seqOf.set(r.step_id, r.seq);
    const ref = (r as { ref?: unknown }).ref;
    out.push(typeof ref === 'string' ? ({ ...r, ref: `-${r.seq - (seqOf.get(ref) ?? Number.NaN)}` } as StepRecord) : r);
  }
  return out;
}
