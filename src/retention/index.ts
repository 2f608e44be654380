/** Retention (spec/RETENTION.md): pruning expired runs whole, and the tombstones they leave. */
export {
  prune,
  readTombstones,
  verifiedTombstones,
  TOMBSTONE_JOURNAL,
  type PruneOptions,
  type PruneResult,
  type RetentionPolicy,
} from './prune.js';
export {
  checkTombstone,
  tombstoneDefect,
  TOMBSTONE_FORMAT,
  type Tombstone,
  type TombstoneCheck,
  type TombstoneProblem,
  type TombstoneProblemCode,
  type RetentionBasis,
} from './tombstone.js';
