/**
 * Parts: content stored once per journal (spec/PARTS.md; design docs/design/format-v3.md §8). At append,
 * a member value or array element whose canonical form reaches the journal's part threshold, and a string
 * that is canonical base64 of at least 1 KiB, is moved out of the record into a *part* — a file stored once,
 * addressed by its unit digest under the part's own seed — and a reference stands in its place:
 *
 *   {"$stepchain:part":{"digest":A,"file":F,"size":Z}}     A address, F SHA-256 of the part file, Z its length
 *
 * Three kinds of part file (§3 of PARTS.md):
 *   value   JCS({"seed":S,"value":V})
 *   list    JCS({"base":<reference to an earlier list>,"seed":S,"tail":[…]})   the list is base's then tail's elements
 *   media   JCS({"media_type":T,"seed":S,"size":N}) ‖ 0x0A ‖ N raw bytes      stands for the base64 text of the bytes
 *
 * The writer finds an existing part through a private index, HMAC-SHA-256 under the journal's part key,
 * never through the address (which is keyed by the part's seed): equal content in one journal is one part,
 * equal content in two journals has unrelated addresses, and no address is an unsalted hash of content.
 * Readers check every part on read: size, then F (the fast tier, what `verify` runs), and on request its
 * address from its value (the deep tier). Pure: runs in a browser (hashing through canonical/sha256.ts).
 * The writer is part-writer.ts, the reader part-reader.ts; this module holds the format both share.
 */
import { canonicalJsonTrusted } from '../../canonical/jcs.js';
import type { Json, JsonObject } from '../../canonical/json.js';
import { RESERVED_PREFIX } from '../../canonical/limits.js';
import { scanCanonical } from '../../canonical/scan.js';
import { sha256Backend, toHex } from '../../canonical/sha256.js';
import { StepchainError } from '../../errors.js';
import {
  commitPart,
  PART_MARKER,
  SEED_BYTES,
  seedFromHex,
  sha256Concat,
  slotKey,
  TAG,
  unitSalt,
  type Unit,
} from './commit.js';

export { PART_MARKER };

/** Default and bounds of `part_threshold` in bytes of canonical UTF-8 (PARTS.md §2). */
export const PART_THRESHOLD_DEFAULT = 1024;
export const PART_THRESHOLD_MIN = 256;
export const PART_THRESHOLD_MAX = 1024 * 1024;
/** A base64 string becomes a media part from this many decoded bytes, whatever the threshold. */
export const MEDIA_MIN_BYTES = 1024;
/** A part file is at most this many bytes (PARTS.md §10). */
export const MAX_PART_BYTES = 64 * 1024 * 1024;
/** A list's base chain is at most this many lists long (PARTS.md §10). */
export const MAX_BASE_CHAIN = 65536;
/**
 * References nest at most this deep (a part inside a part …); a list's base chain is not nesting. Above any
 * writer's reach: each nested part is a container of the value, and a value nests at most MAX_VALUE_DEPTH (at 32,
 * an append of 33 nested objects of 1 KiB each made a journal its readers refused: outsider L).
 */
export const MAX_PART_DEPTH = 128;
/** Sibling members that name a media part's type, in the order they are asked (§2). */
export const MEDIA_TYPE_MEMBERS = ['mediaType', 'mimeType', 'media_type', 'mime_type', 'contentType'] as const;

/** A private reference's body. */
export interface PartRef {
  /** The address: the part's unit digest (`sha256:` + hex). */
  digest: string;
  /** SHA-256 of the part file's bytes. */
  file: string;
  /** The part file's length in bytes. */
  size: number;
}

/** A part the writer made, for the part store: written before any line that references it. */
export interface PartPayload {
  address: string;
  bytes: Uint8Array;
  /** HMAC-SHA-256 of the content under the journal's part key (64 hex): the writer's private index. */
  indexKey: string;
}

export type PartProblemCode = 'PART_MISSING' | 'PART_CORRUPT' | 'PART_ADDRESS_MISMATCH';

