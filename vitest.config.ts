import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One throwaway PostgreSQL server per run, stopped whatever happens (test/setup/pg-runner.mjs), and
    // the npm-shipped Chromium for test/page extracted once, before the test files start.
    globalSetup: ['test/setup/postgres.ts', 'test/page/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
