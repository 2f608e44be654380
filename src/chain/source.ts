/**
 * The read-only view of a chain that receipts, diff and the CLI consume. Every store and a receipt being
 * verified provide it, so none of those consumers knows where steps live.
 */
import type { Genesis } from '../record/formats.js';

export interface StoredLine {
  /**
   * The segment the line lives in: an opaque label (a journal's bucket file, a receipt's chain entry, a
   * database's range). Readers use it in locations; a receipt starts a new chain entry where it changes.
   */
  segment: string;
  seq: number;
  /** The stored line exactly as written, without its newline: JCS of the sealed record. */
  text: string;
}

export interface ChainHead {
  seq: number;
  step_hash: string;
}

export interface SeqRange {
  /** First seq, inclusive (default 0). */
  from?: number;
  /** Last seq, inclusive (default the head). */
  to?: number;
}

export interface ChainSource {
  readonly genesis: Genesis;
  head(): Promise<ChainHead | null>;
  /**
   * Stored lines in seq order; memory bounded by the longest line. Without `range.to`, up to the head when the
   * read began: a journal appended to meanwhile is read to where it stood, never followed.
   */
  lines(range?: SeqRange): AsyncIterable<StoredLine>;
  /** A blob's canonical bytes by digest ("sha256:<hex>"), or null when the store does not hold it. */
  blob(digest: string): Promise<Uint8Array | null>;
  /**
   * Runs `fn` while no step can be appended to the chain (a file journal: under its lock). A copy's last check
   * for erasure records and the moment its output is put in place run so (spec/ERASURE.md §4.1); a source
   * without it is checked just before, without the hold.
   */
  holdingAppends?<T>(fn: () => Promise<T>): Promise<T>;
}

/** Runs `fn` with the source's appends held when it can hold them (ChainSource.holdingAppends); else just runs it. */
export function withAppendsHeld<T>(source: ChainSource, fn: () => Promise<T>): Promise<T> {
  return source.holdingAppends === undefined ? fn() : source.holdingAppends(fn);
}
