/**
 * The root R of a private `stepchain/v3` record from the canonical texts of its slots (spec/FORMAT.md §14,
 * docs/design/format-v3.md §4–§5, §12.3): the digests of commit.ts's walk over parsed values, computed as the
 * writer's and the deep tier's hot paths can afford. Every unit's body is a slice of its slot's canonical text
 * (design §4.1): the text is scanned once into a table of units (no parse, no re-serialisation) and the tree
 * hashed level by level, each level's preimages written in place into one batched SHA-256 call
 * (canonical/sha256-batch.ts): the slot keys, the salt blocks, each level bottom up, R — about ten calls per
 * record instead of a hundred. The texts must be canonical (RFC 8785), as every stored line's are; anything
 * the scan does not expect (a part reference to check) goes to commit.ts's walk, which gives the same root or
 * throws its coded CommitError. test/record/v3-commit-texts.test.ts holds the two equal. Pure.
 */
import { newSha256Batch, type Sha256Batch } from '../../canonical/sha256-batch.js';
import { KEY_BYTES, SALT_BYTES, SEED_BYTES, TAG, V3_SLOTS, commitRecord, type V3Slot } from './commit.js';
import {
  ABSENT,
  CHUNK,
  OBJECT,
  SCALAR,
  SLOTS,
  SLOT_NAME,
  SLOT_NAME_BYTES,
  TEXT_NAME,
  UnitTable,
  grownI32,
} from './unit-table.js';

/** A container unit's repr byte (`{`, `[`, `~`) by its kind (unit-table.ts). */
const REPR_BYTE = [0, 0, 0x7b, 0x5b, 0x7e, 0];
/** Records hashed together at most: the levels of this many records share each kernel call (lanes kept full). */
const BATCH_RECORDS = 256;
/** Records sealed through the portable batch before the kernel is compiled. */
const KERNEL_AFTER = 16;

/**
 * The hashing of the unit table and its work buffers, reused from batch to batch (nothing here is kept
 * between calls).
 */
class TreeHasher extends UnitTable {
  private levelCount = new Int32Array(16);
  private order = new Int32Array(256);
  /** Each unit's place in `order`: its digest is at 32 × rank in `digests`, so a level's digests are one run. */
  private rank = new Int32Array(256);
  private digests = new Uint8Array(32 * 256);
  private salts = new Uint8Array(32 * 64);
  private digestView = new DataView(this.digests.buffer);
  private saltView = new DataView(this.salts.buffer);
  private messageView: DataView = new DataView(new ArrayBuffer(0));
  /** The batch's bytes messageView was made for: compared by identity (a Uint8Array's `.buffer` is a slow read). */
  private messageBytes: Uint8Array | null = null;
  // The first records go through the portable batch: a process that seals a few (one CLI `append`) never pays
  // the kernel's compile, ≈ 8–12 ms of CPU measured; from the KERNEL_AFTER-th record on, the kernel.
  private batch: Sha256Batch = newSha256Batch({ portable: true });
  private sealed = 0;

  /** Views the batch's bytes (new after its memory grew) through messageView. */
  private viewMessages(m: Uint8Array): void {
    this.messageBytes = m;
    this.messageView = new DataView(m.buffer);
  }

  /** Writes unit u's preimage as the batch's next message, in place (the pieces are short: loops, not views). */
  private preimage(u: number): void {
    const kind = this.kind[u]!;
    const slot = this.slot[u]!;
    const index = this.index[u]!;
    let names = this.src;
    let ns = 0;
    let nameLen = 0;
    if (this.nameKind[u] === TEXT_NAME) {
      ns = this.nameStart[u]!;
      nameLen = this.nameEnd[u]! - ns;
    } else if (this.nameKind[u] === SLOT_NAME) {
      names = SLOT_NAME_BYTES[slot % SLOTS]!;
      nameLen = names.length;
    }
    const scalar = kind === SCALAR || kind === CHUNK;
    const n = this.childCount[u]!;
    const reprLen = scalar ? this.valEnd[u]! - this.valStart[u]! : kind === ABSENT ? 0 : 1 + 32 * n;
    const batch = this.batch;
    const start = batch.reserve(1 + SALT_BYTES + nameLen + reprLen);
    const m = batch.bytes;
    // Salts and digests are copied four bytes at a time through DataViews (unaligned stores are allowed there).
    if (m !== this.messageBytes) this.viewMessages(m);
    const mv = this.messageView;
    let at = start;
    m[at++] = this.tag[u]!;
    const sv = this.saltView;
    const s = 32 * (this.slotUnits[slot]! + (index >>> 1)) + SALT_BYTES * (index & 1);
    for (let k = s; k < s + SALT_BYTES; k += 4, at += 4) mv.setUint32(at, sv.getUint32(k));
    if (names === this.src) at = copyShort(mv, at, this.srcView, ns, nameLen);
    else for (let k = ns; k < ns + nameLen; k++) m[at++] = names[k]!;
    if (scalar) {
      const src = this.src;
      const vs = this.valStart[u]!;
      const ve = this.valEnd[u]!;
      // A long text (a chunk, a sentence) copies faster through a view; a short one (most scalars) in words.
      if (ve - vs > 64) {
        m.set(src.subarray(vs, ve), at);
        at += ve - vs;
      } else at = copyShort(mv, at, this.srcView, vs, ve - vs);
    } else if (kind !== ABSENT) {
      m[at++] = REPR_BYTE[kind]!;
      const cs = this.childStart[u]!;
      if (kind === OBJECT && n > 1) this.sortByDigest(cs, n);
      const dv = this.digestView;
      for (let k = 0; k < n; k++) {
        const c = 32 * this.rank[this.children[cs + k]!]!;
        for (let i = c; i < c + 32; i += 4, at += 4) mv.setUint32(at, dv.getUint32(i));
      }
    }
    batch.close(at - start);
  }

