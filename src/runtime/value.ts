/**
 * One conversion from the values an agent holds to the I-JSON a journal records (spec/RUNS.md §4,
 * RFC 7493): Dates to ISO strings, BigInts to decimal strings, binary to a content-addressed bytes object,
 * Errors to {name, message, …}, Maps to objects, Sets to arrays, undefined members dropped at every level.
 * What has no faithful JSON form — a cycle, a function, a symbol, a non-finite number, an integer past
 * ±(2^53−1) — is refused with VALUE_UNREPRESENTABLE naming the field, never rounded or dropped. Pure.
 */
import { isObject, setMember, type Json, type JsonObject } from '../canonical/json.js';
import { digestBytes } from '../canonical/sha256.js';
import { RuntimeError } from './errors.js';

/**
 * A value an agent holds that toJournalValue converts (RUNS.md §4): JSON, and Dates, BigInts, binary,
 * Errors, Maps with string keys and Sets; undefined members are dropped. The run's calls take it, so the
 * compiler refuses a function or a symbol; what the type cannot say (a cycle, a non-finite number, an
 * integer past ±(2^53−1)) is still refused at run time with VALUE_UNREPRESENTABLE.
 */
export type JournalInput =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Date
  | Error
  | ArrayBuffer
  | ArrayBufferView
  | readonly JournalInput[]
  | ReadonlySet<JournalInput>
  | ReadonlyMap<string, JournalInput>
  | { readonly [key: string]: JournalInput };

/** Extra members of a record's meta, converted like every run value. */
export type RunMeta = Readonly<Record<string, JournalInput>>;

export interface JournalValueOptions {
  /** The field the value is for, as the error names it ("tool_call", "result"…). Default "value". */
  field?: string;
  /** Keep an Error's stack (default false: stacks carry paths and differ run to run, which diff would show). */
  errorStack?: boolean;
}

