/**
 * Tombstones (spec/RETENTION.md §3–§4): what a store keeps of a run it removed under a retention policy —
 * the run's identity, how many steps it had, its head, the RFC 6962 root over those steps, the last
 * checkpoint the journal signed and a consistency proof from that checkpoint to the final tree. So a
 * party holding a checkpoint of the removed run can still check that what was removed is the history it
 * once saw, and `runs --removed` can say what is gone and why. Pure and browser-safe; `checkTombstone`
 * never throws on what it checks.
 */
import { isDigest, toHex } from '../canonical/index.js';
import {
  EMPTY_ROOT,
  parseCheckpoint,
  parseJournalOrigin,
  parseNote,
  stepLeafHash,
  verifyConsistency,
  verifyInclusion,
} from '../proofs/index.js';
import type { CheckpointParse } from '../proofs/checkpoint.js';
import type { RunIdentity } from '../record/v2.js';

export const TOMBSTONE_FORMAT = 'stepchain/tombstone/v1';

/** What decides that a run has expired: the time of its last step (default), or its creation. */
export type RetentionBasis = 'last-step' | 'created';

export interface Tombstone {
  tombstone: typeof TOMBSTONE_FORMAT;
  /** The removed journal's id in its store. */
  journal: string;
  /** Its genesis: the run id (journal_id), format, creation time and run identity (null for a v1 journal). */
  run_id: string;
  /** The genesis hash (FORMAT.md §4): what a checkpoint's journal origin names (PROOFS.md §8.5). */
  genesis_hash: string;
  format: string;
  created_at: string;
  run: RunIdentity | null;
  /** How many steps it held when it was removed, and the last one's hash and time (null when it held none). */
  steps: number;
  head: string | null;
  last_ts: string | null;
  /** `sha256:` + the RFC 6962 root over its steps' leaves (PROOFS.md §4–§5). */
  tree_root: string;
  /** The inclusion proof of the head as the last leaf of that tree (`sha256:` hashes); empty for 0 or 1 steps. */
  head_proof: string[];
  /** The last checkpoint the journal had signed (a signed note), or null. */
  checkpoint: string | null;
  /** The consistency proof from that checkpoint's tree to (steps, tree_root), `sha256:` hashes; null without a checkpoint. */
  consistency: string[] | null;
  removed_at: string;
  reason: string;
  policy: { keep_days: number; basis: RetentionBasis };
}

export type TombstoneProblemCode =
  /** Not a tombstone of RETENTION.md §3: a member missing, of the wrong type, or an unknown tombstone format. */
  | 'TOMBSTONE_MALFORMED'
  /** The tombstone's tree does not extend its checkpoint's, or a checkpoint given to check it against. */
  | 'TOMBSTONE_INCONSISTENT';

export interface TombstoneProblem {
  code: TombstoneProblemCode;
  message: string;
}

export type TombstoneCheck = { ok: true; checkpointSize: number | null } | { ok: false; problem: TombstoneProblem };

const malformed = (message: string): TombstoneCheck => ({
  ok: false,
  problem: { code: 'TOMBSTONE_MALFORMED', message },
});
const inconsistent = (message: string): TombstoneCheck => ({
  ok: false,
  problem: { code: 'TOMBSTONE_INCONSISTENT', message },
});

