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
import type { FormatCapabilities, JournalFormat, RecordProfile } from './profile.js';
import { FORMAT_V1, JOURNAL_V1, type GenesisV1 } from './v1.js';
import { FORMAT_V2, JOURNAL_V2, type GenesisV2, type RunIdentity } from './v2.js';
import { FORMAT_V3, JOURNAL_V3, type GenesisV3 } from './v3.js';

/** Every format this verifier reads; the first is the plain format of a bare `store.create(id)`. */
const FORMATS: readonly JournalFormat[] = [JOURNAL_V1, JOURNAL_V2, JOURNAL_V3];

/**
 * The plain format (`stepchain/v1`): what a bare `store.create(id)` writes, and the rules a genesis of no
 * format this verifier reads is judged by (its problems are reported as they always were).
 */
export const DEFAULT_FORMAT: JournalFormat = FORMATS[0]!;
/** The genesis `format` of a journal created with no run identity and no format (`store.create(id)`). */
export const JOURNAL_FORMAT = FORMAT_V1;
/**
 * The format of new journals: startRun, the adapters, the MCP proxy, `stepchain collect`, a journal created
 * with a run identity and no format, and `stepchain init` (plain journals too: a v3 genesis with an empty
 * `run`). The one constant that decides it. An existing journal keeps the format of its genesis.
 */
export const NEW_RUN_FORMAT: RunFormat = FORMAT_V3;

/** A run journal's format (FORMAT §11, §14): what startRun, the adapters and the MCP proxy may be asked for. */
export type RunFormat = typeof FORMAT_V2 | typeof FORMAT_V3;

/** The formats whose genesis names a run, in FORMATS order (the stores' run listings select by them). */
export const RUN_FORMATS: readonly RunFormat[] = FORMATS.filter((f) => f.capabilities.runRecords).map(
  (f) => f.format as RunFormat,
);

/** The format that holds approval records (spec/APPROVALS.md): what a message tells a caller to create. */
export const APPROVAL_FORMAT: RunFormat = FORMAT_V3;

/** Whether a value names a run journal's format. */
export function isRunFormat(format: unknown): format is RunFormat {
  return (RUN_FORMATS as readonly unknown[]).includes(format);
}

/**
 * What the journal of this genesis can hold (FormatCapabilities). A genesis of no format this verifier reads
 * gets the default format's, which hold nothing beyond plain steps: the journal's check reports the genesis.
 */
export function capabilitiesOf(genesis: unknown): FormatCapabilities {
  return formatOf(genesis).capabilities;
}

/** The format a short name names (`v2` for `stepchain/v2`), as the CLI's --format takes it, or null. */
export function formatNamed(short: unknown): JournalFormat | null {
  return typeof short === 'string' ? journalFormat(`stepchain/${short}`) : null;
}

/** The short name of a format (`v2`), as the CLI's --format takes it. */
export function shortName(format: string): string {
  return format.slice(format.indexOf('/') + 1);
}

/** A journal's genesis object (FORMAT §6.1, §11.1). */
export type Genesis = GenesisV1 | GenesisV2 | GenesisV3;

/** Whether a genesis is a run journal's (it names a run: FORMAT §11.1), by its format's capabilities. */
export function isRunGenesis(genesis: Genesis): genesis is GenesisV2 | GenesisV3 {
  return formatOf(genesis).capabilities.runRecords;
}

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

/** A journal format a caller may name when creating a journal. */
export type CreatableFormat = typeof FORMAT_V1 | typeof FORMAT_V2 | typeof FORMAT_V3;

/**
 * A new genesis: the format `format` names — `stepchain/v1`, `stepchain/v2` (a run journal, FORMAT §11.1,
 * whose records hash salted slot commitments, §12) or `stepchain/v3` (§14: every member, element and chunk
 * committed); with no `format`, NEW_RUN_FORMAT when `run` is given, else `stepchain/v1`. The identity is part
 * of the genesis hash.
 */
export function makeGenesis(
  options: { journalId?: string; createdAt?: Date | string; run?: RunIdentity; format?: CreatableFormat } = {},
): Genesis {
  const createdAt =
    typeof options.createdAt === 'string' ? options.createdAt : formatTimestamp(options.createdAt ?? new Date());
  const journalId = options.journalId ?? newStepId();
  const format = options.format ?? (options.run === undefined ? FORMAT_V1 : NEW_RUN_FORMAT);
  if (format === FORMAT_V1 && options.run !== undefined)
    throw new RecordError(
      'GENESIS_INVALID',
      'a stepchain/v1 journal holds no run identity: create a run journal (v2 or v3)',
    );
  const genesis: Genesis =
    format === FORMAT_V3
      ? { format: FORMAT_V3, journal_id: journalId, created_at: createdAt, run: options.run ?? {} }
      : format === FORMAT_V1
        ? { format: FORMAT_V1, journal_id: journalId, created_at: createdAt }
        : { format: FORMAT_V2, journal_id: journalId, created_at: createdAt, run: options.run ?? {} };
  const defect = genesisDefect(genesis);
  if (defect) throw new RecordError('GENESIS_INVALID', defect);
  return genesis;
}

/** `"sha256:" + hex(SHA-256(JCS(genesis)))`: the first step's prev_hash. */
export function genesisHash(genesis: Genesis): string {
  return digestUtf8(canonicalJson(genesis));
}

/** Every member a redaction may stand in, under any format this verifier reads (REDACTION.md §4). */
export const REDACTABLE_MEMBERS: ReadonlySet<string> = new Set(
  FORMATS.flatMap((f) => f.records.flatMap((r) => r.redactable)),
);
