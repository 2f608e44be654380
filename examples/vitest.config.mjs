// Runs the example tests in examples/ on their own: `npm run build && npx vitest run --config examples/vitest.config.mjs`.
import { defineConfig } from 'vitest/config';

export default defineConfig({ test: { root: new URL('.', import.meta.url).pathname, include: ['*.test.mjs'] } });
