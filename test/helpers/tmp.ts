/**
 * Real temporary directories for tests that touch the file system; removed after each test file, passed or
 * failed, by test/setup/temp-dirs.ts (a vitest setup file, run at the start of every test file).
 *
 * Not by an `afterAll` registered here: most calls are made inside a test or a beforeAll/beforeEach hook
 * (directly or through a helper), and there vitest adds the hook to a suite already collected, where it never
 * runs: one `npm test` left ~330 directories in the OS temp dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

export function tempDir(prefix = 'stepchain-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes the directories tempDir made since the last call: those of the test file now ending. */
export function removeTempDirs(): void {
  const dirs = [...made];
  made.clear();
  // Retried: a journal a test left open may still be finishing a write there (ENOTEMPTY as its folder goes).
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
