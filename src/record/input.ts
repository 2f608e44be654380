/**
 * Checking a caller's step against a record profile (spec/FORMAT.md §3.2, §5.1) before anything is
 * written: its members, and each content value and meta through the strict I-JSON gate, serialized by the
 * same walk that checks it. Throws CanonicalError (with the JSON Pointer of the bad value) or RecordError;
 * never coerces. Pure: runs in a browser.
 */
import { canonicalJsonChecked } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { MAX_VALUE_DEPTH } from '../canonical/limits.js';
import { RecordError } from './errors.js';
import { isValidId, isValidTimestamp } from './fields.js';
import { DEFAULT_FORMAT } from './formats.js';
import type { RecordProfile } from './profile.js';

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

export interface CheckedStep {
  /** Each content field's value, null when absent. */
  content: Record<string, Json>;
  meta: JsonObject | undefined;
  /** The JCS text of each content field, and of meta when present: produced by the same walk that checked it. */
  texts: Record<string, string>;
  step_id: string | undefined;
  ts: string | undefined;
}

function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

export function checkStepInput(step: StepInput, profile: RecordProfile = DEFAULT_FORMAT.records[0]!): CheckedStep {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    throw new RecordError('FIELD_INVALID', `a step must be a plain object with ${listed(profile.contentFields)}`);
  }
  for (const key of Object.keys(step)) {
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
    if (!(field in fields)) {
      content[field] = null;
      texts[field] = 'null';
      continue;
    }
    const value = fields[field];
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
