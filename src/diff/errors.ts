/** The diff engine's errors (spec/DIFF.md §7): defined in pattern/, below every folder that compiles a pattern. */
export { DiffError, type DiffErrorCode } from '../pattern/errors.js';
