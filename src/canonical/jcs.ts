/**
 * RFC 8785 JSON Canonicalization Scheme. `canonicalJson` is the `canonicalize` package behind the strict
 * I-JSON gate (`assertIJson`), because the package coerces what it should refuse; the writer's hot path
 * uses `canonicalJsonTrusted` on values it has already validated, proven identical to the package.
 */
import canonicalize from 'canonicalize';
import { assertIJson, type ValidateOptions } from './validate.js';

/** JCS text of `value`; throws CanonicalError for anything that is not I-JSON data. */
export function canonicalJson(value: unknown, options?: ValidateOptions): string {
  assertIJson(value, options);
  return canonicalize(value) as string;
}

const encoder = new TextEncoder();

export function canonicalBytes(value: unknown, options?: ValidateOptions): Uint8Array {
  return encoder.encode(canonicalJson(value, options));
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
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0) out += ',';
    out += JSON.stringify(key) + ':' + canonicalJsonTrusted(obj[key]);
  }
  return out + '}';
}
