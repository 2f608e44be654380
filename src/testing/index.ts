/**
 * stepchain/testing: the replay-testing kit (spec/DIFF.md §8). Compare a replay with a recorded run in
 * any test framework, and generate runs and replay variants for property tests with fast-check (an
 * optional peer dependency, needed only by the arbitraries).
 */
export { expectSameRun, RunMismatchError } from './expect.js';
export { sealRun, sealRunLazily, stepContent, type SealRunOptions } from './run.js';
export {
  jsonValue,
  jsonKey,
  jsonString,
  jsonNumber,
  jsonScalar,
  prompt,
  model,
  toolCall,
  result,
  step,
  steps,
  run,
  replayVariant,
  contentKey,
  type JsonValueOptions,
  type StepsOptions,
  type ReplayKind,
  type ReplayVariant,
  type ReplayOptions,
  type ExpectedDivergence,
} from './arbitraries.js';
export {
  diff,
  summarize,
  formatDiff,
  patternFor,
  DiffError,
  type DiffOptions,
  type DiffReport,
  type Divergence,
  type FieldDiff,
} from '../diff/index.js';
export {
  storeConformance,
  type StoreConformanceOptions,
  type ConformanceRunner,
  type ConformanceStoreOptions,
} from './store-conformance.js';
