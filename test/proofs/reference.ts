/**
 * An independent reference for the tests: RFC 9162 §2.1.1's recursive MTH, written straight from the
 * RFC with node:crypto, sharing no code with src/proofs.
 */
import { createHash } from 'node:crypto';

export const sha = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

export const refLeaf = (data: Uint8Array): Uint8Array => sha(Uint8Array.of(0), data);

function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}

/** MTH(D[n]) over leaf hashes, recursively. */
export function refRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return leaves[0]!;
  const s = k(leaves.length);
  return sha(Uint8Array.of(1), refRoot(leaves.slice(0, s)), refRoot(leaves.slice(s)));
}

/** The RFC 9162 §2.1.3.1 audit path, recursively. */
export function refPath(m: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  if (leaves.length <= 1) return [];
  const s = k(leaves.length);
  return m < s
    ? [...refPath(m, leaves.slice(0, s)), refRoot(leaves.slice(s))]
    : [...refPath(m - s, leaves.slice(s)), refRoot(leaves.slice(0, s))];
}

/** The RFC 9162 §2.1.4.1 consistency proof, recursively. */
export function refConsistency(m: number, leaves: readonly Uint8Array[]): Uint8Array[] {
  const sub = (m: number, d: readonly Uint8Array[], b: boolean): Uint8Array[] => {
    if (m === d.length) return b ? [] : [refRoot(d)];
    const s = k(d.length);
    return m <= s
      ? [...sub(m, d.slice(0, s), b), refRoot(d.slice(s))]
      : [...sub(m - s, d.slice(s), false), refRoot(d.slice(0, s))];
  };
  return m === 0 || m === leaves.length ? [] : sub(m, leaves, true);
}

/** n distinct leaf hashes. */
export function leaves(n: number, salt = 'leaf'): Uint8Array[] {
  return Array.from({ length: n }, (_, i) => refLeaf(new TextEncoder().encode(`${salt} ${i}`)));
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
