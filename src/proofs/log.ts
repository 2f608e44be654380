/**
 * The tree a store keeps beside its journal (spec/PROOFS.md §5, spec/FILE-STORE.md §16): a frontier fed
 * every committed (seq, step_hash) under the journal's lock, the perfect-subtree hashes it completes
 * handed to the store as tiles, and the state persisted before the lock goes. Any store implements the
 * small `TreeStorage` interface; `JournalTree` holds the logic they share — load, check against the
 * chain's head, catch up (or rebuild) from the lines, follow appends. Pure: no Node-only imports.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { isDigest } from '../canonical/sha256.js';
import { isObject } from '../canonical/json.js';
import { TreeFrontier, type TreeState } from './frontier.js';
import { equalBytes, stepLeafHash } from './hash.js';
import { TILE_HEIGHT, type NodeReader } from './nodes.js';
import { ProofError, problem } from './problems.js';
import type { Verdict } from './verify.js';

/** The persisted tree: the frontier (§5.3) and the step hash of its last leaf, to detect a stale state. */
export interface StoredTree {
  /** step_hash of leaf size − 1, or null for the empty tree. */
  step_hash: string | null;
  tree: TreeState;
}

/** A hash the frontier completed at a tile level's tree level (8·L): tile level L, index, hash. */
export interface TileNode {
  tileLevel: number;
  index: number;
  hash: Uint8Array;
}

/** What a store implements so that its journal keeps a tree (the file store: tree/; PostgreSQL: tables). */
export interface TreeStorage {
  /** The persisted tree, or null when there is none (or it cannot be read: it is rebuilt). */
  readTree(): Promise<StoredTree | null>;
  /** How many hashes tile level L holds (the store's own count, checked against the state). */
  tileCount(tileLevel: number): Promise<number>;
  /** Keeps the first `count` hashes of tile level L and drops the rest (after a crash left extras). */
  truncateTiles(tileLevel: number, count: number): Promise<void>;
  /** Appends hashes to tile levels, each level's in index order, continuing where it ends. */
  appendTiles(nodes: readonly TileNode[]): Promise<void>;
  /** Replaces the persisted tree (atomically: old or new, never a mix). */
  writeTree(tree: StoredTree): Promise<void>;
  /** Answers subtree hashes for proofs (a `tileReader` over the stored tiles). */
  reader(): NodeReader;
}

/** A chain's committed end: the seq and step_hash of its last step (seq −1 for none). */
export interface ChainEnd {
  seq: number;
  step_hash: string | null;
}

/** (seq, step_hash) of committed steps from a seq on, in order: the store's lines. */
export type LeafSource = (from: number) => AsyncIterable<{ seq: number; step_hash: string }>;

/** Tile levels 0–6 cover tree levels 0–48, all a tree of at most 2^53 − 1 leaves has. */
export const MAX_TILE_LEVELS = 7;

/** How many hashes tile level L holds for a tree of `size` leaves: the completed subtrees of level 8·L. */
export function tileCountAt(size: number, tileLevel: number): number {
  return Math.floor(size / 2 ** (TILE_HEIGHT * tileLevel));
}

/** The number of tile levels a tree of `size` leaves has hashes in (0 for the empty tree). */
export function tileLevelsAt(size: number): number {
  let levels = 0;
  while (tileCountAt(size, levels) > 0) levels++;
  return levels;
}

export function serializeStoredTree(t: StoredTree): string {
  return canonicalJson(t);
}

/** The stored tree of a JSON text, or null when it is not one (a store then rebuilds). */
export function parseStoredTree(text: string): StoredTree | null {
  try {
    const v: unknown = JSON.parse(text);
    if (!isObject(v) || Object.keys(v).sort().join(',') !== 'step_hash,tree') return null;
    const frontier = TreeFrontier.parse(v.tree);
    const sh = v.step_hash;
    if (frontier.size === 0) return sh === null ? { step_hash: null, tree: frontier.toJSON() } : null;
    return isDigest(sh) ? { step_hash: sh, tree: frontier.toJSON() } : null;
  } catch {
    return null;
  }
}

/**
 * The tree of one journal as its writer sees it. `sync` under a fresh lock, then `add` for each committed
 * step and `persist` before the lock is released. Between sync and persist, nothing else may write the
 * journal (the lock guarantees it).
 */
export class JournalTree {
  #frontier = new TreeFrontier();
  #last: string | null = null;
  #pending: TileNode[] = [];
  #dirty = false;

  constructor(readonly storage: TreeStorage) {}

  get size(): number {
    return this.#frontier.size;
  }

  root(): Uint8Array {
    return this.#frontier.root();
  }

