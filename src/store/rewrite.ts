/**
 * Rewriting one stored line in place, the one exception to "a stored line never changes" (spec/ERASURE.md
 * §4, §6): an erasure replaces a stepchain/v3 record by its sealed form, whose step hash is the same. The
 * database stores do it in one transaction under their writer lock; the file store by atomic replacement
 * of a bucket (src/erase/file.ts).
 */

/** The replacement of a stored line, and the part addresses the old line referenced that the new one no longer does. */
export interface LineRewrite {
  line: string;
  parts: readonly string[];
  /** Called once the row is updated and the parts deleted, before COMMIT (a test's crash point). */
  beforeCommit?: () => void;
}

export interface RewriteOutcome {
  /** Part addresses deleted (with their dedupe-index entries) because no line and no other part references them. */
  partsDeleted: string[];
  /**
   * SQLite: whether the WAL was checkpointed and truncated after the commit, so no page image of the old
   * line remains in the -wal file (false: another connection was reading; the next checkpoint does it).
   */
  walTruncated?: boolean;
}

/** A journal that can replace one stored line under its writer lock (the SQLite and Postgres journals). */
export interface LineRewriter {
  /**
   * In one transaction under the writer lock: `rewrite` gets the line of `seq` as stored and returns its
   * replacement (or null: leave it, nothing to do); the row is updated, and the parts it named that nothing
   * references any more are deleted. Returns null when `rewrite` did, or when there is no line at `seq`.
   */
  rewriteLine(seq: number, rewrite: (line: string) => LineRewrite | null): Promise<RewriteOutcome | null>;
}

/** Whether a journal can rewrite a line in place. */
export function isLineRewriter(j: unknown): j is LineRewriter {
  return typeof (j as Partial<LineRewriter> | null)?.rewriteLine === 'function';
}

/** How a line or part references a part (PARTS.md: `{"$stepchain:part":{"digest":A,…}}`): the text searched for. */
export function partReferenceText(address: string): string {
  return `"digest":"${address}"`;
}
