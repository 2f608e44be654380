/**
 * The strict I-JSON gate that runs before canonicalization (spec/FORMAT.md §3.2). `canonicalize` 4.x
 * would silently turn a Map into {}, call toJSON, drop undefined members and recurse until the stack
 * overflows, so every value a writer hashes passes through here first and is refused, never coerced.
 */
import { CanonicalError, type CanonicalErrorCode } from './errors.js';
import { MAX_VALUE_DEPTH, RESERVED_PREFIX } from './limits.js';
import { toPointer } from './pointer.js';

export interface ValidateOptions {
  /** Maximum nesting depth (a scalar is 0, `[]` is 1). Default MAX_VALUE_DEPTH. */
  maxDepth?: number;
  /** Refuse member names that start with the reserved prefix. Default true. */
  refuseReserved?: boolean;
  /** Pointer tokens to prefix to error paths, e.g. ['tool_call']. */
  basePath?: readonly (string | number)[];
}

/** Throws CanonicalError (with a JSON Pointer to the bad value) unless `value` is I-JSON data. */
export function assertIJson(value: unknown, options: ValidateOptions = {}): void {
  const maxDepth = options.maxDepth ?? MAX_VALUE_DEPTH;
  const refuseReserved = options.refuseReserved ?? true;
  const path: (string | number)[] = [];
  const active = new Set<object>();

  const fail = (code: CanonicalErrorCode, what: string, hint?: string): never => {
    const pointer = toPointer([...(options.basePath ?? []), ...path]);
    throw new CanonicalError(code, `${what} at ${pointer === '' ? 'the root' : pointer}`, {
      location: { path: pointer },
      ...(hint === undefined ? {} : { hint }),
    });
  };

  const checkString = (s: string, role: 'value' | 'key'): void => {
    if (!s.isWellFormed()) {
      fail(
        'LONE_SURROGATE',
        `${role === 'key' ? 'member name' : 'string'} contains a lone UTF-16 surrogate`,
        'I-JSON strings must be valid Unicode; decode or escape binary data before recording it',
      );
    }
  };

  const walk = (v: unknown, depth: number): void => {
    switch (typeof v) {
      case 'string':
        checkString(v, 'value');
        return;
      case 'boolean':
        return;
      case 'number':
        if (!Number.isFinite(v))
          fail('NOT_FINITE_NUMBER', `${String(v)} is not a JSON number`, 'record it as a string or null');
        return;
      case 'object':
        break;
      case 'bigint':
        return fail('UNSUPPORTED_TYPE', 'a BigInt is not a JSON number', 'convert it to a string to keep every digit');
      default:
        return fail('UNSUPPORTED_TYPE', `a value of type ${typeof v} is not JSON`);
    }
    if (v === null) return;
    const obj = v;
    if (depth + 1 > maxDepth) fail('DEPTH_LIMIT', `nesting deeper than ${maxDepth} levels`);
    if (active.has(obj)) fail('CYCLE', 'a value contains itself');
    const proto: unknown = Object.getPrototypeOf(obj);
    if (Array.isArray(obj)) {
      if (proto !== Array.prototype) fail('NOT_PLAIN_OBJECT', 'an array subclass is not plain JSON data');
      active.add(obj);
      for (let i = 0; i < obj.length; i++) {
        path.push(i);
        if (!(i in obj)) fail('UNSUPPORTED_TYPE', 'an array hole is not JSON', 'fill it with null');
        walk(obj[i], depth + 1);
        path.pop();
      }
      active.delete(obj);
      return;
    }
    const notPlain = plainObjectDefect(obj, proto);
    if (notPlain) fail(...notPlain);
    active.add(obj);
    for (const key of Object.keys(obj)) {
      path.push(key);
      checkString(key, 'key');
      if (refuseReserved && key.startsWith(RESERVED_PREFIX)) {
        fail(
          'RESERVED_KEY',
          `member name ${JSON.stringify(key)} uses the reserved prefix "${RESERVED_PREFIX}"`,
          'rename the member; names with this prefix are stepchain markers',
        );
      }
      walk((obj as Record<string, unknown>)[key], depth + 1);
      path.pop();
    }
    active.delete(obj);
  };

  walk(value, 0);
}

/** Why an object that is not an array is not plain JSON data (a class instance, toJSON, symbol keys), or null. */
function plainObjectDefect(obj: object, proto: unknown): [CanonicalErrorCode, string, string?] | null {
  if (proto !== Object.prototype && proto !== null) {
    const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    const what =
      typeof name !== 'string' || name === ''
        ? 'an object with a custom prototype'
        : name === 'Object'
          ? 'an object whose prototype is not Object.prototype'
          : `a ${name}`;
    return [
      'NOT_PLAIN_OBJECT',
      `${what} is not plain JSON data`,
      'convert it to a plain object, array, string or number first',
    ];
  }
  if (typeof (obj as { toJSON?: unknown }).toJSON === 'function') {
    return [
      'NOT_PLAIN_OBJECT',
      'an object with a toJSON method is not plain JSON data',
      'call toJSON yourself and record the result',
    ];
  }
  if (Object.getOwnPropertySymbols(obj).length > 0) return ['UNSUPPORTED_TYPE', 'symbol-keyed members are not JSON'];
  return null;
}
