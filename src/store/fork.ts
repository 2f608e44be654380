/**
 * Copying a parent's prefix for a fork (spec/FILE-STORE.md). The parent is only read, through the
 * ChainSource interface, so a fork may cross stores. The copied lines are verified from the shared
 * genesis as they stream past, and every blob they reference is checked before it is copied.
 */
import { capabilitiesOf, genesisHash } from '../record/formats.js';
import { ChainVerifier } from '../chain/verifier.js';
import { blobDefect } from '../record/blobs.js';
import { partsOfJournal } from './parts-verify.js';
import type { BlobRef } from '../record/markers.js';
import { describeProblem, type Problem } from '../chain/report.js';
import { ErasureSplit, describeSplit } from '../record/v3/erasure-split.js';
import {
  PendingErasures,
  describeErasedSince,
  describePending,
  erasedSince,
  lineReader,
} from '../record/v3/erasure-pending.js';
import { StoreError } from './errors.js';
import { assertSeq } from './ids.js';
import type { Journal, Lineage } from './types.js';

export interface PrefixSink {
  line(text: string, seq: number): Promise<void> | void;
  blob(digest: string, bytes: Uint8Array): Promise<void> | void;
  /** A stepchain/v3 part the copied steps reach, checked (PARTS.md §9), before the line that needs it. */
  part?(address: string, bytes: Uint8Array): Promise<void> | void;
}

/** A copied prefix: the fork's lineage, and the last seq of the parent read for erasure records (see confirmUnerased). */
export interface CopiedPrefix {
  lineage: Lineage;
  checkedTo: number;
}

/** Streams the parent's steps 0..fromStep into `sink`; returns the fork's lineage. */
export async function copyPrefix(parent: Journal, fromStep: number, sink: PrefixSink): Promise<CopiedPrefix> {
  assertSeq('fromStep', fromStep);
  const head = await parent.head();
  if (head === null || fromStep > head.seq) {
    throw new StoreError(
      'RANGE_INVALID',
      `fromStep ${fromStep} is past the head of journal ${parent.id} (${head === null ? 'it has no steps' : `its last step is ${head.seq}`})`,
      {
        location: { seq: fromStep },
        hint: head === null ? 'append a step before forking' : `choose fromStep from 0 to ${head.seq}`,
      },
    );
  }
  let refs: BlobRef[] = [];
  const verifier = new ChainVerifier({
    genesis: parent.genesis,
    onLine: (l) => {
      refs = l.blobs;
    },
  });
  const copied = new Set<string>();
  let count = 0;
  let segment: string | null = null;
  const parts = sink.part === undefined ? null : partsOfJournal(parent);
  const split = new ErasureSplit();
  // Judged on the copied lines: a second read would count an erase completed since as carried out in the copy.
  const pending = capabilitiesOf(parent.genesis).erasure ? new PendingErasures() : null;
  for await (const l of parent.lines({ from: 0, to: fromStep })) {
    refs = [];
    split.inRange(l.text);
    pending?.line(l.text);
    if (l.segment !== segment) verifier.beginSegment((segment = l.segment));
    verifier.line(l.text, true);
    for (const ref of refs) {
      if (copied.has(ref.digest)) continue;
      const bytes = await parent.blob(ref.digest, ref.size);
      if (bytes === null) {
        throw new StoreError(
          'BLOB_MISSING',
          `journal ${parent.id} seq ${l.seq} references blob ${ref.digest}, which it does not hold; cannot fork`,
          { location: { seq: l.seq } },
        );
      }
      const defect = blobDefect(bytes, ref);
      if (defect !== null)
        throw new StoreError('BLOB_CORRUPT', `journal ${parent.id} blob ${ref.digest} ${defect}; cannot fork`, {
          location: { seq: l.seq },
        });
      await sink.blob(ref.digest, bytes);
      copied.add(ref.digest);
    }
    if (parts !== null) for (const p of await parts.reached(l.text, l.seq)) await sink.part!(p.address, p.bytes);
    await sink.line(l.text, l.seq);
    count++;
  }
  const report = verifier.finish();
  const first = report.problems[0];
  if (first !== undefined && (await splitsErasure(parent, fromStep, split, report.problems)))
    throw new StoreError(
      'RANGE_SPLITS_ERASURE',
      `cannot fork journal ${parent.id} from step ${fromStep}: ${describeSplit(split.split()!, `a fork from step ${fromStep}`, 'fork from')}`,
      { location: { seq: fromStep } },
    );
  const checkedTo = first === undefined && pending ? await refusePendingErasure(parent, fromStep, pending) : fromStep;
  if (first !== undefined || count !== fromStep + 1 || report.head === null) {
    throw new StoreError(
      'JOURNAL_CORRUPT',
      first !== undefined
        ? `journal ${parent.id} steps 0..${fromStep} do not verify (${describeProblem(first)}); cannot fork`
        : `journal ${parent.id} yielded ${count} steps for 0..${fromStep}; cannot fork`,
      { hint: 'run verify on the parent' },
    );
  }
  const lineage = { parent_journal: parent.id, parent_genesis_hash: genesisHash(parent.genesis) };
  return { lineage: { ...lineage, from_step: fromStep, parent_step_hash: report.head }, checkedTo };
}

