/**
 * `stepchain show --parts` and `--save-part` (spec/PARTS.md): the parts a stepchain/v3 step references —
 * in its slots and, transitively, inside its parts — each fetched and checked as every reader does, listed
 * by the JSON Pointer where it stands in the step as `show` prints it; and one part's value written to a
 * file: a media part as its raw bytes, any other as its canonical JSON. Nothing from content reaches the
 * terminal unsanitized; the saved file holds the bytes as they are.
 */
import { writeFile } from 'node:fs/promises';
import { canonicalJson } from '../canonical/jcs.js';
import type { Journal, Json } from '../index.js';
import type { PartReader } from '../record/v3/part-reader.js';
import { partRefsIn, type PartRef } from '../record/v3/parts.js';
import { nonRegularTarget } from '../receipt/node.js';
import { PART_SLOTS, type JournalParts } from '../store/parts-prepare.js';
import { UsageError } from './cli.js';

export interface PartRow {
  /** Where the part stands in the step (its value replaces the reference there). */
  path: string;
  address: string;
  kind: 'value' | 'list' | 'media';
  media_type: string | null;
  /** The part file's length. */
  bytes: number;
}

function partsOf(journal: Journal): JournalParts {
  const parts = (journal as { parts?: JournalParts | null }).parts;
  if (parts === undefined || parts === null)
    throw new UsageError(
      'this journal holds no parts: parts are stored by stepchain/v3 journals (a directory or memory)',
      'show',
    );
  return parts;
}

/** The step's parts, in the order a walk of its slots meets them (each address once). */
export async function stepParts(
  journal: Journal,
  seq: number,
): Promise<{ rows: PartRow[]; reader: PartReader; refs: Map<string, PartRef> }> {
  const reader = partsOf(journal).reader();
  let text: string | null = null;
  for await (const l of journal.lines({ from: seq, to: seq })) text = l.text;
  if (text === null) throw new UsageError(`no step ${seq}`, 'show');
  const record = JSON.parse(text) as Record<string, Json>;
  const rows: PartRow[] = [];
  const refs = new Map<string, PartRef>();
  const seen = new Set<string>();
  const queue: { ref: PartRef; path: string }[] = [];
  for (const slot of PART_SLOTS) {
    const v = record[slot];
    if (v !== null && typeof v === 'object') queue.push(...partRefsIn(v, `/${slot}`));
  }
  while (queue.length > 0) {
    const { ref, path } = queue.shift()!;
    if (seen.has(ref.digest)) continue;
    seen.add(ref.digest);
    const { file, value } = await reader.shallow(ref, { seq, path });
    rows.push({
      path,
      address: ref.digest,
      kind: file.kind,
      media_type: file.kind === 'media' ? file.mediaType : null,
      bytes: ref.size,
    });
    refs.set(path, ref);
    if (file.kind !== 'media') queue.push(...partRefsIn(value, path));
  }
  return { rows, reader, refs };
}

/** Writes the part at `path` (as stepParts lists it) to `out`; returns what was written. */
export async function savePart(
  journal: Journal,
  seq: number,
  path: string,
  out: string,
): Promise<{ row: PartRow; bytes: number }> {
  const { rows, reader, refs } = await stepParts(journal, seq);
  const row = rows.find((r) => r.path === path);
  const ref = refs.get(path);
  if (row === undefined || ref === undefined) {
    throw new UsageError(
      `step ${seq} has no part at ${JSON.stringify(path)}; its parts stand at ${rows.length === 0 ? '(none)' : rows.map((r) => JSON.stringify(r.path)).join(', ')} (see show --parts)`,
      'show',
    );
  }
  const kind = await nonRegularTarget(out);
  if (kind !== null) throw new UsageError(`cannot write ${out}: it is ${kind}, not a regular file`, 'show');
  const { file } = await reader.shallow(ref, { seq, path });
  const bytes =
    file.kind === 'media' ? file.raw : new TextEncoder().encode(canonicalJson(await reader.value(ref, { seq, path })));
  await writeFile(out, bytes);
  return { row, bytes: bytes.length };
}
