// A directory's whole state as one string (each entry's relative name, mode and bytes), to show that a
// command left it byte-identical. Plain JavaScript: test/helpers/cli-batch-runner.mjs runs outside vitest.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** @param {string} dir @returns {string} */
export function snapshotOf(dir) {
  const files = /** @type {string[]} */ (readdirSync(dir, { recursive: true }));
  return JSON.stringify(
    files.sort().map((f) => {
      const p = join(dir, f);
      const st = statSync(p);
      return [f, st.mode, st.isFile() ? readFileSync(p).toString('base64') : null];
    }),
  );
}
