/**
 * The part writer (spec/PARTS.md §3, §6): moves a step's large values into parts at append — bottom-up,
 * each value measured with its children's references in place — finding equal content through the
 * journal's private index (HMAC under its part key) and a longer list's base among its recent lists. Pure
 * but for the index lookups it is given.
 */
import { canonicalJsonTrusted } from '../../canonical/jcs.js';
import { setMember, type Json, type JsonObject } from '../../canonical/json.js';
import { digestBytes, toHex } from '../../canonical/sha256.js';
import { commitPart, newSeed, TAG } from './commit.js';
import { PartReader } from './part-reader.js';
import {
  hmacSha256,
  listAddress,
  MEDIA_TYPE_MEMBERS,
  mediaAddress,
  mediaBytesOf,
  PART_THRESHOLD_DEFAULT,
  PART_THRESHOLD_MAX,
  PART_THRESHOLD_MIN,
  PartError,
  partMarker,
  sniffMediaType,
  type FoundPart,
  type PartFile,
  type PartPayload,
  type PartRef,
} from './parts.js';

const encoder = new TextEncoder();

/** The bytes of a value or list part file. */
function jsonFile(obj: JsonObject): Uint8Array {
  return encoder.encode(canonicalJsonTrusted(obj));
}

function refOfFile(address: string, bytes: Uint8Array): PartRef {
  return { digest: address, file: digestBytes(bytes), size: bytes.length };
}

/** A list part the writer made recently: the texts of its elements (after substitution) and their unit digests. */
interface RecentList {
  ref: PartRef;
  texts: string[];
  elements: Uint8Array[];
}

/** What PartWriter reads back through to find an existing part (a PartStore's lookup and get). */
export interface PartIndex {
  lookup(indexKey: string): Promise<string | null>;
  get(address: string, size?: number): Promise<FoundPart>;
}

export interface PartWriterOptions {
  /** Bytes of canonical UTF-8 from which a value becomes a part (default 1024, 256 B – 1 MiB). */
  threshold?: number;
  /** How many recent list parts are kept as candidate bases (default 8). */
  recentLists?: number;
  /** Seeds for tests and vectors (a writer draws them from the CSPRNG): called once per new part. */
  seed?: () => Uint8Array;
}

/** A value after substitution, with its canonical text (so a parent's text is its children's, joined). */
interface Sub {
  value: Json;
  text: string;
}

/**
 * Moves a step's large values into parts, one per open journal (it holds the journal's part key, an
 * in-process cache of the parts it made or checked, and the recent list parts that a longer list extends).
 * Not reentrant: a journal's appends are serialized (its sequencer), and so are its extract calls.
 */
export class PartWriter {
  readonly threshold: number;
  private readonly key: Uint8Array;
  private readonly known = new Map<string, PartRef>();
  private readonly recent: RecentList[] = [];
  private readonly recentMax: number;
  private readonly seed: () => Uint8Array;

  /** `partKey`: the journal's 32-byte part key (private metadata, never exported); `index`: where earlier parts are found. */
  constructor(
    partKey: Uint8Array,
    private readonly index: PartIndex | null,
    options: PartWriterOptions = {},
  ) {
    if (partKey.length !== 32) throw new RangeError('a part key is 32 bytes');
    const t = options.threshold ?? PART_THRESHOLD_DEFAULT;
    if (!Number.isSafeInteger(t) || t < PART_THRESHOLD_MIN || t > PART_THRESHOLD_MAX)
      throw new RangeError(`part threshold ${t} is outside ${PART_THRESHOLD_MIN}–${PART_THRESHOLD_MAX} bytes`);
    this.threshold = t;
    this.key = partKey.slice();
    this.recentMax = options.recentLists ?? 8;
    this.seed = options.seed ?? newSeed;
  }

  /**
   * Substitutes parts in a step's slots (every slot but `meta`, which the caller leaves out) and returns the
   * new parts, in an order where a part comes after every part it references. The values must already be
   * validated (I-JSON, no reserved names). Slot values themselves are member values of the record and
   * become parts by the same rule.
   */
  async extract(slots: Readonly<Record<string, Json>>): Promise<{ slots: Record<string, Json>; parts: PartPayload[] }> {
    // Each call collects its own parts: appends of one journal may prepare concurrently.
    const parts: PartPayload[] = [];
    const out: Record<string, Json> = {};
    for (const name of Object.keys(slots)) out[name] = (await this.walk(slots[name]!, null, parts)).value;
    return { slots: out, parts };
  }

  private big(text: string): boolean {
    // A UTF-16 unit encodes to at most 3 bytes: a short text never reaches the threshold.
    if (text.length * 3 < this.threshold) return false;
    return text.length >= this.threshold || encoder.encode(text).length >= this.threshold;
  }

