/**
 * `stepchain/retention`: removing a store's expired runs whole under a retention policy, each leaving a
 * tombstone (its head, size, tree root, last checkpoint and a consistency proof) in the store's tombstone
 * journal — spec/RETENTION.md. Works on every store of `stepchain/journal`, `stepchain/sqlite` and
 * `stepchain/postgres`.
 */
export * from './retention/index.js';
