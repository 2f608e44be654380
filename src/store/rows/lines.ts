/**
 * What every store that keeps a journal as rows shares (spec/POSTGRES.md §4, spec/SQLITE.md §4): the head
 * row (the committed tail and the open bucket), a new line's row (its bucket by the shared rotation rule,
 * its step_id), and reading a stored row back as a record or a committed step. The SQL is each store's own;
 * the rules are written here once, so the Postgres and SQLite stores place, label and read lines alike.
 */
import { isDigest } from '../../canonical/sha256.js';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { formatOf, type Genesis } from '../../record/formats.js';
import { StoreError } from '../errors.js';
import type { CommittedStep } from '../idempotency.js';
import { checkRange } from '../ids.js';
import { blobSizeError } from '../restore.js';
import { placeLine, segmentLabel, type SegmentCursor } from '../segments.js';
import type { SequencedBatch } from '../sequencer.js';
import { copyPrefix, type CopiedPrefix } from '../fork.js';
import type { Journal } from '../types.js';

/** The head row: the committed tail and the open segment, read under the journal's lock by writers. */
export interface HeadRow {
  seq: number;
  hash: string;
  /** The open segment (its first seq, its bytes): where placeLine puts the next line. */
  cursor: SegmentCursor;
}

/** The head row as a writer locks it, with the tree's persisted state (tree_state.state), if any. */
export interface LockedHead extends HeadRow {
  tree: string | null;
}

/** A stored step row as a reader pages through them. */
export interface LineRow {
  seq: number;
  bucket: number;
  line: string;
  /** UTF-8 length of `line`. */
  bytes: number;
}

/** A step row about to be inserted. */
export interface NewLine {
  seq: number;
  bucket: number;
  stepId: string;
  text: string;
}

/** One page of rows in seq order from `from` (inclusive) to `to` (inclusive, or open-ended): how the shared readers read a store. */
export type PageReader = (from: number, to: number | null) => Promise<LineRow[]>;

/**
 * Gives each new line its row: the segment the shared rotation rule puts it in (so segment labels, and
 * therefore receipts, are the same whichever store wrote the lines) and its step_id; returns the new head row.
 */
export function placeLines(
  batch: SequencedBatch,
  head: HeadRow,
  segmentBytes: number,
): { lines: NewLine[]; tail: HeadRow } {
  const stepIds = new Map<number, string>();
  for (const [stepId, entry] of batch.entries) stepIds.set(entry.seq, stepId);
  let cursor = head.cursor;
  const lines: NewLine[] = [];
  for (const l of batch.lines) {
    // sequenceBatch's text ends with the newline, as the file store writes it; the row holds the line without it.
    cursor = placeLine(cursor, l.seq, Buffer.byteLength(l.text, 'utf8'), segmentBytes);
    lines.push({ seq: l.seq, bucket: cursor.first, stepId: stepIds.get(l.seq)!, text: l.text.slice(0, -1) });
  }
  const end = batch.lines[batch.lines.length - 1]!;
  return { lines, tail: { seq: end.seq, hash: end.hash, cursor } };
}

/** A stored line as an object; JOURNAL_CORRUPT when it is not one. */
export function parseLine(line: string, seq: number, where: string): Record<string, unknown> {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    throw corrupt(where, seq, 'the line is not JSON');
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec))
    throw corrupt(where, seq, 'the line is not a JSON object');
  return rec as Record<string, unknown>;
}

export function corrupt(where: string, seq: number, why: string): StoreError {
  return new StoreError('JOURNAL_CORRUPT', `${where} seq ${seq}: ${why}`, {
    location: { seq },
    hint: 'run verify on the journal to locate the damage',
  });
}

/**
 * The idempotency index's answer from rows found by step_id within the window (spec/FILE-STORE.md §10), in
 * seq order: of two steps with one step_id (a retry from past the window), the later one wins, as in the
 * file store.
 */
export function committedSteps(
  rows: readonly { seq: number; line: string }[],
  genesis: Genesis,
  where: string,
): Map<string, CommittedStep> {
  const found = new Map<string, CommittedStep>();
  for (const row of rows) {
    const rec = parseLine(row.line, row.seq, where);
    if (rec.seq !== row.seq || typeof rec.step_id !== 'string')
      throw corrupt(where, row.seq, `the row for seq ${row.seq} holds seq ${String(rec.seq)}`);
    const key = formatOf(genesis)
      .select((n) => rec[n])
      .recordKey(rec);
    found.set(rec.step_id, {
      seq: row.seq,
      step_hash: rec.step_hash as string,
      prev_hash: rec.prev_hash as string,
      key,
      ts: rec.ts as string,
    });
  }
  return found;
}