/** A part a record references that cannot be used: absent, or not the file its reference names. */
export class PartError extends StepchainError<PartProblemCode> {
  constructor(
    code: PartProblemCode,
    message: string,
    readonly address: string,
    location: { seq?: number; path?: string; file?: string } = {},
    hint?: string,
  ) {
    super(code, message, {
      location,
      hint:
        hint ??
        (code === 'PART_MISSING'
          ? "restore the journal's parts from a backup, or the receipt from its source"
          : 'restore this part from a backup; the record that references it is intact'),
    });
  }
}

const encoder = new TextEncoder();
// ignoreBOM: a byte order mark is kept as U+FEFF, which no canonical text begins with (a decoder that dropped
// it took a part file with one before its JSON: outsider K).
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const SEED_RE = /^[0-9a-f]{64}$/;

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The reference when `v` is a well-formed private reference marker, else null. */
export function partRefOf(v: unknown): PartRef | null {
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== PART_MARKER) return null;
  const b = v[PART_MARKER];
  if (!isObject(b) || Object.keys(b).length !== 3) return null;
  const { digest, file, size } = b;
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest) || typeof file !== 'string' || !DIGEST_RE.test(file))
    return null;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return null;
  return { digest, file, size };
}

export function partMarker(ref: PartRef): JsonObject {
  return { [PART_MARKER]: { digest: ref.digest, file: ref.file, size: ref.size } };
}

// ---------------------------------------------------------------------------------------------- hashing

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** HMAC-SHA-256 (RFC 2104) over the backend's streaming hash: native in Node, portable in a page. */
export function hmacSha256(key: Uint8Array, message: readonly Uint8Array[]): Uint8Array {
  const k = new Uint8Array(64);
  k.set(key.length > 64 ? sha256Backend().bytes(key) : key);
  const pad = new Uint8Array(64);
  for (let i = 0; i < 64; i++) pad[i] = k[i]! ^ 0x36;
  const inner = sha256Backend().create();
  inner.update(pad);
  for (const m of message) inner.update(m);
  const ih = inner.digest();
  for (let i = 0; i < 64; i++) pad[i] = k[i]! ^ 0x5c;
  const outer = sha256Backend().create();
  outer.update(pad);
  outer.update(ih);
  return outer.digest();
}

/** A media part's address: SHA-256(0x6f ‖ salt(0,0) ‖ JCS(media type) ‖ raw bytes) under its seed. */
export function mediaAddress(mediaType: string, raw: Uint8Array, seed: Uint8Array): string {
  const salt = unitSalt(slotKey(seed, 0), 0);
  return (
    'sha256:' +
    toHex(sha256Concat([Uint8Array.of(TAG.media), salt, encoder.encode(canonicalJsonTrusted(mediaType)), raw]))
  );
}

/**
 * A list part's address and its elements' unit digests (design §8.3): SHA-256(0x70 ‖ salt(0,0) ‖ 0x5b ‖
 * d(e0) ‖ … ‖ d(en−1)) over all its elements, the base's keeping the digests they have in the base part and
 * the tail's numbered from unit 1 under this part's seed. With an empty base this is commitPart's digest of
 * the whole list: one rule for every list.
 */
export function listAddress(
  base: readonly Uint8Array[],
  tail: readonly Json[],
  seed: Uint8Array,
): { address: string; elements: Uint8Array[] } {
  const units: Unit[] = [];
  const whole = commitPart(tail, seed, { units });
  const tailDigests = topElements(units, tail.length);
  if (base.length === 0) return { address: whole.address, elements: tailDigests };
  const salt = unitSalt(slotKey(seed, 0), 0);
  const elements = [...base, ...tailDigests];
  return {
    address: 'sha256:' + toHex(sha256Concat([Uint8Array.of(TAG.part), salt, Uint8Array.of(0x5b), ...elements])),
    elements,
  };
}

