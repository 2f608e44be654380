/**
 * The part reader (spec/PARTS.md §9): resolves references against a source (a part store, a receipt's
 * entries), checking each part once on first use — size, file digest, shape, and with `deep` its address —
 * and following a list's base chain without recursion. Pure.
 */
import type { Json } from '../../canonical/json.js';
import { digestBytes } from '../../canonical/sha256.js';
import { seedFromHex } from './commit.js';
import { newBudget, Resolution, type ExpansionBudget } from './part-resolve.js';
import {
  addressOf,
  base64Of,
  listAddress,
  MAX_BASE_CHAIN,
  MAX_PART_BYTES,
  parsePartFile,
  PartError,
  partMarker,
  siteLoc,
  type PartFile,
  type PartRef,
  type PartSite,
  type PartSource,
} from './parts.js';

/** Elements of flattened lists a reader keeps (about 8 bytes each: the elements are shared, not copied). */
const LISTS_HELD = 1 << 22;

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
  /**
   * The file digest and size each checked address was checked against: every later reference to the address
   * must name the same (PARTS.md §9 step 3). Returned from the cache unchecked, a second reference with another
   * file digest or size was read as the first one's part, and verify, log and export took it (outsider K).
   */
  private readonly checkedAs = new Map<string, { file: string; size: number }>();
  private readonly resolution = new Resolution({
    files: this.files,
    values: this.values,
    listValue: (address) => this.listValue(address),
    file: (ref, site) => this.file(ref, site),
    held: (ref, site) => this.held(ref, site),
    sizeOf: (address) => this.checkedAs.get(address)!.size,
  });

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
    const done = this.held(ref, site);
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
    this.keep(ref, f);
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
      const known = this.held(cur.base, site);
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
        this.keep(cur.base, next);
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
      this.keep(c.ref, c.file);
    }
  }

  /**
   * The part an address was checked as, once this reference names the same file digest and size as the one it
   * was checked against (PART_CORRUPT otherwise); undefined when the address is not checked yet.
   */
  held(ref: PartRef, where: PartSite | (() => PartSite)): PartFile | undefined {
    const done = this.files.get(ref.digest);
    if (done === undefined) return undefined;
    const as = this.checkedAs.get(ref.digest)!;
    if (as.file === ref.file && as.size === ref.size) return done;
    const site = typeof where === 'function' ? where() : where;
    throw new PartError(
      'PART_CORRUPT',
      `part ${ref.digest} (${site.seq === undefined ? '' : `seq ${site.seq} `}at ${site.path === '' ? 'the root' : site.path}): this reference says a file of ${ref.size} bytes hashing to ${ref.file}; the part is ${as.size} bytes hashing to ${as.file}, as another reference says`,
      ref.digest,
      siteLoc(site),
      'references to one part that disagree: this record, an earlier one, or the part was altered; compare them with a backup',
    );
  }

  private keep(ref: PartRef, f: PartFile): void {
    f.address = ref.digest;
    this.files.set(ref.digest, f);
    this.checkedAs.set(ref.digest, { file: ref.file, size: ref.size });
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
  value(ref: PartRef, site: PartSite, depth = 0, budget: ExpansionBudget = newBudget()): Promise<Json> {
    return this.resolution.resolve(partMarker(ref), site, depth, budget);
  }

  /**
   * `v` with every part reference inside replaced by its value (at most MAX_EXPANDED_REFS and _BYTES of them),
   * a copy of its own: nothing in it is shared with another value this reader gave out.
   */
  resolve(v: Json, site: PartSite, depth = 0, budget: ExpansionBudget = newBudget()): Promise<Json> {
    return this.resolution.resolve(v, site, depth, budget);
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
