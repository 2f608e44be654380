/**
 * The store conformance suite (spec/FILE-STORE.md §3–§15 as the `Store` and `Journal` contract of
 * src/store/types.ts states them): what any caller can observe through a store — ids, appends and their
 * refusals, appending after a known seq, idempotent retry, blobs, ranges, forks, removal, and a property
 * that whatever is appended reads back equal and verifies. stepchain's own stores (memory, file, Postgres,
 * SQLite) run it in test/store/conformance.test.ts; a third-party store runs the same cases to prove itself.
 *
 * The suite registers its cases through the `describe` and `test` it is given, so it runs under any runner
 * whose functions take a name and a body (vitest, Jest, Mocha, node:test); it asserts with node:assert, which
 * every such runner reports as a failure. fast-check (an optional peer dependency of `stepchain/testing`)
 * drives the property.
 */
import type { Store } from '../store/types.js';
import type { ConformanceRunner, ConformanceStoreOptions } from './store-kit.js';
import { writeCases } from './store-cases-write.js';
import { readCases } from './store-cases-read.js';

export type { ConformanceRunner, ConformanceStoreOptions } from './store-kit.js';

export interface StoreConformanceOptions extends ConformanceRunner {
  /**
   * A new, empty store each call, built with the options given. The suite never closes a store: a store
   * that holds connections or files is released by the caller after the run (an `afterAll`).
   */
  makeStore(options: ConformanceStoreOptions): Store;
  /** Runs of the read-back property (default 25: each run creates a journal of up to 8 steps). */
  numRuns?: number;
}

/**
 * Registers the conformance cases, grouped by the contract's sections, with the runner given. Call it
 * inside a `describe` of your own to name the store under test.
 */
export function storeConformance(options: StoreConformanceOptions): void {
  const { describe, test, makeStore } = options;
  const ctx = { test, make: (o: ConformanceStoreOptions = {}) => makeStore(o), numRuns: options.numRuns ?? 25 };
  for (const [name, register] of [...writeCases, ...readCases]) describe(name, () => register(ctx));
}
