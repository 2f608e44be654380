/**
 * Carrying a stepchain/v3 record in sealed form (spec/ERASURE.md §2) into another journal byte for byte: a
 * copy (spec/POSTGRES.md §10, ERASURE.md §6.4). A sealed record cannot be sealed again from its content (its
 * seed and the erased values are gone), so the copy hands the target's ordinary append path the stored line
 * itself, under an internal symbol, and the sequencer places it where the source has it or refuses it: the
 * line is written only at its own seq, after its own prev_hash, with its own step_id and ts. The target's
 * locks, head, segments and idempotency window treat it as any appended step.
 */
import { checkLine } from '../chain/line.js';
import type { Json } from '../canonical/json.js';
import type { JournalFormat, RecordProfile, StepTexts, Envelope } from '../record/profile.js';
import { rootOfRemaining } from '../record/v3/erasure.js';
import { StoreError } from './errors.js';
import type { PreparedStep } from './prepare.js';

/** Marks a copied step that is a sealed line to be written as it stands (an own member no parsed input can carry). */
export const SEALED_LINE: unique symbol = Symbol('stepchain sealed line');

/** A sealed line the copy checked: its text, step hash and envelope, and the record parsed. */
export interface SealedLine {
  readonly text: string;
  readonly stepHash: string;
  readonly record: Readonly<Record<string, Json>>;
}

/**
 * The sealed line `text` of a journal of `format`, checked on its own (FORMAT §6.3, the sealed record's fast
 * tier: its stored bind), or null when it is not a v3 record in sealed form (it is re-appended from its content).
 */
export function sealedLineOf(text: string, format: JournalFormat): SealedLine | null {
  // A sealed record has a top-level bind; a private line without the text has none (the full check is skipped).
  if (!format.capabilities.erasure || !text.includes('"bind":"sha256:')) return null;
  const facts = checkLine(text, format);
  if (facts.erasure !== true || facts.publicForm === true || facts.stepHash === null) return null;
  const record = JSON.parse(text) as Record<string, Json>;
  if (record.seed !== undefined || record.bind === undefined || record.keys === undefined) return null;
  if (facts.problems.length > 0) {
    throw new StoreError(
      'JOURNAL_CORRUPT',
      `the source's sealed record at seq ${String(record.seq)} does not verify (${facts.problems[0]!.code}: ${facts.problems[0]!.message})`,
      { location: { seq: typeof record.seq === 'number' ? record.seq : 0 }, hint: 'run verify on the source' },
    );
  }
  // What remains must give the root (ERASURE.md §5 step 2) before the line is written anywhere.
  let root: string;
  try {
    root = rootOfRemaining(record);
  } catch (e) {
    root = e instanceof Error ? e.message : String(e);
  }
  if (root !== record.root) {
    throw new StoreError(
      'JOURNAL_CORRUPT',
      `the source's sealed record at seq ${String(record.seq)} does not verify: what remains of it does not give its root (${root})`,
      { location: { seq: typeof record.seq === 'number' ? record.seq : 0 }, hint: 'run verify on the source' },
    );
  }
  return { text, stepHash: facts.stepHash, record };
}

/** What prepareStep returns for a step carrying a sealed line: sealing it gives the line itself, or nothing. */
export function preparedSealed(sealed: SealedLine, profile: RecordProfile): PreparedStep {
  const r = sealed.record;
  if (profile.version !== 3) {
    throw new StoreError(
      'JOURNAL_INVALID',
      `a record in sealed form (seq ${String(r.seq)}) goes only into a stepchain/v3 journal, and this one writes ${profile.id}`,
    );
  }
  const seal = (_texts: StepTexts, e: Envelope): { stepHash: string; line: string } => {
    if (e.seq !== r.seq || e.prevHash !== r.prev_hash || e.stepId !== r.step_id || e.ts !== r.ts) {
      throw new StoreError(
        'JOURNAL_CORRUPT',
        `the sealed record of seq ${String(r.seq)} can only follow ${String(r.prev_hash)} at seq ${String(r.seq)}, and the target's next step is seq ${e.seq} after ${e.prevHash}: another writer appended to the target meanwhile`,
        { location: { seq: e.seq }, hint: 'copy into a journal nobody else writes' },
      );
    }
    return { stepHash: sealed.stepHash, line: sealed.text + '\n' };
  };
  return {
    profile: { ...profile, id: `${profile.id}+sealed`, seal },
    content: {},
    meta: undefined,
    texts: {},
    step_id: r.step_id as string,
    ts: r.ts as string,
    salt: undefined,
    seed: undefined,
    blobs: [],
    // The idempotency key of what the record holds now (as a reader of the source's window computes it).
    key: profile.recordKey(r),
  };
}
