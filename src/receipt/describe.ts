/**
 * What a verified receipt proves and does not prove, as plain sentences (spec/RECEIPT.md §8): the
 * report's `proves` and `does_not_prove`. Pure.
 */
import type { RunState } from '../record/run-state.js';
import type { GenesisV2 } from '../record/v2.js';
import type { ReceiptReport } from './verify.js';

/** The plain-sentence account of what the receipt proves (spec/RECEIPT.md §8). */
export function describe(
  r: ReceiptReport,
  options: { expectHead?: unknown },
  pinned: Uint8Array | null,
  run: RunState | null = null,
): void {
  if (!r.ok || !r.manifest || !r.range) {
    r.proves = [];
    r.does_not_prove = ['Anything: the receipt failed verification, so none of its contents can be relied on.'];
    return;
  }
  const { from, to, prev_hash } = r.range;
  const j = r.journal_id;
  // One step is "Step N … forms", several "Steps F–T … form" (the §8 statement, in agreement with its subject).
  const one = from === to;
  const steps = one ? `Step ${from}` : `Steps ${from}–${to}`;
  const form = one ? 'forms' : 'form';
  const proves: string[] = [];
  const not: string[] = [];
  if (from === 0) {
    proves.push(
      `${steps} of journal ${j} (created ${r.genesis!.created_at}) ${form} an unbroken hash chain from its genesis to head ${r.head}.`,
    );
  } else {
    proves.push(
      `${steps} ${form} an unbroken hash chain that starts from prev_hash ${prev_hash} and ends at head ${r.head}.`,
    );
  }
  proves.push(
    'Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.',
  );
  if (r.signed_by)
    proves.push(
      `The manifest, and through its digests everything else, was signed with the Ed25519 key ${r.signed_by}${pinned ? ' (the key you pinned)' : ''}.`,
    );
  if (options.expectHead !== undefined)
    proves.push(`The receipt ends at the head you pinned (${String(options.expectHead)}).`);
  const fork = r.manifest.lineage as { from_step: number } | undefined;
  if (fork !== undefined)
    proves.push(
      `The receipt says it is of a fork (manifest lineage): steps 0–${fork.from_step} are its parent's, and no request among them was let authorise an effect after seq ${fork.from_step} (the fork rule, spec/APPROVALS.md §4.1).`,
    );
  if (from > 0) {
    const before =
      from === 1
        ? 'step 0 exists, is intact, or leads from the genesis to'
        : `steps 0–${from - 1} exist, are intact, or lead from the genesis to`;
    not.push(
      `That ${before} ${prev_hash}: ${from === 1 ? 'it is' : 'they are'} not in this partial receipt, so that hash is the exporter's claim. A trusted step_hash for step ${from - 1} equal to it, or a complete receipt, connects the range to the journal.`,
    );
    not.push(
      `That ${one ? 'this step belongs' : 'these steps belong'} to journal ${j}: the genesis is named in the manifest but nothing in the range links to it.`,
    );
  }
  if (options.expectHead === undefined)
    not.push(
      `That the journal has no steps after seq ${to}: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.`,
    );
  else not.push(`Anything about steps after seq ${to}, if the journal continued past the head you pinned.`);
  if (!r.signed_by)
    not.push(
      'Who produced the receipt: it is unsigned, so anyone holding the journal, or inventing one, could have made it.',
    );
  else if (!pinned)
    not.push(
      `That key ${r.signed_by} belongs to whom you think: no key was pinned; compare the key id with one you trust.`,
    );
  if (run !== null) runStatements(r, run, proves, not);
  not.push(
    'That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.',
  );
  r.proves = proves;
  r.does_not_prove = not;
}

/** A run journal (spec/FORMAT.md §11): its identity is proved by the genesis; an effect without an outcome is not. */
function runStatements(r: ReceiptReport, run: RunState, proves: string[], not: string[]): void {
  const g = r.genesis as GenesisV2;
  if (r.range!.from === 0) {
    const who = [
      g.run.conversation_id !== undefined ? `conversation ${g.run.conversation_id}` : null,
      g.run.parent_run_id !== undefined ? `parent run ${g.run.parent_run_id}` : null,
      g.run.agent !== undefined ? `agent ${g.run.agent}` : null,
      g.run.labels !== undefined
        ? `labels ${Object.entries(g.run.labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ')}`
        : null,
    ].filter((x) => x !== null);
    proves.push(
      `The steps belong to run ${g.journal_id}${who.length > 0 ? ` (${who.join('; ')})` : ''}: the run's identity is in the genesis, which every step hash depends on.`,
    );
  }
  for (const e of run.effects.values()) {
    if (e.status !== 'started') continue;
    not.push(
      `The outcome of tool effect ${e.id} (${e.tool ?? 'unnamed tool'}, started at seq ${e.seq}${e.idempotencyKey !== null ? `, idempotency key ${e.idempotencyKey}` : ''}): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.`,
    );
  }
  for (const m of run.models.values()) {
    if (m.status === 'started')
      not.push(
        `The outcome of model request ${m.id} (started at seq ${m.seq}): it has no recorded outcome in this receipt.`,
      );
  }
}

/**
 * Whether the bytes are not a receipt at all (an image, a document, an empty file) rather than a damaged
 * one: invalid, and no manifest was read, because the bytes are not a tar (or gzip of one) or do not start
 * with the manifest. A tool names such a file "not a receipt" instead of reporting a tar header's defects.
 */
export function notAReceipt(r: Pick<ReceiptReport, 'ok' | 'manifest_digest' | 'problems'>): boolean {
  return (
    !r.ok &&
    r.manifest_digest === null &&
    r.problems.some((p) => p.code === 'ARCHIVE_INVALID' || p.code === 'ENTRY_UNEXPECTED' || p.code === 'ENTRY_MISSING')
  );
}
