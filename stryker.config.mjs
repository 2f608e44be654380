// @ts-check
/**
 * StrykerJS over the code that decides what verifies: src/canonical, src/record, src/chain, src/receipt,
 * src/redact.
 * `npm run mutate` (scripts/mutate.mjs) runs it one folder at a time and writes the summary; a bare
 * `npx stryker run` mutates all five at once. The tests it runs are test/mutation/vitest.config.ts's;
 * what survives, and why, is in test/mutation/SURVIVORS.md.
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: false },
  plugins: ['@stryker-mutator/vitest-runner', './test/mutation/ignore-message-text.mjs'],
  // No mutants in the wording of coded reports (test/mutation/ignore-message-text.mjs says what counts).
  ignorers: ['message-text'],
  mutate: [
    'src/canonical/**/*.ts',
    'src/record/**/*.ts',
    'src/chain/**/*.ts',
    'src/receipt/**/*.ts',
    'src/redact/**/*.ts',
    '!src/**/index.ts',
  ],
  coverageAnalysis: 'perTest',
  // A mutant reached while a test file loads (its top-level fixtures) is "static", and Stryker would rerun
  // the whole suite for each: 2 578 of them, 89% of the time, hours on two cores. With ignoreStatic one that
  // tests also reach is still run against those tests; only those reached at load time alone are ignored.
  ignoreStatic: true,
  // Two cores, shared: two test runners. A mutant that loops forever is stopped and counts as detected.
  // On a loaded machine a test can take several times what it took in the initial run: with 5 s of slack
  // a third of the receipt verifier's mutants "timed out" while the tests were only starved (measured),
  // which would count them as detected. Twice the test's time plus 10 s keeps timeouts for real hangs.
  concurrency: 2,
  timeoutFactor: 2,
  timeoutMS: 10_000,
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  incremental: true,
  incrementalFile: 'reports/mutation/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
