/**
 * A receipt's gzip form (RECEIPT.md): the same tar gives the same .tar.gz bytes on every machine, so a
 * receipt's file digest depends on its content only.
 */
import { Transform } from 'node:stream';
import { createGzip, constants as zc } from 'node:zlib';

/** The transforms that turn a tar stream into its deterministic gzip form, in pipeline order. */
export function deterministicGzip(): [Transform, Transform] {
  return [fixedGzip(), fixGzipHeader()];
}

/** Fixed options so the same tar gives the same .tar.gz on every run (with the same zlib). */
function fixedGzip(): Transform {
  return createGzip({ level: 9, memLevel: 8, windowBits: 15, strategy: zc.Z_DEFAULT_STRATEGY, chunkSize: 64 * 1024 });
}

/**
 * zlib writes mtime 0 and no file name, but its OS byte (RFC 1952 §2.3.1) depends on the platform zlib was
 * built for; set it to 255 ("unknown") so the bytes do not depend on the machine.
 */
function fixGzipHeader(): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (seen <= 9 && seen + chunk.length > 9) {
        chunk = Buffer.from(chunk);
        chunk[9 - seen] = 0xff;
      }
      seen += chunk.length;
      cb(null, chunk);
    },
  });
}
