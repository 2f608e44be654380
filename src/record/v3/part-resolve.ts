/**
 * Resolution of part references (spec/PARTS.md §9, §10): a value with every reference inside replaced by its
 * part's value, each part fetched and checked through the reader that owns the parts (part-reader.ts), at most
 * MAX_EXPANDED_REFS references and MAX_EXPANDED_BYTES of parts expanded, references nested at most
 * MAX_PART_DEPTH deep. Pure.
 */
import type { Json } from '../../canonical/json.js';
import { MAX_RECORD_DEPTH } from '../../canonical/limits.js';
import {
  base64Of,
  MAX_PART_DEPTH,
  PART_MARKER,
  PartError,
  partRefOf,
  siteLoc,
  type PartFile,
  type PartRef,
  type PartSite,
} from './parts.js';

/**
 * One resolution expands at most this many references, and part files of at most this many bytes in all, a
 * part counted each time it is expanded (PARTS.md §10).
 */
export const MAX_EXPANDED_REFS = 1 << 20;
export const MAX_EXPANDED_BYTES = 2 ** 28;
/**
 * A resolved value nests at most this deep (the value itself counting as 1): a record nests at most
 * MAX_RECORD_DEPTH with itself (FORMAT §6.3), so a value in one of its slots at most one less. Parts that each
 * nested within the limit made a value 33 × 120 deep, and a reader's copy and every printer after it ran out of
 * stack (outsider K).
 */
export const MAX_RESOLVED_NESTING = MAX_RECORD_DEPTH - 1;

/** What one resolution may still expand: shared by every reference inside it. */
export interface ExpansionBudget {
  refs: number;
  bytes: number;
}
export const newBudget = (): ExpansionBudget => ({ refs: MAX_EXPANDED_REFS, bytes: MAX_EXPANDED_BYTES });

/** What a resolution reads of the reader that owns the parts. */
export interface ResolvedParts {
  /** The parts checked so far, by address. */
  readonly files: ReadonlyMap<string, PartFile>;
  /** The values of value and media parts (a media part's base64), by address, kept as they are first asked for. */
  readonly values: Map<string, Json>;
  /** A checked list's elements, base chain first. */
  listValue(address: string): Json[];
  /** The size of a checked part's file, by address. */
  sizeOf(address: string): number;
  /** Fetches and checks a part (and a list's base chain); PartError when it is missing or not that part. */
  file(ref: PartRef, site: PartSite): Promise<PartFile>;
  /** The part checked already, once this reference names it as its first one did (PartError if not); else undefined. */
  held(ref: PartRef, site: PartSite | (() => PartSite)): PartFile | undefined;
}

/** The resolutions of one reader: what it walked is remembered across them (see `load`). */
export class Resolution {
  /**
   * Parts whose every reference `load` has fetched and checked, by address: the greatest part depth they were
   * walked at (walked there without a defect, they hold none at any depth above it).
   */
  private readonly walked = new Map<string, number>();
  /** Checked lists' element counts, by address (a tail element's index in the list is its base's count on). */
  private readonly lengths = new Map<string, number>();
  /** Checked lists' bytes with their base chains', by address: what expanding one costs the budget. */
  private readonly chainBytes = new Map<string, number>();

  constructor(private readonly parts: ResolvedParts) {}

  /**
   * `v` with every part reference inside replaced by its value (at most MAX_EXPANDED_REFS and _BYTES of them),
   * a copy of its own: nothing in it is shared with another value this reader gave out.
   *
   * In two passes: `load` fetches and checks every part `v` reaches, awaiting only where a part is not yet read,
   * and `copy` builds the value without an await. One pass that awaited at every element cost a record whose
   * prompt is a list of n messages n awaits and n paths written out, and `log` of a 4 000-turn conversation 10.8 s
   * (outsider I, F6).
   */
  async resolve(v: Json, site: PartSite, depth: number, budget: ExpansionBudget): Promise<Json> {
    if (v === null || typeof v !== 'object') return v;
    await this.load(v, site, depth);
    return this.copy(v, depth, budget, site, []);
  }

