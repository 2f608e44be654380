/**
 * What a published receipt shows of its parts (spec/REDACTION.md §13.10), put back where the public records
 * reference them: a public reference `{"$stepchain:part":{"digest":A}}` replaced by the value its public file
 * shows — a value part's value, a list part's elements (its base's, then its tail's), a media part's bytes as
 * canonical base64 (PARTS.md §4) — each withheld unit inside staying its marker. A reader of a publication
 * then compares and prints values, as a journal's reader does with private references (part-resolve.ts):
 * `stepchain diff` of a journal against its publication showed every disclosed value held in a part as
 * "redacted" (outsider L, F5).
 *
 * Only for a receipt that has verified: its verifier recomputed each public file's address from what the file
 * shows (the deep tier), so what is put back here is bound to the head. Hostile files are still bounded as a
 * journal's parts are (PARTS.md §10): references nest at most MAX_PART_DEPTH deep, one resolution expands at
 * most MAX_EXPANDED_REFS references and MAX_EXPANDED_BYTES of part files, a value nests at most
 * MAX_RESOLVED_NESTING deep, and a base chain at most MAX_BASE_CHAIN lists. Pure.
 */
import type { Json } from '../../canonical/json.js';
import {
  MAX_RESOLVED_NESTING,
  newBudget,
  nodeOf,
  siteAt,
  tooDeep,
  tooMuch,
  tooNested,
  type ExpansionBudget,
} from './part-resolve.js';
import { base64Of, MAX_BASE_CHAIN, MAX_PART_DEPTH, PART_MARKER, PartError, siteLoc, type PartSite } from './parts.js';
import { parsePublicPartFile, publicPartRefOf, type PublicPartFile } from './public-part.js';

/** A public file as read: parsed, with its size in bytes (what expanding it costs the budget). */
interface Read {
  file: PublicPartFile;
  size: number;
}

export class PublicPartResolution {
  private readonly read = new Map<string, Read>();
  /**
   * The list flattened last: a conversation's records each reference the list one turn longer than the one
   * before, whose base it is, so each flattening stops there. Kept for every list, the elements of a chain of
   * n lists would be held n² times over.
   */
  private last: { address: string; elements: Json[]; bytes: number } | null = null;

  /** `get`: a part entry's bytes by address (a receipt source's `parts.store.get`), null where it has none. */
  constructor(private readonly get: (address: string) => Promise<Uint8Array | null>) {}

  /** `v` with every public reference inside replaced by what its part shows; a copy of its own. PartError otherwise. */
  async resolve(v: Json, site: PartSite): Promise<Json> {
    return this.copy(v, 0, newBudget(), site, []);
  }

  private async copy(
    v: Json,
    depth: number,
    budget: ExpansionBudget,
    site: PartSite,
    path: (string | number)[],
  ): Promise<Json> {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      if (path.length >= MAX_RESOLVED_NESTING) throw tooNested(site, nodeOf(path));
      const out: Json[] = [];
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        out.push(await this.copy(v[i]!, depth, budget, site, path));
        path.pop();
      }
      return out;
    }
    const keys = Object.keys(v);
    const address = keys.length === 1 && keys[0] === PART_MARKER ? publicPartRefOf(v) : null;
    if (address !== null) {
      if (depth >= MAX_PART_DEPTH) throw tooDeep(site, nodeOf(path), address);
      const { file, size } = await this.file(address, site, path);
      let inner: Json;
      if (file.kind === 'list') {
        const list = await this.list(address, site, path);
        budget.bytes -= list.bytes;
        inner = list.elements;
      } else {
        budget.bytes -= size;
        inner = file.kind === 'media' ? base64Of(file.raw) : file.value;
      }
      if (--budget.refs < 0 || budget.bytes < 0) throw tooMuch(site, nodeOf(path), address);
      return this.copy(inner, depth + 1, budget, site, path); // in the reference's place: no level of its own
    }
    if (path.length >= MAX_RESOLVED_NESTING) throw tooNested(site, nodeOf(path));
    const out: Record<string, Json> = {};
    for (const k of keys) {
      path.push(k);
      const value = await this.copy(v[k]!, depth, budget, site, path);
      path.pop();
      // Defined, not assigned: a member named "__proto__" would otherwise become the prototype.
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  /** The public file of `address`, read once; PartError where the receipt has none or it is not one. */
  private async file(address: string, site: PartSite, path: (string | number)[]): Promise<Read> {
    const known = this.read.get(address);
    if (known !== undefined) return known;
    const bytes = await this.get(address);
    const where = (): PartSite => siteAt(site, nodeOf(path));
    if (bytes === null)
      throw new PartError('PART_MISSING', `part ${address} is not in the receipt`, address, siteLoc(where()));
    const file = parsePublicPartFile(bytes);
    if (typeof file === 'string')
      throw new PartError('PART_CORRUPT', `part ${address}'s entry ${file}`, address, siteLoc(where()));
    const read = { file, size: bytes.length };
    this.read.set(address, read);
    return read;
  }

  /** A list part's elements: its base chain's, bottom first, then each list's tail (iterative). */
  private async list(
    address: string,
    site: PartSite,
    path: (string | number)[],
  ): Promise<{ elements: Json[]; bytes: number }> {
    if (this.last?.address === address) return this.last;
    const chain: string[] = [];
    const met = new Set<string>();
    let bottom: { elements: readonly Json[]; bytes: number } | null = null;
    for (let at = address; bottom === null;) {
      if (chain.length > MAX_BASE_CHAIN || met.has(at))
        throw new PartError(
          'PART_CORRUPT',
          `part ${address}: its base chain loops or is longer than ${MAX_BASE_CHAIN} lists`,
          address,
          siteLoc(siteAt(site, nodeOf(path))),
        );
      const { file, size } = await this.file(at, site, path);
      if (this.last?.address === at) bottom = this.last;
      else if (file.kind === 'list') {
        chain.push(at);
        met.add(at);
        at = file.base;
      } else if (file.kind === 'value' && Array.isArray(file.value)) bottom = { elements: file.value, bytes: size };
      else
        throw new PartError(
          'PART_CORRUPT',
          `part ${at} is the base of a list but holds no list`,
          at,
          siteLoc(siteAt(site, nodeOf(path))),
        );
    }
    const elements = [...bottom.elements];
    let bytes = bottom.bytes;
    for (let i = chain.length - 1; i >= 0; i--) {
      const { file, size } = this.read.get(chain[i]!)!;
      if (file.kind === 'list') for (const e of file.tail) elements.push(e);
      bytes += size;
    }
    this.last = { address, elements, bytes };
    return this.last;
  }
}

/** The resolution of a source's public references, read through its parts store (`parts.store.get`); null without one. */
export function publicPartResolutionOf(source: object): PublicPartResolution | null {
  const store = (source as { parts?: { store?: { get?: unknown } } | null }).parts?.store;
  const get = store?.get;
  if (typeof get !== 'function') return null;
  return new PublicPartResolution((address) => (get as (a: string) => Promise<Uint8Array | null>).call(store, address));
}
