/**
 * The public form of a `stepchain/v3` record (spec/REDACTION.md §13): building it from a stored record and
 * a policy, and checking one against the step hash it carries — the deep tier of a published receipt.
 * Every value the public form shows is a disclosed unit that the reader recomputes from its salt; every
 * unit the policy selects is a withheld marker at its place, whose digest the reader takes as given. The
 * commitments themselves (units, salts, root) are the record module's; this file only decides what is
 * shown and reads what is shown. Pure: the page runs the checking half.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { isObject, setMember, type Json, type JsonObject } from '../canonical/json.js';
import { toHex } from '../canonical/sha256.js';
import { base64Encode } from '../receipt/base64.js';
import { escapedOffsets } from './escaped-offsets.js';
import { RedactError } from './errors.js';
import type { Policy } from './policy.js';
import { redactStep, rulesForStep, type Redaction } from './redact.js';
import type { RecordProfile } from '../record/profile.js';
import {
  CHUNKS_MARKER as CHUNKS,
  PART_MARKER,
  V3_SLOTS as SLOTS,
  WITHHELD_MARKER as WITHHELD,
  chunkString,
  commitRecord,
  seedFromHex,
  stringChunks,
  type Unit,
} from '../record/v3/commit.js';
import { stepHashV3 } from '../record/v3.js';
import type { RecordCommitment } from '../record/v3/commit.js';
import { partRefOf, type PartRef } from '../record/v3/parts.js';
import { publicPartMarker } from '../record/v3/public-part.js';
import { parsePointer } from '../canonical/pointer.js';
import { hiddenUnits, type PublicationParts, type Tree } from './v3-parts.js';
import { isSealed } from '../record/v3/erasure.js';
import { commitSealed, ERASED, isErasedValue, unitTree, type Committed, type UnitTree } from './v3-units.js';

import { publicRecordProblems } from '../record/v3/public.js';
import { held, type UnsaltedDigests } from './v3-approval-digest.js';
export { unitTree, WITHHELD, CHUNKS, type UnitTree };

/** A declaration of a v3 publication: one per withheld unit (§13.4). `chunk` names a withheld chunk of the string at `path`. */
export interface V3Declaration {
  seq: number;
  path: string;
  rule: string;
  chunk?: number;
}

/** A declaration of a unit withheld inside a part (§13.10): `path` points into the part's value (a list's tail). */
export interface V3PartDeclaration {
  part: string;
  path: string;
  rule: string;
  chunk?: number;
}

export type V3AnyDeclaration = V3Declaration | V3PartDeclaration;

/**
 * Declarations in manifest order: a record's by seq, then a part's by address; then path (UTF-16), then
 * chunk (a whole unit before its chunks).
 */
export function compareV3Declarations(a: V3AnyDeclaration, b: V3AnyDeclaration): number {
  const ap = 'part' in a ? a.part : null;
  const bp = 'part' in b ? b.part : null;
  if (ap === null && bp !== null) return -1;
  if (ap !== null && bp === null) return 1;
  const first = ap === null ? (a as V3Declaration).seq - (b as V3Declaration).seq : ap < bp! ? -1 : ap > bp! ? 1 : 0;
  return first || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || (a.chunk ?? -1) - (b.chunk ?? -1);
}

/** A withheld unit, private to the publisher (its salt opens it, §13.7). */
export interface V3Withheld extends V3Declaration {
  digest: string;
  salt: Uint8Array;
  kind: Unit['kind'];
}

export interface V3PublicRecord {
  record: JsonObject;
  declarations: V3Declaration[];
  withheld: V3Withheld[];
  /** What the leak sweep searches for: the selected values' matches, and every secret that stays private. */
  needles: Redaction[];
}

/** A problem of one public record (§13.6), located at a member of the record and a path into it. */
export interface V3RecordProblem {
  code: 'ROOT_MISMATCH' | 'SECRETS_INVALID' | 'MARKER_INVALID' | 'SECRET_PUBLISHED' | 'HASH_MISMATCH';
  field: string;
  path?: string;
  message: string;
}