/** The unit digests of the top-level elements of an array part, from its collected units (paths `/k`). */
function topElements(units: readonly Unit[], n: number): Uint8Array[] {
  const out: Uint8Array[] = new Array<Uint8Array>(n);
  for (const u of units) {
    if (u.kind !== 'element') continue;
    const slash = u.path.lastIndexOf('/');
    if (slash !== 0) continue;
    out[Number(u.path.slice(1))] = u.digest;
  }
  return out;
}

// ----------------------------------------------------------------------------------------------- media

/** The decoded bytes when `s` is canonical padded base64 (RFC 4648 §4) of at least MEDIA_MIN_BYTES, else null. */
export function mediaBytesOf(s: string): Uint8Array | null {
  if (s.length < Math.ceil(MEDIA_MIN_BYTES / 3) * 4 || s.length % 4 !== 0) return null;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return null;
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    return null;
  }
  // Only the canonical text round-trips (no stray bits in the last symbol): the reader restores it exactly.
  if (btoa(bin) !== s || bin.length < MEDIA_MIN_BYTES) return null;
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The canonical base64 text of raw bytes (what a media part stands for). */
export function base64Of(raw: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < raw.length; i += 0x8000)
    bin += String.fromCharCode.apply(null, raw.subarray(i, i + 0x8000) as unknown as number[]);
  return btoa(bin);
}

/** The media type of raw bytes by their signature (PNG, JPEG, GIF, WebP, PDF), else application/octet-stream. */
export function sniffMediaType(raw: Uint8Array): string {
  const at = (i: number, ...bytes: number[]) => bytes.every((b, k) => raw[i + k] === b);
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  if (at(0, 0x25, 0x50, 0x44, 0x46, 0x2d)) return 'application/pdf';
  return 'application/octet-stream';
}

// ----------------------------------------------------------------------------------------- part files

/** A part file, parsed and checked for shape (PARTS.md §3): not yet checked against its address. */
export type PartFile =
  | { kind: 'value'; seed: string; value: Json; address?: string }
  | { kind: 'list'; seed: string; base: PartRef; tail: Json[]; address?: string }
  | { kind: 'media'; seed: string; mediaType: string; raw: Uint8Array; address?: string };

/**
 * Parses part file bytes (already matched to their reference's size and F) into a part file, or says why
 * they are not one: canonical JSON of the kind's exact members, a 64-hex seed, references well formed, no
 * other reserved name anywhere; for media, the header's size is the raw bytes' length.
 */
export function parsePartFile(bytes: Uint8Array): PartFile | string {
  const nl = bytes.indexOf(0x0a);
  const head = nl < 0 ? bytes : bytes.subarray(0, nl);
  let text: string;
  try {
    text = decoder.decode(head);
  } catch {
    return 'is not valid UTF-8';
  }
  const scan = scanCanonical(text, { members: false });
  if (scan.defect !== null) return `is not canonical JSON (${scan.defect.code}: ${scan.defect.reason})`;
  const obj = JSON.parse(text) as unknown;
  if (!isObject(obj)) return 'is not a JSON object';
  const keys = Object.keys(obj).sort().join(',');
  const seed = obj.seed;
  if (typeof seed !== 'string' || !SEED_RE.test(seed)) return 'has no 64-hex-digit seed';
  let file: PartFile;
  if (nl >= 0) {
    if (keys !== 'media_type,seed,size') return 'has a media header whose members are not media_type, seed, size';
    const t = obj.media_type;
    if (typeof t !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(t))
      return 'has a media type that is not 1–255 printable ASCII characters';
    const raw = bytes.subarray(nl + 1);
    if (obj.size !== raw.length) return `says ${String(obj.size)} media bytes and holds ${raw.length}`;
    return { kind: 'media', seed, mediaType: t, raw };
  } else if (keys === 'seed,value') {
    file = { kind: 'value', seed, value: obj.value as Json };
  } else if (keys === 'base,seed,tail') {
    const base = partRefOf(obj.base);
    if (base === null) return 'has a base that is not a part reference';
    if (!Array.isArray(obj.tail) || obj.tail.length === 0) return 'has a tail that is not a non-empty array';
    file = { kind: 'list', seed, base, tail: obj.tail as Json[] };
  } else return `has members ${keys}, which are no part file's`;
  const bad = reservedDefect(
    file.kind === 'value' ? file.value : file.tail,
    file.kind === 'value' ? '/value' : '/tail',
    0,
  );
  return bad ?? file;
}

