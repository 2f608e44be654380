/**
 * The SQLite store's Merkle tree (spec/SQLITE.md §4.1; the Postgres store's layout, spec/POSTGRES.md §4.1):
 * `tree_state`, `tree_tiles` and `checkpoints`, read and written on the connection it is given — inside a
 * write transaction to write, so the tree moves in the same transaction as the steps it covers. The
 * commit's fast path and the catch-up are the row stores' shared code (store/rows/tree.ts).
 */
import type { CheckpointKeeper, KeptCheckpoint } from '../../proofs/keeper.js';
import {
  parseStoredTree,
  serializeStoredTree,
  type StoredTree,
  type TileNode,
  type TreeStorage,
} from '../../proofs/log.js';
import { TILE_WIDTH, tileReader, type NodeReader } from '../../proofs/nodes.js';
import { checkpointName, type TreeStep } from '../rows/tree.js';
import type { Connection } from './driver.js';
import { stmt } from './sql.js';

/** TreeStorage and CheckpointKeeper over one journal's rows, through `db` (`get`: the connection at the time of each call). */
export class SqliteTreeStorage implements TreeStorage, CheckpointKeeper {
  constructor(
    private readonly db: () => Connection,
    private readonly key: number,
  ) {}

  async readTree(): Promise<StoredTree | null> {
    const row = stmt(this.db(), 'SELECT state FROM tree_state WHERE journal = ?').get(this.key) as
      { state: string } | undefined;
    return row === undefined ? null : parseStoredTree(row.state);
  }

  async tileCount(tileLevel: number): Promise<number> {
    return (
      stmt(this.db(), 'SELECT count(*) AS n FROM tree_tiles WHERE journal = ? AND tile_level = ?').get(
        this.key,
        tileLevel,
      ) as { n: number }
    ).n;
  }

  async truncateTiles(tileLevel: number, count: number): Promise<void> {
    stmt(this.db(), 'DELETE FROM tree_tiles WHERE journal = ? AND tile_level = ? AND idx >= ?').run(
      this.key,
      tileLevel,
      count,
    );
  }

  async appendTiles(nodes: readonly TileNode[]): Promise<void> {
    writeTiles(this.db(), this.key, nodes);
  }

  async writeTree(tree: StoredTree): Promise<void> {
    writeState(this.db(), this.key, tree.tree.size, serializeStoredTree(tree));
  }

  reader(): NodeReader {
    return tileReader(async (level, index) => {
      const first = index * TILE_WIDTH;
      const rows = stmt(
        this.db(),
        'SELECT idx, hash FROM tree_tiles WHERE journal = ? AND tile_level = ? AND idx >= ? AND idx < ? ORDER BY idx',
      ).all(this.key, level, first, first + TILE_WIDTH) as { idx: number; hash: Buffer }[];
      // Only the run of rows contiguous from the tile's start: a gap would shift every hash after it.
      const run: Buffer[] = [];
      for (const row of rows) {
        if (row.idx !== first + run.length) break;
        run.push(row.hash);
      }
      return new Uint8Array(Buffer.concat(run));
    });
  }

  async readCheckpoints(): Promise<KeptCheckpoint[]> {
    const rows = stmt(
      this.db(),
      'SELECT origin, size, key_id, note FROM checkpoints WHERE journal = ? ORDER BY size, origin, key_id',
    ).all(this.key) as { origin: string; size: number; key_id: number; note: string }[];
    return rows.map((row) => ({ name: checkpointName(row.origin, row.size, row.key_id), note: row.note }));
  }

  async keepCheckpoint(cp: { origin: string; size: number; keyId: number }, note: string): Promise<string> {
    // Ed25519 is deterministic: the same key over the same checkpoint gives the same note, kept once.
    stmt(
      this.db(),
      'INSERT INTO checkpoints (journal, origin, size, key_id, note, signed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
    ).run(this.key, cp.origin, cp.size, cp.keyId, note, new Date().toISOString());
    return checkpointName(cp.origin, cp.size, cp.keyId);
  }
}

function writeTiles(db: Connection, key: number, nodes: readonly TileNode[]): void {
  const insert = stmt(db, 'INSERT INTO tree_tiles (journal, tile_level, idx, hash) VALUES (?, ?, ?, ?)');
  for (const n of nodes) insert.run(key, n.tileLevel, n.index, Buffer.from(n.hash));
}

function writeState(db: Connection, key: number, size: number, state: string): void {
  stmt(
    db,
    'INSERT INTO tree_state (journal, size, state) VALUES (?, ?, ?) ON CONFLICT (journal) DO UPDATE SET size = excluded.size, state = excluded.state',
  ).run(key, size, state);
}

/** Writes a TreeStep (the commit's fast path: rows/tree.ts planTreeStep) on the commit's transaction. */
export function writeTreeStep(db: Connection, key: number, step: TreeStep): void {
  writeTiles(db, key, step.nodes);
  writeState(db, key, step.size, step.state);
}
