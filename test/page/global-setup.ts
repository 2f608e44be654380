/**
 * vitest globalSetup for the page tests: extracts the npm-shipped Chromium once per test run (and once per
 * version on a machine: scripts/chromium.mjs caches it, atomically), before any test file starts, so
 * parallel test files never race to extract it. A failure is handed to the page tests, which fail with it:
 * the browser tests never skip.
 */
import type { TestProject } from 'vitest/node';
import { ensureChromium } from '../../scripts/chromium.mjs';

declare module 'vitest' {
  export interface ProvidedContext {
    chromium: { path: string | null; error: string | null };
  }
}

export default async function setup(project: TestProject): Promise<void> {
  try {
    project.provide('chromium', { path: await ensureChromium(), error: null });
  } catch (e) {
    project.provide('chromium', { path: null, error: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
}
