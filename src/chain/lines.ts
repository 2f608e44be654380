/**
 * Splitting a stream of bytes into lines (spec/FORMAT.md §4.4): at each 0x0A, with the final bytes after
 * the last newline a torn write. The one splitter every reader of stored lines uses — a bucket file, a
 * receipt's chain entry, a whole file in memory — so they agree on every edge. A line that lies within one
 * piece comes back as a view into it (valid while the caller keeps the piece); the start of a line that
 * continues into the next piece is copied, so a caller may reuse its buffer; a line longer than
 * `maxBytes` is not held at all, only measured. Pure.
 */
import { concatBytes } from '../bytes.js';

export interface SplitLine {
  /** The line without its newline; empty when `tooLong`. */
  bytes: Uint8Array;
  /** Whether a newline ended it; only the final line of a stream can lack one (a torn write). */
  terminated: boolean;
  /** Offset of the line's first byte, counted from the stream's `start`. */
  start: number;
  /** Offset just past its newline (or past its last byte when unterminated). */
  end: number;
  /** Set when the line is longer than `maxBytes`: `bytes` is then empty and only its length is known. */
  tooLong: boolean;
}

const EMPTY = new Uint8Array(0);

export class LineSplitter {
  private parts: Uint8Array[] = [];
  private held = 0;
  private tooLong = false;
  private pos: number;
  private lineStart: number;
  /** Complete (newline-terminated) lines so far. */
  lines = 0;

  constructor(
    private readonly maxBytes = Number.POSITIVE_INFINITY,
    start = 0,
  ) {
    this.pos = start;
    this.lineStart = start;
  }

  /**
   * Feeds a piece, calling `onLine` for each line it completes, in order, with the line's bytes (empty when
   * `tooLong`) and its offsets: no allocation per line beyond the view (the verifier's hot path).
   */
  split(piece: Uint8Array, onLine: (bytes: Uint8Array, tooLong: boolean, start: number, end: number) => void): void {
    const base = this.pos;
    let from = 0;
    let nl = piece.indexOf(0x0a);
    if (nl >= 0 && (this.held !== 0 || this.tooLong)) {
      // The line that began in an earlier piece ends here.
      const part = piece.subarray(0, nl);
      const tooLong = this.tooLong || this.held + part.length > this.maxBytes;
      const bytes = tooLong ? EMPTY : concatBytes([...this.parts, part]);
      const start = this.lineStart;
      this.parts = [];
      this.held = 0;
      this.tooLong = false;
      this.lines++;
      from = nl + 1;
      onLine(bytes, tooLong, start, base + from);
      nl = piece.indexOf(0x0a, from);
    }
    // Every other line lies within this piece: a view, and nothing else is allocated for it.
    const max = this.maxBytes;
    let lines = 0;
    while (nl >= 0) {
      const tooLong = nl - from > max;
      onLine(tooLong ? EMPTY : piece.subarray(from, nl), tooLong, base + from, base + nl + 1);
      lines++;
      from = nl + 1;
      nl = piece.indexOf(0x0a, from);
    }
    this.lines += lines;
    if (from > 0) this.lineStart = base + from;
    if (from < piece.length && !this.tooLong) {
      this.held += piece.length - from;
      if (this.held > max) {
        this.tooLong = true;
        this.parts = [];
      } else {
        // A copy: the caller may reuse the piece once split returns. Uint8Array's own slice, because a
        // Node Buffer's slice is a view, which a reused read buffer would overwrite.
        this.parts.push(Uint8Array.prototype.slice.call(piece, from));
      }
    }
    this.pos += piece.length;
  }

  /** The lines `piece` completes, in order, as objects (for a reader that hands them on in batches). */
  push(piece: Uint8Array): SplitLine[] {
    const out: SplitLine[] = [];
    this.split(piece, (bytes, tooLong, start, end) => void out.push({ bytes, terminated: true, start, end, tooLong }));
    return out;
  }

  /** The torn final line when the stream did not end with a newline, else null. */
  end(): SplitLine | null {
    if (this.pos === this.lineStart) return null;
    const bytes = this.tooLong ? EMPTY : this.parts.length === 1 ? this.parts[0]! : concatBytes(this.parts);
    const torn = { bytes, terminated: false, start: this.lineStart, end: this.pos, tooLong: this.tooLong };
    this.parts = [];
    this.held = 0;
    this.tooLong = false;
    this.lineStart = this.pos;
    return torn;
  }
}
