/**
 * Where proof generation gets its hashes (spec/PROOFS.md §6): a `NodeReader` answers the hashes of
 * perfect subtrees, named by (level, index). A store backs it with tiles (C2SP tlog-tiles layout: tile
 * level L holds the nodes of tree level 8·L, 256 per tile), an in-memory tree with arrays. Every other
 * subtree a proof needs — the right edge of a tree whose size is not a power of two — is folded from
 * perfect ones, so a reader never needs to know the tree's size.
 */
import { EMPTY_ROOT, HASH_SIZE, nodeHash } from './hash.js';
import { MAX_TREE_SIZE, bitLength } from './math.js';
import { ProofError } from './problems.js';
import type { NodeSink } from './frontier.js';

/** A perfect subtree: leaves [index·2^level, (index+1)·2^level). Level 0 nodes are leaf hashes. */
export interface NodeId {
  level: number;
  index: number;
}

/**
 * Answers the hashes of perfect subtrees, in the order asked, all at once (so a store can read each tile
 * once). Every id asked lies inside the tree the proof is for.
 */
export interface NodeReader {
  readNodes(ids: readonly NodeId[]): readonly Uint8Array[] | Promise<readonly Uint8Array[]>;
}

/** A subtree of the RFC 6962 tree: leaves [start, end). */
export interface Span {
  start: number;
  end: number;
}

/**
 * The perfect subtrees that make up [start, end), left to right. For the subtrees of an RFC 6962 tree —
 * perfect ones and the right edge [start, size) — `start` is a multiple of a power of two at least
 * end − start, so the pieces follow the one bits of end − start, largest first.
 */
export function perfectNodes(span: Span): NodeId[] {
  const out: NodeId[] = [];
  for (let start = span.start; start < span.end;) {
    let width = 2 ** (bitLength(span.end - start) - 1);
    while (start % width !== 0) width /= 2;
    out.push({ level: bitLength(width) - 1, index: start / width });
    start += width;
  }
  return out;
}

/** Folds perfect-subtree hashes left to right into the hash of the span they make up (right-nested). */
export function foldRight(hashes: readonly Uint8Array[], from = 0, to = hashes.length): Uint8Array {
  let h = hashes[to - 1]!;
  for (let i = to - 2; i >= from; i--) h = nodeHash(hashes[i]!, h);
  return h;
}

/** Reads the hashes of `spans` through `reader`, folding the spans that are not perfect. */
export async function readSpans(reader: NodeReader, spans: readonly Span[]): Promise<Uint8Array[]> {
  const groups = spans.map(perfectNodes);
  const ids = groups.flat();
  if (ids.length === 0) return [];
  const hashes = await reader.readNodes(ids);
  if (hashes?.length !== ids.length)
    throw new ProofError('NODE_READER_FAILED', `asked for ${ids.length} node hashes, got ${hashes?.length ?? 'none'}`);
  for (const [i, h] of hashes.entries()) {
    if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE)
      throw new ProofError(
        'NODE_READER_FAILED',
        `the hash of node (level ${ids[i]!.level}, index ${ids[i]!.index}) is not 32 bytes`,
      );
  }
  const out: Uint8Array[] = [];
  let at = 0;
  for (const g of groups) {
    out.push(foldRight(hashes, at, at + g.length));
    at += g.length;
  }
  return out;
}

/** MTH of the first `size` leaves of the tree behind `reader`, in popcount(size) reads. */
export async function treeRoot(reader: NodeReader, size: number): Promise<Uint8Array> {
  if (size === 0) return EMPTY_ROOT;
  return (await readSpans(reader, [{ start: 0, end: size }]))[0]!;
}

/** A growable array of 32-byte hashes in one buffer. */
class HashColumn {
  bytes = new Uint8Array(HASH_SIZE * 16);
  length = 0;
  push(h: Uint8Array): void {
    if ((this.length + 1) * HASH_SIZE > this.bytes.length) {
      const next = new Uint8Array(this.bytes.length * 2);
      next.set(this.bytes);
      this.bytes = next;
    }
    this.bytes.set(h, this.length * HASH_SIZE);
    this.length++;
  }
  at(i: number): Uint8Array {
    return this.bytes.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE);
  }
}

/**
 * Every perfect node of a tree, in memory (2 · 32 bytes per leaf): for tests, small journals, and
 * building tiles. Implements NodeReader synchronously.
 */
export class MemoryTree implements NodeReader {
  readonly #levels: HashColumn[] = [new HashColumn()];

  get size(): number {
    return this.#levels[0]!.length;
  }

