/**
 * How deep part references nest (spec/PARTS.md §10), counted over checked part files without expanding a value.
 * Pure.
 */
import { MAX_PART_DEPTH, partRefsIn, type PartFile } from './parts.js';

/**
 * How many references deep a checked part reaches, itself the first (PARTS.md §10: at most MAX_PART_DEPTH from a
 * record): a value part is 1 + the deepest part referenced in its value, a list the deeper of that for its tail and
 * its base's (a base chain is not nesting), media 1. Each part once (`memo`), without recursion; a part not in
 * `files` (missing, reported where it is met) counts as 1.
 */
export function referenceDepth(start: string, files: ReadonlyMap<string, PartFile>, memo: Map<string, number>): number {
  // Each part's references are listed once, on its first visit, and kept on its frame for its second.
  const stack: { address: string; inner: string[] | null }[] = [{ address: start, inner: null }];
  const open = new Set<string>();
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (memo.has(top.address)) {
      stack.pop();
      continue;
    }
    const f = files.get(top.address);
    if (f === undefined || f.kind === 'media') {
      memo.set(top.address, 1);
      stack.pop();
      continue;
    }
    if (top.inner === null) {
      top.inner = partRefsIn(f.kind === 'value' ? f.value : f.tail).map((r) => r.ref.digest);
      open.add(top.address);
      // A loop cannot be made (each reference names its file's digest), but a hand-made store is not trusted.
      for (const c of f.kind === 'list' ? [f.base.digest, ...top.inner] : top.inner)
        if (!memo.has(c) && !open.has(c)) stack.push({ address: c, inner: null });
      continue;
    }
    let depth = 1;
    for (const c of top.inner) depth = Math.max(depth, 1 + (memo.get(c) ?? 1));
    if (f.kind === 'list') depth = Math.max(depth, memo.get(f.base.digest) ?? 1);
    memo.set(top.address, depth);
    open.delete(top.address);
    stack.pop();
  }
  return memo.get(start)!;
}

/**
 * Why the references from `address` nest too deep, as verify, export and the receipt verifier say it (`where`:
 * the record's reference, in words), or null when they are within MAX_PART_DEPTH.
 */
export function tooDeepFrom(
  address: string,
  where: string,
  files: ReadonlyMap<string, PartFile>,
  memo: Map<string, number>,
): string | null {
  const depth = referenceDepth(address, files, memo);
  return depth > MAX_PART_DEPTH
    ? `part ${address}${where}: part references nest ${depth} deep from this one, deeper than ${MAX_PART_DEPTH} (PARTS.md §10)`
    : null;
}
