/**
 * The published-receipt checks of a `stepchain/v3` publication (spec/REDACTION.md §13.6), as the receipt
 * verifier meets each chain line: the deep tier of every public-form record (checkPublicRecordV3: secrets,
 * disclosed units, withheld digests, R) and the declarations against the withheld markers in both
 * directions. The chain verifier has already checked each line's step hash from `bind` and `root` and the
 * links to the head. Pure; never throws on hostile input.
 */
import { isObject, type Json } from '../canonical/json.js';
import { escapeToken, parsePointer } from '../canonical/pointer.js';
import type { ProblemList } from '../chain/problems.js';
import type { VerifiedLine } from '../chain/verifier.js';
import { isValidId } from '../record/fields.js';
import { CHUNKS_MARKER, PART_MARKER, V3_SLOTS, WITHHELD_MARKER } from '../record/v3/commit.js';
import type { Declaration } from './anchor.js';
import { checkPublicRecordV3, compareV3Declarations, type V3AnyDeclaration } from './v3-public.js';
import type { PublicPartFile } from '../record/v3/public-part.js';
import type { PublishedProblemCode } from './verify.js';

/** Whether a chain line is a v3 record in public form (`bind`, `secrets`, `v` 3), by a cheap test first. */
export function isV3PublicLine(text: string): boolean {
  return text.includes('"secrets":') && text.includes('"bind":"') && text.endsWith(',"v":3}');
}

/**
 * Why a v4 `redactions` list breaks §13.4, or null: `{path, rule, seq}` or `{chunk, path, rule, seq}`, and for a
 * unit withheld inside a part (§13.10) `{part, path, rule}` or `{chunk, part, path, rule}`; sorted, no repeats.
 */
export function v3DeclarationsDefect(value: unknown): string | null {
  if (!Array.isArray(value)) return 'redactions must be an array';
  let prev: V3AnyDeclaration | null = null;
  for (let i = 0; i < value.length; i++) {
    const d = value[i] as unknown;
    const shape = `redactions[${i}] must be {"path": <JSON Pointer>, "rule": <id>, "seq": <seq>} or {"part": <address>, "path", "rule"}, with "chunk": <index> for a withheld chunk`;
    if (!isObject(d)) return shape;
    const names = Object.keys(d).sort().join(',');
    const inPart = names === 'part,path,rule' || names === 'chunk,part,path,rule';
    if (names !== 'path,rule,seq' && names !== 'chunk,path,rule,seq' && !inPart) return shape;
    if (
      inPart
        ? typeof d.part !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(d.part)
        : !Number.isSafeInteger(d.seq) || (d.seq as number) < 0
    )
      return shape;
    if (typeof d.path !== 'string' || !isValidId(d.rule)) return shape;
    if ('chunk' in d && (!Number.isSafeInteger(d.chunk) || (d.chunk as number) < 0)) return shape;
    let tokens: string[];
    try {
      tokens = parsePointer(d.path);
    } catch {
      return `redactions[${i}].path is not a JSON Pointer`;
    }
    if (
      inPart
        ? tokens.length === 0 && !('chunk' in d)
        : tokens.length === 0 || !(V3_SLOTS as readonly string[]).includes(tokens[0]!)
    )
      return inPart
        ? `redactions[${i}].path must point inside the part's value (or be "" with "chunk", a chunk of a part that is one string)`
        : `redactions[${i}].path must point into a slot (${V3_SLOTS.join(', ')})`;
    const decl = d as unknown as V3AnyDeclaration;
    if (prev && compareV3Declarations(prev, decl) >= 0)
      return `redactions[${i}] is out of order or repeated: declarations are sorted by seq, then part, then path, then chunk`;
    prev = decl;
  }
  return null;
}

interface Entry {
  d: Declaration;
  seen: boolean;
}
const declKey = (seq: number | string, path: string, chunk?: number): string =>
  `${seq} ${path}${chunk === undefined ? '' : `\u0000${chunk}`}`;

/** What a v3 publication's lines show, checked as they come. */
export class V3PublicationChecks {
  private bySeq = new Map<number, Entry[]>();

  /** The declarations, keyed as the published-receipt checks keep them (every entry's `seen` is set here). */
  declare(list: V3AnyDeclaration[]): Map<string, Entry> {
    const out = new Map<string, Entry>();
    for (const d of list) {
      const e: Entry = { d: d as Declaration, seen: false };
      const owner = 'part' in d ? d.part : d.seq;
      out.set(declKey(owner, d.path, d.chunk), e);
      const index = typeof owner === 'string' ? this.byPart : this.bySeq;
      const at = (index as Map<number | string, Entry[]>).get(owner);
      if (at) at.push(e);
      else (index as Map<number | string, Entry[]>).set(owner, [e]);
    }
    return out;
  }

  private byPart = new Map<string, Entry[]>();

