/**
 * Checking a caller's step against a record profile (spec/FORMAT.md §3.2, §5.1) before anything is
 * written: its members, and each content value and meta through the strict I-JSON gate, serialized by the
 * same walk that checks it. Throws CanonicalError (with the JSON Pointer of the bad value) or RecordError;
 * never coerces. Pure: runs in a browser.
 */
import { canonicalJsonChecked } from '../canonical/jcs.js';
import type { Json, JsonObject, JsonValue } from '../canonical/json.js';
import { MAX_VALUE_DEPTH } from '../canonical/limits.js';
import type { ValidateOptions } from '../canonical/validate.js';
import { RecordError } from './errors.js';
import { formatTimestamp, isValidId, isValidTimestamp } from './fields.js';
import { DEFAULT_FORMAT } from './formats.js';
import type { MemberRule, RecordProfile } from './profile.js';

/**
 * A JSON value as a caller writes it for a step: what the journal records without conversion. A BigInt, a
 * Date, a Map, a function, undefined or a class instance with methods is not assignable, so TypeScript
 * refuses at compile time what append would refuse at run time. (A run's values go through toJournalValue
 * instead, which converts those: see JournalInput in stepchain/runtime.)
 */
export type JsonInput = JsonValue;

/** A tool call as a `step` record usually holds one (FORMAT §11.3): its name and arguments. */
export interface ToolCall {
  name: string;
  arguments?: JsonValue;
  /** The id the model gave the call. */
  call_id?: string;
  idempotency_key?: string;
  summary?: string;
}

/**
 * What a caller supplies for one step. Absent content fields are recorded as null. The types say what
 * append accepts; append still checks every member at run time (a caller in plain JavaScript gets a coded
 * RecordError or CanonicalError naming the member, never a coercion).
 */
export interface StepInput {
  input?: JsonValue;
  /** The model's name, or a JSON description of it. */
  model?: JsonValue;
  prompt?: JsonValue;
  /** A ToolCall, a list of them, or any JSON value (FORMAT §4: the `tool_call` field holds any value). */
  tool_call?: ToolCall | readonly ToolCall[] | JsonValue;
  result?: JsonValue;
  meta?: Readonly<Record<string, JsonValue>>;
  /** 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit. */
  step_id?: string;
  /** An RFC 3339 UTC timestamp with milliseconds, or a Date (recorded as its ISO string). */
  ts?: string | Date;
  /** stepchain/v2 and v3 journals only (FORMAT §11.3): the record's kind (default "step"). */
  kind?: string;
  /** The started record an outcome ends (its step_id). */
  ref?: string | null;
  /** A failure's error. */
  error?: JsonValue;
}

/**
 * What append checks (internal): a step from any caller, typed or not, with the record salt or seed a copy
 * carries over (FORMAT §12.2, §14.4). Not public: a caller must never choose a salt or a seed, since a
 * guessable one makes the record's commitments guessable; copyJournal and the vector generators use it.
 */
export interface UncheckedStepInput {
  input?: unknown;
  model?: unknown;
  prompt?: unknown;
  tool_call?: unknown;
  result?: unknown;
  meta?: unknown;
  step_id?: unknown;
  ts?: unknown;
  kind?: unknown;
  ref?: unknown;
  error?: unknown;
  /** stepchain/v2: the record salt, 32 lowercase hex digits, only for copying a record byte for byte. */
  salt?: unknown;
  /** stepchain/v3: the record seed, 64 lowercase hex digits, only for copying a record byte for byte. */
  seed?: unknown;
}

/** A step copied from another journal (internal): the step with the source record's salt or seed. */
export interface CopiedStepInput extends StepInput {
  salt?: string;
  seed?: string;
}

export interface CheckedStep {
  /** Each content field's value, null when absent. */
  content: Record<string, Json>;
  meta: JsonObject | undefined;
  /** The JCS text of each content field, and of meta when present: produced by the same walk that checked it. */
  texts: Record<string, string>;
  step_id: string | undefined;
  ts: string | undefined;
  /** A record salt carried over by a copy (v2); undefined: the writer draws one. */
  salt: string | undefined;
  /** A record seed carried over by a copy (v3); undefined: the writer draws one. */
  seed: string | undefined;
}

const RECORD_SALT_RE = /^[0-9a-f]{32}$/;

/**
 * The gate's options for each member, made once: the walk reads them only on its slow path (a value it
 * hands to the reference gate for the error's pointer), and a fresh object and path array for every
 * field of every step were a tenth of what checkStepInput allocated on bench/'s steps.
 */
const gateOptions = new Map<string, ValidateOptions>();

function gateOptionsOf(name: string): ValidateOptions {
  let options = gateOptions.get(name);
  if (options === undefined) {
    options = Object.freeze({ basePath: Object.freeze([name]), maxDepth: MAX_VALUE_DEPTH });
    gateOptions.set(name, options);
  }
  return options;
}

