/**
 * The strict ustar reader (spec/RECEIPT.md §3, §6.1, §7 steps 1–6), shared by the verifier and by the
 * source that re-reads a verified receipt: one header at a time, each judged by the profile (tar.ts), no
 * name twice, at most MAX_ENTRIES, zero padding, the two-block end marker and nothing but a bounded run of
 * zeros after it — and never a byte past the limit it is given, so a decompression bomb stops at the
 * first byte beyond what the manifest declares. Every failure is a FatalProblem. Pure.
 */
import type { ProblemLocation } from '../chain/report.js';
import { MAX_ENTRIES, MAX_TRAILING_ZEROS } from './limits.js';
import { FatalProblem } from './problems.js';
import { BLOCK, inspectHeader, isZeroBlock, paddedSize } from './tar.js';

/** Exact reads from a stream of chunks, counting the bytes handed out. */
export class ByteReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private off = 0;
  private done = false;
  /** Bytes handed out so far: the offset in the tar stream. */
  position = 0;
  constructor(private readonly src: AsyncGenerator<Uint8Array>) {}

  private async fill(): Promise<boolean> {
    while (this.off >= this.chunk.length) {
      if (this.done) return false;
      const r = await this.src.next();
      if (r.done) {
        this.done = true;
        return false;
      }
      this.chunk = r.value;
      this.off = 0;
    }
    return true;
  }

  /** Exactly n bytes, or fewer at the end of input. */
  async read(n: number): Promise<Uint8Array> {
    if (!(await this.fill())) return new Uint8Array(0);
    if (this.chunk.length - this.off >= n) {
      const out = this.chunk.subarray(this.off, this.off + n);
      this.off += n;
      this.position += n;
      return out;
    }
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n && (await this.fill())) {
      const take = Math.min(n - got, this.chunk.length - this.off);
      out.set(this.chunk.subarray(this.off, this.off + take), got);
      this.off += take;
      got += take;
    }
    this.position += got;
    return got === n ? out : out.subarray(0, got);
  }

  /** Passes the next n bytes to fn in pieces; returns how many there were (fewer at the end of input). */
  async stream(n: number, fn: (piece: Uint8Array) => void | Promise<void>): Promise<number> {
    let got = 0;
    while (got < n && (await this.fill())) {
      const take = Math.min(n - got, this.chunk.length - this.off);
      const wait = fn(this.chunk.subarray(this.off, this.off + take));
      if (wait !== undefined) await wait;
      this.off += take;
      got += take;
    }
    this.position += got;
    return got;
  }
}

export interface TarEntry {
  name: string;
  size: number;
}

export class TarReader {
  private readonly reader: ByteReader;
  private readonly seen = new Set<string>();
  /** Entries read so far. */
  entries = 0;
  private limit: number;
  private limitWhy: string;

  constructor(chunks: AsyncGenerator<Uint8Array>, limit: number, limitWhy: string) {
    this.reader = new ByteReader(chunks);
    this.limit = limit;
    this.limitWhy = limitWhy;
  }

  /** The most tar bytes the archive may have from now on, and why (in ARCHIVE_LIMIT's message). */
  setLimit(bytes: number, why: string): void {
    this.limit = bytes;
    this.limitWhy = why;
  }

  /** Refuses, before reading, `bytes` more that would take the archive past its limit (§6.1). */
  reserve(bytes: number, what: string, at: ProblemLocation = {}): void {
    if (this.reader.position + bytes > this.limit) {
      throw new FatalProblem(
        'ARCHIVE_LIMIT',
        `${what} would take the uncompressed archive to ${this.reader.position + bytes} bytes, past ${this.limit}: ${this.limitWhy}. Refused before inflating further (a decompression bomb, or a header that lies about its size)`,
        at,
      );
    }
  }

  /** Before an entry's data is read: its data and padding must fit within the limit (§7 step 6). */
  reserveData(entry: TarEntry): void {
    this.reserve(paddedSize(entry.size), `entry ${entry.name}'s ${entry.size} bytes of data and their padding`, {
      file: entry.name,
    });
  }

