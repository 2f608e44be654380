/**
 * The Postgres store's Merkle tree (spec/POSTGRES.md §4.1, spec/PROOFS.md §5–§6, §8.6): `tree_state` (the
 * frontier and its last leaf's step hash, the same JCS document as the file store's tree/state.json),
 * `tree_tiles` (tile level L: the hashes of tree level 8·L, one row each) and `checkpoints` (every
 * checkpoint the journal signed). Every statement runs on the caller's transaction, which holds the head
 * row's lock: the tree moves in the same transaction as the steps it covers, so after a crash the two
 * agree, and the consistency rule of a checkpoint is checked and its record kept under that one lock.
 */
import type { CheckpointKeeper, KeptCheckpoint } from '../../proofs/keeper.js';
import {
  parseStoredTree,
  serializeStoredTree,
  type JournalTree,
  type LeafSource,
  type StoredTree,
  type TileNode,
  type TreeStorage,
} from '../../proofs/log.js';
import { TILE_WIDTH, tileReader, type NodeReader } from '../../proofs/nodes.js';
import type { LockedHead } from '../rows/lines.js';
import {
  catchUpAndFollow as followFromRows,
  checkpointName,
  rowLeaves as leavesFromPages,
  syncTree,
  type TreeStep,
} from '../rows/tree.js';
import type { DbClient, DbPool } from './driver.js';
import { linesPage } from './sql.js';
import type { Tables } from './schema.js';

export { planTreeStep, type TreeStep } from '../rows/tree.js';

type Db = DbPool | DbClient;
/** Tile rows per INSERT (unnest of three arrays: no parameter limit, but bounded statements). */
const TILE_ROWS = 4096;

/** TreeStorage and CheckpointKeeper over one journal's rows, through `db` (a transaction's client to write). */
export class PostgresTreeStorage implements TreeStorage, CheckpointKeeper {
  constructor(
    private readonly db: Db,
    private readonly t: Tables,
    private readonly key: number,
  ) {}

  async readTree(): Promise<StoredTree | null> {
    const r = await this.db.query<{ state: string }>(`SELECT state FROM ${this.t.treeState} WHERE journal = $1`, [
      this.key,
    ]);
    const text = r.rows[0]?.state;
    return text === undefined ? null : parseStoredTree(text);
  }

  async tileCount(tileLevel: number): Promise<number> {
    const r = await this.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${this.t.treeTiles} WHERE journal = $1 AND tile_level = $2`,
      [this.key, tileLevel],
    );
    return Number(r.rows[0]?.n ?? 0);
  }

  async truncateTiles(tileLevel: number, count: number): Promise<void> {
    await this.db.query(`DELETE FROM ${this.t.treeTiles} WHERE journal = $1 AND tile_level = $2 AND idx >= $3`, [
      this.key,
      tileLevel,
      count,
    ]);
  }

  async appendTiles(nodes: readonly TileNode[]): Promise<void> {
    await insertTiles(this.db, this.t, this.key, nodes);
  }

  async writeTree(tree: StoredTree): Promise<void> {
    await writeState(this.db, this.t, this.key, tree);
  }

  reader(): NodeReader {
    return tileReader(async (level, index) => {
      const first = index * TILE_WIDTH;
      const r = await this.db.query<{ idx: number; hash: Buffer }>(
        `SELECT idx::float8 AS idx, hash FROM ${this.t.treeTiles} WHERE journal = $1 AND tile_level = $2 AND idx >= $3 AND idx < $4 ORDER BY idx`,
        [this.key, level, first, first + TILE_WIDTH],
      );
      // Only the run of rows contiguous from the tile's start: a gap would shift every hash after it (the
      // reader then finds the tile short and says so).
      const run: Buffer[] = [];
      for (const row of r.rows) {
        if (row.idx !== first + run.length) break;
        run.push(row.hash);
      }
      return new Uint8Array(Buffer.concat(run));
    });
  }

  async readCheckpoints(): Promise<KeptCheckpoint[]> {
    const r = await this.db.query<{ origin: string; size: string; key_id: string; note: string }>(
      `SELECT origin, size, key_id, note FROM ${this.t.checkpoints} WHERE journal = $1 ORDER BY size, origin, key_id`,
      [this.key],
    );
    return r.rows.map((row) => ({
      name: checkpointName(row.origin, Number(row.size), Number(row.key_id)),
      note: row.note,
    }));
  }

  async keepCheckpoint(cp: { origin: string; size: number; keyId: number }, note: string): Promise<string> {
    // Ed25519 is deterministic: the same key over the same checkpoint gives the same note, kept once.
    await this.db.query(
      `INSERT INTO ${this.t.checkpoints} (journal, origin, size, key_id, note) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [this.key, cp.origin, cp.size, cp.keyId, note],
    );
    return checkpointName(cp.origin, cp.size, cp.keyId);
  }
}

