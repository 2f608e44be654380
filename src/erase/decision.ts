/**
 * Erasing a unit of an approver's signed decision (spec/ERASURE.md §6.3): refused (ERASURE_SIGNED) for a
 * decision that counts, allowed for one the verifier already reports as a problem that counts as no decision
 * (no such request, a signature that does not hold, a repeated or expired decision). The verifier reports a
 * decision with an erased value as such a problem too (APPROVAL_INVALID, "unverifiable after erasure"), so the
 * erasure changes no verdict: a grant never becomes valid, a denial that counted never disappears.
 */
import { ChainVerifier } from '../chain/verifier.js';
import { describeProblem } from '../chain/report.js';
import type { Journal } from '../store/types.js';
import { isSignedDecision } from '../record/v3/erasure.js';

/** Whether the unit at `path` belongs to a signed decision: its statement (`input`) or key and signature (`meta`). */
const signedDecisionUnit = (r: Record<string, unknown>, path: string): boolean =>
  isSignedDecision(r) && /^\/(input|meta)(\/|$)/.test(path);

/** The problems that make a decision count for nothing (spec/APPROVALS.md §5). */
const VOID_DECISION = new Set(['APPROVAL_INVALID', 'APPROVAL_REPEATED', 'APPROVAL_EXPIRED']);

/**
 * When the unit at `path` of record `record` (seq `seq`) belongs to a signed decision: why the verifier reads
 * that decision as no decision (the chain verified from genesis up to it), or null when it counts. Undefined
 * when the unit is no part of a signed decision.
 */
export async function voidDecision(
  journal: Journal,
  record: Record<string, unknown>,
  path: string,
): Promise<string | null | undefined> {
  if (!signedDecisionUnit(record, path)) return undefined;
  const seq = record.seq as number;
  const verifier = new ChainVerifier({ genesis: journal.genesis, maxProblems: Number.MAX_SAFE_INTEGER });
  let segment: string | null = null;
  for await (const l of journal.lines({ from: 0, to: seq })) {
    if (l.segment !== segment) verifier.beginSegment((segment = l.segment));
    verifier.line(l.text, true);
  }
  const found = verifier.finish().problems.find((p) => p.location.seq === seq && VOID_DECISION.has(p.code));
  return found === undefined ? null : describeProblem(found);
}

/**
 * Whether the erasure of `path` in record `target` may touch a signed decision: true when the unit is no part of
 * one, or the decision counts as none. Read from the journal `journal` as it is (an erasure is carried out under
 * the check of the record it rewrites, spec/ERASURE.md §4 step 5).
 */
export async function decisionVoided(journal: Journal, text: string | null, path: string): Promise<boolean> {
  if (!text?.includes('"kind":"approval.')) return false;
  return ((await voidDecision(journal, JSON.parse(text) as Record<string, unknown>, path)) ?? null) !== null;
}
