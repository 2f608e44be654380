/**
 * The commitments of a `stepchain/v3` record (spec/FORMAT.md §14, docs/design/format-v3.md §4–§5): every
 * object member, array element and chunk of a long string is a *unit* with its own 128-bit salt and a
 * SHA-256 digest; a container's digest covers its children's digests; the seven slot digests give the
 * record's root R. Salts are derived from a per-record 256-bit seed: a 16-byte key per slot, and from it one
 * 16-byte salt per unit, numbered in preorder within the slot.
 *
 * One walk serves the writer (a private record: every unit has a salt from the seed), the deep verifier
 * (the same, recomputed from the stored values) and a publication's reader (a public record: withheld
 * markers stand for units whose digests are given, and disclosed units take their salts in preorder from
 * what the publication discloses). Pure: runs in a browser (SHA-256 through canonical/sha256.ts).
 */
import { canonicalJsonTrusted } from '../../canonical/jcs.js';
import { RESERVED_PREFIX } from '../../canonical/limits.js';
import { sha256Backend, toHex } from '../../canonical/sha256.js';
import { CHUNK_MAX_LONG, CHUNK_THRESHOLD, chunkEnds, escapedText } from './chunks.js';

export {
  CHUNK_THRESHOLD,
  CHUNK_MAX,
  CHUNK_MAX_LONG,
  LONG_TEXT,
  chunkEnds,
  escapedText,
  stringChunks,
  chunkString,
} from './chunks.js';

/** The slots of a v3 record, slot index 0–6 in this (UTF-16) order. */
export const V3_SLOTS = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'] as const;
export type V3Slot = (typeof V3_SLOTS)[number];

/** One-byte tags that open every preimage (design §4.1, §4.3, §5.1). */
export const TAG = {
  member: 0x6d,
  element: 0x65,
  chunk: 0x63,
  part: 0x70,
  media: 0x6f,
  root: 0x72,
  key: 0x6b,
  salt: 0x73,
  decoy: 0x64,
} as const;
/** First bytes of a container's or a chunked string's repr (design §4.1). */
const OBJECT = 0x7b;
const ARRAY = 0x5b;
const CHUNKED = 0x7e;
const REFERENCE = 0x26;

export const SEED_BYTES = 32;
export const KEY_BYTES = 16;
export const SALT_BYTES = 16;

/** Markers of the v3 tree (design §7.1, §8.5). */
export const WITHHELD_MARKER = `${RESERVED_PREFIX}withheld`;
export const CHUNKS_MARKER = `${RESERVED_PREFIX}chunks`;
export const PART_MARKER = `${RESERVED_PREFIX}part`;

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** One scratch buffer for preimages: every preimage is assembled after its children are hashed, so reuse is safe. */
let scratch = new Uint8Array(1 << 16);

/** SHA-256 of the concatenation of byte strings (one native call over one buffer, assembled in a reused scratch). */
export function sha256Concat(pieces: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of pieces) n += p.length;
  if (n > scratch.length) scratch = new Uint8Array(Math.max(n, 2 * scratch.length));
  const buf = scratch;
  let at = 0;
  for (const p of pieces) {
    buf.set(p, at);
    at += p.length;
  }
  return sha256Backend().bytes(buf.subarray(0, n));
}

/** Single bytes, allocated once (tags and structural bytes). */
const BYTE: readonly Uint8Array[] = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b));

/** JCS text of member names, encoded once per distinct name (names repeat across records; bounded). */
const NAME_CACHE = new Map<string, Uint8Array>();
function nameBytes(name: string): Uint8Array {
  let b = NAME_CACHE.get(name);
  if (b === undefined) {
    b = encoder.encode(JSON.stringify(name));
    if (NAME_CACHE.size >= 4096) NAME_CACHE.clear();
    NAME_CACHE.set(name, b);
  }
  return b;
}

