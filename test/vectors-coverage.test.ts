/**
 * Every vector file is consumed by some test (a file nobody loads is a promise nobody checks), and every
 * vector file has the shared shape: format, kind, description, and cases with unique ids, a comment and
 * an expected result. And every vector file is exactly what its committed generator writes today
 * (`node scripts/gen-vectors.mjs --check`): vectors come from the script, never from a hand edit, and a
 * generator that stopped reproducing its file (a changed default, a leaked random draw) is caught here.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { VECTORS_DIR } from './helpers/vectors.js';

const TEST_DIR = new URL('.', import.meta.url).pathname;

function testSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'fixtures' ? [] : testSources(p);
    return e.name.endsWith('.test.ts') ? [readFileSync(p, 'utf8')] : [];
  });
}

const vectorFiles = readdirSync(VECTORS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();
// String-literal names only: a template such as loadVectors('${name}') in a message is not a load.
const loaded = new Set(
  testSources(TEST_DIR).flatMap((src) =>
    [...src.matchAll(/loadVectors(?:<[^>]*>)?\(\s*'([^'$]+)'\s*\)/g)].map((m) => m[1]!),
  ),
);

describe('golden vectors', () => {
  test('every vector file is reproduced byte for byte by its committed generator', () => {
    const script = new URL('../scripts/gen-vectors.mjs', import.meta.url).pathname;
    // Throws with the generator's stderr ("differs: vectors/<file>") when any file differs.
    expect(() => execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' })).not.toThrow();
  }, 600_000);

  test('there are vector files', () => {
    expect(vectorFiles.length).toBeGreaterThanOrEqual(4);
  });

  test.each(vectorFiles)('%s is consumed by a test', (name) => {
    expect(loaded.has(name), `no test calls loadVectors('${name}')`).toBe(true);
  });

  test('every loadVectors call names an existing file', () => {
    for (const name of loaded) expect(vectorFiles).toContain(name);
  });

  test.each(vectorFiles)('%s has the shared shape', (name) => {
    const doc = JSON.parse(readFileSync(VECTORS_DIR + name, 'utf8'));
    expect(doc.format).toBe('stepchain-vectors/v1');
    expect(typeof doc.kind).toBe('string');
    expect(typeof doc.description).toBe('string');
    expect(doc.cases.length).toBeGreaterThan(0);
    const ids = new Set<string>();
    for (const c of doc.cases) {
      expect(typeof c.id).toBe('string');
      expect(ids.has(c.id), `duplicate id ${c.id}`).toBe(false);
      ids.add(c.id);
      expect(typeof c.comment).toBe('string');
      expect(['valid', 'invalid']).toContain(c.result);
    }
  });

  test('vectors/README.md documents every vector file', () => {
    const readme = readFileSync(VECTORS_DIR + 'README.md', 'utf8');
    for (const name of vectorFiles) expect(readme).toContain(name);
  });
});
