/**
 * src/proofs runs in a browser (spec/PROOFS.md; `stepchain/verify` will carry it): every module of the
 * folder is reachable from its index — so test/purity.test.ts, which walks from the index, sees them
 * all — and the whole graph imports only relative modules, the two audited @noble packages, canonicalize
 * and pako (all pure ECMAScript), as the receipt verifier does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
// pako: the receipt verifier's gzip reader, reached since receipts carry proofs (src/proofs/receipt.ts); pure
// ECMAScript, the same package stepchain/verify and the page already bundle.
const ALLOWED = ['@noble/hashes/sha2.js', '@noble/curves/ed25519.js', 'canonicalize', 'pako'];

function graph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    const specs = [...readFileSync(file, 'utf8').matchAll(IMPORT_RE)].map((m) => (m[1] ?? m[2])!);
    seen.set(file, specs);
    for (const s of specs) if (s.startsWith('.')) queue.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
  }
  return seen;
}

const modules = graph(resolve(SRC, 'proofs/index.ts'));

test('every module of src/proofs is reachable from its index', () => {
  const reached = new Set([...modules.keys()].map((f) => f.slice(SRC.length)));
  for (const f of readdirSync(resolve(SRC, 'proofs')).filter((n) => n.endsWith('.ts')))
    expect(reached, `proofs/${f}`).toContain(`proofs/${f}`);
});

test.each([...modules.entries()].map(([file, specs]) => ({ file: file.slice(SRC.length), specs })))(
  '$file imports only relative modules and browser-safe packages',
  ({ file, specs }) => {
    for (const s of specs) if (!s.startsWith('.')) expect(ALLOWED, `${file} imports ${s}`).toContain(s);
    // The one sanctioned mention of Node: canonical/sha256.ts asks the platform for node:crypto by name at run
    // time (process.getBuiltinModule, no import) and falls back to @noble/hashes where there is none; the
    // graph compiles without Node's types (tsconfig.browser.json), which is what proves no Node import.
    const code = readFileSync(resolve(SRC, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      .replace("const NODE_CRYPTO = 'node:crypto';", '');
    expect(
      /\bBuffer\b|\bprocess\.|\brequire\(|\bnode:/.test(code),
      `${file} uses Buffer, process, require or node:`,
    ).toBe(false);
  },
);
