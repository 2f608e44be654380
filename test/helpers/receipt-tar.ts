/**
 * Receipt archives rebuilt as an attacker would, the way `stepchain export` writes them (ustar, mtime 0, no
 * padding): `tarOf` writes entries with the headers of a genuine one (`template`, a 512-byte header of a
 * receipt the CLI wrote), `untar` reads a (gzip) tar of plain files back, `jcs` and `sha` recompute a
 * manifest and its digests. Used by the verdict attacks (test/attacks/verdicts.test.ts and
 * test/page/attack-verdicts.test.ts).
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';

/** A ustar header for `name` of `size` bytes, the other fields those of `template`. */
export function header(template: Buffer, name: string, size: number): Buffer {
  const h = Buffer.from(template);
  h.fill(0, 0, 100);
  h.write(name, 0, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')} `, 124, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')} \0`, 148, 'latin1');
  return h;
}

export function tarOf(template: Buffer, entries: Array<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [];
  for (const [n, b] of entries)
    parts.push(header(template, n, b.length), b, Buffer.alloc((512 - (b.length % 512)) % 512));
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** Reads a (gzip) tar of plain files into [name, bytes] in order. */
export function untar(bytes: Buffer): Array<[string, Buffer]> {
  const t = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
  const out: Array<[string, Buffer]> = [];
  for (let o = 0; o + 512 <= t.length;) {
    const h = t.subarray(o, o + 512);
    if (h.every((b) => b === 0)) break;
    const name = h.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '');
    const size = Number.parseInt(h.subarray(124, 136).toString('latin1').trim(), 8);
    out.push([name, Buffer.from(t.subarray(o + 512, o + 512 + size))]);
    o += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** RFC 8785 for the plain JSON of a manifest (written here, independently of src/canonical). */
export const jcs = (v: any): string =>
  v === null || typeof v !== 'object'
    ? JSON.stringify(v)
    : Array.isArray(v)
      ? `[${v.map(jcs).join(',')}]`
      : `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`)
          .join(',')}}`;

export const sha = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
