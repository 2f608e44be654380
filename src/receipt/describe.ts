/**
 * What a verified receipt proves and does not prove, as plain sentences (spec/RECEIPT.md §8): the
 * report's `proves` and `does_not_prove`. Pure.
 */
import type { ReceiptReport } from './verify.js';

/** The plain-sentence account of what the receipt proves (spec/RECEIPT.md §8). */
export function describe(r: ReceiptReport<string>, options: { expectHead?: unknown }, pinned: Uint8Array | null): void {
  if (!r.ok || !r.manifest || !r.range) {
    r.proves = [];
    r.does_not_prove = ['Anything: the receipt failed verification, so none of its contents can be relied on.'];
    return;
  }
  const { from, to, prev_hash } = r.range;
  const j = r.journal_id;
  const steps = from === to ? `Step ${from}` : `Steps ${from}–${to}`;
  const proves: string[] = [];
  const not: string[] = [];
  if (from === 0) {
    proves.push(`${steps} of journal ${j} (created ${r.genesis!.created_at}) form an unbroken hash chain from its genesis to head ${r.head}.`);
  } else {
    proves.push(`${steps} form an unbroken hash chain that starts from prev_hash ${prev_hash} and ends at head ${r.head}.`);
  }
  proves.push('Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.');
  if (r.signed_by) proves.push(`The manifest, and through its digests everything else, was signed with the Ed25519 key ${r.signed_by}${pinned ? ' (the key you pinned)' : ''}.`);
  if (options.expectHead !== undefined) proves.push(`The receipt ends at the head you pinned (${options.expectHead}).`);
  if (from > 0) {
    not.push(`That steps 0–${from - 1} exist, are intact, or lead from the genesis to ${prev_hash}: they are not in this partial receipt, so that hash is the exporter's claim. A trusted step_hash for step ${from - 1} equal to it, or a complete receipt, connects the range to the journal.`);
    not.push(`That these steps belong to journal ${j}: the genesis is named in the manifest but nothing in the range links to it.`);
  }
  if (options.expectHead === undefined) not.push(`That the journal has no steps after seq ${to}: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.`);
  else not.push(`Anything about steps after seq ${to}, if the journal continued past the head you pinned.`);
  if (!r.signed_by) not.push('Who produced the receipt: it is unsigned, so anyone holding the journal, or inventing one, could have made it.');
  else if (!pinned) not.push(`That key ${r.signed_by} belongs to whom you think: no key was pinned; compare the key id with one you trust.`);
  not.push('That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.');
  r.proves = proves;
  r.does_not_prove = not;
}
