/**
 * The file store's parts (spec/PARTS.md §7): one file per part at `parts/<2 hex>/<62 hex>` under the
 * journal's directory, named by the address's hex, written once by temporary file and rename (a reader
 * sees a whole file or none); the writer's private index at `parts/index/<2 hex>/<62 hex>`, each file
 * holding the address its key names. Every file is opened as a hostile one (openRegular: no FIFO, device
 * or directory under a part's name) and read no further than the size its reference gives.
 */
import { mkdir, open, readFile, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError, ioError } from '../errors.js';
import type { FoundPart, PartPayload, PartStore } from '../parts.js';
import { ADDRESS_RE, INDEX_KEY_RE, keyOfHex, newKeyHex } from '../parts.js';
import {
  NOT_REGULAR,
  errorCode,
  fsyncDir,
  isNotFound,
  openRegular,
  readExactly,
  readRegularSync,
  writeFileAtomic,
} from './fsutil.js';

export const PARTS_DIR = 'parts';
const INDEX_DIR = 'index';
/** An index file holds one address: `sha256:` and 64 hex. */
const INDEX_FILE_BYTES = 71;

function hexOf(address: string): string {
  if (!ADDRESS_RE.test(address))
    throw new StoreError(
      'OPTION_INVALID',
      `${JSON.stringify(address)} is not a part address (sha256: and 64 lowercase hex digits)`,
    );
  return address.slice(7);
}

export interface FilePartStoreOptions {
  /** fsync each new file and its directory before `put` resolves (default true: a line must never reference a part a crash can lose). */
  fsync?: boolean;
}

export class FilePartStore implements PartStore {
  private readonly root: string;
  private readonly fsync: boolean;

  /** `dir`: the journal's directory; parts go in its `parts/` folder. */
  constructor(dir: string, options: FilePartStoreOptions = {}) {
    this.root = join(dir, PARTS_DIR);
    this.fsync = options.fsync ?? true;
  }

  /** The file that holds a part (for messages: it names what to restore). */
  pathOf(address: string): string {
    const hex = hexOf(address);
    return join(this.root, hex.slice(0, 2), hex.slice(2));
  }

  async get(address: string, size?: number): Promise<FoundPart> {
    const path = this.pathOf(address);
    let read;
    try {
      read = readRegularSync(path, Number.POSITIVE_INFINITY, size);
    } catch (e) {
      if (isNotFound(e)) return null;
      // Planted under the part's name, or in place of its folder: the journal's content is damaged, as with a
      // part of the wrong size, and verify reports it at the reference (PART_CORRUPT) instead of failing whole.
      const code = errorCode(e);
      if (code === NOT_REGULAR || code === 'ENOTDIR' || code === 'ELOOP')
        return { unreadable: `${path} cannot be read as a part's file (${code}: ${(e as Error).message})` };
      throw ioError('reading part', path, e);
    }
    return 'bytes' in read ? read.bytes : read;
  }

  async has(address: string): Promise<boolean> {
    const got = await this.get(address, -1);
    // A writer does not take a planted FIFO or directory for the part, nor write over it: it stops, as before.
    if (got !== null && 'unreadable' in got)
      throw new StoreError('IO_ERROR', `checking part ${address}: ${got.unreadable}`, {
        location: { file: this.pathOf(address) },
      });
    return got !== null;
  }

  async put(parts: readonly PartPayload[]): Promise<void> {
    const dirs = new Set<string>();
    for (const p of parts) {
      const path = this.pathOf(p.address);
      if (!(await this.has(p.address))) await this.write(path, p.bytes, dirs);
      if (p.indexKey === '') continue; // a copied part: no index entry (the copy's writer may store a repeat once)
      if (!INDEX_KEY_RE.test(p.indexKey))
        throw new StoreError(
          'OPTION_INVALID',
          `part index key ${JSON.stringify(p.indexKey)} is not 64 lowercase hex digits`,
        );
      await this.write(join(this.root, INDEX_DIR, p.indexKey.slice(0, 2), p.indexKey.slice(2)), p.address, dirs);
    }
    if (this.fsync) for (const d of dirs) await fsyncDir(d);
  }

