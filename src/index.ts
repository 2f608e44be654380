/**
 * stepchain: a hash-chained, append-only journal for the steps an AI agent takes, with receipts anyone can
 * verify offline. This is the Node entry point; `stepchain/verify` is the browser-safe subset and
 * `stepchain/testing` the replay-testing kit.
 */
import { useNodeHash } from './node/fast-hash.js';

// Inside Node, node:crypto's native SHA-256 replaces the portable one; test/canonical/sha256.test.ts
// proves the two identical on every vector.
useNodeHash();

export { StepchainError, type ErrorLocation } from './errors.js';
export { VERSION } from './version.js';
export * from './canonical/index.js';
export * from './chain/index.js';
export * from './store/index.js';
export * from './receipt/index.js';
export * from './diff/index.js';
export * from './redact/index.js';
