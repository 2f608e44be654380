/**
 * Field-level comparison of two steps (spec/DIFF.md §3): pruning ignored subtrees and listing every
 * difference as { path, kind, a, b } with path an RFC 6901 pointer into the step. Marker objects (blob
 * references, redactions) are compared as atomic values and never descended into.
 */
import { escapeToken } from '../canonical/pointer.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { isMarker } from '../record/markers.js';
import type { IgnoreSet, PatternState } from '../pattern/pattern.js';

export type FieldChangeKind = 'changed' | 'added' | 'removed' | 'type-changed';

export interface FieldDiff {
  /** RFC 6901 JSON Pointer into the step, e.g. "/tool_call/arguments/city". */
  path: string;
  kind: FieldChangeKind;
  /** The value in run a; absent when kind is "added". */
  a?: Json;
  /** The value in run b; absent when kind is "removed". */
  b?: Json;
}

/** Removed by pruning: distinct from every JSON value. */
export const PRUNED: unique symbol = Symbol('pruned');

/**
 * `value` without the subtrees the ignore set matches. Copy-on-write: an untouched subtree is returned as
 * is, so with no patterns (or none reaching below this node) it costs nothing.
 */
export function prune(value: Json, ignore: IgnoreSet, state: PatternState): Json | typeof PRUNED {
  if (state.length === 0) return value;
  if (ignore.matches(state)) return PRUNED;
  if (value === null || typeof value !== 'object' || isMarker(value)) return value;
  if (Array.isArray(value)) {
    let out: Json[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const old = value[i] as Json;
      const v = prune(old, ignore, ignore.step(state, String(i)));
      if (v === old) {
        if (out) out.push(old);
        continue;
      }
      out ??= value.slice(0, i);
      // An ignored element is dropped from the projection (spec/DIFF.md §4.3): two arrays whose
      // unignored elements are equal then digest equal, whatever their ignored elements were.
      if (v !== PRUNED) out.push(v);
    }
    return out ?? value;
  }
  let out: JsonObject | null = null;
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const old = value[k] as Json;
    const v = prune(old, ignore, ignore.step(state, k));
    if (v === old) {
      if (out) setMember(out, k, old);
      continue;
    }
    if (!out) {
      out = {};
      for (let j = 0; j < i; j++) setMember(out, keys[j]!, value[keys[j]!]);
    }
    if (v !== PRUNED) setMember(out, k, v);
  }
  return out ?? value;
}

/** Plain assignment would make a member named "__proto__" (as JSON.parse can produce) the prototype. */
function setMember(obj: JsonObject, key: string, value: Json): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object' | 'marker';

function typeOf(v: Json): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return isMarker(v) ? 'marker' : 'object';
  return typeof v as 'boolean' | 'number' | 'string';
}

/** Deep equality of two JSON values (objects by members, so key order does not matter). */
export function jsonEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEqual(a[k]!, b[k]!)) return false;
  }
  return true;
}

/**
 * Collects field differences; stops recording (but keeps counting) past `limit`. Compares the values as
 * stored, walking the ignore patterns alongside, so array indices in paths are the stored ones; reported
 * values are pruned so nothing an ignore pattern covers shows in the report.
 */
export class FieldCollector {
  readonly fields: FieldDiff[] = [];
  omitted = 0;
  constructor(
    private readonly limit: number,
    private readonly ignore: IgnoreSet,
  ) {}

  private add(d: FieldDiff): void {
    if (this.fields.length < this.limit) this.fields.push(d);
    else this.omitted++;
  }

  get count(): number {
    return this.fields.length + this.omitted;
  }

  private shown(v: Json, state: PatternState): Json {
    const p = prune(v, this.ignore, state);
    return p === PRUNED ? null : p;
  }

  private only(side: 'a' | 'b', v: Json, path: string, state: PatternState): void {
    if (state.length !== 0 && this.ignore.matches(state)) return;
    if (side === 'a') this.add({ path, kind: 'removed', a: this.shown(v, state) });
    else this.add({ path, kind: 'added', b: this.shown(v, state) });
  }

  /** Compares two present values at `path` (a pointer), descending into objects and arrays. */
  compare(a: Json, b: Json, path: string, state: PatternState): void {
    if (a === b) return;
    if (state.length !== 0 && this.ignore.matches(state)) return;
    const ta = typeOf(a);
    const tb = typeOf(b);
    if (ta !== tb) {
      // A marker (a redaction, an unresolved blob) stands for a value of unknown type: a plain change.
      const kind = ta === 'marker' || tb === 'marker' ? 'changed' : 'type-changed';
      this.add({ path, kind, a: this.shown(a, state), b: this.shown(b, state) });
      return;
    }
    switch (ta) {
      case 'array': {
        const xa = a as Json[];
        const xb = b as Json[];
        const n = Math.min(xa.length, xb.length);
        for (let i = 0; i < n; i++) this.compare(xa[i]!, xb[i]!, `${path}/${i}`, this.ignore.step(state, String(i)));
        for (let i = n; i < xa.length; i++) this.only('a', xa[i]!, `${path}/${i}`, this.ignore.step(state, String(i)));
        for (let i = n; i < xb.length; i++) this.only('b', xb[i]!, `${path}/${i}`, this.ignore.step(state, String(i)));
        return;
      }
      case 'object': {
        const oa = a as JsonObject;
        const ob = b as JsonObject;
        // Members in UTF-16 code-unit order (the JCS order), so reports are deterministic.
        const keys = [...new Set([...Object.keys(oa), ...Object.keys(ob)])].sort(compareCodeUnits);
        for (const k of keys) {
          const p = `${path}/${escapeToken(k)}`;
          const s = this.ignore.step(state, k);
          const inA = Object.hasOwn(oa, k);
          const inB = Object.hasOwn(ob, k);
          if (inA && inB) this.compare(oa[k]!, ob[k]!, p, s);
          else if (inA) this.only('a', oa[k]!, p, s);
          else this.only('b', ob[k]!, p, s);
        }
        return;
      }
      case 'marker':
        if (!jsonEqual(a, b)) this.add({ path, kind: 'changed', a, b });
        return;
      default:
        // Scalars of one type that are not === : different strings, numbers or booleans.
        this.add({ path, kind: 'changed', a, b });
    }
  }

  /** A top-level field present on one side only. */
  field(side: 'a' | 'b', v: Json, path: string, state: PatternState): void {
    this.only(side, v, path, state);
  }
}

export function compareCodeUnits(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
