/**
 * The tree state a writer keeps (spec/PROOFS.md §5): the roots of the perfect subtrees that make up the
 * tree at its current size — one per one bit of the size, largest first (a "compact range" [0, size)).
 * Appending a leaf is O(1) amortized hashes, the root at the current size is O(log n), the state is
 * O(log n) bytes and serializes to one canonical JSON line that a store can persist beside its journal.
 * Computing the tree of an existing journal is one streaming pass of `append`.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { base64Decode, base64Encode } from '../receipt/base64.js';
import { EMPTY_ROOT, HASH_SIZE, nodeHash } from './hash.js';
import { MAX_TREE_SIZE, isSize, popCount } from './math.js';
import { ProofError } from './problems.js';

export const TREE_STATE_FORMAT = 'stepchain-tree/v1';

/** The serialized state: `{"format":"stepchain-tree/v1","nodes":[base64, …],"size":n}`. */
export interface TreeState {
  format: typeof TREE_STATE_FORMAT;
  /** Roots of the perfect subtrees of [0, size), left to right (largest first), base64. */
  nodes: string[];
  size: number;
}

/**
 * Called for every perfect subtree an append completes: the leaf itself (level 0) and each node its
 * arrival closes. `index` counts nodes of that level from the left, so the node spans leaves
 * [index·2^level, (index+1)·2^level). A store persists these as tiles (PROOFS.md §6).
 */
export type NodeSink = (level: number, index: number, hash: Uint8Array) => void;

export class TreeFrontier {
  #size = 0;
  #nodes: Uint8Array[] = [];

  /** The number of leaves appended. */
  get size(): number {
    return this.#size;
  }

  /** Appends one leaf hash (see `stepLeafHash`). */
  append(leaf: Uint8Array, onNode?: NodeSink): void {
    if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_SIZE)
      throw new ProofError('ARGUMENT_INVALID', 'a leaf hash is 32 bytes');
    if (this.#size >= MAX_TREE_SIZE)
      throw new ProofError('ARGUMENT_INVALID', `a tree holds at most ${MAX_TREE_SIZE} leaves`);
    let hash = leaf;
    let index = this.#size;
    onNode?.(0, index, hash);
    // Each trailing one bit of the old size is a perfect subtree of the same height as the one being
    // carried: merge them, exactly like incrementing a binary counter.
    for (let level = 1; index % 2 === 1; level++) {
      hash = nodeHash(this.#nodes.pop()!, hash);
      index = (index - 1) / 2;
      onNode?.(level, index, hash);
    }
    this.#nodes.push(hash);
    this.#size++;
  }

  /** MTH of the leaves appended so far (EMPTY_ROOT for none), in popcount(size) − 1 hashes. */
  root(): Uint8Array {
    if (this.#nodes.length === 0) return EMPTY_ROOT;
    let root = this.#nodes[this.#nodes.length - 1]!;
    for (let i = this.#nodes.length - 2; i >= 0; i--) root = nodeHash(this.#nodes[i]!, root);
    return root;
  }

  /** The perfect-subtree roots, largest first (copies). */
  nodes(): Uint8Array[] {
    return this.#nodes.map((n) => n.slice());
  }

  clone(): TreeFrontier {
    const copy = new TreeFrontier();
    copy.#size = this.#size;
    copy.#nodes = this.nodes();
    return copy;
  }

  toJSON(): TreeState {
    return { format: TREE_STATE_FORMAT, nodes: this.#nodes.map(base64Encode), size: this.#size };
  }

  /** The state as one canonical JSON text (no newline). */
  serialize(): string {
    return canonicalJson(this.toJSON());
  }

  /**
   * The frontier of a serialized state (a `TreeState` value or its JSON text). Throws ProofError
   * TREE_STATE_INVALID unless it has exactly the three members, a safe integer size, and exactly
   * popcount(size) canonical base64 hashes of 32 bytes.
   */
  static parse(state: unknown): TreeFrontier {
    let value = state;
    if (typeof state === 'string') {
      try {
        value = JSON.parse(state);
      } catch {
        throw new ProofError('TREE_STATE_INVALID', 'the tree state is not JSON');
      }
    }
    const fail = (why: string): never => {
      throw new ProofError('TREE_STATE_INVALID', `the tree state ${why}`, { hint: 'rebuild it from the journal' });
    };
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('is not an object');
    const v = value as Record<string, unknown>;
    const keys = Object.keys(v).sort();
    if (keys.length !== 3 || keys[0] !== 'format' || keys[1] !== 'nodes' || keys[2] !== 'size')
      return fail('must have exactly the members format, nodes and size');
    if (v.format !== TREE_STATE_FORMAT) return fail(`format is not "${TREE_STATE_FORMAT}"`);
    if (!isSize(v.size)) return fail('size is not an integer from 0 to 2^53 − 1');
    if (!Array.isArray(v.nodes) || v.nodes.length !== popCount(v.size))
      return fail(`must hold exactly one node per one bit of size (${isSize(v.size) ? popCount(v.size) : '?'})`);
    const nodes: Uint8Array[] = [];
    for (const [i, n] of v.nodes.entries()) {
      const bytes = typeof n === 'string' ? base64Decode(n) : null;
      if (bytes?.length !== HASH_SIZE) return fail(`node ${i} is not the base64 of 32 bytes`);
      nodes.push(bytes);
    }
    const frontier = new TreeFrontier();
    frontier.#size = v.size;
    frontier.#nodes = nodes;
    return frontier;
  }
}

/** Builds the frontier of a journal's leaves in one pass (an existing journal, opened for the first time). */
export async function frontierOf(
  leaves: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  onNode?: NodeSink,
): Promise<TreeFrontier> {
  const frontier = new TreeFrontier();
  for await (const leaf of leaves) frontier.append(leaf, onNode);
  return frontier;
}
