// The naive baseline (issue 9): what a careful engineer writes first, in about a hundred straightforward
// lines. Every append takes a proper-lockfile lock, reads the tail, canonicalizes the record with the
// `canonicalize` package, hashes it, appends the line, fsyncs and releases. Verification parses every
// line, re-canonicalizes it without step_hash, re-hashes and checks the link. The record format is
// stepchain's (spec/FORMAT.md §5), so the naive verifier also runs on the store's own bucket files.
import { createHash, randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  readFileSync,
  readSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import canonicalize from 'canonicalize';
import lockfile from 'proper-lockfile';

const sha256 = (text) => 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');

export class NaiveJournal {
  /** `path` is a JSONL file; `genesisHash` starts the chain. */
  constructor(path, genesisHash, { fsync = true } = {}) {
    this.path = path;
    this.genesisHash = genesisHash;
    this.fsync = fsync;
    if (!existsSync(path)) writeFileSync(path, '');
  }

  /** The last line's seq and step_hash, read from the file (another process may have appended). */
  tail() {
    const text = readTail(this.path);
    if (text === null) return { seq: -1, hash: this.genesisHash };
    const last = JSON.parse(text);
    return { seq: last.seq, hash: last.step_hash };
  }

  async append(step) {
    const release = await lockfile.lock(this.path, {
      retries: { retries: 1000, minTimeout: 1, maxTimeout: 20 },
      stale: 10_000,
    });
    try {
      const { seq, hash } = this.tail();
      const record = {
        v: 1,
        seq: seq + 1,
        step_id: randomUUID(),
        ts: new Date().toISOString(),
        prev_hash: hash,
        ...step,
      };
      record.step_hash = sha256(canonicalize(record));
      const fd = openSync(this.path, 'a');
      try {
        writeSync(fd, canonicalize(record) + '\n');
        if (this.fsync) fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return { seq: record.seq, step_hash: record.step_hash };
    } finally {
      await release();
    }
  }
}

/** The last line of a file, reading backwards from the end in growing chunks. */
function readTail(path) {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    for (let want = 4096; ; want *= 4) {
      const n = Math.min(size, want);
      const buf = Buffer.allocUnsafe(n);
      readSync(fd, buf, 0, n, size - n);
      const start = buf.lastIndexOf(0x0a, n - 2) + 1;
      if (start > 0 || n === size) return buf.toString('utf8', start, n - 1);
    }
  } finally {
    closeSync(fd);
  }
}

/** Verifies JSONL files (in order) from `genesisHash`: parse, re-canonicalize, re-hash, check the link. */
export function naiveVerify(paths, genesisHash) {
  let prev = genesisHash;
  let expectSeq = 0;
  let steps = 0;
  const problems = [];
  for (const path of paths) {
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.pop(); // the text after the final newline
    for (const line of lines) {
      const record = JSON.parse(line);
      const { step_hash: stored, ...rest } = record;
      if (sha256(canonicalize(rest)) !== stored) problems.push(`seq ${record.seq}: hash mismatch`);
      if (record.prev_hash !== prev) problems.push(`seq ${record.seq}: broken link`);
      if (record.seq !== expectSeq) problems.push(`seq ${record.seq}: expected ${expectSeq}`);
      prev = stored;
      expectSeq++;
      steps++;
    }
  }
  return { ok: problems.length === 0, steps, head: prev, problems };
}
