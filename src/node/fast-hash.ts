/**
 * Installs node:crypto's native SHA-256 behind the canonical hash seam. Node-only; the verification path
 * never imports this file. test/canonical/sha256.test.ts proves it identical to @noble/hashes on every
 * vector and on generated inputs.
 */
import { createHash } from 'node:crypto';
import { setSha256Backend, type Sha256Backend } from '../canonical/sha256.js';

export const nodeBackend: Sha256Backend = {
  name: 'node:crypto',
  create() {
    const h = createHash('sha256');
    return {
      update: (data) => void h.update(data),
      digest: () => {
        const d = h.digest();
        return new Uint8Array(d.buffer, d.byteOffset, d.length);
      },
    };
  },
  utf8(parts) {
    const h = createHash('sha256');
    for (const part of parts) h.update(part, 'utf8');
    const d = h.digest();
    return new Uint8Array(d.buffer, d.byteOffset, d.length);
  },
  bytes(data) {
    const d = createHash('sha256').update(data).digest();
    return new Uint8Array(d.buffer, d.byteOffset, d.length);
  },
};

export function useNodeHash(): void {
  setSha256Backend(nodeBackend);
}
