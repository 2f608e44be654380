/**
 * Parts in a `stepchain/v3` publication (spec/REDACTION.md §13.10): the publisher's side. A part is one
 * unit tree stored once and shared by every record that references it, so what a policy selects inside a
 * part is withheld in the part — in every record that shows it, and nowhere else — and each part a public
 * record reaches is published once, as its public file (record/v3/public-part.ts): the value with withheld
 * units as markers, and the salts of what it shows. A policy's paths and detectors see the values with
 * parts resolved, as a reader does; each selection is located in the unit tree that holds it (the record's
 * slot, or a part, or for a list's element the list part in the base chain that added it). Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { toHex } from '../canonical/sha256.js';
import { commitPart, seedFromHex, slotKey, unitSalt, type Unit } from '../record/v3/commit.js';
import { PartReader } from '../record/v3/part-reader.js';
import { partRefOf, type PartFile, type PartRef, type PartSource } from '../record/v3/parts.js';
import { publicPartMarker } from '../record/v3/public-part.js';
import { RedactError } from './errors.js';

const b64u = (b: Uint8Array): string => {
  let bin = '';
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};
const encoder = new TextEncoder();

/** Each unit's parent and children, as record/v3's walk numbers them (v3-public.ts builds it). */
export interface UnitTreeShape {
  parent: number[];
  children: number[][];
}

/** One unit tree: a record's slot or a part (its value, a list's tail, or a media part's one unit). */
export interface Tree {
  /** A part's address, or null for a record's slot. */
  part: string | null;
  units: Unit[];
  tree: UnitTreeShape;
  /** The stored value the tree commits (a list's tail; a media part: null). */
  value: Json | null;
  /** Withheld units (index → rule): the topmost ones become markers. */
  rule: Map<number, string>;
}

/** A private part loaded for publication: its file, its unit tree, and for a list where its elements come from. */
export interface LoadedPart extends Tree {
  part: string;
  file: PartFile;
  ref: PartRef;
  /** For a list (or an array value): per flattened element, the part that added it and its index there. */
  elements: { part: string; index: number }[] | null;
}

/** Where a selected path lands: a unit of a tree, and the stored value there (a reference when the value is a part). */
export interface Place {
  tree: Tree;
  unit: number;
  node: Json;
}

export class PublicationParts {
  readonly loaded = new Map<string, LoadedPart>();
  private readonly reader: PartReader;

  constructor(
    source: PartSource,
    private readonly unitTree: (present: boolean, value: Json | undefined, count: number) => UnitTreeShape | null,
  ) {
    this.reader = new PartReader(source, { deep: true });
  }

  /** A slot's value with every part resolved (what the policy sees, as a reader does). */
  resolve(value: Json, seq: number, path: string): Promise<Json> {
    return this.reader.resolve(value, { seq, path });
  }

  /** Loads a part (and a list's base chain) with its units under its seed. */
  async load(ref: PartRef, seq: number, path: string): Promise<LoadedPart> {
    const done = this.loaded.get(ref.digest);
    if (done !== undefined) return done;
    const { file } = await this.reader.shallow(ref, { seq, path });
    const seed = seedFromHex(file.seed);
    if (seed === null)
      throw new RedactError('SOURCE_INVALID', `part ${ref.digest} has no usable seed`, { location: { seq, path } });
    let units: Unit[] = [];
    let value: Json | null = null;
    let elements: LoadedPart['elements'] = null;
    if (file.kind === 'media') {
      const salt = unitSalt(slotKey(seed, 0), 0);
      units = [{ slot: 'part', index: 0, path: '', kind: 'part', salt, digest: hexDigest(ref.digest) }];
    } else {
      value = file.kind === 'value' ? file.value : file.tail;
      const made = commitPart(value, seed, { units });
      if (file.kind === 'value' && made.address !== ref.digest)
        throw new RedactError(
          'SOURCE_INVALID',
          `part ${ref.digest}'s value does not give its address (PART_ADDRESS_MISMATCH); nothing is published`,
          { location: { seq, path } },
        );
      if (file.kind === 'list') {
        const base = await this.load(file.base, seq, path);
        if (base.elements === null)
          throw new RedactError('SOURCE_INVALID', `part ${ref.digest}'s base is not a list`, {
            location: { seq, path },
          });
        elements = [...base.elements, ...file.tail.map((_, i) => ({ part: ref.digest, index: i }))];
      } else if (Array.isArray(value)) elements = value.map((_, i) => ({ part: ref.digest, index: i }));
    }
    const tree =
      this.unitTree(true, value ?? undefined, units.length) ??
      (file.kind === 'media' ? { parent: [-1], children: [[]] } : null);
    if (tree === null)
      throw new RedactError('SOURCE_INVALID', `part ${ref.digest}: its units do not follow its value`, {
        location: { seq, path },
      });
    const p: LoadedPart = { part: ref.digest, file, ref, units, tree, value, rule: new Map(), elements };
    this.loaded.set(ref.digest, p);
    return p;
  }

