import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** src/, absolute. */
export const SRC = resolve(new URL('../../src/', import.meta.url).pathname);

/** Every .ts file under `dir`, depth first. */
export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}
