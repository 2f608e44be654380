/**
 * The published-receipt verifier, the disclosure check and the anchor/declaration checks run in a
 * browser: nothing they import, directly or transitively, is a node:* builtin or a Node-only package.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';

const SRC = resolve(new URL('../../src/', import.meta.url).pathname);
const NODE_ONLY_PACKAGES = ['tar-stream', 'proper-lockfile'];
const NODE_BUILTINS = /^(node:|fs$|path$|os$|crypto$|zlib$|child_process$|stream$|buffer$|url$|util$)/;

function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  return [...src.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/gm)]
    .filter((m) => !/^\s*(?:import|export)\s+type\s/.test(m[0]))
    .map((m) => (m[1] ?? m[2] ?? m[3])!);
}

test.each(['redact/verify.ts', 'redact/disclose.ts', 'redact/anchor.ts', 'redact/redact.ts', 'redact/policy.ts'])('%s imports nothing Node-only', (entry) => {
  const seen = new Set<string>();
  const offenders: string[] = [];
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of importsOf(file)) {
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (NODE_BUILTINS.test(spec) || NODE_ONLY_PACKAGES.includes(spec)) offenders.push(`${file.slice(SRC.length + 1)} imports ${spec}`);
    }
  };
  visit(join(SRC, entry));
  expect(offenders).toEqual([]);
});
