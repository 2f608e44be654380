/**
 * Erasures a journal records but has not carried out (spec/ERASURE.md §4: an erase killed between its erasure
 * record and the rewrite; verify says ERASURE_PENDING). A fork, a receipt or a publication made then would
 * carry the value the erasure names, and the copy would not even say it must be erased: they are refused
 * until `stepchain erase --resume` completes it. Pure: fed a journal's lines, it answers.
 */
import { toHex } from '../../canonical/sha256.js';
import { V3_SLOTS } from './commit.js';
import { ERASED_MARKER, ERASURE_KIND, collectErased, erasureInputOf, unitAt, type ErasedUnit } from './erasure.js';
import { pathMatches } from './erasure-ledger.js';

/** An erasure recorded at `seq` of `path` in record `target`, whose marker no record holds yet. */
export interface PendingErasure {
  seq: number;
  target: number;
  path: string;
}

const MARKER_ERASURE = /"erasure":("[A-Za-z0-9._:-]+")/g;

/** The stored text of the record at `seq` of the journal a copy reads (null: it holds none). */
export type LineAt = (seq: number) => Promise<string | null>;

/** A LineAt reading one line of `source` (a journal, a chain source). */
export function lineReader(source: {
  lines(range: { from: number; to: number }): AsyncIterable<{ text: string }>;
}): LineAt {
  return async (seq) => {
    for await (const l of source.lines({ from: seq, to: seq })) return l.text;
    return null;
  };
}

/**
 * Fed a whole journal's lines in chain order: the first erasure recorded whose target is in `from..upTo`
 * and that no record's erased marker names. Lines that are not JSON are skipped: judging them is the
 * verifier's work.
 */
export class PendingErasures {
  private readonly recorded: (PendingErasure & { id: string; digest: string })[] = [];
  private readonly carried = new Set<string>();
  /**
   * The erased markers of the lines read with their markers (the copy's own lines), by seq: an erasure whose
   * unit one of them already holds erased is carried out in the copy, whichever record erased it (a replayed
   * copy of a completed erasure record names a marker that names another record: outsider 14, 2).
   */
  private readonly erasedIn = new Map<number, ErasedUnit[]>();

  /**
   * Feeds one line. `markers: false` reads only its erasure records: for lines read after a copy was taken,
   * whose markers must not count as carried out for the copy (it holds the lines as they were when read).
   */
  line(text: string, markers = true): void {
    if (text.includes(`"kind":"${ERASURE_KIND}"`)) {
      const r = parse(text);
      const input = r === null ? 'none' : erasureInputOf(r.input);
      if (
        r?.kind === ERASURE_KIND &&
        typeof input !== 'string' &&
        typeof r.step_id === 'string' &&
        typeof r.seq === 'number'
      )
        this.recorded.push({
          id: r.step_id,
          seq: r.seq,
          target: input.target,
          path: input.path,
          digest: input.digest,
        });
    }
    if (markers && text.includes(ERASED_MARKER)) {
      for (const m of text.matchAll(MARKER_ERASURE)) this.carried.add(JSON.parse(m[1]!) as string);
      const r = parse(text);
      if (r !== null && typeof r.seq === 'number') this.erasedIn.set(r.seq, erasedUnitsOf(r));
    }
  }

  /**
   * The first erasure pending for a step in `from..upTo`: recorded, named by no record's marker, and one that
   * can be carried out — its target, read through `lineAt`, holds the unit at its path with its digest (in
   * clear, or erased by a marker holding that digest: the journal may have been rewritten since the copy read
   * it, and a unit's digest is the same in both forms). A record naming anything else (planted by hand, by an
   * older writer: outsider 14, F8) can never be carried out — resume reports it stuck — and names no value the
   * journal holds, so it is not pending for a copy: refusing it would refuse every fork, export and
   * publication of the journal for good (spec/ERASURE.md §4.1). So is one whose target is not earlier, and one
   * whose unit the copy's own line of the target holds erased already (a replayed record: the copy holds no value).
   */
  async first(upTo: number, from: number, lineAt: LineAt): Promise<PendingErasure | null> {
    for (const p of this.candidates(upTo, from)) {
      if (p.target >= p.seq || this.erasedInCopy(p) || !holdsUnit(await lineAt(p.target), p)) continue;
      return { seq: p.seq, target: p.target, path: p.path };
    }
    return null;
  }

