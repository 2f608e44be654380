/**
 * The volatile members of a run journal's records (spec/REPLAY.md §4): values that differ between two
 * identical runs of one agent — the step id an outcome's `ref` names, provider response times and ids,
 * durations and latencies a recorder keeps in `meta`. The envelope (step_id, ts) is never compared by
 * default; these are the content members that behave like it. One list, used by `diff` on run journals
 * and by replay's matching key, so "same" means the same thing in both.
 */
export const VOLATILE_PATTERNS: readonly string[] = [
  '/ref',
  '/meta/duration_ms',
  '/meta/latency_ms',
  '/meta/time_to_first_token_ms',
  '/meta/started_at',
  '/meta/ended_at',
  '/meta/timestamp',
  '/result/response/timestamp',
  '/result/response/id',
  '/result/responseId',
];
