/**
 * A receipt writer's pass over parts (spec/RECEIPT.md, PARTS.md §9): every part the range's records reach,
 * fetched and checked once each, for the manifest's listing. The verifier's side is parts.ts. Pure.
 */
import type { StoredLine } from '../chain/source.js';
import { tooDeepFrom } from '../record/v3/part-depth.js';
import { PartReader } from '../record/v3/part-reader.js';
import { innerRefsAt } from '../record/v3/part-places.js';
import { PartError, type PartRef, type PartSource } from '../record/v3/parts.js';
import { ReceiptError } from './errors.js';
import { lineRefs, type PartEntry } from './parts.js';

const VERIFY_FIRST =
  'run `stepchain verify` on the journal; a receipt is only written for a journal whose parts verify';

/**
 * The writer's pass: every part the range's records reach, each fetched and checked once (size, file
 * digest, shape), sorted by address. A missing or damaged part stops the export: a receipt is only
 * written for a journal that verifies.
 */
export async function collectParts(
  lines: AsyncIterable<StoredLine>,
  from: number,
  to: number,
  source: PartSource,
): Promise<PartEntry[]> {
  const reader = new PartReader(source);
  const found = new Map<string, PartEntry>();
  const depths = new Map<string, number>();
  const lengths = new Map<string, number>();
  for await (const line of lines) {
    if (line.seq < from) continue;
    if (line.seq > to) break;
    for (const { ref, path } of lineRefs(line.text)) {
      await reachedParts(reader, found, lengths, ref, line.seq, path);
      const message = tooDeepFrom(ref.digest, ` (seq ${line.seq} at ${path})`, reader.checked(), depths);
      if (message !== null)
        throw new ReceiptError('CHAIN_INVALID', `PART_CORRUPT: ${message}`, {
          location: { seq: line.seq, path },
          hint: VERIFY_FIRST,
        });
    }
  }
  return [...found.values()].sort((a, b) => (a.address < b.address ? -1 : 1));
}

/** Every part `ref` reaches, each fetched and checked once, into `found`; a missing or damaged one stops the export. */
async function reachedParts(
  reader: PartReader,
  found: Map<string, PartEntry>,
  lengths: Map<string, number>,
  ref: PartRef,
  seq: number,
  path: string,
): Promise<void> {
  const stack = [{ ref, path }];
  while (stack.length > 0) {
    const { ref: r, path: p } = stack.pop()!;
    try {
      if (found.has(r.digest)) {
        // Listed once; this reference must still name its file digest and size (PARTS.md §9 step 3).
        reader.held(r, { seq, path: p });
        continue;
      }
      const f = await reader.file(r, { seq, path: p });
      found.set(r.digest, { address: r.digest, digest: r.file, size: r.size });
      for (const inner of innerRefsAt(f, p, reader.checked(), lengths)) stack.push(inner);
    } catch (e) {
      if (e instanceof PartError)
        throw new ReceiptError('CHAIN_INVALID', e.message, {
          location: e.location,
          hint: VERIFY_FIRST,
        });
      throw e;
    }
  }
}
