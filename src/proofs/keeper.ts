/**
 * A log signing its own checkpoints (spec/PROOFS.md §8.6): it keeps every checkpoint it signed, and signs
 * a new one of an origin only when its tree, at the size of the last one it signed for that origin, has
 * that checkpoint's root — checked with a consistency proof from its own tree, as a witness would.
 * Losing the record of the last one is impossible by construction: it is the largest kept. Pure.
 */
import { parseCheckpoint, signCheckpoint, type Checkpoint } from './checkpoint.js';
import type { JournalTree, LeafSource } from './log.js';
import { TreeFrontier } from './frontier.js';
import { equalBytes, stepLeafHash } from './hash.js';
import { parseNote, type NoteSigner } from './note.js';
import { proveConsistency } from './prove.js';
import { ProofError } from './problems.js';
import { checkWitnessUpdate } from './witness.js';

/** A checkpoint the log kept: where (for messages) and the signed note. */
export interface KeptCheckpoint {
  name: string;
  note: string;
}

/** The storage side: a store keeps signed checkpoints forever (they are not derived data). */
export interface CheckpointKeeper {
  readCheckpoints(): Promise<KeptCheckpoint[]>;
  /** Keeps a signed checkpoint durably before it is handed out; returns where. */
  keepCheckpoint(cp: { origin: string; size: number; keyId: number }, note: string): Promise<string>;
}

export interface SignedCheckpoint {
  note: string;
  checkpoint: Checkpoint;
  /** Where the store keeps it. */
  kept: string;
  /** The last checkpoint signed before for this origin, which this one was checked to extend. */
  previous: Checkpoint | null;
}

/** The largest checkpoint kept for `origin` (the last signed), or null. Throws on a kept note that does not parse. */
export function lastCheckpoint(kept: readonly KeptCheckpoint[], origin: string): Checkpoint | null {
  let last: Checkpoint | null = null;
  for (const k of kept) {
    const note = parseNote(k.note);
    const cp = note.ok ? parseCheckpoint(note.note.text) : null;
    if (!cp?.ok) {
      throw new ProofError(
        'CHECKPOINT_REFUSED',
        `the kept checkpoint ${k.name} cannot be read: ${note.ok ? (cp as { problem: { message: string } }).problem.message : note.problem.message}`,
        {
          hint: 'restore it from a backup; a log never signs without knowing the last checkpoint it signed',
        },
      );
    }
    if (cp.checkpoint.origin === origin && (last === null || cp.checkpoint.size > last.size)) last = cp.checkpoint;
  }
  return last;
}

/**
 * Signs the tree's current checkpoint for `origin` (the signer's name) and keeps it, after checking that
 * it extends the last one kept for that origin. Throws ProofError CHECKPOINT_REFUSED naming the problem
 * (SIZE_DECREASED for a truncated journal, INCONSISTENT for a rewritten one) and signs nothing. The
 * caller holds the journal's lock, so the tree does not move meanwhile.
 */
export async function signJournalCheckpoint(
  tree: JournalTree,
  keeper: CheckpointKeeper,
  signer: NoteSigner,
  leaves: LeafSource,
): Promise<SignedCheckpoint> {
  const origin = signer.name;
  const next = { origin, size: tree.size, root: tree.root() };
  // The stored tree is derived data that whoever can write the store can replace (an old tree/ put back
  // over a rewritten chain): what is signed is the root computed from the chain's own step hashes, once
  // per signature (FILE-STORE.md §16), and a stored tree that disagrees is refused.
  const fromChain = new TreeFrontier();
  for await (const leaf of leaves(0)) {
    if (fromChain.size >= next.size) break;
    const hash = stepLeafHash(leaf.step_hash);
    if (hash === null || leaf.seq !== fromChain.size) break;
    fromChain.append(hash);
  }
  if (fromChain.size !== next.size || !equalBytes(fromChain.root(), next.root)) {
    throw new ProofError(
      'CHECKPOINT_REFUSED',
      `refusing to sign size ${next.size} of ${origin}: the stored Merkle tree does not match the journal's chain`,
      {
        hint: 'the tree cache was altered; it is derived data: remove it (tree/, or the tree tables) so it is rebuilt from the chain, then verify the journal against its last checkpoint',
      },
    );
  }
  const previous = lastCheckpoint(await keeper.readCheckpoints(), origin);
  if (previous) {
    const proof =
      previous.size <= next.size ? await proveConsistency(tree.storage.reader(), previous.size, next.size) : [];
    const verdict = checkWitnessUpdate({ last: previous, next, proof });
    if (!verdict.ok) {
      throw new ProofError(
        'CHECKPOINT_REFUSED',
        `refusing to sign size ${next.size} of ${origin}: it does not extend the checkpoint of size ${previous.size} this journal signed (${verdict.problem.message})`,
        {
          hint: 'the journal was truncated or rewritten after that checkpoint; restore it from a backup',
        },
      );
    }
  }
  const note = signCheckpoint(next, signer);
  const kept = await keeper.keepCheckpoint({ origin, size: next.size, keyId: signer.keyId }, note);
  return { note, checkpoint: { ...next, extensions: [] }, kept, previous };
}
