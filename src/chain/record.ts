/**
 * The step record, the genesis object and the step hash (spec/FORMAT.md §2 and §5): what a writer
 * computes. Everything here is pure and runs in a browser.
 */
import { canonicalJson, canonicalJsonChecked, canonicalJsonTrusted } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH, MAX_VALUE_DEPTH } from '../canonical/limits.js';
import { assertIJson } from '../canonical/validate.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { StepchainError } from '../errors.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The genesis object's `format` value: names this specification and its version. */
export const JOURNAL_FORMAT = 'stepchain/v1';
export const RECORD_VERSION = 1;
export const CONTENT_FIELDS = ['input', 'model', 'prompt', 'tool_call', 'result'] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];
export const ENVELOPE_FIELDS = ['v', 'seq', 'step_id', 'ts', 'prev_hash', 'step_hash', 'meta'] as const;
export const RECORD_FIELDS: ReadonlySet<string> = new Set([...CONTENT_FIELDS, ...ENVELOPE_FIELDS]);

export interface Genesis {
  format: typeof JOURNAL_FORMAT;
  journal_id: string;
  created_at: string;
}

export interface StepRecord {
  v: 1;
  seq: number;
  step_id: string;
  ts: string;
  prev_hash: string;
  input: Json;
  model: Json;
  prompt: Json;
  tool_call: Json;
  result: Json;
  meta?: JsonObject;
  step_hash: string;
}

export type UnsealedRecord = Omit<StepRecord, 'step_hash'>;

/** What a caller supplies for one step. Absent content fields are recorded as null. */
export interface StepInput {
  input?: unknown;
  model?: unknown;
  prompt?: unknown;
  tool_call?: unknown;
  result?: unknown;
  meta?: unknown;
  step_id?: unknown;
  ts?: unknown;
}

export type RecordErrorCode = 'FIELD_INVALID' | 'FIELD_NOT_ALLOWED' | 'GENESIS_INVALID';

export class RecordError extends StepchainError<RecordErrorCode> {}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** step_id and journal_id: 1–128 characters from [A-Za-z0-9._:-], starting with a letter or digit. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_RE.test(value);
}

/** RFC 3339 UTC with exactly three fraction digits, and a real instant (no Feb 30, no leap second). */
export function isValidTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || !TS_RE.test(value)) return false;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value;
}

export function formatTimestamp(date: Date): string {
  const iso = date.toISOString();
  if (!TS_RE.test(iso)) throw new RangeError(`timestamp ${iso} is outside years 0000–9999`);
  return iso;
}

export function newStepId(): string {
  return globalThis.crypto.randomUUID();
}

/** Checks a genesis object; returns the reason it is invalid, or null. */
export function genesisDefect(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the genesis must be a JSON object';
  const g = value as Record<string, unknown>;
  const keys = Object.keys(g).sort();
  if (keys.join(',') !== 'created_at,format,journal_id') {
    return `the genesis must have exactly the members created_at, format, journal_id (found ${keys.join(', ') || 'none'})`;
  }
  if (g.format !== JOURNAL_FORMAT) return `unsupported genesis format ${JSON.stringify(g.format)}; this verifier reads ${JOURNAL_FORMAT}`;
  if (!isValidId(g.journal_id)) return 'genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]';
  if (!isValidTimestamp(g.created_at)) return 'genesis created_at must be an RFC 3339 UTC timestamp with milliseconds';
  return null;
}

export function makeGenesis(options: { journalId?: string; createdAt?: Date | string } = {}): Genesis {
  const createdAt =
    typeof options.createdAt === 'string' ? options.createdAt : formatTimestamp(options.createdAt ?? new Date());
  const genesis = { format: JOURNAL_FORMAT, journal_id: options.journalId ?? newStepId(), created_at: createdAt } as Genesis;
  const defect = genesisDefect(genesis);
  if (defect) throw new RecordError('GENESIS_INVALID', defect);
  return genesis;
}

/** `"sha256:" + hex(SHA-256(JCS(genesis)))`: the first step's prev_hash. */
export function genesisHash(genesis: Genesis): string {
  return digestUtf8(canonicalJson(genesis));
}

export interface CheckedStep {
  content: Record<ContentField, Json>;
  meta: JsonObject | undefined;
  /** The JCS text of each content field, and of meta when present: produced by the same walk that checked it. */
  texts: Record<ContentField, string> & { meta?: string };
  step_id: string | undefined;
  ts: string | undefined;
}

/**
 * Checks a caller's step and returns its content with absent fields as null. Throws CanonicalError (with
 * the JSON Pointer of the bad value) or RecordError; never coerces.
 */