  /**
   * Fetches and checks every part `v` reaches, in the order `copy` meets them (so the first defect found is the one
   * it would meet first), with the depth check of `copy`. A part walked before at this depth or a deeper one is
   * passed over (its subtree holds no defect here either), and a list is walked through its own tail and its
   * base's (not its flattened elements), so each part is walked about once per reader however many records reach
   * it.
   */
  private async load(root: Json, site: PartSite, rootDepth: number): Promise<void> {
    const stack: LoadFrame[] = [{ v: root, depth: rootDepth, at: null }];
    for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
      if ('done' in frame) {
        const before = this.walked.get(frame.done);
        if (before === undefined || frame.depth > before) this.walked.set(frame.done, frame.depth);
        continue;
      }
      if ('base' in frame) {
        // A list's base, met through the list at `depth`: its elements sit where the list's first ones do.
        this.walkList(frame.base, frame.depth, frame.at, stack);
        continue;
      }
      const { v, depth, at } = frame;
      if (v === null || typeof v !== 'object') continue;
      const ref = partRefOf(v);
      if (ref !== null) {
        if (depth >= MAX_PART_DEPTH) throw tooDeep(site, at, ref.digest);
        // Every reference is held to the part's file digest and size, walked or not.
        const f = this.parts.held(ref, () => siteAt(site, at)) ?? (await this.parts.file(ref, siteAt(site, at)));
        const seen = this.walked.get(ref.digest);
        if (seen !== undefined && depth <= seen) continue;
        if (f.kind === 'list') this.walkList(ref.digest, depth, at, stack);
        else {
          stack.push({ done: ref.digest, depth });
          if (f.kind === 'value') stack.push({ v: f.value, depth: depth + 1, at });
        }
      } else if (Array.isArray(v)) {
        for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i]!, depth, at: { up: at, key: i } });
      } else {
        const keys = Object.keys(v);
        for (let i = keys.length - 1; i >= 0; i--)
          stack.push({ v: v[keys[i]!]!, depth, at: { up: at, key: keys[i]! } });
      }
    }
  }

  /** Pushes a checked list's tail elements (at the indices they have in it) and its base, unless walked already. */
  private walkList(address: string, depth: number, at: PathNode | null, stack: LoadFrame[]): void {
    const seen = this.walked.get(address);
    if (seen !== undefined && depth <= seen) return;
    const f = this.parts.files.get(address)!;
    stack.push({ done: address, depth });
    if (f.kind !== 'list') {
      if (f.kind === 'value') stack.push({ v: f.value, depth: depth + 1, at });
      return;
    }
    const first = this.listLength(f.base.digest);
    for (let i = f.tail.length - 1; i >= 0; i--)
      stack.push({ v: f.tail[i]!, depth: depth + 1, at: { up: at, key: first + i } });
    stack.push({ base: f.base.digest, depth, at });
  }

  /** How many elements a checked list (or the value part at the bottom of its chain) holds. */
  private listLength(address: string): number {
    return this.overChain(address, this.lengths, (_, f) =>
      f.kind === 'list' ? f.tail.length : f.kind === 'value' && Array.isArray(f.value) ? f.value.length : 0,
    );
  }

  /** A checked list's file size and its base chain's, down to the value part at its bottom. */
  private bytesWithBases(address: string): number {
    return this.overChain(address, this.chainBytes, (at) => this.parts.sizeOf(at));
  }

  /**
   * The sum of `measure` over a checked list and its base chain down to the part at its bottom, kept in `memo`
   * for every list on the way: iterative (a chain is up to 65 536 lists), each list measured once per reader.
   */
  private overChain(address: string, memo: Map<string, number>, measure: (at: string, f: PartFile) => number): number {
    const chain: string[] = [];
    let n = 0;
    for (let at = address; ;) {
      const held = memo.get(at);
      if (held !== undefined) {
        n = held;
        break;
      }
      const f = this.parts.files.get(at)!;
      if (f.kind !== 'list') {
        n = measure(at, f);
        memo.set(at, n);
        break;
      }
      chain.push(at);
      at = f.base.digest;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      n += measure(chain[i]!, this.parts.files.get(chain[i]!)!);
      memo.set(chain[i]!, n);
    }
    return n;
  }

  /** The resolved copy of `v`, every part it reaches loaded (`load`); `path` is where `v` is, below `site`. */
  private copy(v: Json, depth: number, budget: ExpansionBudget, site: PartSite, path: (string | number)[]): Json {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      if (path.length >= MAX_RESOLVED_NESTING) throw tooNested(site, nodeOf(path));
      const out: Json[] = [];
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        out.push(this.copy(v[i]!, depth, budget, site, path));
        path.pop();
      }
      return out;
    }
    const keys = Object.keys(v);
    // partRefOf lists the keys again: only for an object that has the marker's one member.
    const ref = keys.length === 1 && keys[0] === PART_MARKER ? partRefOf(v) : null;
    if (ref !== null) {
      if (depth >= MAX_PART_DEPTH) throw tooDeep(site, nodeOf(path), ref.digest);
      // A part may be referenced again and again inside another: a few files of 200 bytes stood for 2^d values at
      // depth d, and `stepchain show` of one record ran for minutes and out of memory (outsider I).
      // A list stands for its whole base chain: counted with it, as the list values it expands to hold them all. A
      // chain of 2 000 lists referenced a million times was counted as a million small files, and ran out of memory.
      const f = this.parts.files.get(ref.digest)!;
      if (--budget.refs < 0 || (budget.bytes -= f.kind === 'list' ? this.bytesWithBases(ref.digest) : ref.size) < 0)
        throw tooMuch(site, nodeOf(path), ref.digest);
      let inner: Json;
      if (f.kind === 'list') inner = this.parts.listValue(ref.digest);
      else {
        const cached = this.parts.values.get(ref.digest);
        inner = cached ?? (f.kind === 'media' ? base64Of(f.raw) : f.value);
        if (cached === undefined) this.parts.values.set(ref.digest, inner);
      }
      return this.copy(inner, depth + 1, budget, site, path);
    }
    if (path.length >= MAX_RESOLVED_NESTING) throw tooNested(site, nodeOf(path));
    const out: Record<string, Json> = {};
    for (const k of keys) {
      path.push(k);
      const value = this.copy(v[k]!, depth, budget, site, path);
      path.pop();
      // Defined, not assigned: a member named "__proto__" (legal JSON, kept by JSON.parse) would otherwise become the prototype and vanish from show and log.
      if (k === '__proto__')
        Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
      else out[k] = value;
    }
    return out;
  }
}

