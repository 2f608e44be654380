/**
 * The verification path must run in a browser: starting at src/receipt/verify.ts, follow every relative
 * import and check that no module imports a node: builtin (or a bare Node builtin name) or uses Buffer.
 */
import { describe, expect, test } from 'vitest';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function walk(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    const src = readFileSync(file, 'utf8');
    const specs = [...src.matchAll(IMPORT_RE)].map((m) => (m[1] ?? m[2])!);
    seen.set(file, specs);
    for (const s of specs) if (s.startsWith('.')) queue.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
  }
  return seen;
}

describe('the receipt verification path is pure', () => {
  const modules = walk(resolve(root, 'receipt/verify.ts'));
  test('it reaches the modules it should', () => {
    const names = [...modules.keys()].map((f) => f.slice(root.length)).sort();
    expect(names).toContain('receipt/tar.ts');
    expect(names).toContain('receipt/inflate.ts');
    expect(names).toContain('receipt/dsse.ts');
    expect(names).toContain('chain/verifier.ts');
    expect(names).toContain('record/v1.ts');
    expect(names).not.toContain('receipt/node.ts');
    expect(names).not.toContain('receipt/writer.ts');
  });
  test.each([...modules.entries()].map(([file, specs]) => ({ file: file.slice(root.length), specs })))(
    '$file imports nothing Node-only',
    ({ file, specs }) => {
      const builtins = new Set(builtinModules);
      for (const s of specs) {
        expect(s.startsWith('node:'), `${file} imports ${s}`).toBe(false);
        expect(builtins.has(s), `${file} imports ${s}`).toBe(false);
        if (!s.startsWith('.'))
          expect(
            ['@noble/hashes/sha2.js', '@noble/curves/ed25519.js', 'canonicalize', 'pako'],
            `${file} imports ${s}`,
          ).toContain(s);
      }
      const code = readFileSync(resolve(root, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect(/\bBuffer\b|\bprocess\.|\brequire\(/.test(code), `${file} uses Buffer, process or require`).toBe(false);
    },
  );
});
