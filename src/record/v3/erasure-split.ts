/**
 * A range of a chain that ends between an erased record and its erasure record (spec/ERASURE.md §6.5): its
 * erased marker names a record the range does not hold, so the range alone would not verify (ERASURE_UNRECORDED),
 * although the journal does. A fork or a receipt of such a range is refused, with the steps that would work,
 * rather than called corrupt or written unexplained. Pure: fed lines, it answers.
 */
import { V3_SLOTS } from './commit.js';
import { ERASED_MARKER, ERASURE_KIND, collectErased, erasureInputOf } from './erasure.js';

/** An erased marker of the range whose erasure record the range does not hold. */
interface OpenMarker {
  seq: number;
  digest: string;
  erasure: string;
  path: string;
  /** Whether the range holds the marker's record (false: a record before a range that starts after it). */
  held: boolean;
}

/** Where a range splits an erasure: the erased value's record and path, and the erasure record's seq. */
export interface ErasureSplitAt {
  target: number;
  path: string;
  erasureSeq: number;
  /** Whether the range holds the erased record (false: it lies before the range, which holds neither end). */
  held: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class ErasureSplit {
  private readonly markers: OpenMarker[] = [];
  private readonly explained: ErasureSplitAt[] = [];

  /**
   * One line of the range, in chain order (`held` false: a line the writer reads and verifies before a range
   * that starts after seq 0, which the range does not hold).
   */
  inRange(text: string, held = true): void {
    const hasMarker = text.includes(`"${ERASED_MARKER}"`);
    const isErasure = text.includes(`"kind":"${ERASURE_KIND}"`);
    if (!hasMarker && !isErasure) return;
    const r = parse(text);
    if (r === null || typeof r.seq !== 'number') return;
    if (r.kind === ERASURE_KIND && typeof r.step_id === 'string') {
      // A record of the range explains (or, checked by the verifier, fails to explain) its markers.
      const id = r.step_id;
      for (let i = this.markers.length - 1; i >= 0; i--) if (this.markers[i]!.erasure === id) this.markers.splice(i, 1);
    }
    if (!hasMarker || r.seed !== undefined) return;
    const found: { digest: string; erasure: string; path: string }[] = [];
    for (const slot of V3_SLOTS) collectErased(r[slot], `/${slot}`, found);
    for (const m of found) this.markers.push({ ...m, seq: r.seq, held });
  }

  /** How many erased markers of the range name erasure records the range does not hold. */
  get open(): number {
    return this.markers.length;
  }

  /** One line after the range, in chain order; true once every open marker has met its erasure record. */
  after(text: string): boolean {
    if (this.markers.length === 0) return true;
    if (!text.includes(`"kind":"${ERASURE_KIND}"`)) return false;
    const r = parse(text);
    if (r?.kind !== ERASURE_KIND || typeof r.step_id !== 'string' || typeof r.seq !== 'number') return false;
    const input = erasureInputOf(r.input);
    if (typeof input === 'string') return false;
    for (let i = this.markers.length - 1; i >= 0; i--) {
      const m = this.markers[i]!;
      if (m.erasure !== r.step_id || input.target !== m.seq || input.digest !== m.digest) continue;
      this.markers.splice(i, 1);
      this.explained.push({ target: m.seq, path: input.path, erasureSeq: r.seq, held: m.held });
    }
    return this.markers.length === 0;
  }

  /** Once every open marker met its erasure record after the range: where the range splits erasures; else null. */
  split(): ErasureSplitAt[] | null {
    return this.markers.length === 0 && this.explained.length > 0 ? [...this.explained] : null;
  }
}

/**
 * What to tell the user: which erasure the range splits, and the ends that would work (before the earliest
 * erased record, or at the latest erasure record or after it). `what` names the range ("a fork from step
 * 2"), `choose` what to do ("fork from").
 */
export function describeSplit(splits: readonly ErasureSplitAt[], what: string, choose: string): string {
  const first = splits.reduce((a, b) => (b.target < a.target ? b : a));
  const latest = Math.max(...splits.map((s) => s.erasureSeq));
  const more = splits.length > 1 ? ` (and ${splits.length - 1} more erased value${splits.length > 2 ? 's' : ''})` : '';
  return `seq ${first.target} holds a value (${first.path}) erased by the erasure record at seq ${first.erasureSeq}${more}, which ${what} would not hold: it would hold an erased value that none of its records explains; ${choose} a step before seq ${first.target}, or seq ${latest} or later (spec/ERASURE.md §6.5)`;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isObj(v) ? v : null;
  } catch {
    return null;
  }
}