export function checkStepInput(step: StepInput): CheckedStep {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    throw new RecordError('FIELD_INVALID', 'a step must be a plain object with input, model, prompt, tool_call and result');
  }
  for (const key of Object.keys(step)) {
    if (key === 'v' || key === 'seq' || key === 'prev_hash' || key === 'step_hash') {
      throw new RecordError('FIELD_NOT_ALLOWED', `"${key}" is computed by the journal and cannot be supplied`, {
        location: { path: `/${key}` },
        hint: `remove "${key}" from the step`,
      });
    }
    if (!RECORD_FIELDS.has(key)) {
      throw new RecordError('FIELD_INVALID', `unknown step field "${key}"`, {
        location: { path: `/${key}` },
        hint: 'put extra data in "meta" or inside one of the content fields',
      });
    }
  }
  const content = {} as Record<ContentField, Json>;
  const texts = {} as CheckedStep['texts'];
  for (const field of CONTENT_FIELDS) {
    if (!(field in step)) {
      content[field] = null;
      texts[field] = 'null';
      continue;
    }
    const value = step[field];
    texts[field] = canonicalJsonChecked(value, { basePath: [field], maxDepth: MAX_VALUE_DEPTH });
    content[field] = value as Json;
  }
  let meta: JsonObject | undefined;
  if ('meta' in step && step.meta !== undefined) {
    const m = step.meta;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      throw new RecordError('FIELD_INVALID', 'meta must be a JSON object', { location: { path: '/meta' } });
    }
    texts.meta = canonicalJsonChecked(m, { basePath: ['meta'], maxDepth: MAX_VALUE_DEPTH });
    meta = m as JsonObject;
  }
  let stepId: string | undefined;
  if (step.step_id !== undefined) {
    if (!isValidId(step.step_id)) {
      throw new RecordError('FIELD_INVALID', `step_id ${JSON.stringify(step.step_id)} is not 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit`, {
        location: { path: '/step_id' },
      });
    }
    stepId = step.step_id;
  }
  let ts: string | undefined;
  if (step.ts !== undefined) {
    if (!isValidTimestamp(step.ts)) {
      throw new RecordError('FIELD_INVALID', `ts ${JSON.stringify(step.ts)} is not an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z`, {
        location: { path: '/ts' },
      });
    }
    ts = step.ts;
  }
  return { content, meta, texts, step_id: stepId, ts };
}

/**
 * Seals an assembled record: adds step_hash = digest of the JCS of everything else, and returns the stored
 * line. The record's content may hold markers (blob references), so the reserved-name check is the
 * caller's job, done on user data before markers were substituted.
 *
 * JCS of an object is "{" + its sorted members joined by "," + "}", so the preimage and the line are
 * assembled from the same canonical member texts: one serialization of each value, and the top-level
 * step_hash member lands in its sorted place without searching text that user content could imitate.
 */
export function sealRecord(record: UnsealedRecord): { record: StepRecord; line: string } {
  assertIJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH });
  const texts: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) texts[key] = canonicalJsonTrusted(value);
  const { stepHash, line } = sealMemberTexts(texts);
  return { record: { ...record, step_hash: stepHash } as StepRecord, line };
}

/**
 * The step hash and the stored line from the canonical text of each member's value, keyed by member name
 * (everything but step_hash). sealRecord's second half, and the store's whole seal: the store already has
 * every content field's text from validating and measuring it, so it seals without a second serialization.
 * The caller vouches that each text is the JCS of a valid value.
 */
export function sealMemberTexts(texts: Readonly<Record<string, string>>): { stepHash: string; line: string } {
  const names = Object.keys(texts).sort();
  const members = names.map((name) => `${JSON.stringify(name)}:${texts[name]}`);
  const stepHash = digestUtf8(`{${members.join(',')}}`);
  let at = names.findIndex((name) => name > 'step_hash');
  if (at < 0) at = members.length;
  members.splice(at, 0, `"step_hash":${JSON.stringify(stepHash)}`);
  return { stepHash, line: `{${members.join(',')}}\n` };
}

/** The canonical text of each content field (blob references in place) and of meta when the step has it. */
export type StepTexts = Readonly<Record<ContentField, string> & { meta?: string }>;

/**
 * sealMemberTexts for the record a writer appends, whose member names are fixed, so their sorted order
 * (input, meta, model, prev_hash, prompt, result, seq, step_hash, step_id, tool_call, ts, v) is written out
 * here once rather than sorted per step; the preimage is hashed in two parts and never joined. The caller
 * vouches for the texts as for sealMemberTexts, and for stepId and ts having passed their patterns (ASCII
 * without escapes, so JSON.stringify is their JCS). test/chain/record.test.ts holds it to sealRecord.
 */
export function sealStep(texts: StepTexts, seq: number, stepId: string, ts: string, prevHash: string): { stepHash: string; line: string } {
  const head =
    '{"input":' + texts.input +
    (texts.meta === undefined ? '' : ',"meta":' + texts.meta) +
    ',"model":' + texts.model +
    ',"prev_hash":' + JSON.stringify(prevHash) +
    ',"prompt":' + texts.prompt +
    ',"result":' + texts.result +
    ',"seq":' + String(seq);
  const tail =
    ',"step_id":' + JSON.stringify(stepId) +
    ',"tool_call":' + texts.tool_call +
    ',"ts":' + JSON.stringify(ts) +
    ',"v":' + String(RECORD_VERSION) + '}';
  const stepHash = digestUtf8(head, tail);
  return { stepHash, line: head + ',"step_hash":"' + stepHash + '"' + tail + '\n' };
}

export function computeStepHash(record: UnsealedRecord): string {
  return digestUtf8(canonicalJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH }));
}
