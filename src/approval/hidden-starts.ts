/**
 * Starts whose `meta` is withheld or erased (spec/APPROVALS.md §5 step 5): whether they named a request, and
 * which, is not in hand. Their outcomes are then unchecked, never APPROVAL_MISSING (erasing never turns a clean
 * journal into a finding), and each may have used any grant decided before it and unused: a later effect for
 * such a grant is unchecked too (never a clean "executed"), and a writer refuses to begin one. Pure.
 */
import type { Findings } from './findings.js';
import type { RequestState } from './ledger-types.js';

export class HiddenStarts {
  private readonly ids = new Set<string>();
  /** Per request id: the first hidden-meta start after its grant, which may have used it. */
  private readonly usedBy = new Map<string, number>();

  constructor(private readonly findings: Findings) {}

  /** A start at `seq` whose meta is not in hand. */
  started(id: string, seq: number, requests: ReadonlyMap<string, RequestState>): void {
    this.ids.add(id);
    for (const [rid, req] of requests)
      if (req.decision?.kind === 'granted' && req.effect === null && !this.usedBy.has(rid)) this.usedBy.set(rid, seq);
  }

  /** The seq of a hidden-meta start that may have used request `rid`'s grant, else null. */
  mayBeUsed(rid: string): number | null {
    return this.usedBy.get(rid) ?? null;
  }

  /** An outcome (record `r`) naming `start`, when the chain holds a request: true when `start` is hidden (noticed). */
  outcome(r: Record<string, unknown>, seq: number, start: string | null, requests: number): boolean {
    if (start === null || requests === 0 || !this.ids.has(start)) return false;
    this.notice(
      `seq ${seq}: ${String(r.kind)} ${JSON.stringify(String(r.step_id))} names start ${JSON.stringify(start)}, whose meta is withheld or erased: whether the call it carries was begun for an approval request is not checked`,
      seq,
      'tool_call',
    );
    return true;
  }

  /** Effect `id` uses request `rid`'s grant (`req`): true when a hidden-meta start may have used it first (noticed). */
  used(req: RequestState, id: string, rid: string | null, seq: number): boolean {
    const at = rid === null ? undefined : this.usedBy.get(rid);
    if (at === undefined) return false;
    req.unchecked = true;
    this.notice(
      `seq ${seq}: effect ${JSON.stringify(id)} uses the grant of request ${JSON.stringify(rid)}, which the start at seq ${at} may have used already (its meta is withheld or erased): whether this is the grant's one effect is not checked`,
      seq,
      'meta',
    );
    return true;
  }

  private notice(message: string, seq: number, field: string): void {
    this.findings.push({ code: 'APPROVAL_UNCHECKED', message, seq, field, notice: true });
  }
}
