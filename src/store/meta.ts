/**
 * A journal's metadata (spec/FILE-STORE.md §4): its store format, genesis, config and lineage, serialized as
 * the file store's journal.json holds them. Every store keeps this one document, byte for byte (the
 * Postgres store in its journals row, spec/POSTGRES.md §4), so it is written and read here, once. The
 * document is input like any other: it is parsed defensively and every defect becomes JOURNAL_INVALID.
 * Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { isDigest } from '../canonical/sha256.js';
import { genesisDefect, type Genesis } from '../record/index.js';
import { MAX_BLOB_THRESHOLD, MAX_SEGMENT_BYTES, MIN_BLOB_THRESHOLD, MIN_SEGMENT_BYTES } from './config.js';
import { StoreError } from './errors.js';
import { isJournalId } from './ids.js';
import type { JournalConfig, Lineage } from './types.js';

/** The store's own format id, inside the metadata. */
export const STORE_FORMAT = 'stepchain-journal/v1';

export interface JournalMeta {
  format: typeof STORE_FORMAT;
  genesis: Genesis;
  config: JournalConfig;
  lineage: Lineage | null;
}

/** journal.json: JCS of its members (the config under its on-disk names, §4) and a newline. */
export function serializeMeta(meta: JournalMeta): string {
  const { blobThreshold, segmentBytes } = meta.config;
  return (
    canonicalJson({
      config: { blob_threshold: blobThreshold, bucket_bytes: segmentBytes },
      format: meta.format,
      genesis: meta.genesis,
      lineage: meta.lineage,
    }) + '\n'
  );
}

/**
 * Reads journal.json strictly (§4): exactly the four members, each by its rule, and the bytes exactly
 * JCS of them plus a newline. A member nobody defined (`__proto__` included) or a lineage naming a parent
 * outside the store root is a file this version did not write: JOURNAL_INVALID, naming the member.
 */
export function parseMeta(text: string, file: string): JournalMeta {
  const bad = (why: string): never => {
    throw new StoreError('JOURNAL_INVALID', `${file}: ${why}`, {
      location: { file },
      hint: 'restore the metadata file from a backup; the buckets are untouched',
    });
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return bad('not JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return bad('not a JSON object');
  const m = doc as Record<string, unknown>;
  exactMembers(m, ['config', 'format', 'genesis', 'lineage'], '', bad);
  if (m.format !== STORE_FORMAT)
    return bad(`format is ${JSON.stringify(m.format)}, this version reads ${STORE_FORMAT}`);
  const defect = genesisDefect(m.genesis);
  if (defect) return bad(`genesis: ${defect}`);
  const c = m.config as Record<string, unknown> | null;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) return bad('config must be an object');
  exactMembers(c, ['blob_threshold', 'bucket_bytes'], 'config.', bad);
  const intIn = (v: unknown, lo: number, hi: number): v is number =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= lo && v <= hi;
  if (!intIn(c.bucket_bytes, MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES))
    return bad(`config.bucket_bytes must be an integer from ${MIN_SEGMENT_BYTES} to ${MAX_SEGMENT_BYTES}`);
  if (!intIn(c.blob_threshold, MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD))
    return bad(`config.blob_threshold must be an integer from ${MIN_BLOB_THRESHOLD} to ${MAX_BLOB_THRESHOLD}`);
  let lineage: Lineage | null = null;
  if (m.lineage !== null) {
    const l = m.lineage as Record<string, unknown>;
    if (typeof l !== 'object' || Array.isArray(l)) return bad('lineage must be an object or null');
    exactMembers(l, ['from_step', 'parent_genesis_hash', 'parent_journal', 'parent_step_hash'], 'lineage.', bad);
    if (typeof l.parent_journal !== 'string' || !isJournalId(l.parent_journal)) {
      return bad(
        `lineage.parent_journal must be a journal id (1–200 characters from [A-Za-z0-9_.-], no "..", no leading "."), the parent's name in the same store; found ${JSON.stringify(l.parent_journal)}`,
      );
    }
    if (!isDigest(l.parent_genesis_hash)) return bad('lineage.parent_genesis_hash must be a sha256 digest');
    if (!intIn(l.from_step, 0, Number.MAX_SAFE_INTEGER))
      return bad('lineage.from_step must be an integer from 0 to 2^53 - 1');
    if (!isDigest(l.parent_step_hash)) return bad('lineage.parent_step_hash must be a sha256 digest');
    lineage = {
      parent_journal: l.parent_journal,
      parent_genesis_hash: l.parent_genesis_hash,
      from_step: l.from_step,
      parent_step_hash: l.parent_step_hash,
    };
  }
  const meta: JournalMeta = {
    format: STORE_FORMAT,
    genesis: m.genesis as Genesis,
    config: { blobThreshold: c.blob_threshold, segmentBytes: c.bucket_bytes },
    lineage,
  };
  // Every member checked: what is left to differ is the encoding (whitespace, order, escapes, duplicates, the newline).
  if (serializeMeta(meta) !== text)
    return bad('not in canonical form: the file must be JCS (RFC 8785) of its members followed by one newline');
  return meta;
}

/** Refuses a member outside `names` and a missing one, naming it (own keys: `__proto__` from JSON.parse counts). */
function exactMembers(
  o: Record<string, unknown>,
  names: readonly string[],
  prefix: string,
  bad: (why: string) => never,
): void {
  for (const k of Object.keys(o))
    if (!names.includes(k))
      bad(
        `unknown member ${JSON.stringify(prefix + k)}; ${prefix ? prefix.slice(0, -1) : 'the file'} has exactly ${names.join(', ')}`,
      );
  for (const k of names)
    if (!Object.prototype.hasOwnProperty.call(o, k)) bad(`missing member ${JSON.stringify(prefix + k)}`);
}