const b64u = (b: Uint8Array): string => base64Encode(b).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const digestOf = (d: Uint8Array): string => 'sha256:' + toHex(d);

/** Strict base64url without padding (RFC 4648 §5): exactly one text per byte string, or null. */
export function b64uDecode(text: unknown): Uint8Array | null {
  if (typeof text !== 'string' || text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const pad = (4 - (text.length % 4)) % 4;
  const std = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat(pad);
  let bin: string;
  try {
    bin = atob(std);
  } catch {
    return null;
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return b64u(out) === text ? out : null;
}

/** The redactable slots and the tool name, as the policy walk (redact.ts) reads a v3 record. */
const V3_WALK = {
  redactable: SLOTS,
  toolName: (r: Readonly<Record<string, unknown>>): string | null => {
    const t = r.tool_call;
    return isObject(t) && typeof t.name === 'string' ? t.name : null;
  },
} as unknown as RecordProfile;

function commitStored(record: JsonObject, bind: string): Committed {
  const seq = record.seq as number;
  const seed = typeof record.seed === 'string' ? seedFromHex(record.seed) : null;
  if (seed === null && isSealed(record)) return commitSealed(record);
  if (seed === null)
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq} is not a stored stepchain/v3 record with its seed; publish from the original journal, not from a published copy`,
      { location: { seq } },
    );
  const values: Record<string, Json> = {};
  for (const s of SLOTS) if (s in record) values[s] = record[s]!;
  let c: RecordCommitment;
  try {
    c = commitRecord(values, seed, { units: true });
  } catch (e) {
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq} cannot be committed: ${e instanceof Error ? e.message : String(e)}`,
      { location: { seq } },
    );
  }
  if (c.root !== record.root) {
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq}'s values do not give its root (ROOT_MISMATCH): the record was not written from these values; nothing is published`,
      { location: { seq } },
    );
  }
  const trees = SLOTS.map((name): Tree => {
    const units = c.units.filter((u) => u.slot === name);
    const tree = unitTree(name in record, record[name], units.length);
    if (tree === null)
      throw new RedactError('SOURCE_INVALID', `step ${seq}: the units of ${name} do not follow its value`, {
        location: { seq },
      });
    return { part: null, units, tree, value: record[name] ?? null, rule: new Map() };
  });
  return { seq, record, bind, c, trees, values, needles: [] };
}

/**
 * The public form of one stored v3 record under `policy` (§13.3), for a record without part references.
 * `record` is the parsed stored line (with `seed`), `bind` its B. Refuses (SOURCE_INVALID) a record whose
 * values do not give its `root`: the writer's claim C6 is checked before anything is published.
 */
export function publicRecordV3(record: JsonObject, bind: string, policy: Policy, d?: UnsaltedDigests): V3PublicRecord {
  const k = commitStored(record, bind);
  const redactions = held(d, record, redactStep(policy, k.seq, k.values, null, V3_WALK).redactions);
  const rules = rulesForStep(policy, k.seq, V3_WALK.toolName(k.values));
  SLOTS.forEach((name, j) => selected(name, record, k.trees[j]!, redactions, rules, k.needles, k.seq));
  return buildPublicRecord(k, []);
}

/**
 * The selection of a record whose slots reference parts (§13.10): the policy sees the values with every
 * part resolved, and each selection is located in the tree that holds it — the record's slot or a part
 * (whose rule map is shared by every record that references it). `finish` builds the public record once
 * every record's selections are in (a part's markers depend on all of them); `refs` collects the private
 * references the public record shows.
 */
