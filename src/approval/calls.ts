/**
 * How the approval check reads a call (spec/APPROVALS.md §5 step 3–§5 step 5): which markers leave a value out of hand,
 * and the comparable text of a call with part references as their addresses. Pure; runs in a browser.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

export const PART = '$stepchain:part';

/** Whether a value holds a reserved marker (withheld, chunks, part, erased). */
export function hasMarker(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => hasMarker(x, depth + 1));
  if (!isObj(v)) return false;
  for (const k of Object.keys(v)) if (k.startsWith('$stepchain:') || hasMarker(v[k], depth + 1)) return true;
  return false;
}

/**
 * Whether a value holds a marker other than a part reference (withheld, chunks, erased): its true value is
 * not in hand. A part reference is in hand: within a journal equal content has one address (PARTS.md §5).
 */
export function hasHidden(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => hasHidden(x, depth + 1));
  if (!isObj(v)) return false;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === PART) return !(isObj(v[PART]) && typeof v[PART].digest === 'string');
  for (const k of keys) if (k.startsWith('$stepchain:') || hasHidden(v[k], depth + 1)) return true;
  return false;
}

/**
 * A value with each part reference reduced to its address (private and public references alike); the value
 * itself, uncopied, where it holds none (every call of a v3 chain is read: most hold no reference).
 */
function addressed(v: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('too deep');
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = addressed(v[i], depth + 1);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return out ?? v;
  }
  if (!isObj(v)) return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === PART && isObj(v[PART])) return { [PART]: v[PART].digest };
  let out: Rec | null = null;
  for (const k of keys) {
    const x = addressed(v[k], depth + 1);
    if (x !== v[k]) (out ??= { ...v })[k] = x;
  }
  return out ?? v;
}

/** The canonical text of {arguments, name} with part references as addresses (APPROVALS.md §5 step 3), or null. */
export function callForm(name: unknown, args: unknown): string | null {
  try {
    // Trusted: parsed JSON; a part reference's reserved name is what is compared here.
    return canonicalJsonTrusted(addressed({ arguments: args, name }));
  } catch {
    return null;
  }
}

/** The tool_call members an effect may add to the presented call (APPROVALS.md §4); any other is a different call. */
export const EFFECT_EXTRA_MEMBERS = new Set(['name', 'arguments', 'call_id', 'idempotency_key']);
