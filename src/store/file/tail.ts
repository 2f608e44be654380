/**
 * The committed end of a journal directory, read under the lock (spec/FILE-STORE.md §9): where the last
 * whole line ends, its seq and hash, and the idempotency window loaded on the way. A writer that takes the
 * lock afresh reads forward from what it knew (another process may have appended); a torn final line — a
 * writer that crashed mid-write — is quarantined and cut off; the head cache is repaired to match.
 */
import { readdir, open, stat, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import { isDigest } from '../../canonical/sha256.js';
import { formatOf, genesisHash, type Genesis } from '../../record/formats.js';
import { StoreError, ioError } from '../errors.js';
import type { IdempotencyIndex } from '../idempotency.js';
import { copyFrom, fsyncDir, isNotFound, readRegular, sizeOf, writeFileAtomic } from './fsutil.js';
import { MAX_HEAD_BYTES, bucketFirstSeq, bucketName, parseHead, serializeHead, type JournalPaths } from './layout.js';
import { readLastLine, readLines, seekLinesBack, type RawLine } from './lines.js';
import { checkPending, readPending, rollBackPending } from './batch.js';
import * as checks from './tail-checks.js';

/** Truncating a bucket never follows a symbolic link planted in its place. */
const REWRITE_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW;

/** Where the committed chain ends, as last read under the lock. */
export interface TailState {
  /** First seq of the bucket the next line goes to (if it fits). */
  bucket: number;
  /** Byte length of that bucket's whole lines. */
  size: number;
  seq: number;
  /** step_hash at `seq` (the genesis hash at -1); null only for a line counted but not parsed. */
  hash: string | null;
}

/** The bucket files of a journal, by first seq, sorted. */
export async function listBuckets(paths: JournalPaths): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(paths.buckets);
  } catch (e) {
    throw ioError('listing', paths.buckets, e);
  }
  const seqs: number[] = [];
  for (const n of names) {
    const s = bucketFirstSeq(n);
    if (s !== null) seqs.push(s);
  }
  return seqs.sort((a, b) => a - b);
}

export class Tail {
  /** Null until read, and again after anything went wrong: the next holder reads it afresh. */
  state: TailState | null = null;
  /** The tail bucket's inode when last read (ERASURE.md §4): another file now (an erasure's rename) is read afresh. */
  private seen: { bucket: number; ino: number } | null = null;
  /** The first seq from which the index holds every step read since (Infinity: none); see `window`. */
  private windowFrom = Infinity;
  /** On a first read (§9 step 2), the last two lines parsed, checked whole when the read is done; else null. */
  private lastRead: checks.ReadLine[] | null = null;

  /**
   * The idempotency index the sequencer asks (§10). A first read of the tail reads only the chain's last two
   * lines (§9 step 2), so an append costs the same at seq 10 and at seq 10 million; the window of the last W
   * steps is read from the chain, every line of it parsed and link-checked, the first time a caller's step_id
   * is looked up.
   */
  readonly window: IdempotencyIndex = {
    lookup: async (stepIds) => {
      await this.fillWindow();
      return this.index.lookup(stepIds);
    },
    committed: (entries) => this.index.committed(entries),
    clear: () => this.index.clear(),
  };

  constructor(
    private readonly paths: JournalPaths,
    private readonly genesis: Genesis,
    private readonly index: IdempotencyIndex & { readonly size: number },
    /** Whether head.json is written with a directory fsync ('always'). */
    private readonly durableHead: boolean,
  ) {}

  /**
   * Reads the true tail under the lock; a system error on the way is an IO_ERROR naming the buckets. A
   * pending batch (batch.ts) left by a writer that failed or died is rolled back first: its lines were never
   * committed.
   */
  async sync(): Promise<void> {
    try {
      const pending = await readPending(this.paths.dir);
      if (pending !== null) {
        await checkPending(this.paths, pending, genesisHash(this.genesis));
        await rollBackPending(this.paths.dir, this.paths, pending, this.durableHead);
        this.state = null;
      }
      const kept = this.state;
      const holds =
        kept !== null && (await this.sameBucketFile(kept.bucket)) && (await checks.tailLineHolds(this.paths, kept));
      if (!holds) this.state = null;
      await this.read();
      this.seen = await this.inodeOf(this.state!.bucket);
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw ioError('reading the tail of', this.paths.buckets, e);
    }
  }

