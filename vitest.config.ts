import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Extracts the npm-shipped Chromium for test/page once, before the test files start.
    globalSetup: ['test/page/global-setup.ts'],
  },
});
