/**
 * Names and the metadata file of a journal directory (spec/FORMAT.md §8–§4, §8). The metadata
 * file is input like any other: it is parsed defensively and every defect becomes JOURNAL_INVALID.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { isDigest } from '../canonical/sha256.js';
import { genesisDefect, type Genesis } from '../chain/record.js';
import { StoreError } from './errors.js';
import type { JournalConfig, Lineage } from './types.js';

/** The store's own format id, inside journal.json. */
export const STORE_FORMAT = 'stepchain-journal/v1';
export const META_FILE = 'journal.json';
export const HEAD_FILE = 'head.json';
export const BUCKETS_DIR = 'buckets';
export const BLOBS_DIR = 'blobs/sha256';

export const DEFAULT_BUCKET_BYTES = 64 * 1024 * 1024;
export const MIN_BUCKET_BYTES = 4096;
export const MAX_BUCKET_BYTES = 2 ** 40;
export const DEFAULT_BLOB_THRESHOLD = 64 * 1024;
export const MIN_BLOB_THRESHOLD = 1024;
/** Capped far below MAX_LINE_BYTES, so five inline content fields always fit one line. */
export const MAX_BLOB_THRESHOLD = 1024 * 1024;

const BUCKET_RE = /^(\d{16})\.jsonl$/;
const QUARANTINE_RE = /^\d{16}\.jsonl\.quarantine-\d+$/;

export function bucketName(firstSeq: number): string {
  return `${String(firstSeq).padStart(16, '0')}.jsonl`;
}

/** The first seq a bucket's name declares, or null when the name is not a bucket's. */
export function bucketFirstSeq(name: string): number | null {
  const m = BUCKET_RE.exec(name);
  return m ? Number(m[1]) : null;
}

export function isQuarantineName(name: string): boolean {
  return QUARANTINE_RE.test(name);
}

export function blobFileName(digest: string): string {
  return digest.slice('sha256:'.length);
}

export interface JournalMeta {
  format: typeof STORE_FORMAT;
  genesis: Genesis;
  config: JournalConfig;
  lineage: Lineage | null;
}

export function serializeMeta(meta: JournalMeta): string {
  return canonicalJson(meta) + '\n';
}

export function parseMeta(text: string, file: string): JournalMeta {
  const bad = (why: string): never => {
    throw new StoreError('JOURNAL_INVALID', `${file}: ${why}`, { location: { file }, hint: 'restore the metadata file from a backup; the buckets are untouched' });
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return bad('not JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return bad('not a JSON object');
  const m = doc as Record<string, unknown>;
  if (m.format !== STORE_FORMAT) return bad(`format is ${JSON.stringify(m.format)}, this version reads ${STORE_FORMAT}`);
  const defect = genesisDefect(m.genesis);
  if (defect) return bad(`genesis: ${defect}`);
  const c = m.config as Record<string, unknown> | null;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return bad('config must be an object');
  const intIn = (v: unknown, lo: number, hi: number): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= lo && v <= hi;
  if (!intIn(c.bucket_bytes, MIN_BUCKET_BYTES, MAX_BUCKET_BYTES)) return bad(`config.bucket_bytes must be an integer from ${MIN_BUCKET_BYTES} to ${MAX_BUCKET_BYTES}`);
  if (!intIn(c.blob_threshold, MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD)) return bad(`config.blob_threshold must be an integer from ${MIN_BLOB_THRESHOLD} to ${MAX_BLOB_THRESHOLD}`);
  let lineage: Lineage | null = null;
  if (m.lineage !== null && m.lineage !== undefined) {
    const l = m.lineage as Record<string, unknown>;
    if (typeof l !== 'object' || Array.isArray(l)) return bad('lineage must be an object or null');
    if (typeof l.parent_journal !== 'string' || l.parent_journal.length === 0) return bad('lineage.parent_journal must be a non-empty string');
    if (!isDigest(l.parent_genesis_hash)) return bad('lineage.parent_genesis_hash must be a sha256 digest');
    if (!intIn(l.from_step, 0, Number.MAX_SAFE_INTEGER)) return bad('lineage.from_step must be a non-negative integer');
    if (!isDigest(l.parent_step_hash)) return bad('lineage.parent_step_hash must be a sha256 digest');
    lineage = { parent_journal: l.parent_journal, parent_genesis_hash: l.parent_genesis_hash, from_step: l.from_step, parent_step_hash: l.parent_step_hash };
  }
  return { format: STORE_FORMAT, genesis: m.genesis as Genesis, config: { bucket_bytes: c.bucket_bytes, blob_threshold: c.blob_threshold }, lineage };
}

/** The head cache's content: JCS of {seq, step_hash} and a newline. */
export function serializeHead(head: { seq: number; step_hash: string }): string {
  return `{"seq":${head.seq},"step_hash":${JSON.stringify(head.step_hash)}}\n`;
}

export function parseHead(text: string): { seq: number; step_hash: string } | null {
  if (text.length > 200) return null;
  try {
    const h = JSON.parse(text) as Record<string, unknown>;
    if (h === null || typeof h !== 'object' || Object.keys(h).length !== 2) return null;
    if (typeof h.seq !== 'number' || !Number.isSafeInteger(h.seq) || h.seq < 0 || !isDigest(h.step_hash)) return null;
    return { seq: h.seq, step_hash: h.step_hash };
  } catch {
    return null;
  }
}

export { MAX_LINE_BYTES };