  private async inodeOf(bucket: number): Promise<{ bucket: number; ino: number } | null> {
    const st = await stat(this.paths.bucket(bucket)).catch(() => null);
    return st === null ? null : { bucket, ino: st.ino };
  }

  /** Whether the kept state's bucket is still the file it was read from (or not yet created by anyone). */
  private async sameBucketFile(bucket: number): Promise<boolean> {
    const now = await this.inodeOf(bucket);
    if (now === null) return true;
    return this.seen !== null && this.seen.bucket === bucket && this.seen.ino === now.ino;
  }

  private async read(): Promise<void> {
    if (this.state !== null) return this.scanForward(0);
    try {
      this.lastRead = [];
      await this.firstRead();
      checks.checkLastLines(this.lastRead, formatOf(this.genesis));
      await this.repairHeadCache(); // after the checks: a refused chain keeps its cache as it was
    } catch (e) {
      this.state = null; // the next holder reads and checks it afresh
      throw e;
    } finally {
      this.lastRead = null;
    }
  }

  private async firstRead(): Promise<void> {
    const buckets = await listBuckets(this.paths);
    await checks.checkLastBuckets(this.paths, buckets);
    this.index.clear();
    this.windowFrom = Infinity;
    if (buckets.length === 0) {
      this.state = { bucket: 0, size: 0, seq: -1, hash: genesisHash(this.genesis) };
      this.windowFrom = 0;
    } else if (!(await this.readLastTwo(buckets[buckets.length - 1]!))) {
      // Fewer than two whole lines in the last bucket, or a last line that does not parse: read the window.
      const head = await this.headSeq(buckets);
      await this.readWindow(buckets, Math.max(0, head - this.index.size + 1));
    }
  }

  /** Reads from the start of the bucket holding `from` (lines before it counted, not parsed) to the end. */
  private async readWindow(buckets: readonly number[], from: number): Promise<void> {
    let start = 0;
    for (let i = 0; i < buckets.length; i++) if (buckets[i]! <= from) start = i;
    const first = buckets[start]!;
    this.index.clear();
    this.state = { bucket: first, size: 0, seq: first - 1, hash: first === 0 ? genesisHash(this.genesis) : null };
    this.windowFrom = from;
    await this.scanForward(from);
  }

