/**
 * The journal formats this implementation reads, chosen by the genesis `format` (spec/FORMAT.md §6.1, §10),
 * and the genesis itself: its check, its hash, a new one. Adding a format is adding its file and one entry
 * to FORMATS; everything that reads records asks here which profile applies.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { isObject } from '../canonical/json.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { RecordError } from './errors.js';
import { formatTimestamp, newStepId } from './fields.js';
import type { JournalFormat, RecordProfile } from './profile.js';
import { FORMAT_V1, JOURNAL_V1, type GenesisV1 } from './v1.js';

/** Every format this verifier reads; the first is the one new journals are created in. */
const FORMATS: readonly JournalFormat[] = [JOURNAL_V1];

export const DEFAULT_FORMAT: JournalFormat = FORMATS[0]!;
/** The genesis `format` of new journals. */
export const JOURNAL_FORMAT = FORMAT_V1;

/** A journal's genesis object (FORMAT §6.1); a union once there is more than one format. */
export type Genesis = GenesisV1;

/** The format a genesis `format` value names, or null when this verifier does not read it. */
export function journalFormat(format: unknown): JournalFormat | null {
  return FORMATS.find((f) => f.format === format) ?? null;
}

/**
 * The format of a genesis that passed genesisDefect. Anything else (a partial chain with no genesis, a
 * caller's object) gets the default format: its rules then report what does not fit.
 */
export function formatOf(genesis: unknown): JournalFormat {
  return (isObject(genesis) ? journalFormat(genesis.format) : null) ?? DEFAULT_FORMAT;
}

/** The profile `append` writes in a journal of this genesis. */
export function writerProfile(genesis: unknown): RecordProfile {
  return formatOf(genesis).records[0]!;
}

/** Checks a genesis object; returns the reason it is invalid, or null. */
export function genesisDefect(value: unknown): string | null {
  if (!isObject(value)) return 'the genesis must be a JSON object';
  const format = journalFormat(value.format);
  if (format !== null) return format.genesisDefect(value);
  // Members before the format, as a verifier of one format always judged them.
  const keys = Object.keys(value).sort().join(',');
  if (!FORMATS.some((f) => f.genesisMembers.join(',') === keys)) return DEFAULT_FORMAT.genesisDefect(value);
  return `unsupported genesis format ${JSON.stringify(value.format)}; this verifier reads ${FORMATS.map((f) => f.format).join(', ')}`;
}

export function makeGenesis(options: { journalId?: string; createdAt?: Date | string } = {}): Genesis {
  const createdAt = typeof options.createdAt === 'string' ? options.createdAt : formatTimestamp(options.createdAt ?? new Date());
  const genesis: Genesis = { format: FORMAT_V1, journal_id: options.journalId ?? newStepId(), created_at: createdAt };
  const defect = genesisDefect(genesis);
  if (defect) throw new RecordError('GENESIS_INVALID', defect);
  return genesis;
}

/** `"sha256:" + hex(SHA-256(JCS(genesis)))`: the first step's prev_hash. */
export function genesisHash(genesis: Genesis): string {
  return digestUtf8(canonicalJson(genesis));
}

/** Every member a redaction may stand in, under any format this verifier reads (REDACTION.md §4). */
export const REDACTABLE_MEMBERS: ReadonlySet<string> = new Set(FORMATS.flatMap((f) => f.records.flatMap((r) => r.redactable)));
