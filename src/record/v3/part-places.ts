/**
 * Where a reference inside a part stands in the record that reaches it (spec/PARTS.md §9): the JSON Pointer a
 * reader that expands the record gives it (part-resolve.ts), for the walks that check parts without expanding
 * them (verify, export, fork), so that every command names one place for one missing or damaged part. Pure.
 */
import { partRefsIn, type PartFile, type PartRef } from './parts.js';

/**
 * The references inside a checked part file, each located where a reader that expands the record meets it (as
 * `show` and `log` locate it, part-resolve.ts): a value part's at their place in its value below `path`; a
 * list's base at the list's own place; its tail's at their elements' index in the whole list, after the base
 * chain's elements. Before, every reference inside a part was located at the record's reference to that part.
 */
export function innerRefsAt(
  f: PartFile,
  path: string,
  checked: ReadonlyMap<string, PartFile>,
  lengths: Map<string, number>,
): { ref: PartRef; path: string }[] {
  if (f.kind === 'media') return [];
  if (f.kind === 'value') return partRefsIn(f.value, path);
  const first = listLength(f.base.digest, checked, lengths);
  return [
    { ref: f.base, path },
    ...partRefsIn(f.tail).map(({ ref, path: inTail }) => {
      const slash = inTail.indexOf('/', 1);
      const index = Number(inTail.slice(1, slash < 0 ? undefined : slash));
      return { ref, path: `${path}/${first + index}${slash < 0 ? '' : inTail.slice(slash)}` };
    }),
  ];
}

/** The elements of a checked list or array value part, its base chain's included (iterative; memoised). */
function listLength(address: string, checked: ReadonlyMap<string, PartFile>, lengths: Map<string, number>): number {
  const chain: string[] = [];
  const met = new Set<string>();
  let total = 0;
  for (let at: string | null = address; at !== null;) {
    const known = lengths.get(at);
    const f = checked.get(at);
    if (known !== undefined) total = known;
    else if (f?.kind === 'list' && !met.has(at)) {
      chain.push(at);
      met.add(at);
      at = f.base.digest;
      continue;
    } else total = f?.kind === 'value' && Array.isArray(f.value) ? f.value.length : 0;
    at = null;
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    const f = checked.get(chain[i]!) as Extract<PartFile, { kind: 'list' }>;
    total += f.tail.length;
    lengths.set(chain[i]!, total);
  }
  return total;
}
