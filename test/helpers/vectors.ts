/**
 * Loads golden vectors from vectors/. Every test that consumes a vector file calls loadVectors with the
 * file's name as a string literal: test/vectors-coverage.test.ts reads the test sources for those calls
 * and fails the suite when a vector file is consumed by no test.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const VECTORS_DIR = fileURLToPath(new URL('../../vectors/', import.meta.url));

export interface VectorFile<Case> {
  format: string;
  kind: string;
  description: string;
  cases: Case[];
  [extra: string]: unknown;
}

export function loadVectors<Case = Record<string, unknown>>(name: string): VectorFile<Case> {
  const doc = JSON.parse(readFileSync(VECTORS_DIR + name, 'utf8')) as VectorFile<Case>;
  if (doc.format !== 'stepchain-vectors/v1' || !Array.isArray(doc.cases)) {
    throw new Error(`${name} is not a stepchain-vectors/v1 file`);
  }
  return doc;
}

/** Decodes a vector's byte payload: "text" (UTF-8) or "base64". */
export function vectorBytes(v: { text?: string; base64?: string }): Uint8Array {
  if (typeof v.base64 === 'string') return new Uint8Array(Buffer.from(v.base64, 'base64'));
  return new TextEncoder().encode(v.text ?? '');
}