/** The rule a member's own value is held to (v2: kind, ref), or null: a loop, so no closure per field. */
function memberCheck(profile: RecordProfile, name: string): MemberRule['check'] {
  for (const m of profile.members) if (m.name === name) return m.check;
  return null;
}

function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

export function checkStepInput(step: UncheckedStepInput, profile = DEFAULT_FORMAT.records[0]!): CheckedStep {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    throw new RecordError('FIELD_INVALID', `a step must be a plain object with ${listed(profile.contentFields)}`);
  }
  for (const key of Object.keys(step)) {
    if ((key === 'salt' || key === 'seed') && profile.memberNames.has(key)) continue;
    if (profile.computed.includes(key)) {
      throw new RecordError('FIELD_NOT_ALLOWED', `"${key}" is computed by the journal and cannot be supplied`, {
        location: { path: `/${key}` },
        hint: `remove "${key}" from the step`,
      });
    }
    if (!profile.memberNames.has(key)) {
      throw new RecordError('FIELD_INVALID', `unknown step field "${key}"`, {
        location: { path: `/${key}` },
        hint: 'put extra data in "meta" or inside one of the content fields',
      });
    }
  }
  const fields = step as Record<string, unknown>;
  const content: Record<string, Json> = {};
  const texts: Record<string, string> = {};
  for (const field of profile.contentFields) {
    if (!(field in fields) || (fields[field] === undefined && profile.defaults?.[field] !== undefined)) {
      const fallback = profile.defaults?.[field] ?? null;
      content[field] = fallback;
      texts[field] = fallback === null ? 'null' : JSON.stringify(fallback);
      continue;
    }
    const value = fields[field];
    const text = canonicalJsonChecked(value, gateOptionsOf(field));
    texts[field] = text;
    content[field] = value as Json;
    // A content member with a rule of its own (v2: kind, ref) is held to it before anything is written.
    const broken = memberCheck(profile, field)?.(text, 0, text.length);
    if (broken) throw new RecordError('FIELD_INVALID', broken.message, { location: { path: `/${field}` } });
  }
  const relation = profile.relationDefect?.((name) => content[name]);
  if (relation) throw new RecordError('FIELD_INVALID', relation.message, { location: { path: `/${relation.field}` } });
  let meta: JsonObject | undefined;
  if ('meta' in step && step.meta !== undefined) {
    const m = step.meta;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      throw new RecordError('FIELD_INVALID', 'meta must be a JSON object', { location: { path: '/meta' } });
    }
    texts.meta = canonicalJsonChecked(m, gateOptionsOf('meta'));
    meta = m as JsonObject;
  }
  const stepId = checkedStepId(step.step_id);
  const ts = checkedTs(step.ts);
  return { content, meta, texts, step_id: stepId, ts, salt: recordSaltOf(step.salt), seed: recordSeedOf(step.seed) };
}

/** A step's own step_id, checked; undefined when it gives none (the journal then makes one). */
function checkedStepId(id: UncheckedStepInput['step_id']): string | undefined {
  if (id === undefined) return undefined;
  if (!isValidId(id)) {
    throw new RecordError(
      'FIELD_INVALID',
      `step_id ${JSON.stringify(id)} is not 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit`,
      { location: { path: '/step_id' } },
    );
  }
  return id;
}

/** A step's ts as recorded (a Date as its ISO string), checked; undefined when it gives none. */
function checkedTs(given: UncheckedStepInput['ts']): string | undefined {
  if (given instanceof Date) {
    // A Date is what a caller most often has; it is recorded as its ISO string (an invalid one is refused).
    if (Number.isNaN(given.getTime()) || given.getUTCFullYear() < 0 || given.getUTCFullYear() > 9999) {
      throw new RecordError('FIELD_INVALID', 'ts is a Date that is invalid or outside years 0000–9999', {
        location: { path: '/ts' },
      });
    }
    return formatTimestamp(given);
  } else if (given !== undefined) {
    if (!isValidTimestamp(given)) {
      throw new RecordError(
        'FIELD_INVALID',
        `ts ${JSON.stringify(given)} is not an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z`,
        {
          location: { path: '/ts' },
        },
      );
    }
    return given;
  }
  return undefined;
}

const RECORD_SEED_RE = /^[0-9a-f]{64}$/;

/** A record seed a copy carries over (FORMAT §14.4), or undefined when none is given. */
function recordSeedOf(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'string' || !RECORD_SEED_RE.test(given)) {
    throw new RecordError(
      'FIELD_INVALID',
      'seed must be 64 lowercase hex digits (a record seed copied from another journal)',
      { location: { path: '/seed' } },
    );
  }
  return given;
}

/** A record salt a copy carries over (FORMAT §12.2), or undefined when none is given. */
function recordSaltOf(given: unknown): string | undefined {
  if (given === undefined) return undefined;
  if (typeof given !== 'string' || !RECORD_SALT_RE.test(given)) {
    throw new RecordError(
      'FIELD_INVALID',
      'salt must be 32 lowercase hex digits (a record salt copied from another journal)',
      { location: { path: '/salt' } },
    );
  }
  return given;
}
