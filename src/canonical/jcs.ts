/**
 * RFC 8785 JSON Canonicalization Scheme. `canonicalJson` is the `canonicalize` package behind the strict
 * I-JSON gate (`assertIJson`), because the package coerces what it should refuse; the writer's hot path
 * uses `canonicalJsonTrusted` on values it has already validated, proven identical to the package.
 */
import canonicalize from 'canonicalize';
import { MAX_VALUE_DEPTH, RESERVED_PREFIX } from './limits.js';
import { assertIJson, type ValidateOptions } from './validate.js';

/** JCS text of `value`; throws CanonicalError for anything that is not I-JSON data. */
export function canonicalJson(value: unknown, options?: ValidateOptions): string {
  assertIJson(value, options);
  return canonicalize(value)!;
}

const encoder = new TextEncoder();

export function canonicalBytes(value: unknown, options?: ValidateOptions): Uint8Array {
  return encoder.encode(canonicalJson(value, options));
}

/** Characters JSON.stringify escapes in a well-formed string; without any, quoting is all it does. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

/** JSON.stringify of a well-formed string, without the call when there is nothing to escape (most text). */
function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : '"' + s + '"';
}

/** A member's text before its value: `"name":` for an object's first member, `,"name":` for the others. */
interface MemberHead {
  first: string;
  next: string;
}

/**
 * Member names repeat from step to step (an agent's objects have a fixed vocabulary), so the text before
 * each member's value is remembered whole: the writer's profile spent a fifth of serialization quoting the
 * same few names, and building `,` + name + `:` per member made three strings where one lookup now gives
 * the finished piece. Bounded; cleared when full so that it follows the names in use.
 */
const memberHeads = new Map<string, MemberHead>();
const MAX_QUOTED_NAMES = 2048;
const MAX_QUOTED_NAME_LENGTH = 64;

function memberHead(name: string): MemberHead {
  let head = memberHeads.get(name);
  if (head === undefined) {
    const first = quote(name) + ':';
    head = { first, next: ',' + first };
    if (name.length <= MAX_QUOTED_NAME_LENGTH) {
      if (memberHeads.size >= MAX_QUOTED_NAMES) memberHeads.clear();
      memberHeads.set(name, head);
    }
  }
  return head;
}

/** Up to this many members are put in order by insertion; a larger object by the engine's sort. */
const INSERTION_SORT_MAX = 24;

/**
 * Object.keys in UTF-16 order (`<` on strings compares code units, as the default sort does); an object
 * already in that order (any value parsed from a canonical line) is not sorted again. A caller's small
 * objects are put in order in place by insertion: Array.prototype.sort allocates its work state on every
 * call, 30% of the bytes appendMany allocated per step, and the walk took 8.2 µs per step with it against
 * 6.7 µs without (measured on bench/'s steps, whose objects are out of order like most callers').
 */
function sortedKeys(obj: object): string[] {
  const keys = Object.keys(obj);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) return keys.length > INSERTION_SORT_MAX ? keys.sort() : insertionSort(keys, i);
  }
  return keys;
}

/** Sorts `keys` in place, its first `from` already in order. Member names are unique, so no two compare equal. */
function insertionSort(keys: string[], from: number): string[] {
  for (let i = from; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * JCS text of a value already proven I-JSON (by `assertIJson`, or because it came out of the strict line
 * parser). Never pass unchecked input here: it does not refuse what JSON cannot carry.
 *
 * RFC 8785 §3.2.2 serializes strings, numbers and literals exactly as ECMAScript's JSON.stringify does;
 * what JCS adds is the member order (UTF-16 code units, which is what the default sort compares). Once a
 * value is validated, nothing else differs, so this walk sorts members and leaves the rest to the native
 * JSON.stringify: about 2.5× `canonicalize` on bench/'s steps, and it is the writer's hot path. The
 * library stays the reference: test/canonical/trusted.test.ts proves the two byte-identical on every
 * vector and on generated values (integer-like member names, surrogate pairs, -0, deep nesting).
 */
export function canonicalJsonTrusted(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += canonicalJsonTrusted(value[i]);
    }
    return out + ']';
  }
  const obj = value as Record<string, unknown>;
  const keys = sortedKeys(obj);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const head = memberHead(key);
    out += i === 0 ? head.first : head.next;
    out += canonicalJsonTrusted(obj[key]);
  }
  return out + '}';
}

/**
 * What `canonicalJson` returns and throws, in one walk instead of two: the writer's hot path. The walk
 * validates and serializes together and gives up at the first thing it cannot vouch for (a defect, but
 * also anything unusual: a null prototype, a depth at the limit, which is how it stops on a cycle); the
 * reference path then runs, so every error is the reference gate's own error with its exact pointer.
 * test/canonical/checked.test.ts holds the two paths to the same text or the same error on hostile values.
 */
export function canonicalJsonChecked(value: unknown, options: ValidateOptions = {}): string {
  const text = fastCanonical(value, 0, options.maxDepth ?? MAX_VALUE_DEPTH, options.refuseReserved ?? true);
  return text ?? canonicalJson(value, options);
}

/** JCS text of `value`, or undefined as soon as anything about it needs the reference gate's judgement. */
function fastCanonical(value: unknown, depth: number, maxDepth: number, refuseReserved: boolean): string | undefined {
  switch (typeof value) {
    case 'string':
      return value.isWellFormed() ? quote(value) : undefined;
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (depth + 1 > maxDepth) return undefined;
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return undefined;
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return undefined;
      const item = fastCanonical(value[i], depth + 1, maxDepth, refuseReserved);
      if (item === undefined) return undefined;
      out += i === 0 ? item : ',' + item;
    }
    return out + ']';
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
  const obj = value as Record<string, unknown>;
  if (typeof obj.toJSON === 'function' || Object.getOwnPropertySymbols(obj).length > 0) return undefined;
  const keys = sortedKeys(obj);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!key.isWellFormed() || (refuseReserved && key.startsWith(RESERVED_PREFIX))) return undefined;
    const member = fastCanonical(obj[key], depth + 1, maxDepth, refuseReserved);
    if (member === undefined) return undefined;
    const head = memberHead(key);
    out += i === 0 ? head.first : head.next;
    out += member;
  }
  return out + '}';
}