function u32be(n: number): Uint8Array {
  return Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** Slot key j: SHA-256(0x6b ‖ seed ‖ u8(j))[0, 16) (design §5.1). A part's one slot is j = 0. */
export function slotKey(seed: Uint8Array, j: number): Uint8Array {
  return sha256Concat([BYTE[TAG.key]!, seed, BYTE[j]!]).slice(0, KEY_BYTES);
}

/** Salt i of a slot: SHA-256(0x73 ‖ slot key ‖ u32be(⌊i/2⌋))[16·(i mod 2), +16) (design §5.1). */
export function unitSalt(key: Uint8Array, i: number): Uint8Array {
  const block = sha256Concat([BYTE[TAG.salt]!, key, u32be(i >>> 1)]);
  return block.slice(SALT_BYTES * (i & 1), SALT_BYTES * (i & 1) + SALT_BYTES);
}

/** A source of salts in preorder: each call gives the next unit's salt, or null when none is left. */
export type SaltSource = () => Uint8Array | null;

/** The salts of a slot key in preorder, one SHA-256 block per two salts. */
export function derivedSalts(key: Uint8Array): SaltSource {
  let i = 0;
  let block: Uint8Array | null = null;
  return () => {
    if ((i & 1) === 0) block = sha256Concat([BYTE[TAG.salt]!, key, u32be(i >>> 1)]);
    const s = block!.subarray(SALT_BYTES * (i & 1), SALT_BYTES * (i & 1) + SALT_BYTES);
    i++;
    return s;
  };
}

/** Salts given one after the other in a byte string (a publication's `secrets.salts.<slot>`). */
export function listedSalts(bytes: Uint8Array): SaltSource & { used(): number; total(): number } {
  let used = 0;
  const total = Math.floor(bytes.length / SALT_BYTES);
  const next = (() => (used < total ? bytes.subarray(SALT_BYTES * used, SALT_BYTES * ++used) : null)) as SaltSource & {
    used(): number;
    total(): number;
  };
  next.used = () => used;
  next.total = () => total;
  return next;
}

export type UnitKind = 'member' | 'element' | 'chunk' | 'part';

/** One committed unit, as the walk met it. */
export interface Unit {
  /** The slot (or "part" for a part's own tree). */
  slot: string;
  /** Preorder number within the slot (0: the slot member). In a public walk: the number among disclosed units. */
  index: number;
  /** JSON Pointer of the unit's value (RFC 6901); a chunk adds `#k`. */
  path: string;
  kind: UnitKind;
  salt: Uint8Array;
  digest: Uint8Array;
}

/** Why a walk could not compute a digest: a defect of the tree's shape (public marker, salts, a reference). */
export class CommitError extends Error {
  constructor(
    readonly code: 'SECRETS_INVALID' | 'MARKER_INVALID',
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'CommitError';
  }
}

export interface WalkOptions {
  /** Read withheld markers (§7.1) as given digests: a publication's public form. Off: a private record. */
  public?: boolean;
  /** Collect every unit (for publication, vectors, `show`); off on the verifier's hot path. */
  collect?: Unit[];
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

function digestBytesOf(d: unknown, path: string): Uint8Array {
  if (typeof d !== 'string' || !DIGEST_RE.test(d))
    throw new CommitError('MARKER_INVALID', 'a digest in a marker is "sha256:" and 64 lowercase hex digits', path);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(d.slice(7 + 2 * i, 9 + 2 * i), 16);
  return out;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A value standing for one withheld unit: `{"$stepchain:withheld": "sha256:…"}`. */
function withheldDigestOf(v: unknown): string | null {
  if (!isPlainObject(v)) return null;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === WITHHELD_MARKER && typeof v[WITHHELD_MARKER] === 'string'
    ? v[WITHHELD_MARKER]
    : null;
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The walk of one tree (a slot, or a part's value): numbers units in preorder as it meets them, takes each
 * unit's salt from `salts`, and returns digests bottom-up. Throws CommitError on a shape it cannot commit.
 */
export class Walk {
  private index = 0;
  constructor(
    private readonly slot: string,
    private readonly salts: SaltSource,
    private readonly options: WalkOptions,
  ) {}

  private nextSalt(path: string): Uint8Array {
    const s = this.salts();
    if (s === null) throw new CommitError('SECRETS_INVALID', `no salt left for the disclosed unit at ${path}`, path);
    return s;
  }

  /** Collects a unit in preorder (its digest is filled in once its children are hashed). */
  private record(kind: UnitKind, index: number, path: string, salt: Uint8Array): Unit | null {
    if (this.options.collect === undefined) return null;
    const u: Unit = { slot: this.slot, index, path, kind, salt, digest: EMPTY };
    this.options.collect.push(u);
    return u;
  }

  /** The salt of a part's top unit (index 0) when the caller assembles its body: a list over its base's elements. */
  top(path: string): Uint8Array {
    this.index++;
    const salt = this.nextSalt(path);
    this.record('part', 0, path, salt);
    return salt;
  }

  /** A member or element unit, or the slot/part top unit (tag given). */
  unit(tag: number, kind: UnitKind, name: string | null, value: unknown, path: string, present = true): Uint8Array {
    const i = this.index++;
    const salt = this.nextSalt(path);
    const u = this.record(kind, i, path, salt);
    const pieces: Uint8Array[] = [BYTE[tag]!, salt];
    if (name !== null) pieces.push(nameBytes(name));
    if (present) pieces.push(...this.repr(value, path));
    const digest = sha256Concat(pieces);
    if (u !== null) u.digest = digest;
    return digest;
  }

  /** repr(v) of design §4.1, as the pieces of a preimage. */
  repr(v: unknown, path: string): Uint8Array[] {
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'string') {
        // One literal serves both: the scalar's JCS text, or (over 64 escaped bytes) the text its chunks cut.
        const lit = encoder.encode(JSON.stringify(v));
        if (lit.length - 2 <= CHUNK_THRESHOLD) return [lit];
        const text = lit.subarray(1, lit.length - 1);
        const ends = chunkEnds(text)!;
        const out: Uint8Array[] = [BYTE[CHUNKED]!];
        let start = 0;
        ends.forEach((e, k) => {
          out.push(this.chunk(text.subarray(start, e), `${path}#${k}`));
          start = e;
        });
        return out;
      }
      return [encoder.encode(canonicalJsonTrusted(v))];
    }
    if (Array.isArray(v)) {
      const out: Uint8Array[] = [BYTE[ARRAY]!];
      v.forEach((x, k) => {
        const given = this.options.public ? withheldDigestOf(x) : null;
        out.push(
          given !== null
            ? digestBytesOf(given, `${path}/${k}`)
            : this.unit(TAG.element, 'element', null, x, `${path}/${k}`),
        );
      });
      return out;
    }
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === PART_MARKER) {
      const body = o[PART_MARKER];
      // A public reference is exactly {"digest": A}: anything beside it would be shown and bound by nothing.
      if (this.options.public && isPlainObject(body) && Object.keys(body).length !== 1)
        throw new CommitError(
          'MARKER_INVALID',
          'a public part reference is exactly {"$stepchain:part":{"digest":"sha256:…"}}',
          path,
        );
      if (!isPlainObject(body))
        throw new CommitError(
          'MARKER_INVALID',
          'a part reference is {"$stepchain:part":{"digest":"sha256:…",…}}',
          path,
        );
      return [BYTE[REFERENCE]!, digestBytesOf(body.digest, path)];
    }
    if (this.options.public && keys.length === 1 && keys[0] === CHUNKS_MARKER)
      return this.publicChunks(o[CHUNKS_MARKER], path);
    const digests: Uint8Array[] = [];
    for (const k of keys.sort()) {
      if (this.options.public && k === WITHHELD_MARKER) continue;
      digests.push(this.unit(TAG.member, 'member', k, o[k], `${path}/${escapePointer(k)}`));
    }
    if (this.options.public && WITHHELD_MARKER in o) {
      const list = o[WITHHELD_MARKER];
      if (!Array.isArray(list) || list.length === 0)
        throw new CommitError('MARKER_INVALID', 'withheld members are listed as a non-empty array of digests', path);
      let prev: string | null = null;
      for (const d of list) {
        if (typeof d !== 'string' || (prev !== null && d <= prev))
          throw new CommitError('MARKER_INVALID', 'withheld member digests are sorted ascending without repeats', path);
        prev = d;
        digests.push(digestBytesOf(d, path));
      }
    }
    digests.sort(compareBytes);
    return [BYTE[OBJECT]!, ...digests];
  }

  private chunk(text: Uint8Array, path: string): Uint8Array {
    const i = this.index++;
    const salt = this.nextSalt(path);
    const digest = sha256Concat([BYTE[TAG.chunk]!, salt, text]);
    const u = this.record('chunk', i, path, salt);
    if (u !== null) u.digest = digest;
    return digest;
  }

  /** `{"$stepchain:chunks": [...]}`: disclosed chunks as strings, withheld ones as markers; at least one withheld. */
  private publicChunks(list: unknown, path: string): Uint8Array[] {
    if (!Array.isArray(list) || list.length < 2)
      throw new CommitError('MARKER_INVALID', 'a chunk list holds at least two chunks', path);
    const out: Uint8Array[] = [BYTE[CHUNKED]!];
    let withheld = 0;
    list.forEach((c, k) => {
      const given = withheldDigestOf(c);
      if (given !== null) {
        withheld++;
        out.push(digestBytesOf(given, `${path}#${k}`));
      } else if (typeof c === 'string') {
        const text = escapedText(c);
        const max = CHUNK_MAX_LONG;
        if (text.length === 0 || text.length > max)
          throw new CommitError(
            'MARKER_INVALID',
            `a disclosed chunk holds 1–${max} bytes of escaped text`,
            `${path}#${k}`,
          );
        out.push(this.chunk(text, `${path}#${k}`));
      } else throw new CommitError('MARKER_INVALID', 'a chunk is a string or a withheld marker', `${path}#${k}`);
    });
    if (withheld === 0)
      throw new CommitError(
        'MARKER_INVALID',
        'a chunk list with nothing withheld must be shown as the whole string',
        path,
      );
    return out;
  }
}

export interface SlotCommitment {
  slot: V3Slot;
  digest: Uint8Array;
}

/**
 * The digest of one slot: its member unit (index 0) over the slot's value, or over its name alone when the
 * (optional) slot is absent. `value` undefined = absent.
 */
export function commitSlot(slot: string, value: unknown, salts: SaltSource, options: WalkOptions = {}): Uint8Array {
  // A slot withheld whole (public form): its value is one marker with the slot digest, and it takes no salt.
  const given = options.public ? withheldDigestOf(value) : null;
  if (given !== null) return digestBytesOf(given, `/${escapePointer(slot)}`);
  const walk = new Walk(slot, salts, options);
  return walk.unit(TAG.member, 'member', slot, value, `/${escapePointer(slot)}`, value !== undefined);
}

/** R = SHA-256(0x72 ‖ the seven slot digests in slot order). */
export function rootOf(slotDigests: readonly Uint8Array[]): Uint8Array {
  return sha256Concat([BYTE[TAG.root]!, ...slotDigests]);
}

/** The slot values of a record (absent members are undefined). */
export type SlotValues = Readonly<Partial<Record<V3Slot, unknown>>>;

export interface RecordCommitment {
  /** `sha256:` + hex of R. */
  root: string;
  rootBytes: Uint8Array;
  /** Per slot, in slot order: its key and digest. */
  slots: { slot: V3Slot; key: Uint8Array; digest: Uint8Array }[];
  /** Every unit in slot order then preorder, when asked for (`units: true`). */
  units: Unit[];
}

/** Every commitment of a private record from its slot values and 32-byte seed. Throws CommitError on a malformed part reference. */
export function commitRecord(
  values: SlotValues,
  seed: Uint8Array,
  options: { units?: boolean } = {},
): RecordCommitment {
  if (seed.length !== SEED_BYTES) throw new RangeError(`a v3 seed is ${SEED_BYTES} bytes`);
  const units: Unit[] = [];
  const slots = V3_SLOTS.map((slot, j) => {
    const key = slotKey(seed, j);
    const digest = commitSlot(slot, values[slot], derivedSalts(key), options.units ? { collect: units } : {});
    return { slot, key, digest };
  });
  const rootBytes = rootOf(slots.map((s) => s.digest));
  return { root: 'sha256:' + toHex(rootBytes), rootBytes, slots, units };
}

/**
 * The address of a part (design §8.2): its unit digest SHA-256(0x70 ‖ salt(0,0) ‖ repr(value)) under the
 * part's own seed (one slot, j = 0; its inner units numbered from 1). Nested part references inside the
 * value count as `&` ‖ address.
 */
export function commitPart(
  value: unknown,
  seed: Uint8Array,
  options: { units?: Unit[] } = {},
): { address: string; digest: Uint8Array } {
  if (seed.length !== SEED_BYTES) throw new RangeError(`a v3 seed is ${SEED_BYTES} bytes`);
  const walk = new Walk('part', derivedSalts(slotKey(seed, 0)), options.units ? { collect: options.units } : {});
  const digest = walk.unit(TAG.part, 'part', null, value, '');
  return { address: 'sha256:' + toHex(digest), digest };
}

let pool = new Uint8Array(0);
let poolAt = 0;
/** A fresh 32-byte record seed from the platform's CSPRNG (crypto.getRandomValues), drawn from a 4 KiB pool. */
export function newSeed(): Uint8Array {
  if (poolAt + SEED_BYTES > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    poolAt = 0;
  }
  const out = pool.slice(poolAt, poolAt + SEED_BYTES);
  pool.fill(0, poolAt, poolAt + SEED_BYTES);
  poolAt += SEED_BYTES;
  return out;
}

/** Hex ⇄ bytes for seeds (the private line stores the seed as 64 lowercase hex digits). */
export function seedFromHex(hex: string): Uint8Array | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const out = new Uint8Array(SEED_BYTES);
  for (let i = 0; i < SEED_BYTES; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