  /** Bottom-up: children first, so a container is measured and stored with its own large children as references. */
  private async walk(v: Json, parent: Record<string, Json> | null, out: PartPayload[]): Promise<Sub> {
    if (typeof v === 'string') {
      const raw = mediaBytesOf(v);
      if (raw !== null) return this.media(raw, mediaTypeOf(parent) ?? sniffMediaType(raw), v, out);
      const text = canonicalJsonTrusted(v);
      return this.big(text) ? this.valuePart(v, text, out) : { value: v, text };
    }
    if (v === null || typeof v !== 'object') return { value: v, text: canonicalJsonTrusted(v) };
    if (Array.isArray(v)) {
      const subs: Sub[] = [];
      for (const x of v) subs.push(await this.walk(x, null, out));
      const text = '[' + subs.map((s) => s.text).join(',') + ']';
      const value = subs.map((s) => s.value);
      return this.big(text)
        ? this.listPart(
            value,
            subs.map((s) => s.text),
            text,
            out,
          )
        : { value, text };
    }
    const keys = Object.keys(v).sort();
    const value: Record<string, Json> = {};
    let text = '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const s = await this.walk(v[k]!, v, out);
      setMember(value, k, s.value);
      text += (i === 0 ? '' : ',') + JSON.stringify(k) + ':' + s.text;
    }
    text += '}';
    return this.big(text) ? this.valuePart(value, text, out) : { value, text };
  }

  private indexKey(tag: number, pieces: readonly Uint8Array[]): string {
    return toHex(hmacSha256(this.key, [Uint8Array.of(tag), ...pieces]));
  }

  /** An existing part for this index key: made in this process, or found in the store and checked. */
  /**
   * An existing part for this index key: made in this process, or found through the store's index. A found
   * part is read back (size, file digest, shape, its bases) and its value compared with the new one: the
   * index is the writer's own, but a damaged entry must cost a second copy, never a wrong reference.
   */
  private async existing(indexKey: string, same: (f: PartFile, value: Json) => boolean): Promise<PartRef | null> {
    const mine = this.known.get(indexKey);
    if (mine !== undefined) return mine;
    if (this.index === null) return null;
    const index = this.index;
    const address = await index.lookup(indexKey);
    if (address === null) return null;
    const bytes = await index.get(address);
    if (!(bytes instanceof Uint8Array)) return null;
    const ref = refOfFile(address, bytes);
    try {
      const reader = new PartReader((a, size) => index.get(a, size));
      const { file, value } = await reader.shallow(ref, { path: '' });
      if (!same(file, value)) return null;
    } catch (e) {
      if (e instanceof PartError) return null;
      throw e;
    }
    this.known.set(indexKey, ref);
    return ref;
  }

  private emit(indexKey: string, address: string, bytes: Uint8Array, out: PartPayload[]): PartRef {
    const ref = refOfFile(address, bytes);
    out.push({ address, bytes, indexKey });
    this.known.set(indexKey, ref);
    return ref;
  }

  private marker(ref: PartRef): Sub {
    const value = partMarker(ref);
    return { value, text: canonicalJsonTrusted(value) };
  }

  private async valuePart(value: Json, text: string, out: PartPayload[]): Promise<Sub> {
    const indexKey = this.indexKey(TAG.part, [encoder.encode(text)]);
    const found = await this.existing(indexKey, (f, v) => f.kind === 'value' && canonicalJsonTrusted(v) === text);
    if (found !== null) return this.marker(found);
    const seed = this.seed();
    const address = commitPart(value, seed).address;
    return this.marker(this.emit(indexKey, address, jsonFile({ seed: toHex(seed), value }), out));
  }

  private async media(raw: Uint8Array, mediaType: string, text: string, out: PartPayload[]): Promise<Sub> {
    const indexKey = this.indexKey(TAG.media, [encoder.encode(canonicalJsonTrusted(mediaType)), raw]);
    const found = await this.existing(
      indexKey,
      (f, v) => f.kind === 'media' && f.mediaType === mediaType && v === text,
    );
    if (found !== null) return this.marker(found);
    const seed = this.seed();
    const head = encoder.encode(canonicalJsonTrusted({ media_type: mediaType, seed: toHex(seed), size: raw.length }));
    const bytes = new Uint8Array(head.length + 1 + raw.length);
    bytes.set(head);
    bytes[head.length] = 0x0a;
    bytes.set(raw, head.length + 1);
    return this.marker(this.emit(indexKey, mediaAddress(mediaType, raw, seed), bytes, out));
  }

  /** A message list: stored as base + tail when a recent list is a proper prefix of it, else whole. */
  private async listPart(value: Json[], texts: string[], text: string, out: PartPayload[]): Promise<Sub> {
    const indexKey = this.indexKey(TAG.part, [encoder.encode(text)]);
    const found = await this.existing(indexKey, (f, v) => f.kind !== 'media' && canonicalJsonTrusted(v) === text);
    if (found !== null) return this.marker(found);
    let base: RecentList | null = null;
    for (const r of this.recent) {
      if (r.texts.length >= texts.length || (base !== null && r.texts.length <= base.texts.length)) continue;
      let prefix = true;
      for (let i = 0; i < r.texts.length && prefix; i++) prefix = r.texts[i] === texts[i];
      if (prefix) base = r;
    }
    const seed = this.seed();
    let made: { address: string; elements: Uint8Array[] };
    let bytes: Uint8Array;
    if (base === null) {
      made = listAddress([], value, seed);
      bytes = jsonFile({ seed: toHex(seed), value });
    } else {
      const tail = value.slice(base.texts.length);
      made = listAddress(base.elements, tail, seed);
      bytes = jsonFile({ base: partMarker(base.ref), seed: toHex(seed), tail });
    }
    const ref = this.emit(indexKey, made.address, bytes, out);
    this.recent.unshift({ ref, texts, elements: made.elements });
    if (this.recent.length > this.recentMax) this.recent.pop();
    return this.marker(ref);
  }
}

function mediaTypeOf(parent: Record<string, Json> | null): string | null {
  if (parent === null) return null;
  for (const k of MEDIA_TYPE_MEMBERS) {
    const t = parent[k];
    if (typeof t === 'string' && /^[\x21-\x7e]{1,255}$/.test(t) && t.includes('/')) return t;
  }
  return null;
}
