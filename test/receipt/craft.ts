/** Builds raw tar bytes for hostile-archive tests, independently of the exporter. */
import { BLOCK, checksum, ustarHeader } from '../../src/receipt/tar.js';

export interface RawEntry {
  name: string;
  data: Uint8Array;
  /** Byte patches applied to the header before its checksum is recomputed. */
  patch?: Array<[offset: number, bytes: string | number[]]>;
  /** Keep the checksum as it was after patching (to produce a bad checksum). */
  keepChecksum?: boolean;
  /** Fill the data's padding with this byte instead of zeros. */
  padByte?: number;
}

const enc = new TextEncoder();

export function rawHeader(e: {
  name: string;
  size: number;
  patch?: RawEntry['patch'];
  keepChecksum?: boolean;
}): Uint8Array {
  const h = ustarHeader(e.name, e.size);
  for (const [at, bytes] of e.patch ?? []) {
    const b = typeof bytes === 'string' ? enc.encode(bytes) : Uint8Array.from(bytes);
    h.set(b, at);
  }
  if (!e.keepChecksum) {
    h.fill(0, 148, 156);
    const sum = checksum(h);
    h.set(enc.encode(sum.toString(8).padStart(6, '0') + ' '), 148);
  }
  return h;
}

export function padded(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}

export function tarOf(entries: RawEntry[], opts: { end?: boolean; trailing?: number } = {}): Uint8Array {
  let total = 0;
  for (const e of entries) total += BLOCK + padded(e.data.length);
  if (opts.end !== false) total += 2 * BLOCK + (opts.trailing ?? 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const e of entries) {
    out.set(
      rawHeader({
        name: e.name,
        size: e.data.length,
        ...(e.patch ? { patch: e.patch } : {}),
        ...(e.keepChecksum ? { keepChecksum: true } : {}),
      }),
      o,
    );
    o += BLOCK;
    out.set(e.data, o);
    if (e.padByte !== undefined) out.fill(e.padByte, o + e.data.length, o + padded(e.data.length));
    o += padded(e.data.length);
  }
  return out;
}

/** Splits one of our receipts into its entries (trusting its structure: test input only). */
export function entriesOf(tar: Uint8Array): RawEntry[] {
  const out: RawEntry[] = [];
  let o = 0;
  for (;;) {
    const h = tar.subarray(o, o + BLOCK);
    if (h.every((b) => b === 0)) return out;
    let name = '';
    for (let i = 0; i < 100 && h[i] !== 0; i++) name += String.fromCharCode(h[i]!);
    const size = parseInt(new TextDecoder().decode(h.subarray(124, 135)), 8);
    out.push({ name, data: tar.slice(o + BLOCK, o + BLOCK + size) });
    o += BLOCK + padded(size);
  }
}

export const text = (s: string): Uint8Array => enc.encode(s);