/** `sha256:` + hex → 32 bytes, or null. */
export function digestBytesOf(value: unknown): Uint8Array | null {
  if (!isDigest(value)) return null;
  const hex = value.slice('sha256:'.length);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export const rootDigest = (root: Uint8Array): string => `sha256:${toHex(root)}`;

const isString = (v: unknown): v is string => typeof v === 'string';
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The shape of RETENTION.md §3, member by member; the first defect found, or null. */
export function tombstoneDefect(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a tombstone is a JSON object';
  const t = value as Record<string, unknown>;
  if (t.tombstone !== TOMBSTONE_FORMAT) return `member "tombstone" must be ${JSON.stringify(TOMBSTONE_FORMAT)}`;
  for (const name of ['journal', 'run_id', 'format', 'created_at', 'removed_at', 'reason'] as const)
    if (!isString(t[name])) return `member "${name}" must be a string`;
  if (!isCount(t.steps)) return 'member "steps" must be a non-negative integer';
  if (t.steps === 0 ? t.head !== null || t.last_ts !== null : !isDigest(t.head) || !isString(t.last_ts)) {
    return 'members "head" and "last_ts" are null exactly when "steps" is 0, else a step hash and a time';
  }
  if (!isDigest(t.tree_root)) return 'member "tree_root" must be sha256: and 64 lowercase hex digits';
  if (!isDigest(t.genesis_hash)) return 'member "genesis_hash" must be sha256: and 64 lowercase hex digits';
  if (!Array.isArray(t.head_proof) || !t.head_proof.every(isDigest))
    return 'member "head_proof" must be a list of sha256: hashes';
  if (t.run !== null && (typeof t.run !== 'object' || Array.isArray(t.run)))
    return 'member "run" must be an object or null';
  if (
    t.checkpoint === null
      ? t.consistency !== null
      : !isString(t.checkpoint) || !Array.isArray(t.consistency) || !t.consistency.every(isDigest)
  ) {
    return 'members "checkpoint" and "consistency" are both null, or a signed note and a list of sha256: hashes';
  }
  const p = t.policy as Record<string, unknown> | null;
  if (
    p === null ||
    typeof p !== 'object' ||
    !isCount(p.keep_days) ||
    (p.basis !== 'last-step' && p.basis !== 'created')
  ) {
    return 'member "policy" must be {"keep_days": a non-negative integer, "basis": "last-step" or "created"}';
  }
  return null;
}

/**
 * Checks a tombstone on its own (RETENTION.md §4): its shape; an empty run's root is the empty tree's; and,
 * when it carries a checkpoint, that the final tree extends it — or, given `against` (a checkpoint of the
 * removed run someone kept), that the final tree extends that one. A checkpoint of another size than the
 * tombstone's own checkpoint or its final tree cannot be connected without the removed tree, and says so.
 */
export function checkTombstone(value: unknown, against?: string): TombstoneCheck {
  const defect = tombstoneDefect(value);
  if (defect !== null) return malformed(defect);
  const t = value as Tombstone;
  const root = digestBytesOf(t.tree_root)!;
  if (t.steps === 0 && rootDigest(EMPTY_ROOT) !== t.tree_root)
    return inconsistent("a run of no steps has the empty tree's root");
  if (t.steps > 0) {
    const headIn = verifyInclusion({
      index: t.steps - 1,
      size: t.steps,
      leaf: stepLeafHash(t.head!)!,
      proof: t.head_proof.map((h) => digestBytesOf(h)!),
      root,
    });
    if (!headIn.ok)
      return inconsistent(`the head is not the last leaf of the tree it names: ${headIn.problem.message}`);
  }
  const note = against ?? t.checkpoint;
  if (note === null) return { ok: true, checkpointSize: null };
  const parsed = checkpointOfNote(note);
  if (!parsed.ok)
    return malformed(`${against === undefined ? 'its' : 'the given'} checkpoint: ${parsed.problem.message}`);
  const cp = parsed.checkpoint;
  // A checkpoint of a stepchain journal names the journal and its genesis in its origin: one of another
  // journal proves nothing about this one, however well its tree fits.
  const origin = parseJournalOrigin(cp.origin);
  if (origin !== null && (origin.journalId !== t.journal || origin.genesisHash !== t.genesis_hash)) {
    return inconsistent(
      `the checkpoint is of journal ${origin.journalId} with genesis ${origin.genesisHash}, not of the removed journal`,
    );
  }
  if (cp.size > t.steps)
    return inconsistent(
      `the checkpoint covers ${cp.size} steps but the run had ${t.steps} when it was removed: steps were lost before the removal`,
    );
  let proof: Uint8Array[];
  if (cp.size === t.steps) proof = [];
  else if (against === undefined || (t.checkpoint !== null && sizeOf(t.checkpoint) === cp.size))
    proof = t.consistency!.map((h) => digestBytesOf(h)!);
  else
    return inconsistent(
      `no proof connects a checkpoint of size ${cp.size} to the removed tree (the tombstone proves from size ${t.checkpoint === null ? 'none' : sizeOf(t.checkpoint)})`,
    );
  const verdict = verifyConsistency({ oldSize: cp.size, oldRoot: cp.root, size: t.steps, root, proof });
  if (!verdict.ok)
    return inconsistent(
      `the removed run's tree of ${t.steps} steps does not extend the checkpoint of size ${cp.size}: ${verdict.problem.message}`,
    );
  return { ok: true, checkpointSize: cp.size };
}

/** A signed checkpoint note → its checkpoint (the signatures are the caller's to check: verifyCheckpoint). */
export function checkpointOfNote(note: string): CheckpointParse {
  const opened = parseNote(note);
  return opened.ok ? parseCheckpoint(opened.note.text) : opened;
}

function sizeOf(note: string): number {
  const parsed = checkpointOfNote(note);
  return parsed.ok ? parsed.checkpoint.size : -1;
}
