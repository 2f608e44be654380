/**
 * Runs LangGraph's official checkpointer conformance suite (`@langchain/langgraph-checkpoint-validation`)
 * against the stepchain checkpointer on a given store. Each store that can hold threads plugs in with one
 * call: `validateOn('file store', () => new FileStore(dir))`. The suite's spec files use vitest's globals
 * without importing them, and this project runs vitest without `globals: true`, so they are exposed here.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } from 'vitest';
import {
  deltaChannelHistoryTests,
  validate,
  type CheckpointSaverTestInitializer,
} from '@langchain/langgraph-checkpoint-validation';
import type { Store } from '../../../src/journal.js';
import { StepchainSaver } from '../../../src/adapters/langgraph/index.js';

Object.assign(globalThis, { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach });

export function validateOn(storeName: string, makeStore: () => Store | Promise<Store>): void {
  const initializer: CheckpointSaverTestInitializer<StepchainSaver> = {
    // Any name but "MemorySaver": the suite then also runs the test that channel values are stored per version.
    checkpointerName: `StepchainSaver (${storeName})`,
    createCheckpointer: async () => new StepchainSaver({ store: await makeStore() }),
    destroyCheckpointer: async (saver) => saver.close(),
  };
  validate(initializer);
  // Opt-in in the package (not part of validate): the history LangGraph's delta channels read through getTuple.
  deltaChannelHistoryTests(initializer);
}
