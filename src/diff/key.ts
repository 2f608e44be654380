/**
 * The equality key of a projected step (spec/DIFF.md §5.1): a deterministic serialization in which two
 * I-JSON values get the same text exactly when they are equal (members sorted by UTF-16 code units, numbers
 * in ECMAScript form, so -0 and 0 agree). It is not JCS: it never leaves the engine, and measured on 600-byte
 * steps it is about 8x faster than canonicalize + SHA-256, which made those two 90% of a lockstep diff.
 * Keys longer than KEY_HASH_THRESHOLD are replaced by their SHA-256 so a window of huge steps stays small;
 * a serialized object starts with "{", a digest with "sha256:", so the two kinds never collide.
 *
 * It doubles as the gate for steps supplied as objects: it refuses what JSON cannot carry (non-finite
 * numbers, undefined, functions, class instances, cycles through the depth limit). Lone surrogates are
 * compared exactly rather than refused: diff reads runs, it does not vouch for them.
 */
import { toPointer } from '../canonical/pointer.js';
import { digestUtf8 } from '../canonical/sha256.js';

export const KEY_HASH_THRESHOLD = 4096;

export class KeyError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

export function equalityKey(value: unknown, maxDepth: number): string {
  const path: (string | number)[] = [];
  let text: string;
  try {
    text = isPlainObject(value) ? serializeMembers(value, maxDepth, path) : serialize(value, 0, maxDepth, path);
  } catch (e) {
    if (e instanceof KeyFailure) throw new KeyError(e.message, toPointer(path));
    throw e;
  }
  return text.length > KEY_HASH_THRESHOLD ? digestUtf8(text) : text;
}

/** Thrown inside the walk; the path is read from the token stack, which is left where the walk failed. */
class KeyFailure extends Error {}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * A projection's key, member by member. A member value whose objects already list their members in sorted
 * order — every value parsed from a canonical line — is left to the native JSON.stringify, which then
 * writes exactly what `serialize` would, in half the time (bench/: diff of identical runs); anything else
 * (unsorted members, integer-like names, values JSON cannot carry) takes the walk below.
 */
function serializeMembers(obj: Record<string, unknown>, maxDepth: number, path: (string | number)[]): string {
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = obj[k];
    if (i > 0) out += ',';
    path.push(k);
    out +=
      JSON.stringify(k) + ':' + (inSortedOrder(v, 1, maxDepth) ? JSON.stringify(v) : serialize(v, 1, maxDepth, path));
    path.pop();
  }
  return out + '}';
}

/** Whether JSON.stringify(v) equals serialize(v): plain JSON data, within the depth, members in sorted order. */
function inSortedOrder(v: unknown, depth: number, maxDepth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth >= maxDepth) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (!inSortedOrder(x, depth + 1, maxDepth)) return false;
    return true;
  }
  if (!isPlainObject(v)) return false;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && !(keys[i - 1]! < keys[i]!)) return false;
    if (!inSortedOrder(v[keys[i]!], depth + 1, maxDepth)) return false;
  }
  return true;
}

function serialize(v: unknown, depth: number, maxDepth: number, path: (string | number)[]): string {
  switch (typeof v) {
    case 'string':
      // JSON.stringify escapes a lone surrogate as \uXXXX (ES2019), so the key stays exact without a check.
      return JSON.stringify(v);
    case 'number':
      if (!Number.isFinite(v)) throw new KeyFailure(`${String(v)} is not a JSON number`);
      return JSON.stringify(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new KeyFailure(`a value of type ${typeof v} is not JSON`);
  }
  if (v === null) return 'null';
  if (depth >= maxDepth) throw new KeyFailure(`nesting deeper than ${maxDepth} levels`);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      path.push(i);
      out += serialize(v[i], depth + 1, maxDepth, path);
      path.pop();
    }
    return out + ']';
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw new KeyFailure('a non-plain object is not JSON data');
  const keys = Object.keys(v).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    path.push(k);
    if (i > 0) out += ',';
    out += JSON.stringify(k) + ':' + serialize((v as Record<string, unknown>)[k], depth + 1, maxDepth, path);
    path.pop();
  }
  return out + '}';
}

/**
 * Whether `a` and `b` are projections whose keys both exist and are equal, decided by walking them side by
 * side instead of serializing each. It answers yes only when it can vouch for both (plain JSON data within
 * the depth, members listed in the same order, as parsed lines of a canonical journal always are); any
 * doubt is a no, after which the caller compares keys, which also raise the I-JSON errors. So a yes here
 * implies equalityKey(a) === equalityKey(b) — test/diff/key.test.ts holds it to that.
 */
export function sameProjection(a: unknown, b: unknown, maxDepth: number): boolean {
  return isPlainObject(a) && isPlainObject(b) && sameMembers(a, b, 0, maxDepth);
}

function sameValue(a: unknown, b: unknown, depth: number, maxDepth: number): boolean {
  if (a === b) {
    switch (typeof a) {
      case 'string':
      case 'boolean':
        return true;
      case 'number':
        return Number.isFinite(a);
      case 'object':
        if (a === null) return true;
        break; // the same object on both sides still has to be checked
      default:
        return false;
    }
  }
  // Distinct primitives are unequal (0 and -0, which the key writes alike, are === above).
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (depth + 1 >= maxDepth) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i], depth + 1, maxDepth)) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  return sameMembers(a, b, depth + 1, maxDepth);
}

function sameMembers(a: Record<string, unknown>, b: Record<string, unknown>, depth: number, maxDepth: number): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameValue(a[k], b[k], depth, maxDepth)) return false;
  }
  return true;
}