  /**
   * The first read's short way (§9 step 2): from the line before the last whole line of the last bucket, so
   * the last line is parsed and linked to the one before it, then on to the end (a torn line quarantined).
   * False, having read nothing, when the bucket holds fewer than two whole lines or the line does not parse.
   */
  private async readLastTwo(bucket: number): Promise<boolean> {
    const back = await seekLinesBack(this.paths.bucket(bucket), 1, 2 * MAX_LINE_BYTES + 2);
    if (back === null) return false;
    let seq: unknown;
    try {
      seq = (JSON.parse(back.text) as { seq?: unknown }).seq;
    } catch {
      return false;
    }
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < bucket) return false;
    this.state = { bucket, size: back.start, seq: seq - 1, hash: seq === 0 ? genesisHash(this.genesis) : null };
    this.windowFrom = seq;
    await this.scanForward(0);
    return true;
  }

  /**
   * Fills the index with the last W steps (§10) under the lock, reading them from the chain as a first read
   * did before the short way: every line parsed, linked to the one before it, and the window's end must be
   * the tail already read. Nothing to do when the steps read since the tail's first read cover the window.
   */
  private async fillWindow(): Promise<void> {
    const tail = this.state!;
    const from = Math.max(0, tail.seq - this.index.size + 1);
    if (this.windowFrom <= from) return;
    await this.readWindow(await listBuckets(this.paths), from);
    const now = this.state!;
    if (now.seq !== tail.seq || now.hash !== tail.hash || now.bucket !== tail.bucket || now.size !== tail.size) {
      this.state = null;
      throw new StoreError(
        'JOURNAL_CORRUPT',
        `the chain of ${this.paths.dir} ends at seq ${now.seq}, not at its tail ${tail.seq} as read under the lock`,
        {
          location: { file: this.paths.bucket(now.bucket), seq: now.seq },
          hint: 'run verify on the journal',
        },
      );
    }
  }

  /** The seq of the last whole line: read from it, or counted when it does not parse. */
  private async headSeq(buckets: readonly number[]): Promise<number> {
    for (let i = buckets.length - 1; i >= 0; i--) {
      const { line } = await readLastLine(this.paths.bucket(buckets[i]!));
      if (line === null) continue;
      let seq: unknown;
      try {
        seq = (JSON.parse(line.bytes.toString('utf8')) as { seq?: unknown }).seq;
      } catch {
        seq = undefined;
      }
      return typeof seq === 'number' && Number.isSafeInteger(seq)
        ? seq
        : buckets[i]! + (await this.countLines(buckets[i]!)) - 1;
    }
    return buckets[buckets.length - 1]! - 1;
  }

  private async countLines(first: number): Promise<number> {
    let n = 0;
    for await (const l of readLines(this.paths.bucket(first))) if (l.terminated) n++;
    return n;
  }

  /** Reads whole lines past the known tail, across buckets; quarantines a torn final line. */
  private async scanForward(parseFrom: number): Promise<void> {
    const tail = this.state!;
    for (;;) {
      const path = this.paths.bucket(tail.bucket);
      const size = await sizeOf(path).catch((e: unknown) => {
        throw ioError('reading', path, e);
      });
      if (size === null) {
        if (tail.size === 0 && tail.seq === tail.bucket - 1) return; // the next bucket is not created yet
        throw new StoreError(
          'JOURNAL_CORRUPT',
          `bucket ${path} disappeared after seq ${tail.seq} was committed in it`,
          {
            location: { file: path, seq: tail.seq },
            hint: 'restore the bucket from a backup',
          },
        );
      }
      if (size < tail.size) {
        throw new StoreError(
          'JOURNAL_CORRUPT',
          `bucket ${path} shrank to ${size} bytes below its committed ${tail.size}`,
          {
            location: { file: path, seq: tail.seq },
            hint: 'committed steps were removed; restore the bucket from a backup',
          },
        );
      }
      if (size > tail.size) await this.readBucket(path, parseFrom);
      const next = tail.seq + 1;
      if (next === tail.bucket || (await sizeOf(this.paths.bucket(next))) === null) return;
      tail.bucket = next;
      tail.size = 0;
    }
  }

  /** The lines of one bucket past the known tail; a torn final line is quarantined. */
  private async readBucket(path: string, parseFrom: number): Promise<void> {
    const tail = this.state!;
    for await (const raw of readLines(path, tail.size, MAX_LINE_BYTES)) {
      if (!raw.terminated) {
        // Only the journal's final line can be a torn write; a later bucket means damage, not a crash.
        if (tail.seq + 1 !== tail.bucket && (await sizeOf(this.paths.bucket(tail.seq + 1))) !== null) {
          throw new StoreError(
            'JOURNAL_CORRUPT',
            `${path} ends inside a line, but bucket ${bucketName(tail.seq + 1)} follows it`,
            {
              location: { file: path, seq: tail.seq + 1 },
              hint: 'run verify on the journal and restore the bucket from a backup',
            },
          );
        }
        await this.quarantine(path, raw.start);
        break;
      }
      this.absorb(raw, path, tail.seq + 1 >= parseFrom);
      tail.size = raw.end;
    }
  }

  /** One whole line past the tail: it must be the next step and link to it (when parsed); it joins the window. */
  private absorb(raw: RawLine, path: string, parse: boolean): void {
    const tail = this.state!;
    const seq = tail.seq + 1;
    if (!parse) {
      tail.seq = seq;
      tail.hash = null;
      return;
    }
    const corrupt = (why: string): never => {
      throw new StoreError(
        'JOURNAL_CORRUPT',
        `${path} line ${seq - tail.bucket + 1} (seq ${seq}): ${why}; refusing to append to a broken chain`,
        {
          location: { file: path, line: seq - tail.bucket + 1, seq },
          hint: 'run verify on the journal to see every problem',
        },
      );
    };
    if (raw.tooLong) return corrupt(`the line is longer than ${MAX_LINE_BYTES} bytes`);
    checks.refuseDeepLine(raw.bytes, path, seq - tail.bucket + 1, seq);
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(raw.bytes.toString('utf8')) as Record<string, unknown>;
    } catch {
      return corrupt('not JSON');
    }
    if (rec === null || typeof rec !== 'object') return corrupt('not a JSON object');
    if (rec.seq !== seq) return corrupt(`seq is ${String(rec.seq)}`);
    if (!isDigest(rec.step_hash)) return corrupt('step_hash is not a digest');
    if (tail.hash !== null && rec.prev_hash !== tail.hash) return corrupt(`prev_hash does not link to seq ${tail.seq}`);
    tail.seq = seq;
    tail.hash = rec.step_hash;
    if (this.lastRead !== null) {
      this.lastRead.push({ path, line: seq - tail.bucket + 1, seq, bytes: raw.bytes });
      if (this.lastRead.length > 2) this.lastRead.shift();
    }
    if (typeof rec.step_id === 'string') {
      const key = formatOf(this.genesis)
        .select((n) => rec[n])
        .recordKey(rec);
      this.index.committed([
        [rec.step_id, { seq, step_hash: rec.step_hash, prev_hash: rec.prev_hash as string, key, ts: rec.ts as string }],
      ]);
    }
  }

  /** Moves a torn final line (bytes from `from` to the end) into a quarantine file, then cuts it off. */
  private async quarantine(path: string, from: number): Promise<void> {
    try {
      const base = path.slice(path.lastIndexOf('/') + 1);
      const taken = new Set(await readdir(this.paths.buckets));
      let n = 1;
      while (taken.has(`${base}.quarantine-${n}`)) n++;
      const fh = await open(`${path}.quarantine-${n}`, 'wx');
      try {
        await copyFrom(path, from, fh);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsyncDir(this.paths.buckets);
      const bh = await open(path, REWRITE_FLAGS);
      try {
        await bh.truncate(from);
        await bh.sync();
      } finally {
        await bh.close();
      }
    } catch (e) {
      throw ioError('quarantining the torn tail of', path, e);
    }
  }

  /** Rewrites head.json unless it already names the tail (§7); removes it from an empty journal. */
  private async repairHeadCache(): Promise<void> {
    const tail = this.state!;
    let [cached, present]: [{ seq: number; step_hash: string } | null, boolean] = [null, true];
    try {
      cached = parseHead((await readRegular(this.paths.head, MAX_HEAD_BYTES)).toString('utf8'));
    } catch (e) {
      // Unreadable (a FIFO, too large, …) is stale like a wrong one: it is replaced below.
      present = !isNotFound(e);
    }
    if (tail.seq < 0) {
      if (present) await unlink(this.paths.head).catch(() => {});
      return;
    }
    if (cached !== null) checks.refuseCacheAhead(this.paths, cached.seq, tail.seq, this.durableHead);
    if (cached?.seq !== tail.seq || cached.step_hash !== tail.hash) await this.writeHeadCache();
  }

  /** Brings head.json up to the tail. The cache is only a cache: a failure here is left to the next writer. */
  async writeHeadCache(): Promise<void> {
    const tail = this.state;
    // eslint-disable-next-line @typescript-eslint/prefer-optional-chain -- `tail?.hash === null` is false for a null tail, which would then be read
    if (tail === null || tail.hash === null || tail.seq < 0) return;
    try {
      await writeFileAtomic(this.paths.head, serializeHead({ seq: tail.seq, step_hash: tail.hash }), {
        fsyncFile: false,
        fsyncDir: this.durableHead,
      });
    } catch {
      // The chain is the truth, and the next open rewrites it.
    }
  }
}
