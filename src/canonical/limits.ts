/** Limits from spec/FORMAT.md §3.3 (depth), §3.4 (reserved names) and §4.2 (line length). Changing one changes the format. */

/** Writers refuse a content field or `meta` nested deeper than this (a scalar is depth 0). */
export const MAX_VALUE_DEPTH = 100;
/** Verifiers refuse a stored record nested deeper than this (the record object counts as 1). */
export const MAX_RECORD_DEPTH = 128;
/** Verifiers refuse a stored line longer than this many bytes, newline included. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Member names with this prefix belong to the format (markers); user data may not use them. */
export const RESERVED_PREFIX = '$stepchain:';
