/**
 * Key files (spec/RECEIPT.md §5): an Ed25519 pair made into PEM files that are never overwritten, a signing
 * key read from one, and a pinned public key read with a bound on its size. Node-only; the key formats
 * themselves live in keys.ts.
 */
import { constants as fsConstants } from 'node:fs';
import { chmod, open, rm, writeFile } from 'node:fs/promises';
import { ReceiptError } from './errors.js';
import {
  decodePublicKey,
  generateKeyPair,
  parsePrivateKey,
  privateKeyToPem,
  publicKeyToPem,
  type KeyFileInput,
  type KeyInput,
  type KeyPair,
} from './keys.js';

export interface KeygenResult {
  keyFile: string;
  publicKeyFile: string;
  keyId: string;
  publicKeyPem: string;
}

/**
 * Makes an Ed25519 key pair: the private key (PKCS#8 PEM) in `keyFile` with mode 0600, the public key
 * (SPKI PEM) in `<keyFile>.pub`. Never overwrites an existing file.
 */
export async function keygen(keyFile: string, pair: KeyPair = generateKeyPair()): Promise<KeygenResult> {
  const publicKeyFile = `${keyFile}.pub`;
  const publicKeyPem = publicKeyToPem(pair.publicKey);
  try {
    await writeFile(keyFile, privateKeyToPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
    await chmod(keyFile, 0o600); // the umask cannot widen it, but make the mode explicit
  } catch (e) {
    throw keyWriteError(keyFile, e);
  }
  try {
    await writeFile(publicKeyFile, publicKeyPem, { mode: 0o644, flag: 'wx' });
  } catch (e) {
    await rm(keyFile, { force: true });
    throw keyWriteError(publicKeyFile, e);
  }
  return { keyFile, publicKeyFile, keyId: pair.keyId, publicKeyPem };
}

/** A key file that could not be written: KEY_EXISTS when it is there already, else OUTPUT_FAILED; both name it. */
function keyWriteError(file: string, e: unknown): ReceiptError {
  if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
    return new ReceiptError('KEY_EXISTS', `${file} exists; keygen never overwrites a key`, {
      location: { file },
      hint: 'choose another name, or move the old key away first',
    });
  }
  return new ReceiptError('OUTPUT_FAILED', `cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`, {
    location: { file },
    cause: e,
    hint: 'the folder must exist and be writable, and the name short enough for the file system',
  });
}

/** A signing key input with `{ keyFile }` read: what the pure writers take. */
export async function signingKey(key: KeyFileInput): Promise<KeyInput> {
  return typeof key === 'object' && key !== null && 'keyFile' in key ? readKeyFile(key.keyFile) : key;
}

/** Reads a PKCS#8 PEM private key file. */
export async function readKeyFile(path: string): Promise<Uint8Array> {
  let text: string;
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  try {
    // As the public key files: a FIFO (which would block the open and the read forever), a device or a
    // directory is refused before a byte is read, and a key file holds at most MAX_KEY_FILE_BYTES.
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) throw new Error('it is not a regular file');
    if (info.size > MAX_KEY_FILE_BYTES)
      throw new Error(`it is ${info.size} bytes; a key file is at most ${MAX_KEY_FILE_BYTES}`);
    const buf = Buffer.alloc(info.size);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got)
      got = (await handle.read(buf, n, buf.length - n, n)).bytesRead;
    text = buf.subarray(0, n).toString('utf8');
  } catch (e) {
    throw new ReceiptError(
      'KEY_INVALID',
      `cannot read key file ${path}: ${e instanceof Error ? e.message : String(e)}`,
    );
  } finally {
    await handle?.close().catch(() => {});
  }
  return parsePrivateKey({ pem: text });
}

/** A key file is a few hundred bytes; anything past this is not one (and is not read into memory). */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * Reads a pinned public key file in a form of spec/RECEIPT.md §5.2 — 32 raw bytes, the base64 of them, or
 * an Ed25519 SPKI PEM (`keyfile.pub` from keygen) — and returns the raw 32-byte key. A file that cannot be
 * read, or holds anything else (empty, a private key, a non-canonical or small-order point), throws
 * ReceiptError KEY_INVALID naming the file: a pin that cannot be used is an error, never "no pin".
 * Only regular files are read (a FIFO would block, a device would never end), and at most 64 KiB.
 */
export async function readPublicKeyFile(path: string): Promise<Uint8Array> {
  const invalid = (why: string): ReceiptError =>
    new ReceiptError('KEY_INVALID', `public key file ${path}: ${why}`, {
      location: { file: path },
      hint: "give the signer's public key: keyfile.pub as written by `stepchain keygen`, the base64 of the 32 key bytes, or the 32 bytes themselves",
    });
  let bytes: Uint8Array;
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  try {
    handle = await open(path, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile()) throw invalid('is not a regular file');
    if (info.size > MAX_KEY_FILE_BYTES)
      throw invalid(`is ${info.size} bytes; a public key file is at most ${MAX_KEY_FILE_BYTES}`);
    const buf = new Uint8Array(MAX_KEY_FILE_BYTES + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n > MAX_KEY_FILE_BYTES)
        throw invalid(`holds more than ${MAX_KEY_FILE_BYTES} bytes; a public key file is a few hundred`);
    }
    bytes = buf.subarray(0, n);
  } catch (e) {
    if (e instanceof ReceiptError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw invalid(`cannot be read: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  } finally {
    await handle?.close().catch(() => {});
  }
  const key = decodePublicKey(bytes);
  if (!key.ok) throw invalid(key.reason.replace(/^the pinned key /, ''));
  return key.key;
}