  /** Sorts children[cs, cs + n) by their digests, ascending byte order (insertion sort: objects are small). */
  private sortByDigest(cs: number, n: number): void {
    const ch = this.children;
    const d = this.digestView;
    const rank = this.rank;
    for (let i = 1; i < n; i++) {
      const x = ch[cs + i]!;
      let j = i - 1;
      while (j >= 0 && compareDigests(d, 32 * rank[ch[cs + j]!]!, 32 * rank[x]!) > 0) {
        ch[cs + j + 1] = ch[cs + j]!;
        j--;
      }
      ch[cs + j + 1] = x;
    }
  }

  /**
   * R of each private record of a batch (at most BATCH_RECORDS), 32 bytes each in one array, and which records
   * the scan left to the walk (their 32 bytes are zero). The records' units share one table, so each tree
   * level of every record is one kernel call: lanes stay full and the calls per record fall with the batch.
   */
  roots(
    list: readonly Readonly<Partial<Record<V3Slot, string>>>[],
    seeds: readonly Uint8Array[],
  ): { roots: Uint8Array; walk: boolean[] } {
    const n = list.length;
    if (this.sealed < KERNEL_AFTER && (this.sealed += n) >= KERNEL_AFTER) this.batch = newSha256Batch();
    const walk = this.scan(list);
    this.deriveSalts(seeds);
    this.hashLevels();
    // R = SHA-256(0x72 ‖ the seven slot digests), one message per record the scan took.
    const batch = this.batch;
    batch.reset();
    for (let r = 0; r < n; r++) {
      if (walk[r]) continue;
      let at = batch.reserve(1 + 32 * SLOTS);
      const m = batch.bytes;
      if (m !== this.messageBytes) this.viewMessages(m);
      m[at++] = TAG.root;
      for (let j = SLOTS * r; j < SLOTS * r + SLOTS; j++)
        at = copyShort(this.messageView, at, this.digestView, 32 * this.rank[this.tops[j]!]!, 32);
      batch.close(1 + 32 * SLOTS);
    }
    const digests = batch.run();
    const roots = new Uint8Array(32 * n);
    for (let r = 0, i = 0; r < n; r++) if (!walk[r]) roots.set(digests.subarray(32 * i, 32 * ++i), 32 * r);
    return { roots, walk };
  }

  /**
   * The slot keys of every record, SHA-256(0x6b ‖ seed ‖ u8(j))[0, 16), then every salt block
   * SHA-256(0x73 ‖ key ‖ u32be(b)) (two salts each) in two batches; slotUnits becomes each slot's first block.
   */
  private deriveSalts(seeds: readonly Uint8Array[]): void {
    const batch = this.batch;
    batch.reset();
    for (const seed of seeds) {
      // Written in place like the preimages: the seed byte by byte into the first key's message, then four
      // bytes at a time from there into the other six. No view of the seed: a DataView per record, over a
      // small typed array's `.buffer` (which the engine must first move off its heap), was most of what
      // deriveSalts allocated.
      let first = -1;
      for (let j = 0; j < SLOTS; j++) {
        const at = batch.reserve(2 + SEED_BYTES);
        const m = batch.bytes;
        if (m !== this.messageBytes) this.viewMessages(m);
        m[at] = TAG.key;
        if (first < 0) for (let k = 0; k < SEED_BYTES; k++) m[at + 1 + k] = seed[k]!;
        else copyShort(this.messageView, at + 1, this.messageView, first + 1, SEED_BYTES);
        m[at + 1 + SEED_BYTES] = j;
        batch.close(2 + SEED_BYTES);
        first = at;
      }
    }
    const keys = new DataView(batch.run().slice().buffer);
    batch.reset();
    let blocks = 0;
    for (let g = 0; g < SLOTS * seeds.length; g++) {
      const n = (this.slotUnits[g]! + 1) >>> 1;
      this.slotUnits[g] = blocks;
      for (let k = 0; k < n; k++) {
        const at = batch.reserve(1 + KEY_BYTES + 4);
        const m = batch.bytes;
        if (m !== this.messageBytes) this.viewMessages(m);
        m[at] = TAG.salt;
        copyShort(this.messageView, at + 1, keys, 32 * g, KEY_BYTES);
        this.messageView.setUint32(at + 1 + KEY_BYTES, k);
        batch.close(1 + KEY_BYTES + 4);
      }
      blocks += n;
    }
    if (32 * blocks > this.salts.length) {
      this.salts = new Uint8Array(Math.max(32 * blocks, 2 * this.salts.length));
      this.saltView = new DataView(this.salts.buffer);
    }
    this.salts.set(batch.run());
  }

