/** base64url without padding (RFC 4648 §5), browser-safe: the sealed form's keys and salts (spec/ERASURE.md §2). */
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
export function b64u(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const left = bytes.length - i;
    out +=
      B64[(n >>> 18) & 63]! +
      B64[(n >>> 12) & 63]! +
      (left > 1 ? B64[(n >>> 6) & 63]! : '') +
      (left > 2 ? B64[n & 63]! : '');
  }
  return out;
}
export function fromB64u(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (const c of text) {
    acc = (acc << 6) | B64.indexOf(c);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >>> bits) & 0xff;
    }
  }
  // Canonical only: leftover bits must be zero, so one byte string has one text.
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}