async function insertTiles(db: Db, t: Tables, key: number, nodes: readonly TileNode[]): Promise<void> {
  for (let i = 0; i < nodes.length; i += TILE_ROWS) {
    const chunk = nodes.slice(i, i + TILE_ROWS);
    await db.query(
      `INSERT INTO ${t.treeTiles} (journal, tile_level, idx, hash) SELECT $1, l, i, decode(h, 'hex') FROM unnest($2::smallint[], $3::bigint[], $4::text[]) AS n(l, i, h)`,
      [
        key,
        chunk.map((n) => n.tileLevel),
        chunk.map((n) => n.index),
        chunk.map((n) => Buffer.from(n.hash).toString('hex')),
      ],
    );
  }
}

async function writeState(db: Db, t: Tables, key: number, tree: StoredTree): Promise<void> {
  await db.query(
    `INSERT INTO ${t.treeState} (journal, size, state) VALUES ($1, $2, $3) ON CONFLICT (journal) DO UPDATE SET size = excluded.size, state = excluded.state`,
    [key, tree.tree.size, serializeStoredTree(tree)],
  );
}

/** (seq, step_hash) of the journal's rows from a seq on, read on `db` (the transaction's own view). */
export function rowLeaves(db: Db, t: Tables, key: number, where: string): LeafSource {
  return leavesFromPages((from, to) => linesPage(db, t, key, from, to), where);
}

/** The journal's tree brought to the chain that ends at `head`, on the caller's transaction (rows/tree.ts syncTree). */
export async function syncedTree(
  client: DbClient,
  t: Tables,
  key: number,
  head: LockedHead,
  where: string,
): Promise<JournalTree> {
  return syncTree(new PostgresTreeStorage(client, t, key), head, rowLeaves(client, t, key, where));
}

/** The data-modifying CTEs that write a TreeStep (their values appended to `values`, whose $1 is the journal's key). */
export function treeStatements(t: Tables, step: TreeStep, values: unknown[]): string[] {
  const n = values.length;
  values.push(
    step.nodes.map((x) => x.tileLevel),
    step.nodes.map((x) => x.index),
    step.nodes.map((x) => Buffer.from(x.hash).toString('hex')),
    step.size,
    step.state,
  );
  return [
    `tiles AS (INSERT INTO ${t.treeTiles} (journal, tile_level, idx, hash) SELECT $1, l, i, decode(h, 'hex') FROM unnest($${n + 1}::smallint[], $${n + 2}::bigint[], $${n + 3}::text[]) AS n(l, i, h))`,
    `tree AS (UPDATE ${t.treeState} SET size = $${n + 4}, state = $${n + 5} WHERE journal = $1)`,
  ];
}

/** The commit's tree when the stored state does not match the locked head: caught up from the rows, then fed the new lines. */
export async function catchUpAndFollow(
  client: DbClient,
  t: Tables,
  key: number,
  head: LockedHead,
  lines: readonly { seq: number; hash: string }[],
  where: string,
): Promise<void> {
  await followFromRows(new PostgresTreeStorage(client, t, key), head, rowLeaves(client, t, key, where), lines);
}
