/** The divergence diff engine (spec/DIFF.md). Pure: no node:* imports, runs in a browser. */
export {
  diff,
  isRunJournal,
  DIFF_FORMAT,
  DEFAULT_FIELDS,
  ENVELOPE_DIFF_FIELDS,
  type DiffOptions,
  type DiffReport,
  type Divergence,
  type ChangedStep,
  type InsertedStep,
  type DeletedStep,
} from './diff.js';
export { DiffError, type DiffErrorCode } from './errors.js';
export { summarize, formatDiff, describeField, dottedPath, shorten, type SummaryOptions } from './summary.js';
export { compilePattern, patternFor } from '../pattern/pattern.js';
export type { FieldDiff, FieldChangeKind } from './values.js';
export type { RunInput } from './run.js';
export { VOLATILE_PATTERNS } from './volatile.js';
export { FieldCollector, prune, PRUNED } from './values.js';
export { IgnoreSet } from '../pattern/pattern.js';