  /** The units' digests, level by level: a unit's height is one above its highest child's, so each level's children are done. */
  private hashLevels(): void {
    const batch = this.batch;
    if (32 * this.units > this.digests.length) {
      this.digests = new Uint8Array(Math.max(32 * this.units, 2 * this.digests.length));
      this.digestView = new DataView(this.digests.buffer);
    }
    let levels = 0;
    for (let u = 0; u < this.units; u++) if (this.height[u]! + 1 > levels) levels = this.height[u]! + 1;
    const byLevel = this.levelOrder(levels);
    for (let h = 0, k = 0; h < levels; h++) {
      batch.reset();
      const from = k;
      while (k < this.units && this.height[byLevel[k]!] === h) this.preimage(byLevel[k++]!);
      // The level's units are order[from, k): their digests go to digests[32 × from, 32 × k) in one copy.
      this.digests.set(batch.run().subarray(0, 32 * (k - from)), 32 * from);
    }
  }

  /** The units ordered by height (a counting sort). */
  private levelOrder(levels: number): Int32Array {
    const count = (this.levelCount = grownI32(this.levelCount, levels + 1)).fill(0, 0, levels + 1);
    for (let u = 0; u < this.units; u++) count[this.height[u]! + 1]!++;
    for (let h = 1; h <= levels; h++) count[h]! += count[h - 1]!;
    const order = (this.order = grownI32(this.order, this.units));
    const rank = (this.rank = grownI32(this.rank, this.units));
    for (let u = 0; u < this.units; u++) {
      const at = count[this.height[u]!]!++;
      order[at] = u;
      rank[u] = at;
    }
    return order;
  }
}

/** Copies n bytes from `from` at f to `to` at t, four at a time, then the rest; returns t + n. */
function copyShort(to: DataView, t: number, from: DataView, f: number, n: number): number {
  const words = f + (n & ~3);
  while (f < words) {
    to.setUint32(t, from.getUint32(f));
    t += 4;
    f += 4;
  }
  for (let k = n & 3; k > 0; k--) to.setUint8(t++, from.getUint8(f++));
  return t;
}

/** The order of the digests at a and b in d: their bytes compared four at a time, as big-endian words. */
function compareDigests(d: DataView, a: number, b: number): number {
  for (let k = 0; k < 32; k += 4) {
    const x = d.getUint32(a + k);
    const y = d.getUint32(b + k);
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

let hasher: TreeHasher | null = null;

/** R by commit.ts's walk over the parsed values (a record the scan leaves to it). */
function walkedRoot(texts: Readonly<Partial<Record<V3Slot, string>>>, seed: Uint8Array): Uint8Array {
  const values: Partial<Record<V3Slot, unknown>> = {};
  for (const slot of V3_SLOTS) if (texts[slot] !== undefined) values[slot] = JSON.parse(texts[slot]);
  return commitRecord(values, seed).rootBytes;
}

/**
 * R of a private record (its bytes) from the canonical texts of its slots (absent: undefined) and its
 * 32-byte seed. Throws CommitError where commitRecord would (a malformed part reference).
 */
export function commitRecordTexts(texts: Readonly<Partial<Record<V3Slot, string>>>, seed: Uint8Array): Uint8Array {
  if (seed.length !== SEED_BYTES) throw new RangeError(`a v3 seed is ${SEED_BYTES} bytes`);
  const { roots, walk } = (hasher ??= new TreeHasher()).roots([texts], [seed]);
  return walk[0] ? walkedRoot(texts, seed) : roots;
}

/**
 * R of many private records at once (an appendMany's batch, before it is sequenced: R depends on neither
 * seq, prev_hash nor ts), each as commitRecordTexts gives it; null for a record whose walk throws (its seal
 * then throws the same CommitError in its own group). Every seed is 32 bytes.
 */
export function commitManyTexts(
  list: readonly Readonly<Partial<Record<V3Slot, string>>>[],
  seeds: readonly Uint8Array[],
): (Uint8Array | null)[] {
  const out: (Uint8Array | null)[] = [];
  const h = (hasher ??= new TreeHasher());
  for (let from = 0; from < list.length; from += BATCH_RECORDS) {
    const part = list.slice(from, from + BATCH_RECORDS);
    const partSeeds = seeds.slice(from, from + BATCH_RECORDS);
    const { roots, walk } = h.roots(part, partSeeds);
    for (let r = 0; r < part.length; r++) {
      if (!walk[r]) out.push(roots.subarray(32 * r, 32 * r + 32));
      else {
        try {
          out.push(walkedRoot(part[r]!, partSeeds[r]!));
        } catch {
          out.push(null);
        }
      }
    }
  }
  return out;
}