  private async write(path: string, data: string | Uint8Array, dirs: Set<string>): Promise<void> {
    const dir = join(path, '..');
    try {
      await mkdir(dir, { recursive: true });
      await writeFileAtomic(path, data, { fsyncFile: this.fsync, fsyncDir: false });
    } catch (e) {
      throw ioError('writing part', path, e);
    }
    dirs.add(dir);
    dirs.add(join(dir, '..'));
  }

  async lookup(indexKey: string): Promise<string | null> {
    if (!INDEX_KEY_RE.test(indexKey)) return null;
    const path = join(this.root, INDEX_DIR, indexKey.slice(0, 2), indexKey.slice(2));
    let read;
    try {
      read = readRegularSync(path, INDEX_FILE_BYTES);
    } catch (e) {
      if (isNotFound(e)) return null;
      throw ioError('reading part index', path, e);
    }
    // A damaged index entry costs a second copy of a value, never a wrong reference: the writer checks
    // the part it finds (PartWriter), and an entry that is not an address is no entry.
    const text = 'bytes' in read ? Buffer.from(read.bytes).toString('utf8') : '';
    return ADDRESS_RE.test(text) ? text : null;
  }

  async delete(address: string): Promise<void> {
    const path = this.pathOf(address);
    await unlink(path).catch((e: unknown) => {
      if (!isNotFound(e)) throw ioError('removing part', path, e);
    });
    const index = join(this.root, INDEX_DIR);
    for (const sub of await listDir(index)) {
      for (const name of await listDir(join(index, sub))) {
        const file = join(index, sub, name);
        const text = await readFile(file, 'utf8').catch(() => '');
        if (text === address) await unlink(file).catch(() => {});
      }
    }
  }

  /** `parts/key`: 64 hex digits, created exclusively by the first writer (another one reads the winner's). */
  async key(): Promise<Uint8Array> {
    const path = join(this.root, 'key');
    for (let attempt = 0; attempt < 2; attempt++) {
      let opened;
      try {
        opened = await openRegular(path, 64);
      } catch (e) {
        if (!isNotFound(e)) throw ioError('reading the part key', path, e);
        await this.createKey(path);
        continue;
      }
      try {
        const text = (await readExactly(opened.handle, opened.size)).toString('utf8');
        const key = keyOfHex(text);
        if (key === null)
          throw new StoreError('JOURNAL_INVALID', `${path} is not 64 lowercase hex digits`, {
            location: { file: path },
            hint: 'restore it from a backup, or remove it: the next writer draws a new key and stores repeated content once more',
          });
        return key;
      } finally {
        await opened.handle.close();
      }
    }
    throw new StoreError('IO_ERROR', `${path} could not be created`, { location: { file: path } });
  }

  private async createKey(path: string): Promise<void> {
    await mkdir(this.root, { recursive: true }).catch((e: unknown) => {
      throw ioError('creating', this.root, e);
    });
    let fh;
    try {
      fh = await open(path, 'wx', 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return;
      throw ioError('creating the part key', path, e);
    }
    try {
      await fh.writeFile(newKeyHex());
      if (this.fsync) await fh.sync();
    } finally {
      await fh.close();
    }
    if (this.fsync) await fsyncDir(this.root);
  }

  async *list(): AsyncIterable<string> {
    for (const sub of await listDir(this.root)) {
      if (!/^[0-9a-f]{2}$/.test(sub)) continue;
      for (const name of await listDir(join(this.root, sub)))
        if (/^[0-9a-f]{62}$/.test(name)) yield `sha256:${sub}${name}`;
    }
  }
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch (e) {
    if (isNotFound(e)) return [];
    throw ioError('listing', dir, e);
  }
}
