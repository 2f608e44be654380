/**
 * Names and the metadata files of a journal directory (spec/FILE-STORE.md §3–§7). journal.json holds the
 * metadata document every store keeps (../meta.ts); head.json is the file store's own head cache.
 */
import { join } from 'node:path';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import { isDigest } from '../../canonical/sha256.js';
import { isObject } from '../../canonical/json.js';
import { segmentLabel } from '../segments.js';
export { STORE_FORMAT, serializeMeta, parseMeta, type JournalMeta } from '../meta.js';

export const META_FILE = 'journal.json';
export const HEAD_FILE = 'head.json';
/** A run reader's saved state (§19); its leading dot keeps it out of §13's directory check. */
export const RUN_STATE_FILE = '.run-state.json';
/** A saved run state larger than this is not read (the run is folded from its records instead). */
export const MAX_RUN_STATE_BYTES = 64 * 1024 * 1024;
export const BUCKETS_DIR = 'buckets';
export const BLOBS_DIR = 'blobs/sha256';
/** The Merkle tree's tiles and state, and the signed checkpoints (§16): named here, not in tree.ts, so a
 * verifier that only checks the layout does not load the tree's code. */
export const TREE_DIR = 'tree';
export const CHECKPOINTS_DIR = 'checkpoints';

/** journal.json is a few hundred bytes (ids ≤ 200 characters, two digests); a reader reads no more than this. */
export const MAX_META_BYTES = 4096;
/** head.json is under 100 bytes. */
export const MAX_HEAD_BYTES = 256;

const BUCKET_RE = /^(\d{16})\.jsonl$/;
const QUARANTINE_RE = /^\d{16}\.jsonl\.quarantine-\d+$/;

/** A bucket file is named by its segment's label: its first seq in 16 digits, then ".jsonl". */
export const bucketName = segmentLabel;

/** The first seq a bucket's name declares, or null when the name is not a bucket's. */
export function bucketFirstSeq(name: string): number | null {
  const m = BUCKET_RE.exec(name);
  if (m === null) return null;
  const seq = Number(m[1]);
  // Above 2^53 - 1 no seq can start it, and the number would round: such a name is not a bucket's (§5).
  return seq <= Number.MAX_SAFE_INTEGER ? seq : null;
}

/** Whether `name` has a bucket's form but a number no seq can have (above 2^53 - 1). */
export function isOutOfRangeBucketName(name: string): boolean {
  return BUCKET_RE.test(name) && bucketFirstSeq(name) === null;
}

export function isQuarantineName(name: string): boolean {
  return QUARANTINE_RE.test(name);
}

export function blobFileName(digest: string): string {
  return digest.slice('sha256:'.length);
}

/** Where one journal directory keeps its parts (§3). */
export class JournalPaths {
  readonly buckets: string;
  readonly blobs: string;
  readonly head: string;

  constructor(readonly dir: string) {
    this.buckets = join(dir, BUCKETS_DIR);
    this.blobs = join(dir, BLOBS_DIR);
    this.head = join(dir, HEAD_FILE);
  }

  bucket(firstSeq: number): string {
    return join(this.buckets, bucketName(firstSeq));
  }

  blob(digest: string): string {
    return join(this.blobs, blobFileName(digest));
  }
}

/** The head cache's content: JCS of {seq, step_hash} and a newline. */
export function serializeHead(head: { seq: number; step_hash: string }): string {
  return `{"seq":${head.seq},"step_hash":${JSON.stringify(head.step_hash)}}\n`;
}

/** The head cache's value, or null unless it is exactly serializeHead's form (§7). */
export function parseHead(text: string): { seq: number; step_hash: string } | null {
  if (text.length > MAX_HEAD_BYTES) return null;
  try {
    const h: unknown = JSON.parse(text);
    if (!isObject(h) || Object.keys(h).length !== 2) return null;
    if (typeof h.seq !== 'number' || !Number.isSafeInteger(h.seq) || h.seq < 0 || !isDigest(h.step_hash)) return null;
    const head = { seq: h.seq, step_hash: h.step_hash };
    return serializeHead(head) === text ? head : null;
  } catch {
    return null;
  }
}

export { MAX_LINE_BYTES };
