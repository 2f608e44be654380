/**
 * What the store conformance suite's cases share (store-conformance.ts): the runner's two functions, the
 * store options a case may ask for, and small readers of what a call did.
 */
import { strict as assert } from 'node:assert';
import type { Store } from '../store/types.js';

/** The store options a case may ask for; a store built for the suite must honour each one given. */
export interface ConformanceStoreOptions {
  /** A value whose canonical JSON is at least this many bytes is stored as a blob (FILE-STORE.md §6). */
  blobThreshold?: number;
  /** A segment (bucket) is closed once it holds this many bytes (FILE-STORE.md §5). */
  segmentBytes?: number;
  /** How many recent steps an idempotent retry is guaranteed within (FILE-STORE.md §10). */
  idempotencyWindow?: number;
}

/** The two registration functions of a test runner: `describe(name, body)` and `test(name, body)`. */
export interface ConformanceRunner {
  describe(name: string, body: () => void): unknown;
  test(name: string, body: () => Promise<void>): unknown;
}

/** What each group of cases is given. */
export interface CaseContext {
  test: ConformanceRunner['test'];
  make(options?: ConformanceStoreOptions): Store;
  numRuns: number;
}

export type CaseGroup = readonly [name: string, register: (ctx: CaseContext) => void];

/** The `code` a promise rejects with (or the error as text), or 'no error' when it resolves. */
export async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
  return 'no error';
}

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(
  p: Promise<unknown>,
): Promise<{ code?: string; message: string; location?: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string; location?: Record<string, unknown> };
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Everything an async iterable yields, in order. */
export async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Each member of `expected` is deep-equal to the same member of `actual` (other members are not compared). */
export function hasMembers(actual: unknown, expected: Record<string, unknown>): void {
  assert.ok(typeof actual === 'object' && actual !== null, 'expected an object');
  for (const [k, v] of Object.entries(expected)) assert.deepStrictEqual((actual as Record<string, unknown>)[k], v, k);
}

/** 0, 1, … n-1. */
export const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