  /** The next entry's header, or null at the end marker (after the zeros allowed to follow it). */
  async next(): Promise<TarEntry | null> {
    this.reserve(BLOCK, 'a header block');
    const header = await this.reader.read(BLOCK);
    if (header.length < BLOCK) {
      throw new FatalProblem(
        'ARCHIVE_INVALID',
        header.length === 0
          ? 'the archive ends without the two-block end marker'
          : 'the archive ends inside a header block',
      );
    }
    if (isZeroBlock(header)) {
      await this.end();
      return null;
    }
    const verdict = inspectHeader(header);
    if (!verdict.ok) throw new FatalProblem(verdict.code, verdict.message, verdict.name ? { file: verdict.name } : {});
    const { name, size } = verdict;
    const at: ProblemLocation = { file: name };
    this.entries++;
    if (this.entries > MAX_ENTRIES)
      throw new FatalProblem('ARCHIVE_LIMIT', `the archive holds more than ${MAX_ENTRIES} entries`, at);
    if (this.seen.has(name))
      throw new FatalProblem(
        'ARCHIVE_UNSAFE',
        `entry ${name} appears twice; a later copy could shadow the verified one`,
        at,
      );
    this.seen.add(name);
    return { name, size };
  }

  /** The end marker's second block, and at most MAX_TRAILING_ZEROS zero bytes after it. */
  private async end(): Promise<void> {
    this.reserve(BLOCK, "the end marker's second block");
    const second = await this.reader.read(BLOCK);
    if (second.length < BLOCK || !isZeroBlock(second))
      throw new FatalProblem('ARCHIVE_INVALID', 'the end marker is not two zero blocks');
    let trailing = 0;
    for (;;) {
      const rest = await this.reader.read(Math.max(1, Math.min(64 * 1024, this.limit - this.reader.position)));
      if (rest.length === 0) return;
      this.reserve(0, 'zero bytes after the end marker');
      if (!isZeroBlock(rest)) throw new FatalProblem('ARCHIVE_INVALID', 'bytes other than zeros follow the end marker');
      trailing += rest.length;
      if (trailing > MAX_TRAILING_ZEROS)
        throw new FatalProblem('ARCHIVE_LIMIT', `more than ${MAX_TRAILING_ZEROS} zero bytes follow the end marker`);
    }
  }

  /** An entry's whole data, then its padding. */
  async readData(entry: TarEntry): Promise<Uint8Array> {
    const bytes = await this.reader.read(entry.size);
    if (bytes.length < entry.size)
      throw new FatalProblem(
        'ARCHIVE_INVALID',
        `the archive ends inside entry ${entry.name} (${bytes.length} of ${entry.size} bytes)`,
        { file: entry.name },
      );
    await this.padding(entry);
    return bytes;
  }

  /** An entry's data in pieces as they arrive (views: use each before the next read); the caller reads the padding after. */
  /** An entry's data as views passed to `fn`, which may return a promise to make the reader wait (backpressure). */
  async streamData(entry: TarEntry, fn: (piece: Uint8Array) => void | Promise<void>): Promise<void> {
    const got = await this.reader.stream(entry.size, fn);
    if (got < entry.size)
      throw new FatalProblem(
        'ARCHIVE_INVALID',
        `the archive ends inside entry ${entry.name} (${got} of ${entry.size} bytes)`,
        { file: entry.name },
      );
  }

  /** An entry's data as pieces of at most `pieceSize` bytes (views), pulled one at a time; the caller reads the padding after. */
  async *dataPieces(entry: TarEntry, pieceSize = 64 * 1024): AsyncGenerator<Uint8Array> {
    for (let left = entry.size; left > 0;) {
      const piece = await this.reader.read(Math.min(left, pieceSize));
      if (piece.length === 0)
        throw new FatalProblem(
          'ARCHIVE_INVALID',
          `the archive ends inside entry ${entry.name} (${entry.size - left} of ${entry.size} bytes)`,
          { file: entry.name },
        );
      left -= piece.length;
      yield piece;
    }
  }

  /** Skips an entry's data and padding. */
  async skip(entry: TarEntry): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/no-unused-expressions -- reading the pieces is the point: it drains the entry
    for await (const piece of this.dataPieces(entry)) piece;
    await this.padding(entry);
  }

  /** The zero bytes that pad an entry's data to a whole block. */
  async padding(entry: TarEntry): Promise<void> {
    const pad = (BLOCK - (entry.size % BLOCK)) % BLOCK;
    if (pad === 0) return;
    const bytes = await this.reader.read(pad);
    if (bytes.length < pad)
      throw new FatalProblem('ARCHIVE_INVALID', `the archive ends inside the padding of entry ${entry.name}`, {
        file: entry.name,
      });
    if (!isZeroBlock(bytes))
      throw new FatalProblem('ARCHIVE_INVALID', `the padding after entry ${entry.name} is not all zero bytes`, {
        file: entry.name,
      });
  }
}
