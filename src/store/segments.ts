/**
 * Segment rotation (spec/FILE-STORE.md §5, RECEIPT.md §3.3): a line starts a new segment when the current one
 * is not empty and the line would take it past `segmentBytes`. Every store that numbers segments the same
 * way yields the same receipts; this is the one place the rule is written. Pure.
 */

export interface SegmentCursor {
  /** First seq of the segment the next line goes to (if it fits). */
  first: number;
  /** Bytes already in it. */
  size: number;
}

/**
 * Places a line of `bytes` (newline included) that gets `seq`: returns the cursor after it, whose `first`
 * is `seq` when the line opens a new segment.
 */
export function placeLine(cursor: SegmentCursor, seq: number, bytes: number, segmentBytes: number): SegmentCursor {
  if (cursor.size > 0 && cursor.size + bytes > segmentBytes) return { first: seq, size: bytes };
  return { first: cursor.first, size: cursor.size + bytes };
}

/**
 * A segment's label: its first seq as 16 decimal digits and ".jsonl" — the name FILE-STORE.md §5 gives a bucket
 * file. Stores without files use it too, so problem locations and receipts read alike from every store.
 */
export function segmentLabel(firstSeq: number): string {
  return `${String(firstSeq).padStart(16, '0')}.jsonl`;
}
