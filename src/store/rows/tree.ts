/**
 * The Merkle tree of a journal kept as rows (spec/POSTGRES.md §4.1, spec/SQLITE.md §4.1, spec/PROOFS.md
 * §5–§6): what a commit adds to the tree when the stored state is the locked head's (computed here, written
 * by the store's own statements in the commit's transaction), the leaves read back from the rows, and the
 * slow path that brings a stored tree to the head first. Each store supplies its TreeStorage and its pages.
 */
import { createHash } from 'node:crypto';
import { isDigest } from '../../canonical/sha256.js';
import { TreeFrontier } from '../../proofs/frontier.js';
import { stepLeafHash } from '../../proofs/hash.js';
import {
  JournalTree,
  parseStoredTree,
  serializeStoredTree,
  type LeafSource,
  type StoredTree,
  type TileNode,
  type TreeStorage,
} from '../../proofs/log.js';
import { TILE_HEIGHT } from '../../proofs/nodes.js';
import { StoreError } from '../errors.js';
import type { LockedHead, PageReader } from './lines.js';

/** What a commit adds to a tree whose state matches its head: the tile rows completed and the new state. */
export interface TreeStep {
  nodes: TileNode[];
  size: number;
  state: string;
}

/** How a kept checkpoint is named in messages: like the file store's file name, in the checkpoints table. */
export function checkpointName(origin: string, size: number, keyId: number): string {
  const tag = createHash('sha256').update(origin).digest('hex').slice(0, 16);
  return `checkpoints/${String(size).padStart(16, '0')}-${tag}-${keyId.toString(16).padStart(8, '0')}`;
}

/** (seq, step_hash) of the journal's rows from a seq on, read page by page. */
export function rowLeaves(page: PageReader, where: string): LeafSource {
  return async function* (from) {
    for (let next = from; ;) {
      const rows = await page(next, null);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (row.seq !== next)
          throw new StoreError('JOURNAL_CORRUPT', `${where}: the row for seq ${next} is missing`, {
            location: { seq: next },
            hint: 'run verify on the journal',
          });
        let stepHash: unknown;
        try {
          stepHash = (JSON.parse(row.line) as { step_hash?: unknown }).step_hash;
        } catch {
          stepHash = undefined;
        }
        if (!isDigest(stepHash)) {
          throw new StoreError(
            'JOURNAL_CORRUPT',
            `${where}: seq ${row.seq} has no step_hash, so the tree cannot include it`,
            { location: { seq: row.seq }, hint: 'run verify on the journal' },
          );
        }
        yield { seq: row.seq, step_hash: stepHash };
        next++;
      }
    }
  };
}

/** Whether a stored state is the tree of the chain that ends at `head` (the fast path of a commit). */
export function stateAtHead(head: { seq: number; hash: string; tree: string | null }): StoredTree | null {
  const stored = head.tree === null ? null : parseStoredTree(head.tree);
  if (stored?.tree.size !== head.seq + 1) return null;
  return stored.step_hash === (head.seq < 0 ? null : head.hash) ? stored : null;
}

/**
 * The tree's part of a commit when the stored state is the locked head's (the common case): the tile rows
 * the new lines complete and the new state. Null when the state does not match: then `catchUpAndFollow`.
 */
export function planTreeStep(
  head: LockedHead,
  lines: readonly { seq: number; hash: string }[],
  where: string,
): TreeStep | null {
  const stored = stateAtHead(head);
  if (stored === null) return null;
  const frontier = TreeFrontier.parse(stored.tree);
  const nodes: TileNode[] = [];
  for (const l of lines) {
    const leaf = stepLeafHash(l.hash);
    if (leaf === null || l.seq !== frontier.size)
      throw new StoreError(
        'JOURNAL_CORRUPT',
        `${where}: seq ${l.seq} cannot be added to a tree of ${frontier.size} leaves`,
        { location: { seq: l.seq } },
      );
    frontier.append(leaf, (level, index, hash) => {
      if (level % TILE_HEIGHT === 0) nodes.push({ tileLevel: level / TILE_HEIGHT, index, hash });
    });
  }
  return {
    nodes,
    size: frontier.size,
    state: serializeStoredTree({ step_hash: lines[lines.length - 1]!.hash, tree: frontier.toJSON() }),
  };
}

/**
 * The journal's tree brought to the chain that ends at `head`, through the transaction's storage: loaded,
 * caught up from the rows, or rebuilt from seq 0 when the state does not match (a journal made before
 * the tree's tables, a fork, or rows changed around the store).
 */
export async function syncTree(storage: TreeStorage, head: LockedHead, leaves: LeafSource): Promise<JournalTree> {
  const tree = new JournalTree(storage);
  await tree.sync({ seq: head.seq, step_hash: head.seq < 0 ? null : head.hash }, leaves);
  return tree;
}

/**
 * The commit's tree when the stored state does not match the locked head (a journal without a tree, one
 * written with merkleTree: false, rows changed around the store): brought to the head from the rows, then
 * fed the new lines, on the commit's transaction.
 */
export async function catchUpAndFollow(
  storage: TreeStorage,
  head: LockedHead,
  leaves: LeafSource,
  lines: readonly { seq: number; hash: string }[],
): Promise<void> {
  const tree = await syncTree(storage, head, leaves);
  for (const l of lines) tree.add(l.seq, l.hash);
  await tree.persist();
}
