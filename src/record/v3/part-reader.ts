/**
 * The part reader (spec/PARTS.md §9): resolves references against a source (a part store, a receipt's
 * entries), checking each part once on first use — size, file digest, shape, and with `deep` its address —
 * and following a list's base chain without recursion. Pure.
 */
import type { Json } from '../../canonical/json.js';
import { digestBytes } from '../../canonical/sha256.js';
import { seedFromHex } from './commit.js';
import {
  addressOf,
  base64Of,
  listAddress,
  MAX_BASE_CHAIN,
  MAX_PART_BYTES,
  MAX_PART_DEPTH,
  parsePartFile,
  PartError,
  partRefOf,
  siteLoc,
  type PartFile,
  type PartRef,
  type PartSite,
  type PartSource,
} from './parts.js';

/**
 * Resolves part references against a source, checking each part on first use (PARTS.md §9): size, F,
 * shape, and with `deep` its address. Each part is fetched and checked once per reader, however many
 * records reference it; a list's base chain is followed without recursion.
 */
export class PartReader {
  private readonly files = new Map<string, PartFile>();
  private readonly values = new Map<string, Json>();
  private readonly elements = new Map<string, Uint8Array[]>();

  constructor(
    private readonly source: PartSource,
    private readonly options: { deep?: boolean } = {},
  ) {}

  /** The parts checked so far, by address (for a receipt writer: each once). */
  checked(): ReadonlyMap<string, PartFile> {
    return this.files;
  }

  /** Fetches and checks the part a reference names; PartError when it is missing or not that part. */
  async file(ref: PartRef, site: PartSite): Promise<PartFile> {
    const done = this.files.get(ref.digest);
    if (done !== undefined) return done;
    const loc = site.seq === undefined ? { path: site.path } : { seq: site.seq, path: site.path };
    const where = `part ${ref.digest} (${site.seq === undefined ? '' : `seq ${site.seq} `}at ${site.path === '' ? 'the root' : site.path})`;
    if (ref.size > MAX_PART_BYTES)
      throw new PartError(
        'PART_CORRUPT',
        `${where} is ${ref.size} bytes by its reference; a part file is at most ${MAX_PART_BYTES}`,
        ref.digest,
        loc,
      );
    const got = await this.source(ref.digest, ref.size);
    if (got === null) throw new PartError('PART_MISSING', `${where} is not in the store`, ref.digest, loc);
    if ('unreadable' in got) throw new PartError('PART_CORRUPT', `${where}: ${got.unreadable}`, ref.digest, loc);
    if (!(got instanceof Uint8Array) || got.length !== ref.size) {
      const held = got instanceof Uint8Array ? got.length : got.size;
      throw new PartError(
        'PART_CORRUPT',
        `${where} holds ${held} bytes, the reference says ${ref.size}`,
        ref.digest,
        loc,
      );
    }
    const actual = digestBytes(got);
    if (actual !== ref.file)
      throw new PartError(
        'PART_CORRUPT',
        `${where}: its file hashes to ${actual}, the reference says ${ref.file}`,
        ref.digest,
        loc,
      );
    const f = parsePartFile(got);
    if (typeof f === 'string') throw new PartError('PART_CORRUPT', `${where}: its file ${f}`, ref.digest, loc);
    if (f.kind === 'list') await this.listElements(f, ref, site);
    else if (this.options.deep) {
      const a = addressOf(f, () => null);
      if (a !== ref.digest)
        throw new PartError(
          'PART_ADDRESS_MISMATCH',
          `${where}: its value gives address ${a ?? '(none)'}`,
          ref.digest,
          loc,
        );
      this.noteElements(ref.digest, f);
    }
    f.address = ref.digest;
    this.files.set(ref.digest, f);
    return f;
  }

