/**
 * The run notes `stepchain verify` prints beside a run journal's verdict (spec/RUNS.md §2, §5; issue 36):
 * what an auditor should see of the run that is not a defect of the chain — effects whose outcome is
 * unknown, decisions recorded for them, boundary anomalies (the others of §2), any step_id repeated in the
 * journal (STEP_ID_REPEATED), and a run that ended with effects pending. Notes, never problems: a valid journal still exits 0. Read from the
 * lines the verifier has just checked, folded as a verifier folds a receipt's (foldLine): a stepchain/v2 or v3 journal, or a
 * complete receipt of one (its lines are the run's records from seq 0).
 */
import type { Store, StoredLine } from '../index.js';
import { emptyState, foldLine, foldReadLine, pendingOf, stepIdOf, type BoundaryAnomaly } from '../record/run-state.js';
import { journalFormat } from '../record/formats.js';
import { RepeatedTexts } from '../record/seen.js';
import { inline } from './safe-text.js';
import type { Output } from './output.js';

export interface RunNote {
  code: 'EFFECT_PENDING' | 'EFFECT_RESOLVED' | 'RUN_ENDED_PENDING' | BoundaryAnomaly['code'];
  seq: number;
  message: string;
}

/** Whether a journal of this format has run notes: stepchain/v2 and stepchain/v3 runs, whose stored lines are their records. */
export function hasRunNotes(format: string | undefined): boolean {
  return journalFormat(format)?.capabilities.runRecords === true;
}

/**
 * Collects the notes of a run from its stored lines, one at a time in seq order (lines that verified clean):
 * a journal's lines read back, or a receipt's lines as its verifier checks them (its onLine hook).
 */
export class RunNoteCollector {
  private readonly state = emptyState();
  // Every step_id, for one repeated anywhere (beyond the idempotency window: within it a repeat is refused or
  // answered with the first); a repeated start is the run reader's own STEP_ID_REPEATED, reported once. Kept
  // for the whole journal, as bytes (record/seen.ts): never a slice of the line it came from.
  private readonly stepIds = new RepeatedTexts();

  add(text: string, seq: number): void {
    foldLine(this.state, text, seq);
    this.stepId(stepIdOf(text), seq);
  }

  /** add, for a line the verifier hands its observer: what it read already (kind, step_id) is not read again. */
  addLine(
    line: { readonly text: string; readonly kindIsStep?: boolean; readonly stepId?: string | null },
    seq: number,
  ): void {
    foldReadLine(this.state, line, seq);
    this.stepId(line.stepId === undefined ? stepIdOf(line.text) : line.stepId, seq);
  }

  private stepId(id: string | null, seq: number): void {
    if (id !== null) this.stepIds.add(id, seq);
  }

  notes(): RunNote[] {
    const state = this.state;
    const notes: RunNote[] = state.anomalies.map((a) => ({ code: a.code, seq: a.seq, message: a.message }));
    // A repeat the run reader reported already (a repeated start) is reported once; looked up by seq, since a
    // hostile journal may repeat one step_id at every seq.
    const reported = new Set(notes.filter((n) => n.code === 'STEP_ID_REPEATED').map((n) => n.seq));
    for (const { seq, text, first } of this.stepIds.repeats()) {
      if (reported.has(seq)) continue;
      notes.push({
        code: 'STEP_ID_REPEATED',
        seq,
        message: `the step at seq ${seq} repeats step_id ${JSON.stringify(text)} of the step at seq ${first}`,
      });
    }
    for (const e of state.effects.values()) {
      if (e.resolution === null) continue;
      notes.push({
        code: 'EFFECT_RESOLVED',
        seq: e.endSeq ?? e.seq,
        message: `effect ${e.id} (${e.tool ?? 'a tool'}, started at seq ${e.seq}) was resolved without an observed outcome: ${e.resolution.decision}, by ${e.resolution.by || 'someone unnamed'}, because ${e.resolution.reason || 'no reason given'}`,
      });
    }
    const pending = pendingOf(state);
    for (const e of pending) {
      notes.push({
        code: 'EFFECT_PENDING',
        seq: e.seq,
        message: `effect ${e.id} (${e.tool ?? 'a tool'}, started at seq ${e.seq}${e.idempotencyKey ? `, key ${e.idempotencyKey}` : ''}) has no outcome: whether it happened is unknown`,
      });
    }
    if (state.status !== 'running' && pending.length > 0) {
      notes.push({
        code: 'RUN_ENDED_PENDING',
        seq: state.lastSeq,
        message: `the run ${state.status === 'completed' ? 'completed' : 'failed'} with ${pending.length} effect${pending.length === 1 ? '' : 's'} pending`,
      });
    }
    return notes.sort((a, b) => a.seq - b.seq);
  }
}

/** A receipt's run notes: a receipt holds the run's records, so its clean lines give the journal's notes (RUNS.md §2, §5). */
export class ReceiptRunNotes {
  private readonly collector = new RunNoteCollector();

  /** The receipt verifier's onLine hook. */
  onLine(line: {
    clean: boolean;
    text: string;
    seq: number | null;
    kindIsStep?: boolean;
    stepId?: string | null;
  }): void {
    if (line.clean && line.seq !== null) this.collector.addLine(line, line.seq);
  }

  /**
   * The notes of a receipt that verified, of a run journal, from seq 0; else null. A partial range lacks the
   * records before it, so its effects' starts (or outcomes) would read as missing when they are only outside it.
   */
  of(report: { ok: boolean; scope?: string | null; genesis?: { format?: string } | null }): RunNote[] | null {
    return report.ok && report.scope === 'complete' && hasRunNotes(report.genesis?.format)
      ? this.collector.notes()
      : null;
  }
}

/** The notes of a run from its stored lines in seq order (lines that verified clean). */
export async function runNotes(lines: AsyncIterable<StoredLine>): Promise<RunNote[]> {
  const collector = new RunNoteCollector();
  for await (const l of lines) collector.add(l.text, l.seq);
  return collector.notes();
}

/** The notes of journal `id` of `store`, from its lines up to `to` (the seq its verify ended at), read-only. */
export async function storedRunNotes(store: Store, id: string, to: number): Promise<RunNote[]> {
  const journal = await store.open(id, { readOnly: true });
  try {
    return await runNotes(journal.lines({ to }));
  } finally {
    await journal.close();
  }
}

/** The notes as the verdict's lines (people's text: content passes through inline). */
export function noteLines(out: Output, notes: readonly RunNote[]): string[] {
  return notes.map((n) => `  ${out.style('cyan', 'note')}     ${inline(n.code)} at seq ${n.seq}: ${inline(n.message)}`);
}
