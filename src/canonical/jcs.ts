/**
 * RFC 8785 JSON Canonicalization Scheme. Serialization is the `canonicalize` package; every value is first
 * proven to be I-JSON by `assertIJson`, because the package coerces what it should refuse.
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
 * JCS text of a value already proven I-JSON (for example one that came out of the strict line parser).
 * Skips the validation walk; never pass user input here.
 */
export function canonicalJsonTrusted(value: unknown): string {
  return canonicalize(value) as string;
}