/** Where a value is below the site a resolution began at: each step up names its array index or member. */
export interface PathNode {
  up: PathNode | null;
  key: string | number;
}

/** What `load` has still to walk: a value at a part depth, a list's base, or a part walked to its end. */
type LoadFrame =
  | { v: Json; depth: number; at: PathNode | null }
  | { base: string; depth: number; at: PathNode | null }
  | { done: string; depth: number };

export function nodeOf(path: readonly (string | number)[]): PathNode | null {
  let last: PathNode | null = null;
  for (const key of path) last = { up: last, key };
  return last;
}

/** The site of a value below `site`, its path written out as a JSON Pointer (only when a message needs it). */
export function siteAt(site: PartSite, at: PathNode | null): PartSite {
  if (at === null) return site;
  const keys: string[] = [];
  for (let n: PathNode | null = at; n !== null; n = n.up)
    keys.push(typeof n.key === 'number' ? String(n.key) : n.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  const path = `${site.path}/${keys.reverse().join('/')}`;
  return site.seq === undefined ? { path } : { seq: site.seq, path };
}

export function tooNested(site: PartSite, at: PathNode | null): PartError {
  const here = siteAt(site, at);
  return new PartError(
    'PART_CORRUPT',
    `the value at ${here.path === '' ? 'the root' : here.path}, its parts expanded, nests deeper than ${MAX_RESOLVED_NESTING} (a record nests at most ${MAX_RECORD_DEPTH} deep with itself, FORMAT §6.3): not expanded (PARTS.md §10)`,
    '',
    siteLoc(here),
  );
}

/** References expanding past the budget (PARTS.md §10), met at `at` below `site`. */
export function tooMuch(site: PartSite, at: PathNode | null, address: string): PartError {
  const here = siteAt(site, at);
  return new PartError(
    'PART_CORRUPT',
    `part references at ${here.path === '' ? 'the root' : here.path} expand more than ${MAX_EXPANDED_REFS} references or ${MAX_EXPANDED_BYTES} bytes of parts (parts referenced again and again inside one another): not expanded (PARTS.md §10)`,
    address,
    siteLoc(here),
    'the record was made to stand for more than any reader expands; verify checks its parts one by one',
  );
}

/**
 * A reference `MAX_PART_DEPTH` parts deep: the 129th nested (a record's own references are the first). A rule on
 * containers below the last part let one more reference through when its part held a string, where the Python
 * reader, from the same words of §10, refused it (outsider K).
 */
export function tooDeep(site: PartSite, at: PathNode | null, address: string): PartError {
  const here = siteAt(site, at);
  return new PartError(
    'PART_CORRUPT',
    `part ${address} (${here.seq === undefined ? '' : `seq ${here.seq} `}at ${here.path === '' ? 'the root' : here.path}): part references nest deeper than ${MAX_PART_DEPTH} (PARTS.md §10)`,
    address,
    siteLoc(here),
  );
}