/** JOURNAL_CORRUPT for a primary key clash on steps: a row past the head row's seq, written around the lock. */
export function clashError(id: string, seq: number, cause: unknown): StoreError {
  return new StoreError(
    'JOURNAL_CORRUPT',
    `journal ${id}: seq ${seq} is already taken although the head row says the chain ends before it; refusing to append`,
    {
      location: { seq },
      hint: 'something wrote steps without the store; run verify on the journal',
      cause,
    },
  );
}

/**
 * Lines `from`..`to` as texts, page by page, read in the writer's own transaction under the journal's lock: what
 * a batch's `unlessAfter` groups read (sequencer.ts linesSince). Stops short where a row is missing.
 */
export async function* rowTexts(page: PageReader, from: number, to: number): AsyncGenerator<string> {
  for (let next = from; next <= to;) {
    const rows = await page(next, to);
    if (rows.length === 0) return;
    for (const row of rows) {
      if (row.seq !== next) return;
      yield row.line;
      next++;
    }
  }
}

/**
 * A journal's stored lines over `range`, page by page, in seq order; a missing row is JOURNAL_CORRUPT (a reader
 * never returns a shorter chain). Without an end, up to the head `headSeq` reads at the start, as the file store
 * reads (outsider H: paging to the first empty page, a reader followed a journal appended to faster than it read,
 * and an export or erasure of it ran until the appends stopped).
 */
export async function* rowLines(
  page: PageReader,
  range: SeqRange | undefined,
  where: string,
  headSeq?: () => Promise<number | null>,
): AsyncGenerator<StoredLine> {
  const checked = checkRange(range);
  const from = checked.from;
  if (checked.to === undefined && headSeq === undefined)
    throw new Error('rowLines: a read without an end needs the head');
  const to = checked.to ?? (await headSeq!());
  if (to === null || from > to) return;
  let next = from;
  for (;;) {
    const rows = await page(next, to);
    for (const row of rows) {
      if (row.seq !== next)
        throw corrupt(where, next, `the row for seq ${next} is missing (the next row is seq ${row.seq})`);
      yield { segment: segmentLabel(row.bucket), seq: row.seq, text: row.line };
      next++;
    }
    if (rows.length === 0 || next > to) return;
  }
}

/** The chain's head from the journal's last row (null: no step). */
export function headOfRow(row: { seq: number; line: string } | null, where: string): ChainHead | null {
  if (row === null) return null;
  const hash = parseLine(row.line, row.seq, where).step_hash;
  if (typeof hash !== 'string' || !isDigest(hash)) throw corrupt(where, row.seq, 'its step_hash is not a digest');
  return { seq: row.seq, step_hash: hash };
}

/** A blob as a row store found it (`bytes` null: another size than asked, left unread): its bytes, null when absent, or the size error. */
export function blobOfRow(
  found: { size: number; bytes: Uint8Array | null } | null,
  digest: string,
  size: number | undefined,
  where: string,
): Uint8Array | null {
  if (found === null) return null;
  if (found.bytes === null || (size !== undefined && found.size !== size))
    throw blobSizeError(where, digest, found.size, size ?? found.size);
  return found.bytes;
}

/** Where a fork into a rows store puts the parent's prefix: its lines in rows, a page at a time, its blobs and parts. */
export interface PrefixRows {
  insert(lines: NewLine[]): Promise<void> | void;
  blob(digest: string, bytes: Uint8Array): Promise<void> | void;
  part(address: string, bytes: Uint8Array): Promise<void> | void;
}

/** How many copied rows a fork inserts at once. */
const FORK_PAGE_ROWS = 1000;

/**
 * Copies the parent's steps 0..fromStep into `rows` (store/fork.ts copyPrefix: verified as they stream past),
 * each line placed by the shared rotation rule; returns the copied prefix and the open segment after it.
 */
export async function copyPrefixRows(
  parent: Journal,
  fromStep: number,
  segmentBytes: number,
  rows: PrefixRows,
): Promise<CopiedPrefix & { cursor: SegmentCursor }> {
  let pending: NewLine[] = [];
  let cursor: SegmentCursor = { first: 0, size: 0 };
  const copied = await copyPrefix(parent, fromStep, {
    line: async (text, seq) => {
      cursor = placeLine(cursor, seq, Buffer.byteLength(text, 'utf8') + 1, segmentBytes);
      pending.push({ seq, bucket: cursor.first, stepId: (JSON.parse(text) as { step_id: string }).step_id, text });
      if (pending.length >= FORK_PAGE_ROWS) {
        await rows.insert(pending);
        pending = [];
      }
    },
    blob: (digest, bytes) => rows.blob(digest, bytes),
    part: (address, bytes) => rows.part(address, bytes),
  });
  await rows.insert(pending);
  return { ...copied, cursor };
}
