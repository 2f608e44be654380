// The verify limit (bench/README.md, "The limit"): read the bucket files in 1 MiB chunks, JSON.parse and
// SHA-256 (node:crypto) every line, check nothing. Shared by the harnesses and by the bare process the
// whole-process figures compare with (workers/limit-proc.mjs).
import { open } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function bucketFiles(journalDir) {
  const dir = join(journalDir, 'buckets');
  return readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(dir, n));
}

export async function limitPass(files, { hash = true, parse = true } = {}) {
  let lines = 0;
  const chunk = Buffer.allocUnsafe(1 << 20);
  for (const path of files) {
    const fh = await open(path, 'r');
    try {
      let carry = null;
      for (;;) {
        const { bytesRead } = await fh.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        let buf = chunk.subarray(0, bytesRead);
        if (carry) buf = Buffer.concat([carry, buf]);
        let from = 0;
        for (let nl = buf.indexOf(0x0a, from); nl >= 0; nl = buf.indexOf(0x0a, from)) {
          if (parse) JSON.parse(buf.toString('utf8', from, nl));
          if (hash) createHash('sha256').update(buf.subarray(from, nl)).digest();
          lines++;
          from = nl + 1;
        }
        carry = from < buf.length ? Buffer.from(buf.subarray(from)) : null;
      }
    } finally {
      await fh.close();
    }
  }
  return lines;
}