  /**
   * Brings the tree to the chain's end: the persisted state if it matches the chain, caught up from the
   * lines after it, or rebuilt from seq 0 when it does not match (§5.2: derived data never outranks the
   * chain). Extra tile hashes a crash left past the state are cut off.
   */
  async sync(end: ChainEnd, leaves: LeafSource): Promise<void> {
    this.#pending = [];
    const stored = await this.storage.readTree();
    let usable = stored !== null && stored.tree.size <= end.seq + 1;
    if (usable && stored!.tree.size === end.seq + 1 && stored!.step_hash !== end.step_hash) usable = false;
    if (usable) usable = await this.tilesCover(stored!.tree.size);
    if (usable && stored!.tree.size > 0 && stored!.tree.size < end.seq + 1)
      usable = await this.leafMatches(stored!, leaves);
    this.#frontier = usable ? TreeFrontier.parse(stored!.tree) : new TreeFrontier();
    this.#last = usable ? stored!.step_hash : null;
    for (let l = 0; l < MAX_TILE_LEVELS; l++) await this.storage.truncateTiles(l, tileCountAt(this.#frontier.size, l));
    this.#dirty = !usable;
    if (this.#frontier.size < end.seq + 1) {
      for await (const leaf of leaves(this.#frontier.size)) {
        this.add(leaf.seq, leaf.step_hash);
        if (this.#pending.length >= 4096) await this.flushTiles();
        if (leaf.seq >= end.seq) break;
      }
      if (this.#frontier.size !== end.seq + 1)
        throw new ProofError(
          'TREE_STATE_INVALID',
          `the journal's lines end at seq ${this.#frontier.size - 1}, its head is seq ${end.seq}`,
        );
      await this.persist();
    } else if (this.#dirty) {
      await this.persist();
    }
  }

  /** Whether every tile level holds at least the hashes a tree of `size` completed. */
  private async tilesCover(size: number): Promise<boolean> {
    for (let l = 0; l < tileLevelsAt(size); l++)
      if ((await this.storage.tileCount(l)) < tileCountAt(size, l)) return false;
    return true;
  }

  /** Whether the chain still holds the state's last leaf (else the journal was rewritten under the state). */
  private async leafMatches(stored: StoredTree, leaves: LeafSource): Promise<boolean> {
    for await (const l of leaves(stored.tree.size - 1))
      return l.seq === stored.tree.size - 1 && l.step_hash === stored.step_hash;
    return false;
  }

  /** Feeds one committed step; seqs come in order from the tree's size. */
  add(seq: number, stepHash: string): void {
    const leaf = stepLeafHash(stepHash);
    if (leaf === null) throw new ProofError('ARGUMENT_INVALID', `seq ${seq}: the step hash is not a digest`);
    if (seq !== this.#frontier.size)
      throw new ProofError('ARGUMENT_INVALID', `seq ${seq} arrived for a tree of ${this.#frontier.size} leaves`);
    this.#frontier.append(leaf, (level, index, hash) => {
      if (level % TILE_HEIGHT === 0) this.#pending.push({ tileLevel: level / TILE_HEIGHT, index, hash });
    });
    this.#last = stepHash;
    this.#dirty = true;
  }

  /**
   * Writes the tile hashes completed since the last call once at least `atLeast` are pending (appends only).
   * A writer calls it per commit with a threshold, so a one-step commit pays no write; `persist` and
   * anything that reads the tiles flush everything first.
   */
  async flushTiles(atLeast = 0): Promise<void> {
    if (this.#pending.length < Math.max(1, atLeast)) return;
    const nodes = this.#pending;
    this.#pending = [];
    await this.storage.appendTiles(nodes);
  }

  /** Writes pending tiles, then the state: a crash between the two leaves extra tiles, which sync cuts. */
  async persist(): Promise<void> {
    await this.flushTiles();
    if (!this.#dirty) return;
    await this.storage.writeTree({ step_hash: this.#last, tree: this.#frontier.toJSON() });
    this.#dirty = false;
  }

  /** The frontier as it is now (a copy). */
  frontier(): TreeFrontier {
    return this.#frontier.clone();
  }
}

/**
 * Whether a chain — its step hashes in seq order from 0, every one verified — extends an earlier
 * checkpoint (PROOFS.md §9.3 computed from the leaves themselves, never from stored tiles, which a
 * rewriter could keep): SIZE_DECREASED when it has fewer steps, INCONSISTENT when its first `size`
 * leaves have another root, FORKED when it has exactly `size` steps (`total`, when known) and another root.
 * Reads only as far as the checkpoint's size.
 */
export async function leavesExtend(
  stepHashes: AsyncIterable<string>,
  trusted: { size: number; root: Uint8Array },
  total?: number,
): Promise<Verdict> {
  const frontier = new TreeFrontier();
  if (trusted.size > 0) {
    for await (const h of stepHashes) {
      const leaf = stepLeafHash(h);
      if (leaf === null)
        return { ok: false, problem: problem('PROOF_MALFORMED', `step ${frontier.size} has no valid step hash`) };
      frontier.append(leaf);
      if (frontier.size === trusted.size) break;
    }
  }
  if (frontier.size < trusted.size)
    return {
      ok: false,
      problem: problem(
        'SIZE_DECREASED',
        `the earlier checkpoint has ${trusted.size} steps, the journal only ${frontier.size}: it was truncated`,
      ),
    };
  if (!equalBytes(frontier.root(), trusted.root)) {
    // The same size with another root is a fork (PROOFS.md §9.8 step 3), not an extension that went wrong.
    if (total === trusted.size)
      return {
        ok: false,
        problem: problem(
          'FORKED',
          `the journal's ${total} steps and the earlier checkpoint of size ${trusted.size} have different roots: two histories of the same size (a fork)`,
        ),
      };
    return {
      ok: false,
      problem: problem(
        'INCONSISTENT',
        `steps 0..${trusted.size - 1} do not have the earlier checkpoint's root: the journal was rewritten after it`,
      ),
    };
  }
  return { ok: true };
}
