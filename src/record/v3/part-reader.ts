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

/** Elements of flattened lists a reader keeps (about 8 bytes each: the elements are shared, not copied). */
const LISTS_HELD = 1 << 22;

/**
 * One resolution expands at most this many references, and part files of at most this many bytes in all, a
 * part counted each time it is expanded (PARTS.md §10).
 */
export const MAX_EXPANDED_REFS = 1 << 20;
export const MAX_EXPANDED_BYTES = 2 ** 30;

/** What one resolution may still expand: shared by every reference inside it. */
interface ExpansionBudget {
  refs: number;
  bytes: number;
}
const newBudget = (): ExpansionBudget => ({ refs: MAX_EXPANDED_REFS, bytes: MAX_EXPANDED_BYTES });

/**
 * Resolves part references against a source, checking each part on first use (PARTS.md §9): size, F,
 * shape, and with `deep` its address. Each part is fetched and checked once per reader, however many
 * records reference it; a list's base chain is followed without recursion.
 */
export class PartReader {
  private readonly files = new Map<string, PartFile>();
  /** The values of value and media parts (a media part's base64), by address. */
  private readonly values = new Map<string, Json>();
  /**
   * Lists flattened when a value was asked for, by address, kept while they hold at most LISTS_HELD elements in
   * all (the oldest let go first). Each level of a base chain kept its own flattened copy before, so a chain of n
   * lists held n²/2 elements: `verify` of one record over 32 000 of them ran out of memory (outsider I).
   */
  private readonly lists = new Map<string, Json[]>();
  private listsHeld = 0;
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
    if (f.kind === 'list') await this.checkChain(f, ref, site);
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

  /**
   * Checks a list's base chain down to a part already checked or a value part (iterative: a 40-turn chat has a
   * chain of 80 lists); with `deep`, each list's address from its base's elements. Flattens nothing (listValue).
   */
  private async checkChain(f: Extract<PartFile, { kind: 'list' }>, ref: PartRef, site: PartSite): Promise<void> {
    const chain: { file: Extract<PartFile, { kind: 'list' }>; ref: PartRef }[] = [{ file: f, ref }];
    for (let cur = f; ;) {
      if (chain.length > MAX_BASE_CHAIN)
        throw new PartError(
          'PART_CORRUPT',
          `part ${ref.digest}: its base chain is longer than ${MAX_BASE_CHAIN} lists`,
          ref.digest,
          siteLoc(site),
        );
      const known = this.files.get(cur.base.digest);
      if (known !== undefined && known.kind !== 'media') break;
      const next = known ?? (await this.fetchOnly(cur.base, site));
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
        this.noteElements(cur.base.digest, next);
        next.address = cur.base.digest;
        this.files.set(cur.base.digest, next);
        break;
      }
      chain.push({ file: next, ref: cur.base });
      cur = next;
    }
    const base = this.files.get(chain[chain.length - 1]!.file.base.digest);
    if (base?.kind === 'value' && !Array.isArray(base.value))
      throw new PartError(
        'PART_CORRUPT',
        `part ${ref.digest}: a base in its chain is not a list`,
        ref.digest,
        siteLoc(site),
      );
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i]!;
      if (this.options.deep) {
        const seed = seedFromHex(c.file.seed);
        const baseElements = this.elements.get(c.file.base.digest);
        if (seed !== null && baseElements !== undefined) {
          const made = listAddress(baseElements, c.file.tail, seed);
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
      c.file.address = c.ref.digest;
      this.files.set(c.ref.digest, c.file);
    }
  }

  /** A checked list's elements, base chain first: flattened once, down to the nearest list flattened before. */
  private listValue(address: string): Json[] {
    const held = this.lists.get(address);
    if (held !== undefined) return held;
    const tails: Json[][] = [];
    let bottom: Json[] = [];
    for (let at = address; ;) {
      const f = this.files.get(at)!;
      if (f.kind !== 'list') {
        bottom = f.kind === 'value' && Array.isArray(f.value) ? f.value : [];
        break;
      }
      tails.push(f.tail);
      const known = this.lists.get(f.base.digest);
      if (known !== undefined) {
        bottom = known;
        break;
      }
      at = f.base.digest;
    }
    const list = bottom.slice();
    for (let i = tails.length - 1; i >= 0; i--) for (const e of tails[i]!) list.push(e);
    this.lists.set(address, list);
    this.listsHeld += list.length;
    for (const [a, l] of this.lists) {
      if (this.listsHeld <= LISTS_HELD || a === address) break;
      this.lists.delete(a);
      this.listsHeld -= l.length;
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
    const value = f.kind === 'media' ? base64Of(f.raw) : f.kind === 'value' ? f.value : this.listValue(ref.digest);
    return { file: f, value };
  }

  /** The value a reference stands for, with every nested reference resolved (and each part checked). */
  async value(ref: PartRef, site: PartSite, depth = 0, budget: ExpansionBudget = newBudget()): Promise<Json> {
    // A part may be referenced again and again inside another: a few files of 200 bytes stood for 2^d values at
    // depth d, and `stepchain show` of one record ran for minutes and out of memory (outsider I).
    if (--budget.refs < 0 || (budget.bytes -= ref.size) < 0)
      throw new PartError(
        'PART_CORRUPT',
        `part references at ${site.path === '' ? 'the root' : site.path} expand more than ${MAX_EXPANDED_REFS} references or ${MAX_EXPANDED_BYTES} bytes of parts (parts referenced again and again inside one another): not expanded (PARTS.md §10)`,
        ref.digest,
        siteLoc(site),
        'the record was made to stand for more than any reader expands; verify checks its parts one by one',
      );
    const f = this.files.get(ref.digest) ?? (await this.file(ref, site));
    let v: Json;
    if (f.kind === 'list') v = this.listValue(ref.digest);
    else {
      const cached = this.values.get(ref.digest);
      v = cached ?? (f.kind === 'media' ? base64Of(f.raw) : f.value);
      if (cached === undefined) this.values.set(ref.digest, v);
    }
    return this.resolve(v, site, depth + 1, budget);
  }

  /** `v` with every part reference inside replaced by its value (at most MAX_EXPANDED_REFS and _BYTES of them). */
  async resolve(v: Json, site: PartSite, depth = 0, budget: ExpansionBudget = newBudget()): Promise<Json> {
    if (v === null || typeof v !== 'object') return v;
    if (depth > MAX_PART_DEPTH)
      throw new PartError(
        'PART_CORRUPT',
        `part references nest deeper than ${MAX_PART_DEPTH} at ${site.path}`,
        '',
        siteLoc(site),
      );
    const ref = partRefOf(v);
    if (ref !== null) return this.value(ref, site, depth, budget);
    if (Array.isArray(v)) {
      const out: Json[] = [];
      for (let i = 0; i < v.length; i++)
        out.push(await this.resolve(v[i]!, { ...site, path: `${site.path}/${i}` }, depth, budget));
      return out;
    }
    const out: Record<string, Json> = {};
    for (const k of Object.keys(v)) {
      const value = await this.resolve(
        v[k]!,
        { ...site, path: `${site.path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` },
        depth,
        budget,
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