/** The JSON a Uint8Array, ArrayBuffer or typed-array view becomes: its digest, size and bytes. */
export interface BytesValue {
  type: 'bytes';
  digest: string;
  size: number;
  base64: string;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

function pointer(path: readonly (string | number)[]): string {
  return path.map((p) => '/' + String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

type Path = (string | number)[];

/** Where an outcome's value held something JSON cannot represent, and what: one entry of `meta.unrepresentable` (§11.6). */
export interface Unrepresentable {
  path: string;
  what: string;
}

/** The marker an unrepresentable part of an outcome is recorded as (§11.6): plain data, listed in meta.unrepresentable. */
export interface UnrepresentableMarker {
  unrepresentable: string;
}

/** One conversion: the field it is for, the options, and the objects being walked (to find cycles). */
class Converter {
  private readonly stack: object[] = [];
  /** Set when converting an outcome: each unrepresentable part is replaced by a marker and listed here. */
  readonly replaced: Unrepresentable[] | null;
  constructor(
    private readonly field: string,
    private readonly options: JournalValueOptions,
    lenient = false,
  ) {
    this.replaced = lenient ? [] : null;
  }

  fail(path: Path, what: string, hint: string): never {
    const at = pointer([this.field, ...path]);
    if (this.replaced !== null) throw new Replace(at, what);
    throw new RuntimeError('VALUE_UNREPRESENTABLE', `${at} is ${what}, which JSON cannot represent`, {
      location: { path: at },
      hint,
    });
  }

  /** walk, with an unrepresentable part replaced by its marker when lenient. */
  convert(v: unknown, path: Path): Json | undefined {
    if (this.replaced === null) return this.walk(v, path);
    try {
      return this.walk(v, path);
    } catch (e) {
      if (!(e instanceof Replace) || e.at !== pointer([this.field, ...path])) throw e;
      this.replaced.push({ path: e.at, what: e.what });
      return { unrepresentable: e.what };
    }
  }

  /** The JSON of v, or undefined where v is undefined (the member is dropped). */
  walk(v: unknown, path: Path): Json | undefined {
    switch (typeof v) {
      case 'undefined':
        return undefined;
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        if (!Number.isFinite(v)) return this.fail(path, `the number ${String(v)}`, 'record it as a string or null');
        if (Number.isInteger(v) && !Number.isSafeInteger(v)) {
          return this.fail(
            path,
            `the integer ${String(v)}, beyond ±(2^53−1) where JSON readers round (RFC 7493)`,
            'pass it as a BigInt or a string',
          );
        }
        return v;
      case 'bigint':
        return v.toString();
      case 'function':
        return this.fail(path, 'a function', 'record its name or its result instead');
      case 'symbol':
        return this.fail(path, 'a symbol', 'record its description as a string');
    }
    if (v === null) return null;
    const o = v as object;
    if (this.stack.includes(o))
      return this.fail(
        path,
        'a reference back to an enclosing value (a cycle)',
        'break the cycle, or record an id in its place',
      );
    if (o instanceof Date) {
      if (Number.isNaN(o.getTime())) return this.fail(path, 'an invalid Date', 'record a valid date or null');
      return o.toISOString();
    }
    if (o instanceof Uint8Array || o instanceof ArrayBuffer || ArrayBuffer.isView(o))
      return bytesValue(o) as unknown as Json;
    this.stack.push(o);
    try {
      return this.container(o, path);
    } finally {
      this.stack.pop();
    }
  }

  private container(o: object, path: Path): Json {
    if (Array.isArray(o)) return o.map((item, i) => this.convert(item, [...path, i]) ?? null);
    if (o instanceof Set) return [...o].map((item, i) => this.convert(item, [...path, i]) ?? null);
    if (o instanceof Map) {
      const out: Record<string, Json> = {};
      for (const [k, item] of o) {
        if (typeof k !== 'string')
          return this.fail(
            [...path, String(k)],
            'a Map with a key that is not a string',
            'convert the keys to strings first',
          );
        const w = this.convert(item, [...path, k]);
        if (w !== undefined) setMember(out, k, w);
      }
      return out;
    }
    if (o instanceof Error) return this.error(o, path);
    if (Object.getOwnPropertySymbols(o).length > 0) {
      const proto = Object.getPrototypeOf(o) as { constructor?: { name?: unknown } } | null;
      const cls =
        typeof proto?.constructor?.name === 'string' && proto.constructor.name !== 'Object'
          ? ` (an instance of ${proto.constructor.name})`
          : '';
      return this.fail(
        path,
        `an object with symbol-keyed members${cls}`,
        'copy the members you want into a plain object',
      );
    }
    const json = (o as { toJSON?: unknown }).toJSON;
    if (typeof json === 'function' && Object.getPrototypeOf(o) !== Object.prototype)
      return this.walk((json as () => unknown).call(o), path) ?? null;
    return this.members(o as Record<string, unknown>, Object.keys(o), path, {});
  }

  private members(
    o: Record<string, unknown>,
    keys: string[],
    path: Path,
    out: Record<string, Json>,
  ): Record<string, Json> {
    for (const k of keys) {
      const w = this.convert(o[k], [...path, k]);
      if (w !== undefined) setMember(out, k, w);
    }
    return out;
  }

  /** {name, message}, the error's own members (code, status…), its cause, and its stack when asked for. */
  private error(e: Error, path: Path): Json {
    const own = Object.keys(e).filter((k) => k !== 'name' && k !== 'message' && k !== 'stack');
    const out = this.members(e as unknown as Record<string, unknown>, own, path, { name: e.name, message: e.message });
    if (e.cause !== undefined && !('cause' in out)) {
      const w = this.convert(e.cause, [...path, 'cause']);
      if (w !== undefined) out.cause = w;
    }
    if (this.options.errorStack === true && typeof e.stack === 'string') out.stack = e.stack;
    return out;
  }
}

/** Thrown inside a lenient conversion, caught where the part it names is converted. */
class Replace {
  constructor(
    readonly at: string,
    readonly what: string,
  ) {}
}

function bytesValue(o: ArrayBuffer | ArrayBufferView): BytesValue {
  const bytes =
    o instanceof Uint8Array
      ? o
      : o instanceof ArrayBuffer
        ? new Uint8Array(o)
        : new Uint8Array(o.buffer, o.byteOffset, o.byteLength);
  return { type: 'bytes', digest: digestBytes(bytes), size: bytes.length, base64: base64(bytes) };
}

/**
 * Converts a value to what a journal records. A top-level undefined becomes null (an absent field);
 * an undefined array element becomes null, as in JSON.
 */
export function toJournalValue(value: unknown, options: JournalValueOptions = {}): Json {
  return new Converter(options.field ?? 'value', options).walk(value, []) ?? null;
}

/** toJournalValue of a record's meta: an object converts to an object. */
export function toJournalMeta(meta: Readonly<Record<string, unknown>>): JsonObject {
  const v = toJournalValue(meta, { field: 'meta' });
  if (isObject(v)) return v;
  throw new RuntimeError('VALUE_UNREPRESENTABLE', '/meta is not an object', { location: { path: '/meta' } });
}

/**
 * Converts an outcome — what a tool returned or threw, which happened whatever its value holds — by the
 * same rule, except that each part JSON cannot represent is replaced by `{"unrepresentable": what}` and
 * listed (JSON Pointer and what) for the record's `meta.unrepresentable` (§11.6), instead of refusing the
 * record. A caller keeps the real value; only the journal's copy holds markers.
 */
export function outcomeValue(value: unknown, field: string): { value: Json; unrepresentable: Unrepresentable[] } {
  const converter = new Converter(field, {}, true);
  const v = converter.convert(value, []) ?? null;
  return { value: v, unrepresentable: converter.replaced ?? [] };
}

/** An error (or anything thrown) as the `error` member of a failed record: an object with name and message. */
export function errorValue(error: unknown, options: JournalValueOptions = {}): Json {
  if (error instanceof Error) return toJournalValue(error, { field: 'error', ...options });
  const v = toJournalValue(error, { field: 'error', ...options });
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v;
  return { name: 'Error', message: typeof v === 'string' ? v : JSON.stringify(v) };
}
