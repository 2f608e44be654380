/**
 * A fork's lineage in its receipt (spec/APPROVALS.md §4.1): the manifest member `lineage`,
 * `{"from_step": F, "parent_step_hash": H}`, written by the exporter of a `stepchain/v3` fork (FILE-STORE.md
 * lineage) so that a receipt of the fork is recognisable as one and the fork rule (§5 step 3) applies to it
 * as it does to the journal: a request at or before F authorises no effect after F. The step at F must have
 * step hash H (checked when the range holds it). A writer that leaves the member out is not caught by the
 * receipt alone (§8): a pinned, witnessed checkpoint is what rules out a second chain on the same prefix.
 * Pure.
 */
import { isObject, type Json } from '../canonical/json.js';
import { isDigest } from '../canonical/sha256.js';
import { capabilitiesOf, type Genesis } from '../record/formats.js';

export const LINEAGE_MEMBER = 'lineage';

export interface ReceiptLineage {
  from_step: number;
  parent_step_hash: string;
}

/** Why a `lineage` member breaks §4.1, or null. */
export function lineageDefect(v: unknown): string | null {
  if (
    !isObject(v) ||
    Object.keys(v).sort().join(',') !== 'from_step,parent_step_hash' ||
    !Number.isSafeInteger(v.from_step) ||
    (v.from_step as number) < 0 ||
    !isDigest(v.parent_step_hash)
  )
    return 'lineage must be {"from_step":<seq>,"parent_step_hash":"sha256:<hex>"} (a fork\'s: spec/APPROVALS.md §4.1)';
  return null;
}

/** The `lineage` member an exporter writes for `source` (a fork of a journal with approval records), or null. */
export function lineageMember(source: { genesis: Genesis; lineage?: unknown }): Record<string, Json> | null {
  const l = source.lineage;
  if (!capabilitiesOf(source.genesis).approvals || !isObject(l)) return null;
  if (typeof l.from_step !== 'number' || typeof l.parent_step_hash !== 'string') return null;
  return { [LINEAGE_MEMBER]: { from_step: l.from_step, parent_step_hash: l.parent_step_hash } };
}
