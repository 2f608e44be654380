/**
 * The parts step of a v3 journal's verify (spec/PARTS.md §9, fast tier): every part reference in every
 * record — and in every part file, a list's base included — names a part the store holds, of the length and
 * SHA-256 the reference records, in the shape of its kind. Each address is checked once, at the first
 * reference met; a problem names the part's address, the record's seq and the reference's JSON Pointer.
 */
import type { Json } from '../canonical/json.js';
import type { Problem } from '../chain/report.js';
import { PartError, partRefsIn, type PartRef, type PartSource } from '../record/v3/parts.js';
import { tooDeepFrom } from '../record/v3/part-depth.js';
import { innerRefsAt } from '../record/v3/part-places.js';
import { PartReader } from '../record/v3/part-reader.js';
import { PART_SLOTS } from './parts-prepare.js';

export type PartProblemCode = 'PART_MISSING' | 'PART_CORRUPT' | 'PART_ADDRESS_MISMATCH';

const PART_NAME_TEXT = '"$stepchain:part"';

/** At most this many part problems are listed (a lost parts folder is one cause, not ten thousand). */
const MAX_PART_PROBLEMS = 100;

export async function verifyParts(
  lines: AsyncIterable<{ seq: number; text: string }>,
  source: PartSource,
  options: { deep?: boolean; where?: (address: string) => string } = {},
): Promise<Problem<PartProblemCode>[]> {
  const reader = new PartReader(source, { deep: options.deep ?? false });
  const problems: Problem<PartProblemCode>[] = [];
  const seen = new Set<string>();
  const depths = new Map<string, number>();
  const lengths = new Map<string, number>();
  const check = async (ref: PartRef, seq: number, path: string): Promise<void> => {
    const first = !seen.has(ref.digest);
    // Depth-first through part files with an explicit stack: a chat's lists form long base chains.
    const stack: { ref: PartRef; path: string }[] = [{ ref, path }];
    while (stack.length > 0 && problems.length < MAX_PART_PROBLEMS) {
      const { ref: r, path: p } = stack.pop()!;
      try {
        if (seen.has(r.digest)) {
          // Checked at its first reference; this one must name the same file digest and size (§9 step 3).
          reader.held(r, { seq, path: p });
          continue;
        }
        seen.add(r.digest);
        const f = await reader.file(r, { seq, path: p });
        for (const inner of innerRefsAt(f, p, reader.checked(), lengths)) stack.push(inner);
      } catch (e) {
        if (!(e instanceof PartError)) throw e;
        const file = options.where?.(r.digest);
        problems.push({
          code: e.code,
          message: e.message.replace(/^PART_[A-Z_]+: /, ''),
          location: { seq, path: p, ...(file === undefined ? {} : { file }) },
        });
      }
    }
    // References nest at most MAX_PART_DEPTH deep (§10), a record's own the first: checked once per part, as
    // readers refuse the deeper one (the Python verifier, which expands, did; this one said ok: outsider K).
    if (first && reader.checked().has(ref.digest) && problems.length < MAX_PART_PROBLEMS) {
      const message = tooDeepFrom(ref.digest, ` (seq ${seq} at ${path})`, reader.checked(), depths);
      if (message !== null) problems.push({ code: 'PART_CORRUPT', message, location: { seq, path } });
    }
  };
  for await (const line of lines) {
    if (problems.length >= MAX_PART_PROBLEMS) break;
    // A line without a reference needs no second parse (the marker name cannot appear escaped: JCS writes
    // `$`, `:` and letters as themselves, so a reference's member name is this exact text in the line).
    if (!line.text.includes(PART_NAME_TEXT)) continue;
    let record: Record<string, Json>;
    try {
      record = JSON.parse(line.text) as Record<string, Json>;
    } catch {
      continue; // the chain's own check reports a line that is not JSON
    }
    if (record === null || typeof record !== 'object') continue;
    for (const slot of PART_SLOTS) {
      const v = record[slot];
      if (v === null || typeof v !== 'object') continue;
      for (const { ref, path } of partRefsIn(v, `/${slot}`)) await check(ref, line.seq, path);
    }
  }
  return problems;
}

/**
 * The parts a journal's lines reach, each once and checked, for a copy (fork) of its steps: `reached(line)`
 * gives the parts first reached by that line, to be stored before it. Null for a journal without parts. A
 * missing or damaged part stops the copy with its PartError (code, address, seq and path).
 */
export function partsOfJournal(
  journal: object,
): { reached(text: string, seq: number): Promise<{ address: string; bytes: Uint8Array }[]> } | null {
  const store = (
    journal as {
      parts?: { store?: { get(a: string, size?: number): Promise<Uint8Array | { size: number } | null> } } | null;
    }
  ).parts?.store;
  if (store === undefined) return null;
  const reader = new PartReader((a, size) => store.get(a, size));
  const seen = new Set<string>();
  const lengths = new Map<string, number>();
  return {
    async reached(text, seq) {
      if (!text.includes(PART_NAME_TEXT)) return [];
      const record = JSON.parse(text) as Record<string, Json>;
      const out: { address: string; bytes: Uint8Array }[] = [];
      for (const slot of PART_SLOTS) {
        const v = record[slot];
        if (v === null || typeof v !== 'object') continue;
        for (const { ref, path } of partRefsIn(v, `/${slot}`)) {
          const stack = [{ ref, path }];
          while (stack.length > 0) {
            const { ref: r, path: p } = stack.pop()!;
            if (seen.has(r.digest)) {
              reader.held(r, { seq, path: p }); // the same file digest and size as its first reference (§9 step 3)
              continue;
            }
            seen.add(r.digest);
            const f = await reader.file(r, { seq, path: p });
            for (const inner of innerRefsAt(f, p, reader.checked(), lengths)) stack.push(inner);
            const bytes = await store.get(r.digest, r.size);
            if (bytes instanceof Uint8Array) out.push({ address: r.digest, bytes });
          }
        }
      }
      return out;
    },
  };
}

/** A journal's verify report with its parts' problems added (a v3 journal whose chain verified). */
export async function withPartProblems<R extends { ok: boolean; problems: Problem[] }>(
  report: R,
  lines: AsyncIterable<{ seq: number; text: string }>,
  source: PartSource,
): Promise<R> {
  if (!report.ok) return report;
  const problems = await verifyParts(lines, source);
  return problems.length === 0 ? report : { ...report, ok: false, problems: [...report.problems, ...problems] };
}