  /** Whether the copy's own line of p's target holds p's unit erased already (by this record or another). */
  private erasedInCopy(p: { target: number; path: string; digest: string }): boolean {
    return (this.erasedIn.get(p.target) ?? []).some((m) => m.digest === p.digest && pathMatches(p.path, m));
  }

  private candidates(upTo: number, from: number): (PendingErasure & { id: string; digest: string })[] {
    return this.recorded.filter((e) => e.target <= upTo && e.target >= from && !this.carried.has(e.id));
  }
}

/** Whether the record `text` holds the unit an erasure names: at its path with its digest, in clear or erased. */
export function holdsUnit(text: string | null, e: { path: string; digest: string }): boolean {
  const r = text === null ? null : parse(text);
  if (r === null) return false;
  try {
    return 'sha256:' + toHex(unitAt(r, e.path).unit.digest) === e.digest;
  } catch {
    return erasedUnitsOf(r).some((m) => m.digest === e.digest && pathMatches(e.path, m));
  }
}

function erasedUnitsOf(r: Record<string, unknown>): ErasedUnit[] {
  const erased: ErasedUnit[] = [];
  for (const slot of V3_SLOTS) collectErased(r[slot], `/${slot}`, erased);
  return erased;
}

/**
 * The first erasure recorded in `later` — a journal's lines past the last one a copy of steps `from..to` read for
 * erasure records — of a step of that range: appended after the copy had read the step, so the copy holds
 * the value (ERASURE.md §4.1). A fork, a receipt or a publication asks just before its output is put in place
 * (under the source's hold), and does not place it when there is one: an erase may commit while the output is
 * being made durable.
 */
export async function erasedSince(
  later: AsyncIterable<{ text: string }>,
  from: number,
  to: number,
  lineAt: LineAt,
): Promise<PendingErasure | null> {
  const pending = new PendingErasures();
  for await (const l of later) pending.line(l.text, false);
  return pending.first(to, from, lineAt);
}

/** What to say when a copy is not put in place because an erase recorded an erasure of it meanwhile (erasedSince). */
export function describeErasedSince(p: PendingErasure, doing: string): string {
  return `the erasure of ${p.path} in seq ${p.target} was recorded (at seq ${p.seq}) while ${doing}, which held the value: it is not put in place`;
}

/**
 * What to say: which erasure is pending, and to resume it first. `journal` null: the caller knows the journal
 * only as a source (an export, a publication), and the command is named without it.
 */
export function describePending(p: PendingErasure, journal: string | null, doing: string): string {
  const resume = journal === null ? '`stepchain erase <journal> --resume`' : `\`stepchain erase ${journal} --resume\``;
  return `cannot ${doing}: the erasure of ${p.path} in seq ${p.target}, recorded at seq ${p.seq}, is not yet carried out, so the value would be carried out in clear; an erase was interrupted, or is still running after the wait: when none is running, run ${resume} first`;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** How long a live erase is given to carry out the erasure it has just recorded (ms between tries). */
const LIVE_ERASE_WAITS = [20, 40, 80, 160, 320, 640];

/**
 * Runs `attempt` (a fork, an export or a publication), trying again for a moment while a live erase refuses it.
 * A live erase records its erasure and then carries it out under the journal lock, milliseconds apart; a copy
 * that read the journal in between would otherwise be refused with advice to resume an erase that is not
 * interrupted at all (ERASURE_PENDING), and one that read the rewritten line but only up to the head it read
 * before the erasure record was appended would find the line's erasure past its end (SOURCE_CHANGED: the head
 * moved; the next try reads to the new one). An erasure still pending after the waits (about 1.3 s) was
 * interrupted: refused then.
 */
export async function afterLiveErasure<T>(attempt: () => Promise<T>): Promise<T> {
  for (const wait of LIVE_ERASE_WAITS) {
    try {
      return await attempt();
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      if (code !== 'ERASURE_PENDING' && code !== 'SOURCE_CHANGED') throw e;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return attempt();
}
