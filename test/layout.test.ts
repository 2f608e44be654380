/**
 * How the suite is organised (CONTRIBUTING.md, "Tests"): by behaviour, one file per module, its describe
 * blocks named by the spec section they pin. A file named after how its cases were found — a mutation run,
 * a list of "rules" — says nothing of what it holds, so no test file may be named so.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return /\.test\.[cm]?[jt]s$/.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

test('the suite has test files, found where vitest finds them', () => {
  expect(testFiles(join(ROOT, 'test'))).toContain('test/layout.test.ts');
});

test('no test file is named after mutation runs or "rules": files are named by the module or behaviour they pin', () => {
  const named = testFiles(join(ROOT, 'test')).filter((file) => /rules|mutation/i.test(file.split('/').pop()!));
  expect(named).toEqual([]);
});