  /** A list's flattened elements, base chain first (iterative: a 40-turn chat has a chain of 80 lists). */
  private async listElements(f: Extract<PartFile, { kind: 'list' }>, ref: PartRef, site: PartSite): Promise<Json[]> {
    const chain: { file: Extract<PartFile, { kind: 'list' }>; ref: PartRef }[] = [{ file: f, ref }];
    let bottom: Json[] | undefined;
    for (let cur = f; ;) {
      if (chain.length > MAX_BASE_CHAIN)
        throw new PartError(
          'PART_CORRUPT',
          `part ${ref.digest}: its base chain is longer than ${MAX_BASE_CHAIN} lists`,
          ref.digest,
          siteLoc(site),
        );
      const known = this.values.get(cur.base.digest);
      if (known !== undefined) {
        bottom = known as Json[];
        break;
      }
      const next = this.files.get(cur.base.digest) ?? (await this.fetchOnly(cur.base, site));
      if (next.kind === 'media')
        throw new PartError(
          'PART_CORRUPT',
          `part ${ref.digest}: its base ${cur.base.digest} is media, not a list`,
          ref.digest,
          siteLoc(site),
        );
      if (next.kind === 'value') {
        if (!Array.isArray(next.value))
          throw new PartError(
            'PART_CORRUPT',
            `part ${ref.digest}: its base ${cur.base.digest} is not a list`,
            ref.digest,
            siteLoc(site),
          );
        bottom = next.value;
        this.noteElements(cur.base.digest, next);
        this.files.set(cur.base.digest, next);
        this.values.set(cur.base.digest, next.value);
        break;
      }
      chain.push({ file: next, ref: cur.base });
      cur = next;
    }
    let list = bottom;
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i]!;
      if (this.options.deep) {
        const seed = seedFromHex(c.file.seed);
        const base = this.elements.get(c.file.base.digest);
        if (seed !== null && base !== undefined) {
          const made = listAddress(base, c.file.tail, seed);
          if (made.address !== c.ref.digest)
            throw new PartError(
              'PART_ADDRESS_MISMATCH',
              `part ${c.ref.digest}: its value gives address ${made.address}`,
              c.ref.digest,
              siteLoc(site),
            );
          this.elements.set(c.ref.digest, made.elements);
        }
      }
      list = [...list, ...c.file.tail];
      this.values.set(c.ref.digest, list);
      c.file.address = c.ref.digest;
      this.files.set(c.ref.digest, c.file);
    }
    return list;
  }

  private noteElements(address: string, f: PartFile): void {
    if (!this.options.deep || f.kind !== 'value' || !Array.isArray(f.value)) return;
    const seed = seedFromHex(f.seed);
    if (seed === null) return;
    this.elements.set(address, listAddress([], f.value, seed).elements);
  }

  /** Fetch and check size, F, shape, without following a list's base (the caller walks the chain). */
  private async fetchOnly(ref: PartRef, site: PartSite): Promise<PartFile> {
    if (ref.size > MAX_PART_BYTES)
      throw new PartError(
        'PART_CORRUPT',
        `part ${ref.digest} is ${ref.size} bytes by its reference; a part file is at most ${MAX_PART_BYTES}`,
        ref.digest,
        siteLoc(site),
      );
    const got = await this.source(ref.digest, ref.size);
    const where = `part ${ref.digest} (a list's base, met at ${site.path === '' ? 'the root' : site.path})`;
    const loc = site.seq === undefined ? { path: site.path } : { seq: site.seq, path: site.path };
    if (got === null) throw new PartError('PART_MISSING', `${where} is not in the store`, ref.digest, loc);
    if (!(got instanceof Uint8Array) || got.length !== ref.size)
      throw new PartError('PART_CORRUPT', `${where} is not ${ref.size} bytes long`, ref.digest, loc);
    const actual = digestBytes(got);
    if (actual !== ref.file)
      throw new PartError(
        'PART_CORRUPT',
        `${where}: its file hashes to ${actual}, the reference says ${ref.file}`,
        ref.digest,
        loc,
      );
    const f = parsePartFile(got);
    if (typeof f === 'string') throw new PartError('PART_CORRUPT', `${where}: its file ${f}`, ref.digest, loc);
    return f;
  }

  /** The part a reference names, checked, and the value it stands for with the references inside it in place. */
  async shallow(ref: PartRef, site: PartSite): Promise<{ file: PartFile; value: Json }> {
    const f = await this.file(ref, site);
    const value = f.kind === 'media' ? base64Of(f.raw) : f.kind === 'value' ? f.value : this.values.get(ref.digest)!;
    return { file: f, value };
  }

  /** The value a reference stands for, with every nested reference resolved (and each part checked). */
  async value(ref: PartRef, site: PartSite, depth = 0): Promise<Json> {
    const cached = this.values.get(ref.digest);
    if (cached !== undefined && this.files.has(ref.digest)) return this.resolve(cached, site, depth + 1);
    const f = await this.file(ref, site);
    let v: Json;
    if (f.kind === 'media') v = base64Of(f.raw);
    else if (f.kind === 'value') v = f.value;
    else v = this.values.get(ref.digest)!;
    this.values.set(ref.digest, v);
    return this.resolve(v, site, depth + 1);
  }

  /** `v` with every part reference inside replaced by its value. */
  async resolve(v: Json, site: PartSite, depth = 0): Promise<Json> {
    if (v === null || typeof v !== 'object') return v;
    if (depth > MAX_PART_DEPTH)
      throw new PartError(
        'PART_CORRUPT',
        `part references nest deeper than ${MAX_PART_DEPTH} at ${site.path}`,
        '',
        siteLoc(site),
      );
    const ref = partRefOf(v);
    if (ref !== null) return this.value(ref, site, depth);
    if (Array.isArray(v)) {
      const out: Json[] = [];
      for (let i = 0; i < v.length; i++)
        out.push(await this.resolve(v[i]!, { ...site, path: `${site.path}/${i}` }, depth));
      return out;
    }
    const out: Record<string, Json> = {};
    for (const k of Object.keys(v)) {
      const value = await this.resolve(
        v[k]!,
        { ...site, path: `${site.path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` },
        depth,
      );
      // Defined, not assigned: a member named "__proto__" (legal JSON, kept by JSON.parse) would otherwise become the prototype and vanish from show and log.
      if (k === '__proto__')
        Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      else out[k] = value;
    }
    return out;
  }
}

/**
 * A reader over the parts of a chain source that has them — a v3 journal of any store, or a v3 receipt opened
 * as a source (`parts.store.get`) — or null. Diff and replay read values through it: part addresses are keyed
 * per journal, so the same value stands in different references in two journals.
 */
export function partReaderOf(source: object): PartReader | null {
  const parts = (source as { parts?: { store?: { get?: unknown } } | null }).parts;
  const get = parts?.store?.get;
  if (typeof get !== 'function') return null;
  return new PartReader((a, size) => (get as PartSource).call(parts!.store, a, size));
}
