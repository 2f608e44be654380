/**
 * How deep part references nest (spec/PARTS.md §10), counted over checked part files without expanding a value.
 * Pure.
 */
import { partRefsIn, type PartFile } from './parts.js';

/**
 * How many references deep a checked part reaches, itself the first (PARTS.md §10: at most MAX_PART_DEPTH from a
 * record): a value part is 1 + the deepest part referenced in its value, a list the deeper of that for its tail and
 * its base's (a base chain is not nesting), media 1. Each part once (`memo`), without recursion; a part not in
 * `files` (missing, reported where it is met) counts as 1.
 */
export function referenceDepth(start: string, files: ReadonlyMap<string, PartFile>, memo: Map<string, number>): number {
  const stack: { address: string; children: string[] | null }[] = [{ address: start, children: null }];
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
    const inner = partRefsIn(f.kind === 'value' ? f.value : f.tail).map((r) => r.ref.digest);
    if (top.children === null) {
      top.children = f.kind === 'list' ? [f.base.digest, ...inner] : inner;
      open.add(top.address);
      // A loop cannot be made (each reference names its file's digest), but a hand-made store is not trusted.
      for (const c of top.children) if (!memo.has(c) && !open.has(c)) stack.push({ address: c, children: null });
      continue;
    }
    let depth = 1;
    for (const c of inner) depth = Math.max(depth, 1 + (memo.get(c) ?? 1));
    if (f.kind === 'list') depth = Math.max(depth, memo.get(f.base.digest) ?? 1);
    memo.set(top.address, depth);
    open.delete(top.address);
    stack.pop();
  }
  return memo.get(start)!;
}
