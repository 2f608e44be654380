/**
 * The unit trees of a stored `stepchain/v3` record as a publication reads them (spec/REDACTION.md §13.3,
 * §13.12): each unit's parent and children in the commitment walk's order, and the commitments of a record
 * in sealed form (ERASURE.md §2), whose erased units are no units any more. Pure.
 */
import { isObject, setMember, type Json, type JsonObject } from '../canonical/json.js';
import { V3_SLOTS as SLOTS, stringChunks, PART_MARKER, type RecordCommitment, type Unit } from '../record/v3/commit.js';
import { ERASED_MARKER, fromB64u, rootOfRemaining } from '../record/v3/erasure.js';
import { RedactError } from './errors.js';
import type { Redaction } from './redact.js';
import type { Tree } from './v3-parts.js';

/** A stored record committed and checked against its root, with one unit tree per slot (rules still empty). */
export interface Committed {
  seq: number;
  record: JsonObject;
  bind: string;
  c: RecordCommitment;
  trees: Tree[];
  values: Record<string, Json>;
  needles: Redaction[];
}

/**
 * A record in sealed form (ERASURE.md §2: its seed deleted by an erasure): what remains checked against its
 * root, its units from its kept keys and salts, its stored `bind`. An erased unit is no unit: it is shown as
 * erased (§13.12), and the policy sees it as absent (an erased element or slot as null).
 */
export function commitSealed(record: JsonObject): Committed {
  const seq = record.seq as number;
  if (JSON.stringify(record).includes('"$stepchain:part"'))
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq} holds erased values and part references: publishing such a record is not implemented yet; export a full receipt (stepchain export), which carries it and verifies`,
      { location: { seq } },
    );
  let root: string;
  const bySlot = new Map<string, Unit[]>();
  try {
    root = rootOfRemaining(record);
    for (const slot of SLOTS) {
      const units: Unit[] = [];
      rootOfRemaining(record, { slot, units });
      bySlot.set(slot, units);
    }
  } catch (e) {
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq} is in sealed form and what remains of it cannot be checked: ${e instanceof Error ? e.message : String(e)}`,
      { location: { seq } },
    );
  }
  if (root !== record.root)
    throw new RedactError(
      'SOURCE_INVALID',
      `step ${seq} is in sealed form and what remains of it does not give its root (ROOT_MISMATCH); nothing is published`,
      { location: { seq } },
    );
  const keys = record.keys as Record<string, string>;
  const values: Record<string, Json> = {};
  for (const s of SLOTS) if (s in record) values[s] = policyView(record[s]!);
  const units: Unit[] = [];
  const slots = SLOTS.map((slot) => {
    const us = bySlot.get(slot)!;
    for (const u of us) units.push(u);
    const key = typeof keys[slot] === 'string' ? fromB64u(keys[slot]) : null;
    return { slot, key: key ?? new Uint8Array(0), digest: us[0]?.digest ?? new Uint8Array(0) };
  });
  const trees = SLOTS.map((name): Tree => {
    const us = bySlot.get(name)!;
    const tree = unitTree(name in record, record[name], us.length);
    if (tree === null)
      throw new RedactError('SOURCE_INVALID', `step ${seq}: the remaining units of ${name} do not follow its value`, {
        location: { seq },
      });
    return { part: null, units: us, tree, value: record[name] ?? null, rule: new Map() };
  });
  const c = { root, rootBytes: new Uint8Array(0), slots, units } as RecordCommitment;
  return { seq, record, bind: record.bind as string, c, trees, values, needles: [] };
}

export interface UnitTree {
  parent: number[];
  children: number[][];
}

/**
 * Each unit's parent and children, by walking the value in the commitment walk's order (record/v3/commit.ts:
 * the slot member, then members in JCS order of names, elements by index, a long string's chunks; nothing
 * inside a part reference). Null when the walk meets a different number of units than were committed.
 */
export function unitTree(present: boolean, value: Json | undefined, count: number): UnitTree | null {
  const parent: number[] = [-1];
  const children: number[][] = [[]];
  let next = 1;
  const add = (p: number): number => {
    const me = next++;
    parent[me] = p;
    children[me] = [];
    children[p]!.push(me);
    return me;
  };
  const visit = (v: Json, p: number): void => {
    if (typeof v === 'string') {
      const cs = stringChunks(v);
      // eslint-disable-next-line @typescript-eslint/prefer-for-of -- one unit per chunk; the chunks themselves are not read
      if (cs !== null) for (let k = 0; k < cs.length; k++) add(p);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    // An erased unit (a sealed record, ERASURE.md §2) is no unit any more: its salt is gone.
    if (Array.isArray(v)) {
      for (const x of v) if (!isErasedValue(x)) visit(x, add(p));
      return;
    }
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === PART_MARKER) return;
    for (const k of keys.sort()) if (k !== ERASED) visit(v[k]!, add(p));
  };
  if (present && isErasedValue(value)) return count === 0 ? { parent: [], children: [] } : null;
  if (present) visit(value!, 0);
  return next === count ? { parent, children } : null;
}

export const ERASED = ERASED_MARKER;
export function isErasedValue(v: unknown): boolean {
  return isObject(v) && Object.keys(v).length === 1 && ERASED in v && !Array.isArray(v[ERASED]);
}

/** A slot's value as the policy sees it in a sealed record: erased elements and slots as null, erased members left out. */
function policyView(v: Json): Json {
  if (v === null || typeof v !== 'object') return v;
  if (isErasedValue(v)) return null;
  if (Array.isArray(v)) return v.map(policyView);
  const o: JsonObject = {};
  for (const k of Object.keys(v)) if (k !== ERASED) setMember(o, k, policyView(v[k]!));
  return o;
}