export async function selectRecordV3Parts(
  record: JsonObject,
  bind: string,
  policy: Policy,
  parts: PublicationParts,
  d?: UnsaltedDigests,
): Promise<{ finish: (refs: PartRef[]) => V3PublicRecord }> {
  const k = commitStored(record, bind);
  const seq = k.seq;
  const resolved: Record<string, Json> = {};
  for (const s of SLOTS)
    if (s in k.values) resolved[s] = s === 'meta' ? k.values[s]! : await parts.resolve(k.values[s]!, seq, `/${s}`);
  const redactions = held(d, record, redactStep(policy, seq, resolved, null, V3_WALK).redactions);
  const rules = rulesForStep(policy, seq, V3_WALK.toolName(resolved));
  for (const r of redactions) {
    const tokens = parsePointer(r.path);
    const j = (SLOTS as readonly string[]).indexOf(tokens[0]!);
    if (j < 0) continue;
    const place = await parts.locate(
      { tree: k.trees[j]!, unit: 0, node: k.values[tokens[0]!] ?? null },
      tokens.slice(1),
      seq,
      r.path,
      r.spans !== undefined,
    );
    if (place === null)
      throw new RedactError(
        'SOURCE_INVALID',
        `step ${seq}: the policy selects ${r.path}, which is no unit of the record or of a part it references (inside a media part?)`,
        { location: { seq, path: r.path } },
      );
    k.needles.push(r);
    holdPlace(place.tree, place.unit, r, seq);
  }
  SLOTS.forEach((name, j) => {
    if (!(name in record)) absentSlot(name, k.trees[j]!, rules);
  });
  return { finish: (refs) => buildPublicRecord(k, refs) };
}

