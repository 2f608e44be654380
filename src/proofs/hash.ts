/**
 * RFC 6962 / RFC 9162 §2.1.1 Merkle tree hashing with SHA-256, and the stepchain leaf (spec/PROOFS.md §4):
 * a leaf's data is the 32 raw bytes of the step's `step_hash`. Pure; the SHA-256 is the canonical seam's,
 * so Node runs it natively and a browser on @noble/hashes.
 */
import { sha256Backend } from '../canonical/sha256.js';

export const HASH_SIZE = 32;

/** MTH({}) = SHA-256 of the empty string: the root of the empty tree. */
export const EMPTY_ROOT: Uint8Array = Uint8Array.from([
  0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24, 0x27, 0xae, 0x41,
  0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55,
]);

/** SHA-256(0x00 || data): the hash of a leaf whose data is `data`. */
export function leafHash(data: Uint8Array): Uint8Array {
  const input = new Uint8Array(data.length + 1);
  input.set(data, 1);
  return sha256Backend().bytes(input);
}

// One input buffer per shape, reused: the backend consumes its input before returning, and a fresh
// 65-byte array per interior node was a third of the cost of an append's tree maintenance (measured).
const NODE_INPUT = new Uint8Array(1 + 2 * HASH_SIZE);
NODE_INPUT[0] = 1;
const LEAF_INPUT = new Uint8Array(1 + HASH_SIZE);

/** SHA-256(0x01 || left || right): the hash of an interior node. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length === HASH_SIZE && right.length === HASH_SIZE) {
    NODE_INPUT.set(left, 1);
    NODE_INPUT.set(right, 1 + HASH_SIZE);
    return sha256Backend().bytes(NODE_INPUT);
  }
  const input = new Uint8Array(1 + left.length + right.length);
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return sha256Backend().bytes(input);
}

const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;

/**
 * The leaf hash of a step: SHA-256(0x00 || the 32 bytes of its `step_hash`). Returns null when
 * `stepHash` is not a digest (`sha256:` and 64 lowercase hex digits).
 */
export function stepLeafHash(stepHash: string): Uint8Array | null {
  if (typeof stepHash !== 'string' || stepHash.length !== 71 || !stepHash.startsWith('sha256:')) return null;
  for (let i = 0; i < HASH_SIZE; i++) {
    const hi = stepHash.charCodeAt(7 + 2 * i);
    const lo = stepHash.charCodeAt(8 + 2 * i);
    const h = hi < 128 ? NIBBLE[hi]! : -1;
    const l = lo < 128 ? NIBBLE[lo]! : -1;
    if (h < 0 || l < 0) return null;
    LEAF_INPUT[i + 1] = (h << 4) | l;
  }
  return sha256Backend().bytes(LEAF_INPUT);
}

/**
 * MTH(D[n]) for leaf hashes already computed, in O(n) hashes and O(log n) memory: the perfect subtrees
 * of the binary decomposition of n are folded from the right, which is RFC 9162's recursive definition.
 */
export function rootOfLeaves(leafHashes: readonly Uint8Array[]): Uint8Array {
  if (leafHashes.length === 0) return EMPTY_ROOT;
  const stack: Uint8Array[] = [];
  for (let i = 0; i < leafHashes.length; i++) {
    let h = leafHashes[i]!;
    for (let s = i; s % 2 === 1; s = (s - 1) / 2) h = nodeHash(stack.pop()!, h);
    stack.push(h);
  }
  let root = stack.pop()!;
  while (stack.length > 0) root = nodeHash(stack.pop()!, root);
  return root;
}

/** Byte-wise equality of two hashes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
