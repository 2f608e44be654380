/**
 * The test files `npm run mutate` runs against each mutant (stryker.config.mjs): the unit suites of the five
 * mutated folders. The hardening battery and the store's process tests are left out: they take minutes,
 * and with per-test coverage every mutant they reach would pay for them again. CLI tests in these folders
 * run dist/, which Stryker does not mutate: they kill nothing, and cost little.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/canonical/**/*.test.ts', 'test/chain/**/*.test.ts', 'test/record/**/*.test.ts', 'test/receipt/**/*.test.ts', 'test/redact/**/*.test.ts'],
    // Purity tests read the source text, which Stryker has instrumented: they say nothing about a mutant.
    exclude: ['**/purity.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
