export * from '../../src/record/v3/commit.js';
export { toHex as toHexForTest } from '../../src/canonical/sha256.js';
