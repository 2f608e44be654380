/**
 * The verification path runs in a browser: starting from each browser-bound entry, no module it imports
 * (directly or transitively) may import a node:* builtin or a Node-only package, or use Buffer, process or
 * require. Checked on the source, so a new import is caught the moment it is written.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(new URL('../src/', import.meta.url).pathname);
const NODE_ONLY_PACKAGES = ['tar-stream', 'proper-lockfile'];
const NODE_BUILTINS = /^(node:|fs$|path$|os$|crypto$|zlib$|child_process$|stream$|buffer$|url$|util$)/;

function importsOf(source: string): string[] {
  return [
    ...source.matchAll(
      /^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/gm,
    ),
  ]
    .filter((m) => !/^\s*(?:import|export)\s+type\s/.test(m[0]))
    .map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/**
 * The browser-safe entry `stepchain/verify`, the pure modules the publisher and diff build on, the proofs, and
 * the verification page (its main thread and its worker), which imports the verifier's modules directly.
 */
test.each([
  'verify.ts',
  'redact/redact.ts',
  'redact/policy.ts',
  'diff/index.ts',
  'proofs/index.ts',
  'page/main.ts',
  'page/worker.ts',
])('%s and everything it imports is free of Node-only code', (entry) => {
  const seen = new Set<string>();
  const offenders: string[] = [];
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    const code = source.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, ''); // comments may mention Buffer
    if (/\bBuffer\b|\bprocess\.|\brequire\(/.test(code))
      offenders.push(`${file.slice(SRC.length + 1)} uses Buffer, process or require`);
    for (const spec of importsOf(source)) {
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (NODE_BUILTINS.test(spec) || NODE_ONLY_PACKAGES.includes(spec))
        offenders.push(`${file.slice(SRC.length + 1)} imports ${spec}`);
    }
  };
  visit(join(SRC, entry));
  expect(seen.size).toBeGreaterThan(1);
  expect(offenders).toEqual([]);
});