  /**
   * A public part file whose address checked (§13.10): its withheld markers against the declarations that
   * name the part, in both directions, as for a record (a part's markers are bound by its address).
   */
  part(address: string, f: PublicPartFile, extra: ProblemList<PublishedProblemCode>): void {
    if (f.kind === 'media') return;
    const file = `parts/${address.slice('sha256:'.length)}`;
    const { places, lists } = withheldPlaces(f.kind === 'value' ? f.value : f.tail, '');
    this.match(this.byPart.get(address) ?? [], places, lists);
    const loc = { file };
    for (const p of places) {
      const [path, chunk] = p.split('\u0000');
      extra.add(
        'REDACTION_UNDECLARED',
        `a withheld ${chunk === undefined ? 'unit' : `chunk (#${chunk})`} stands in part ${address} at ${path}, but the manifest's redactions list does not declare it`,
        { ...loc, path: path! },
      );
    }
    for (const [path, l] of lists) {
      if (l.declared < l.n)
        extra.add(
          'REDACTION_UNDECLARED',
          `the object in part ${address} at ${path} withholds ${l.n} member(s) but the manifest declares ${l.declared}`,
          { ...loc, path },
        );
    }
  }

  /** Marks the declarations that match a withheld place (removing it) or a withheld member of a listed object. */
  private match(
    entries: Entry[],
    places: Set<string>,
    lists: Map<string, { n: number; shown: Set<string>; declared: number }>,
  ): void {
    for (const e of entries) {
      const d = e.d as V3AnyDeclaration;
      const k = d.chunk === undefined ? d.path : `${d.path}\u0000${d.chunk}`;
      if (places.delete(k)) {
        e.seen = true;
        continue;
      }
      if (d.chunk !== undefined) continue;
      // A withheld member: declared at <object>/<name>, where the object lists it and shows no member of that name.
      const cut = d.path.lastIndexOf('/');
      const list = lists.get(d.path.slice(0, cut));
      const name = parsePointer(d.path).pop()!;
      if (cut >= 0 && list && !list.shown.has(name) && list.declared < list.n) {
        list.declared++;
        e.seen = true;
      }
    }
  }

  /**
   * Checks a line that passed isV3PublicLine; false when it is no public-form record after all (its top level
   * has no `bind` and `secrets`: the prefilter matched text inside a value), and the caller treats it as any line.
   */
  line(line: VerifiedLine, extra: ProblemList<PublishedProblemCode>): boolean {
    const seq = line.seq!;
    const loc = { ...(line.file ? { file: line.file } : {}), line: line.line, seq };
    let record: unknown;
    try {
      record = JSON.parse(line.text);
    } catch {
      return false; // a line with a seq scanned as canonical JSON: cannot happen
    }
    if (!isObject(record) || !('bind' in record) || !('secrets' in record) || record.v !== 3) return false;
    for (const p of checkPublicRecordV3(record))
      extra.add(p.code, `seq ${seq}: ${p.message}`, { ...loc, field: p.field, ...(p.path ? { path: p.path } : {}) });

    // The withheld places this record shows: single units (slot, element, chunk) and per object its list.
    const places = new Set<string>();
    const lists = new Map<string, { n: number; shown: Set<string>; declared: number }>();
    for (const slot of V3_SLOTS) {
      const v = record[slot] as Json | undefined;
      if (v === undefined) continue;
      if (isWithheld(v)) places.add(`/${slot}`);
      else {
        const got = withheldPlaces(v, `/${slot}`);
        for (const p of got.places) places.add(p);
        for (const [k, l] of got.lists) lists.set(k, l);
      }
    }
    this.match(this.bySeq.get(seq) ?? [], places, lists);
    for (const p of places) {
      const [path, chunk] = p.split('\u0000');
      extra.add(
        'REDACTION_UNDECLARED',
        `a withheld ${chunk === undefined ? 'unit' : `chunk (#${chunk})`} stands at seq ${seq}, ${path}, but the manifest's redactions list does not declare it`,
        { ...loc, field: path!.split('/')[1]!, path: path! },
      );
    }
    for (const [path, l] of lists) {
      if (l.declared < l.n) {
        extra.add(
          'REDACTION_UNDECLARED',
          `the object at seq ${seq}, ${path} withholds ${l.n} member(s) but the manifest declares ${l.declared}`,
          { ...loc, field: path.split('/')[1]!, path },
        );
      }
    }
    return true;
  }
}

/** The withheld places a shown value holds: single units (element, chunk; the value itself) and per object its list. */
function withheldPlaces(
  value: Json,
  at: string,
): { places: Set<string>; lists: Map<string, { n: number; shown: Set<string>; declared: number }> } {
  const places = new Set<string>();
  const lists = new Map<string, { n: number; shown: Set<string>; declared: number }>();
  const visit = (v: Json, path: string, depth: number): void => {
    if (v === null || typeof v !== 'object' || depth > 200) return;
    if (Array.isArray(v)) {
      v.forEach((x, k) => (isWithheld(x) ? places.add(`${path}/${k}`) : visit(x, `${path}/${k}`, depth + 1)));
      return;
    }
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === PART_MARKER) return;
    if (keys.length === 1 && keys[0] === CHUNKS_MARKER && Array.isArray(v[CHUNKS_MARKER])) {
      v[CHUNKS_MARKER].forEach((c, k) => {
        if (isWithheld(c)) places.add(`${path}\u0000${k}`);
      });
      return;
    }
    for (const k of keys) if (k !== WITHHELD_MARKER) visit(v[k]!, `${path}/${escapeToken(k)}`, depth + 1);
    const list = v[WITHHELD_MARKER];
    if (Array.isArray(list)) lists.set(path, { n: list.length, shown: new Set(keys), declared: 0 });
  };
  visit(value, at, 0);
  return { places, lists };
}

function isWithheld(v: unknown): boolean {
  return isObject(v) && Object.keys(v).length === 1 && typeof v[WITHHELD_MARKER] === 'string';
}
