/**
 * The test files `npm run mutate` runs against each mutant (stryker.config.mjs): the unit suites of the five
 * mutated folders. With per-test coverage each mutant reruns every test that reached it, so a test that
 * takes seconds and reaches the whole verify path is paid for by thousands of mutants: on two shared cores
 * that is the difference between an hour and a day. What is left out, and why:
 * - the hardening battery and the store's process tests (minutes each);
 * - suites about scale, not rules: receipt/writes-verify (journals of 24–40 MiB values), receipt/streaming
 *   (48 MB), receipt/listeners (multi-megabyte entries), and receipt/byte-coverage (thousands of verifications of
 *   byte-flipped receipts); the `scale` cases of other files (STEPCHAIN_MUTATION, below) likewise;
 * - tests that read the source text (purity, no-call-spread), which Stryker has instrumented: they say
 *   nothing about a mutant.
 * Property suites that take their run count from RUNS run 20 cases each. So a score here is a lower bound
 * on what the whole of `npm test` detects. CLI tests in these folders run dist/, which Stryker does not
 * mutate: they kill nothing, and cost little. `npm run mutate -- --tests=<glob,…>` narrows the set further
 * (STEPCHAIN_MUTATION_TESTS, comma-separated globs) for a quicker, lower-bound run.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: process.env.STEPCHAIN_MUTATION_TESTS?.split(',') ?? [
      'test/canonical/**/*.test.ts',
      'test/chain/**/*.test.ts',
      'test/record/**/*.test.ts',
      'test/receipt/**/*.test.ts',
      'test/redact/**/*.test.ts',
    ],
    exclude: [
      '**/purity.test.ts',
      'test/receipt/no-call-spread.test.ts',
      'test/receipt/writes-verify.test.ts',
      'test/receipt/streaming.test.ts',
      'test/receipt/listeners.test.ts',
      'test/receipt/byte-coverage.test.ts',
    ],
    env: { STEPCHAIN_MUTATION: '1', RUNS: '20' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