/** A reserved member name other than a well-formed part reference (which writers put there), or a depth past the bound. */
function reservedDefect(v: unknown, path: string, depth: number): string | null {
  if (v === null || typeof v !== 'object') return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const d = reservedDefect(v[i], `${path}/${i}`, depth);
      if (d !== null) return d;
    }
    return null;
  }
  const o = v as Record<string, unknown>;
  if (PART_MARKER in o) {
    if (partRefOf(o) === null) return `holds a malformed part reference at ${path}`;
    return depth + 1 > MAX_PART_DEPTH ? `nests part references deeper than ${MAX_PART_DEPTH}` : null;
  }
  for (const k of Object.keys(o)) {
    if (k.startsWith(RESERVED_PREFIX))
      return `holds the reserved member name ${JSON.stringify(k)} at ${path}, which no writer stores in a part`;
    const d = reservedDefect(o[k], `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, depth);
    if (d !== null) return d;
  }
  return null;
}

/**
 * A part file's address from its contents (the deep tier): value parts by commitPart, media by
 * mediaAddress, lists over their base's element digests (`baseElements` gives them; null: unknown, and
 * then so is the address). Null when the seed is unusable or the base is unknown.
 */
export function addressOf(f: PartFile, baseElements: (ref: PartRef) => Uint8Array[] | null): string | null {
  const seed = seedFromHex(f.seed);
  if (seed?.length !== SEED_BYTES) return null;
  if (f.kind === 'media') return mediaAddress(f.mediaType, f.raw, seed);
  if (f.kind === 'value') return commitPart(f.value, seed).address;
  const base = baseElements(f.base);
  return base === null ? null : listAddress(base, f.tail, seed).address;
}

/** Where a reference was met, for messages: the record's seq and the JSON Pointer of the reference. */
export interface PartSite {
  seq?: number;
  path: string;
}

export function siteLoc(site: PartSite): { seq?: number; path: string } {
  return site.seq === undefined ? { path: site.path } : { seq: site.seq, path: site.path };
}

/**
 * A part as a store finds it: its bytes; `{ size }` when the stored file has another size (unread);
 * `{ unreadable }` when what stands under the part's name is no file a part can be (a FIFO, a device, a
 * directory: the reason, for the problem); null when the store does not hold it.
 */
export type FoundPart = Uint8Array | { size: number } | { unreadable: string } | null;

/** Gets a part file's bytes by address (a PartStore's get, or a receipt's entry). */
export type PartSource = (address: string, size: number) => Promise<FoundPart>;

/** Every part reference inside a value (not inside parts), with its JSON Pointer. */
export function partRefsIn(v: Json, path = ''): { ref: PartRef; path: string }[] {
  const out: { ref: PartRef; path: string }[] = [];
  const walk = (x: Json, p: string): void => {
    if (x === null || typeof x !== 'object') return;
    const ref = partRefOf(x);
    if (ref !== null) {
      out.push({ ref, path: p });
      return;
    }
    if (Array.isArray(x)) x.forEach((e, i) => walk(e, `${p}/${i}`));
    else for (const k of Object.keys(x)) walk(x[k]!, `${p}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(v, path);
  return out;
}

/** The references a part file holds: its base and every reference in its value or tail. */
export function partRefsOfFile(f: PartFile): PartRef[] {
  if (f.kind === 'media') return [];
  const inner = partRefsIn(f.kind === 'value' ? f.value : f.tail).map((r) => r.ref);
  return f.kind === 'list' ? [f.base, ...inner] : inner;
}

/** A fresh 32-byte part key for a new journal, from the platform's CSPRNG. */
export function newPartKey(): Uint8Array {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

export { hexBytes as partKeyFromHex };
