/**
 * The file store's `TreeStorage` (spec/FILE-STORE.md §16, spec/PROOFS.md §5–§6): `tree/state.json` (the
 * frontier and its last leaf's step hash, replaced atomically like head.json), `tree/tiles-<L>` (tile level
 * L: the hashes of the perfect subtrees of tree level 8·L in index order, 32 bytes each, appended as the
 * frontier completes them) and `checkpoints/` (every checkpoint this journal signed). All of it is derived
 * from the chain except the checkpoints, and is rebuilt from the chain when it does not match.
 */
import { createHash } from 'node:crypto';
import { isDigest } from '../../canonical/sha256.js';
import { constants } from 'node:fs';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { tileReader, TILE_WIDTH, type NodeReader } from '../../proofs/nodes.js';
import {
  parseStoredTree,
  serializeStoredTree,
  type LeafSource,
  type StoredTree,
  type TileNode,
  type TreeStorage,
} from '../../proofs/log.js';
import { StoreError } from '../errors.js';
import type { CheckpointKeeper, KeptCheckpoint } from '../../proofs/keeper.js';
import { CHECKPOINTS_DIR, TREE_DIR } from './layout.js';
import { fsyncDir, isNotFound, openRegular, readExactly, readRegular, sizeOf, writeFileAtomic } from './fsutil.js';

const STATE_FILE = 'state.json';
const MAX_STATE_BYTES = 8192;
/** A kept checkpoint is a signed note; a journal's own are a few hundred bytes. */
const MAX_CHECKPOINT_BYTES = 1 << 20;
const HASH = 32;
export const TILES_RE = /^tiles-[0-6]$/;
export const CHECKPOINT_RE = /^[0-9]{16}-[0-9a-f]{16}-[0-9a-f]{8}\.checkpoint$/;

/** Appends never follow a symbolic link planted in a tile's place. */
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

export class FileTreeStorage implements TreeStorage, CheckpointKeeper {
  readonly dir: string;
  readonly checkpointsDir: string;
  private readonly handles = new Map<number, FileHandle>();
  private made = false;

  constructor(journalDir: string) {
    this.dir = join(journalDir, TREE_DIR);
    this.checkpointsDir = join(journalDir, CHECKPOINTS_DIR);
  }

  private tiles(level: number): string {
    return join(this.dir, `tiles-${level}`);
  }

  private async ensureDir(): Promise<void> {
    if (this.made) return;
    await mkdir(this.dir, { recursive: true });
    this.made = true;
  }

  async readTree(): Promise<StoredTree | null> {
    try {
      return parseStoredTree((await readRegular(join(this.dir, STATE_FILE), MAX_STATE_BYTES)).toString('utf8'));
    } catch {
      return null; // missing or unreadable: rebuilt from the chain
    }
  }

  async tileCount(level: number): Promise<number> {
    return Math.floor(((await sizeOf(this.tiles(level))) ?? 0) / HASH);
  }

  async truncateTiles(level: number, count: number): Promise<void> {
    const size = await sizeOf(this.tiles(level));
    if (size === null || size <= count * HASH) return;
    await this.closeHandle(level);
    const fh = await open(this.tiles(level), constants.O_RDWR | constants.O_NOFOLLOW);
    try {
      await fh.truncate(count * HASH);
    } finally {
      await fh.close();
    }
  }

  async appendTiles(nodes: readonly TileNode[]): Promise<void> {
    await this.ensureDir();
    const byLevel = new Map<number, Uint8Array[]>();
    for (const n of nodes) {
      const list = byLevel.get(n.tileLevel) ?? [];
      list.push(n.hash);
      byLevel.set(n.tileLevel, list);
    }
    for (const [level, hashes] of byLevel) {
      let fh = this.handles.get(level);
      if (!fh) {
        fh = await open(this.tiles(level), APPEND_FLAGS, 0o644);
        this.handles.set(level, fh);
      }
      await fh.write(Buffer.concat(hashes));
    }
  }

  async writeTree(tree: StoredTree): Promise<void> {
    await this.ensureDir();
    // Derived data: a state lost in a crash is caught up from the chain, so no fsync (head.json already
    // pays the directory fsync of the release in 'always' mode); the rename keeps it whole.
    await writeFileAtomic(join(this.dir, STATE_FILE), serializeStoredTree(tree), { fsyncFile: false, fsyncDir: false });
  }

  reader(): NodeReader {
    return tileReader(async (level, index) => {
      const { handle, size } = await openRegular(this.tiles(level));
      try {
        const from = index * TILE_WIDTH * HASH;
        const have = Math.min(TILE_WIDTH * HASH, Math.max(0, size - from));
        return new Uint8Array(await readExactly(handle, have - (have % HASH), from));
      } finally {
        await handle.close();
      }
    });
  }

  /** Closes the tile files kept open across the commits of one hold (before the lock goes). */
  async close(): Promise<void> {
    for (const level of [...this.handles.keys()]) await this.closeHandle(level);
  }

  private async closeHandle(level: number): Promise<void> {
    const fh = this.handles.get(level);
    this.handles.delete(level);
    await fh?.close().catch(() => {});
  }

  // ---------------------------------------------------------------- checkpoints (not derived: never rebuilt)

  async readCheckpoints(): Promise<KeptCheckpoint[]> {
    let names: string[];
    try {
      names = await readdir(this.checkpointsDir);
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
    const out: KeptCheckpoint[] = [];
    for (const name of names.sort()) {
      if (!CHECKPOINT_RE.test(name)) continue;
      out.push({
        name: join(CHECKPOINTS_DIR, name),
        note: (await readRegular(join(this.checkpointsDir, name), MAX_CHECKPOINT_BYTES)).toString('utf8'),
      });
    }
    return out;
  }

  async keepCheckpoint(cp: { origin: string; size: number; keyId: number }, note: string): Promise<string> {
    await mkdir(this.checkpointsDir, { recursive: true });
    const originTag = createHash('sha256').update(cp.origin).digest('hex').slice(0, 16);
    const name = `${String(cp.size).padStart(16, '0')}-${originTag}-${cp.keyId.toString(16).padStart(8, '0')}.checkpoint`;
    const path = join(this.checkpointsDir, name);
    // Ed25519 is deterministic: the same key over the same checkpoint gives the same bytes.
    if ((await sizeOf(path)) !== null) return join(CHECKPOINTS_DIR, name);
    await writeFileAtomic(path, note, { fsyncFile: true, fsyncDir: false });
    await fsyncDir(this.checkpointsDir);
    return join(CHECKPOINTS_DIR, name);
  }
}

/** (seq, step_hash) of a journal's lines from a seq on: what the tree is built and caught up from. */
export function leafSource(lines: (from: number) => AsyncIterable<{ seq: number; text: string }>): LeafSource {
  return async function* (from) {
    for await (const l of lines(from)) {
      let stepHash: unknown;
      try {
        stepHash = (JSON.parse(l.text) as { step_hash?: unknown }).step_hash;
      } catch {
        stepHash = undefined;
      }
      if (!isDigest(stepHash)) {
        throw new StoreError(
          'JOURNAL_CORRUPT',
          `seq ${l.seq}: the line has no step_hash, so the tree cannot include it`,
          { location: { seq: l.seq }, hint: 'run verify on the journal' },
        );
      }
      yield { seq: l.seq, step_hash: stepHash };
    }
  };
}