/**
 * Called just before the fork is put in place (renamed, committed), with the parent's appends held where it can
 * hold them: refuses ERASURE_PENDING when the parent has recorded, past `checkedTo`, an erasure of a copied step
 * (ERASURE.md §4.1). Such a record was appended after the copy had read that step, so the fork holds it as it
 * was, value included; an erase that committed while the fork was being made durable would otherwise find,
 * once done, a new copy of what it erased (outsider 12, 1–2). Nothing is put in place, so nothing is removed.
 */
export async function confirmUnerased(parent: Journal, fromStep: number, checkedTo: number): Promise<void> {
  if (!capabilitiesOf(parent.genesis).erasure) return;
  const p = await erasedSince(parent.lines({ from: checkedTo + 1 }), 0, fromStep, lineReader(parent));
  if (p !== null)
    throw new StoreError(
      'ERASURE_PENDING',
      `journal ${parent.id}: ${describeErasedSince(p, `its fork from step ${fromStep} was being made`)}`,
      { location: { seq: p.target }, hint: `fork again once the erase of journal ${parent.id} is done` },
    );
}

/**
 * An erasure of a copied step recorded (in the prefix or later) but not carried out in the copied lines: the
 * fork would carry the value. `pending` has read the copied lines; the erasure records after them are read now,
 * to the journal's end as it is now: an erase that recorded its erasure after the copy began (past the head
 * read then) and rewrote a line after the copy had read it is one the fork must see.
 */
async function refusePendingErasure(parent: Journal, fromStep: number, pending: PendingErasures): Promise<number> {
  let checkedTo = fromStep;
  // To the head as it is now, not as it moves: a parent appended faster than this reads would keep the fork
  // reading without end (outsider 18: three forks of a live agent's journal waited until it stopped). What is
  // appended later, confirmUnerased reads under the hold.
  const head = (await parent.head())?.seq ?? -1;
  for await (const l of parent.lines({ from: fromStep + 1, to: Math.max(head, fromStep + 1) })) {
    pending.line(l.text, false);
    checkedTo = l.seq;
  }
  const p = await pending.first(fromStep, 0, lineReader(parent));
  if (p !== null)
    throw new StoreError(
      'ERASURE_PENDING',
      describePending(p, parent.id, `fork journal ${parent.id} from step ${fromStep}`),
      {
        location: { seq: p.target },
        hint: `run stepchain erase ${parent.id} --resume, then fork again`,
      },
    );
  return checkedTo;
}

/**
 * Whether the prefix's only problems are erased markers whose erasure records lie after it, in the parent
 * (spec/ERASURE.md §6.5): the parent is read on from `fromStep` until each has met its record.
 */
async function splitsErasure(
  parent: Journal,
  fromStep: number,
  split: ErasureSplit,
  problems: readonly Problem[],
): Promise<boolean> {
  if (split.open === 0 || problems.length > split.open) return false;
  if (!problems.every((p) => p.code === 'ERASURE_UNRECORDED' && p.location.path !== undefined)) return false;
  for await (const l of parent.lines({ from: fromStep + 1 })) if (split.after(l.text)) break;
  return split.split() !== null;
}