  /**
   * Where a selected path (tokens after the slot) lands, starting at a slot's tree: through references into
   * parts, a list's element into the part that added it. With `intoString`, a path that ends at a value
   * part holding a string continues into it (a detector's span selects that string's chunks).
   */
  async locate(
    start: Place,
    tokens: readonly string[],
    seq: number,
    path: string,
    intoString: boolean,
  ): Promise<Place | null> {
    let { tree, unit, node } = start;
    for (let t = 0; t < tokens.length;) {
      const ref = partRefOf(node);
      if (ref !== null) {
        const p = await this.load(ref, seq, path);
        if (p.file.kind === 'media') return null;
        if (p.elements !== null) {
          const k = Number(tokens[t]);
          const e = Number.isInteger(k) && String(k) === tokens[t] ? p.elements[k] : undefined;
          if (e === undefined) return null;
          const owner = this.loaded.get(e.part)!;
          const u = owner.tree.children[0]![e.index]!;
          ({ tree, unit, node } = { tree: owner, unit: u, node: (owner.value as Json[])[e.index]! });
          t++;
          continue;
        }
        ({ tree, unit, node } = { tree: p, unit: 0, node: p.value! });
        continue;
      }
      const tok = tokens[t]!;
      const kids = tree.tree.children[unit]!;
      if (Array.isArray(node)) {
        const k = Number(tok);
        if (!Number.isInteger(k) || String(k) !== tok || k >= node.length) return null;
        unit = kids[k]!;
        node = node[k]!;
      } else if (node !== null && typeof node === 'object') {
        const names = Object.keys(node).sort();
        const k = names.indexOf(tok);
        if (k < 0) return null;
        unit = kids[k]!;
        node = node[tok]!;
      } else return null;
      t++;
    }
    const ref = partRefOf(node);
    if (ref !== null && intoString) {
      const p = await this.load(ref, seq, path);
      if (p.file.kind === 'value' && typeof p.value === 'string') return { tree: p, unit: 0, node: p.value };
    }
    return { tree, unit, node };
  }
}

function hexDigest(d: string): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(d.slice(7 + 2 * i, 9 + 2 * i), 16);
  return out;
}

/** Whether each unit of a tree is hidden: withheld itself or under a withheld unit. */
export function hiddenUnits(t: Tree): boolean[] {
  const hidden = t.units.map(() => false);
  for (const u of t.units)
    hidden[u.index] = t.rule.has(u.index) || (t.tree.parent[u.index]! >= 0 && hidden[t.tree.parent[u.index]!]!);
  return hidden;
}

/**
 * A part's public file (REDACTION.md §13.10): its shown value, and its key when nothing in it is withheld,
 * else the salts of its shown units in preorder. `show` renders the value with the part's markers.
 */
export function publicPartBytes(p: LoadedPart, show: (t: Tree) => Json): { bytes: Uint8Array; anyWithheld: boolean } {
  const hidden = hiddenUnits(p);
  const anyWithheld = hidden.some((h) => h);
  const seed = seedFromHex(p.file.seed)!;
  let secrets: JsonObject;
  if (!anyWithheld) secrets = { key: b64u(slotKey(seed, 0)) };
  else {
    const shownUnits = p.units.filter((u) => !hidden[u.index]);
    const all = new Uint8Array(16 * shownUnits.length);
    shownUnits.forEach((u, k) => all.set(u.salt, 16 * k));
    secrets = { salts: b64u(all) };
  }
  const f = p.file;
  if (f.kind === 'media') {
    const head = encoder.encode(canonicalJson({ media_type: f.mediaType, secrets, size: f.raw.length }));
    const bytes = new Uint8Array(head.length + 1 + f.raw.length);
    bytes.set(head, 0);
    bytes[head.length] = 0x0a;
    bytes.set(f.raw, head.length + 1);
    return { bytes, anyWithheld };
  }
  const body: JsonObject =
    f.kind === 'value'
      ? { secrets, value: show(p) }
      : { base: publicPartMarker(f.base.digest), secrets, tail: show(p) };
  return { bytes: encoder.encode(canonicalJson(body, { refuseReserved: false })), anyWithheld };
}

export { toHex, b64u };
