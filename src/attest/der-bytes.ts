/**
 * Byte helpers for the DER that the ASN.1 library hands back as ArrayBuffers or views: copies, views,
 * hex, and a comparison that does not stop at the first differing byte.
 */
export const buf = (b: Uint8Array): ArrayBuffer => b.slice().buffer;
export const bytes = (b: ArrayBuffer | ArrayBufferView): Uint8Array =>
  b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
export const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
export function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}