  append(leaf: Uint8Array, onNode?: NodeSink): void {
    if (!(leaf instanceof Uint8Array) || leaf.length !== HASH_SIZE)
      throw new ProofError('ARGUMENT_INVALID', 'a leaf hash is 32 bytes');
    if (this.size >= MAX_TREE_SIZE)
      throw new ProofError('ARGUMENT_INVALID', `a tree holds at most ${MAX_TREE_SIZE} leaves`);
    let index = this.size;
    this.#levels[0]!.push(leaf);
    onNode?.(0, index, leaf);
    for (let level = 0; index % 2 === 1; level++) {
      const column = this.#levels[level]!;
      const h = nodeHash(column.at(index - 1), column.at(index));
      index = (index - 1) / 2;
      if (this.#levels.length === level + 1) this.#levels.push(new HashColumn());
      this.#levels[level + 1]!.push(h);
      onNode?.(level + 1, index, h);
    }
  }

  readNodes(ids: readonly NodeId[]): Uint8Array[] {
    return ids.map(({ level, index }) => {
      const column = this.#levels[level];
      if (!column || !(index >= 0 && index < column.length))
        throw new ProofError(
          'NODE_READER_FAILED',
          `node (level ${level}, index ${index}) is not in this tree of ${this.size} leaves`,
        );
      return column.at(index);
    });
  }
}

// ---- tiles (C2SP tlog-tiles) -------------------------------------------------------------------------

/** Tiles hold 2^8 = 256 hashes of one tree level; tile level L holds tree level 8·L. */
export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 256;

/**
 * Reads `width` or more hashes (32 bytes each, concatenated) of tile `index` of tile level `level`: a
 * full tile, or the partial tile a store keeps for the tree's right edge.
 */
export type TileFetch = (level: number, index: number, width: number) => Uint8Array | Promise<Uint8Array>;

/** A fetched tile and the interior hashes computed from it so far: `rows[b][k]` is the node of height b above entry k·2^b. */
interface OpenTile {
  width: number;
  rows: (Uint8Array | undefined)[][];
}

/**
 * A NodeReader over stored tiles. A node at tree level h is rebuilt from the 2^(h mod 8) hashes below it
 * in the tile of tree level 8·⌊h/8⌋ (at most 255 hashes). The reader keeps the last `cache` tiles it
 * fetched, with every interior hash it computed in them, so a run of proofs — which all pass through the
 * same few tiles near the root — pays for each hash once (PROOFS.md §6).
 */
export function tileReader(fetch: TileFetch, options: { cache?: number } = {}): NodeReader {
  const limit = Math.max(1, options.cache ?? 64);
  const open = new Map<string, OpenTile>();
  const node = (tile: OpenTile, height: number, k: number): Uint8Array => {
    const row = (tile.rows[height] ??= []);
    let h = row[k];
    if (!h) {
      h = nodeHash(node(tile, height - 1, 2 * k), node(tile, height - 1, 2 * k + 1));
      row[k] = h;
    }
    return h;
  };
  return {
    async readNodes(ids) {
      const plans = ids.map(({ level, index }) => {
        const tileLevel = Math.floor(level / TILE_HEIGHT);
        const height = level - tileLevel * TILE_HEIGHT;
        const first = index * 2 ** height;
        const tileIndex = Math.floor(first / TILE_WIDTH);
        const offset = first - tileIndex * TILE_WIDTH;
        return {
          key: `${tileLevel}/${tileIndex}`,
          tileLevel,
          tileIndex,
          height,
          k: offset / 2 ** height,
          width: offset + 2 ** height,
        };
      });
      const wanted = new Map<string, { level: number; index: number; width: number }>();
      for (const p of plans) {
        const have = open.get(p.key);
        if (have && have.width >= p.width) continue;
        const w = wanted.get(p.key);
        if (!w || w.width < p.width) wanted.set(p.key, { level: p.tileLevel, index: p.tileIndex, width: p.width });
      }
      // One fetch at a time: a store may read tiles on one connection (a Postgres transaction's client, where
      // overlapping queries are deprecated in pg 8 and an error in pg 9: outsider H). A proof needs a few tiles.
      for (const [key, t] of wanted) {
        const bytes = await fetch(t.level, t.index, t.width);
        if (!(bytes instanceof Uint8Array) || bytes.length < t.width * HASH_SIZE || bytes.length % HASH_SIZE !== 0) {
          throw new ProofError(
            'NODE_READER_FAILED',
            `tile ${t.level}/${t.index} holds fewer than the ${t.width} hashes needed`,
          );
        }
        const width = Math.min(TILE_WIDTH, bytes.length / HASH_SIZE);
        const entries: Uint8Array[] = [];
        for (let i = 0; i < width; i++) entries.push(bytes.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE));
        open.delete(key);
        open.set(key, { width, rows: [entries] });
      }
      const out = plans.map((p) => {
        const tile = open.get(p.key)!;
        open.delete(p.key); // most recently used last
        open.set(p.key, tile);
        return node(tile, p.height, p.k);
      });
      while (open.size > limit) open.delete(open.keys().next().value!);
      return out;
    },
  };
}

/**
 * The tlog-tiles resource path of a tile: `tile/<L>/<N>` with N in zero-padded 3-digit groups, all but
 * the last prefixed with `x` (1234067 → `x001/x234/067`), and `.p/<W>` for a partial tile of width W.
 */
export function tilePath(level: number, index: number, width = TILE_WIDTH): string {
  let digits = String(index);
  digits = digits.padStart(Math.ceil(digits.length / 3) * 3, '0');
  const groups: string[] = [];
  for (let i = 0; i < digits.length; i += 3) groups.push(digits.slice(i, i + 3));
  const n = groups.map((g, i) => (i < groups.length - 1 ? 'x' + g : g)).join('/');
  return `tile/${level}/${n}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}