/** Withholds what a selection names at its place: the chunks a detector's span touches, else the whole unit. */
function holdPlace(t: Tree, i: number, r: Redaction, seq: number): void {
  const hold = (u: number): void => {
    if (!t.rule.has(u)) t.rule.set(u, r.rule);
  };
  const chunks = t.tree.children[i]!.filter((k) => t.units[k]!.kind === 'chunk');
  if (r.spans && chunks.length > 0 && typeof r.value === 'string') {
    // The chunks a detector span touches (byte ranges of the escaped text); the others stay disclosed.
    const off = escapedOffsets(r.value);
    const ends = stringChunks(r.value)!;
    let at = 0;
    const ranges = ends.map((x) => [at, (at += x.length)] as const);
    for (const [a, b] of r.spans)
      chunks.forEach((k, n) => {
        if (ranges[n]![0] < off[b]! && ranges[n]![1] > off[a]!) hold(k);
      });
    return;
  }
  if (t.part !== null && i === 0)
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq}: the policy selects part ${t.part} whole where no unit holds its reference`,
      { location: { seq, path: r.path } },
    );
  hold(i);
}

/** An absent slot a path rule ends at is withheld all the same: the marker stands for the commitment to absence. */
function absentSlot(name: string, t: Tree, rules: ReturnType<typeof rulesForStep>): void {
  for (const r of rules)
    if (r.detectors.length === 0 && r.paths?.matches(r.paths.step(r.paths.root(), name))) {
      if (!t.rule.has(0)) t.rule.set(0, r.id);
      break;
    }
}

/** The public record from a committed record whose trees carry their rules (§13.3). */
function buildPublicRecord(k: Committed, refs: PartRef[]): V3PublicRecord {
  const { seq, record, c } = k;
  const needles = k.needles;
  const declarations: V3Declaration[] = [];
  const withheld: V3Withheld[] = [];
  const out: JsonObject = {};
  const keysOut: Record<string, string> = {};
  const saltsOut: Record<string, string> = {};
  let anyWithheld = false;
  const privateSecret = (path: string, what: string, bytes: Uint8Array): void => {
    needles.push({
      seq,
      path,
      rule: what,
      commitment: '',
      salt: new Uint8Array(0),
      value: null,
      matched: [toHex(bytes), b64u(bytes)],
      detected: true,
    });
  };

  for (let j = 0; j < SLOTS.length; j++) {
    const name = SLOTS[j]!;
    const t = k.trees[j]!;
    const { units, rule } = t;
    // A unit is hidden when it or an ancestor is withheld; only the topmost withheld units are markers.
    const hidden = hiddenUnits(t);
    for (const w of topWithheld(t, hidden)) {
      withheld.push({ seq, ...w });
      declarations.push({ seq, path: w.path, rule: w.rule, ...(w.chunk === undefined ? {} : { chunk: w.chunk }) });
      privateSecret(w.path, 'withheld salt', w.salt);
    }
    const key = c.slots[j]!.key;
    if (t.units.length === 0 && name in record) {
      // Erased whole (sealed form): shown as erased, with no secrets.
      out[name] = record[name]!;
      continue;
    }
    if (rule.has(0)) {
      out[name] = { [WITHHELD]: digestOf(c.slots[j]!.digest) };
      privateSecret(`/${name}`, 'slot key', key);
      anyWithheld = true;
      continue;
    }
    if (name in record) out[name] = shown(record[name]!, 0, t.tree, units, rule, refs);
    // A sealed slot holding an erased unit has no key left: its remaining units' salts disclose it.
    if (!hidden.some((h) => h) && key.length > 0) {
      keysOut[name] = b64u(key);
      continue;
    }
    anyWithheld = true;
    if (key.length > 0) privateSecret(`/${name}`, 'slot key', key);
    const disclosed = units.filter((u) => !hidden[u.index]);
    const all = new Uint8Array(16 * disclosed.length);
    disclosed.forEach((u, n) => all.set(u.salt, 16 * n));
    saltsOut[name] = b64u(all);
  }

  // A sealed record's kept keys and salts are private: only the ones its public form needs go to `secrets`.
  for (const m of Object.keys(record))
    if (!(SLOTS as readonly string[]).includes(m) && m !== 'seed' && m !== 'keys' && m !== 'salts') out[m] = record[m]!;
  out.bind = k.bind;
  if (typeof record.seed !== 'string') out.secrets = { keys: keysOut, salts: saltsOut };
  else if (anyWithheld) {
    out.secrets = { keys: keysOut, salts: saltsOut };
    needles.push({
      seq,
      path: '',
      rule: 'seed',
      commitment: '',
      salt: new Uint8Array(0),
      value: null,
      matched: [record.seed],
      detected: true,
    });
  } else out.secrets = { seed: record.seed };
  return { record: out, declarations, withheld, needles };
}

/** The topmost withheld units of a tree (the markers it shows), each with its declared path, chunk and digest. */
export function topWithheld(t: Tree, hidden: readonly boolean[]): Omit<V3Withheld, 'seq'>[] {
  const out: Omit<V3Withheld, 'seq'>[] = [];
  for (const u of t.units) {
    const p = t.tree.parent[u.index]!;
    if (!t.rule.has(u.index) || (p >= 0 && hidden[p]!)) continue;
    const chunk = u.kind === 'chunk' ? t.tree.children[p]!.indexOf(u.index) : undefined;
    const path = chunk === undefined ? u.path : t.units[p]!.path;
    out.push({
      path,
      rule: t.rule.get(u.index)!,
      digest: digestOf(u.digest),
      salt: u.salt,
      kind: u.kind,
      ...(chunk === undefined ? {} : { chunk }),
    });
  }
  return out;
}

/** A part's value as its public file shows it (§13.10), collecting the private references it shows. */
export function shownPart(t: Tree, refs: PartRef[]): Json {
  return shown(t.value, 0, t.tree, t.units, t.rule, refs);
}

/**
 * The units of one slot that the policy withholds, each with its rule: whole nodes the walk selected, the
 * chunks a detector span touches (the others stay disclosed), and an absent slot a path rule ends at.
 */
function selected(
  name: string,
  record: JsonObject,
  t: Tree,
  redactions: readonly Redaction[],
  rules: ReturnType<typeof rulesForStep>,
  needles: Redaction[],
  seq: number,
): void {
  const byPath = new Map<string, number>();
  for (const u of t.units) if (u.kind !== 'chunk') byPath.set(u.path, u.index);
  for (const r of redactions) {
    if (r.path !== `/${name}` && !r.path.startsWith(`/${name}/`)) continue;
    needles.push(r);
    const i = byPath.get(r.path);
    // In a sealed record a selection may name an erased place (the policy sees it as null): it stays erased.
    if (i === undefined && isSealed(record)) continue;
    if (i === undefined)
      throw new RedactError(
        'SOURCE_INVALID',
        `step ${seq}: the policy selects ${r.path}, which is not a unit of the record`,
        { location: { seq } },
      );
    holdPlace(t, i, r, seq);
  }
  if (!(name in record)) absentSlot(name, t, rules);
}

/** A slot's value as shown: withheld members, elements and chunks replaced by markers at their places. */
function shown(
  v: Json,
  i: number,
  tree: UnitTree,
  units: readonly Unit[],
  rule: ReadonlyMap<number, string>,
  refs: PartRef[],
): Json {
  const kids = tree.children[i]!;
  if (typeof v === 'string') {
    if (kids.length === 0 || !kids.some((k) => rule.has(k))) return v;
    return {
      [CHUNKS]: kids.map((k) =>
        rule.has(k) ? { [WITHHELD]: digestOf(units[k]!.digest) } : chunkString(stringChunks(v)![kids.indexOf(k)]!),
      ),
    };
  }
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let n = 0;
    return v.map((x) => {
      if (isErasedValue(x)) return x; // erased: shown as erased, neither proven nor withheld (§13.12)
      const u = kids[n++]!;
      return rule.has(u) ? { [WITHHELD]: digestOf(units[u]!.digest) } : shown(x, u, tree, units, rule, refs);
    });
  }
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === PART_MARKER) {
    // A public reference names the address alone: the private file digest and size are not published (§13.10).
    const ref = partRefOf(v);
    if (ref === null) throw new RedactError('SOURCE_INVALID', 'a part reference is malformed');
    refs.push(ref);
    return publicPartMarker(ref.digest);
  }
  const o: JsonObject = {};
  const held: string[] = [];
  keys
    .sort()
    .filter((k) => k !== ERASED)
    .forEach((k, n) => {
      const u = kids[n]!;
      if (rule.has(u)) held.push(digestOf(units[u]!.digest));
      else setMember(o, k, shown(v[k]!, u, tree, units, rule, refs));
    });
  if (ERASED in v) o[ERASED] = v[ERASED]!;
  if (held.length > 0) o[WITHHELD] = held.sort();
  return o;
}

/**
 * Checks one public record (§13.6 steps 2–4): no private secret, the secrets' shape, every disclosed unit
 * recomputed from its salt, withheld digests taken as given, R recomputed and compared with `root`. With
 * `stepHash`, also the step hash from the envelope, `bind` and `root` (the chain verifier does that for a
 * receipt's lines). Never throws on hostile input.
 */
export function checkPublicRecordV3(record: unknown, options: { stepHash?: boolean } = {}): V3RecordProblem[] {
  // The shape, secrets and root: the one implementation every verifier path uses (record/v3/public.ts).
  const problems: V3RecordProblem[] = publicRecordProblems(record);
  if (problems.length > 0 || !isObject(record)) return problems;
  if (options.stepHash) {
    const h = stepHashV3(record.bind as string, (n) =>
      n in record ? canonicalJson(record[n], { refuseReserved: false }) : undefined,
    );
    if (h !== record.step_hash)
      return [
        {
          code: 'HASH_MISMATCH',
          field: 'step_hash',
          message: `the envelope, bind and root give step hash ${h}, not ${String(record.step_hash)}`,
        },
      ];
  }
  return [];
}
