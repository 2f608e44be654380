/**
 * Format `stepchain/v2` (spec/FORMAT.md §11): the run journal. Its genesis carries the run's identity
 * (conversation, parent run, agent, labels), covered by the genesis hash; its one record profile, the
 * record of version 2, is the v1 step plus `kind` (a step, or a run/model/tool boundary), `ref` (the
 * step_id of the started record an outcome ends) and `error` (a failure's error object).
 *
 * v2 records are hashed by salted slot commitments (commitments.ts, FORMAT §12): STEP_V2 is the stored
 * form, STEP_V2_PUBLIC the form a publication writes.
 */
import { isObject, type Json } from '../canonical/json.js';
import { canonicalValue } from '../canonical/value.js';
import { isValidId, isValidTimestamp } from './fields.js';
import { SEQ_RULE, STEP_ID_RULE, TS_RULE, digestRule, envelope, invalid } from './rules.js';
import { commitProfiles } from './commit-profiles.js';
import { keyOfRecord, keyOfTexts, type JournalFormat, type MemberRule, type RecordProfile } from './profile.js';
import { toolNameOf } from './v1.js';

export const FORMAT_V2 = 'stepchain/v2';
export const RECORD_VERSION_V2 = 2;

/** The kinds of a v2 record (FORMAT §11.3). `step` is a finished step written in one append. */
export const RECORD_KINDS = [
  'step',
  'run.started',
  'run.completed',
  'run.failed',
  'model.started',
  'model.completed',
  'model.failed',
  'tool.started',
  'tool.updated',
  'tool.completed',
  'tool.failed',
] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];
const KINDS: ReadonlySet<string> = new Set(RECORD_KINDS);
/** Kinds that continue a started record and must name it in `ref`. */
const REF_KINDS: ReadonlySet<string> = new Set([
  'model.completed',
  'model.failed',
  'tool.updated',
  'tool.completed',
  'tool.failed',
]);
const FAILED_KINDS: ReadonlySet<string> = new Set(['run.failed', 'model.failed', 'tool.failed']);

/** The caller-facing content fields of a v2 record, in the order the idempotency key and diff list them. */
export const CONTENT_FIELDS_V2 = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'] as const;
/** Content that may be stored as a blob or redacted: the v1 five and the error (never kind or ref). */
const PAYLOAD_FIELDS = ['input', 'model', 'prompt', 'tool_call', 'result', 'error'] as const;

/** The run identity in a v2 genesis (FORMAT §11.1). journal_id is the run id. */
export interface RunIdentity {
  agent?: string;
  conversation_id?: string;
  labels?: Record<string, string>;
  parent_run_id?: string;
}

export interface GenesisV2 {
  format: typeof FORMAT_V2;
  journal_id: string;
  created_at: string;
  run: RunIdentity;
}

/** A stored v2 record (FORMAT §11.2). */
export interface StepRecordV2 {
  v: 2;
  seq: number;
  step_id: string;
  ts: string;
  prev_hash: string;
  kind: RecordKind;
  ref: string | null;
  input: Json;
  model: Json;
  prompt: Json;
  tool_call: Json;
  result: Json;
  error: Json;
  meta?: Record<string, Json>;
  /** The record salt (128 bits, hex): every slot salt derives from it (FORMAT §12). Private to the journal. */
  salt: string;
  step_hash: string;
}

const content = (name: string, check: MemberRule['check'] = null): MemberRule => ({
  name,
  required: true,
  role: 'content',
  check,
});

const MEMBERS: readonly MemberRule[] = [
  content('error'),
  content('input'),
  content('kind', (text, start, end) => {
    const k = canonicalValue(text, start, end);
    return typeof k === 'string' && KINDS.has(k) ? null : invalid(`kind must be one of ${RECORD_KINDS.join(', ')}`);
  }),
  {
    name: 'meta',
    required: false,
    role: 'meta',
    check: (text, start) => (text.charCodeAt(start) === 0x7b ? null : invalid('meta must be a JSON object')),
  },
  content('model'),
  envelope('prev_hash', digestRule('prev_hash')),
  content('prompt'),
  content('ref', (text, start, end) => {
    const r = canonicalValue(text, start, end);
    return r === null || isValidId(r)
      ? null
      : invalid('ref must be null or the step_id of an earlier record (1–128 characters from [A-Za-z0-9._:-])');
  }),
  content('result'),
  SEQ_RULE,
  envelope('step_hash', digestRule('step_hash')),
  STEP_ID_RULE,
  content('tool_call'),
  TS_RULE,
  envelope('v', (text, start, end) => {
    const v = canonicalValue(text, start, end);
    if (v === RECORD_VERSION_V2) return null;
    return typeof v === 'number'
      ? {
          code: 'UNSUPPORTED_VERSION',
          message: `record version ${v} is not supported in a stepchain/v2 journal; it holds version 2`,
        }
      : invalid('v must be the number 2');
  }),
];

/**
 * The rules between members (FORMAT §11.3): an outcome names its start in `ref` and nothing else does; a
 * failure has an error and nothing else has one. `value` gives undefined for a member that is absent or
 * broke its own rule (the verifier, chain/line.ts): a rule that reads one is not checked, so each defect is
 * reported once, by the rule it breaks.
 */
function relationDefect(value: (name: string) => unknown): { field: string; message: string } | null {
  const kind = value('kind');
  if (typeof kind !== 'string' || !KINDS.has(kind)) return null; // the member rule reports it
  const ref = value('ref');
  if (REF_KINDS.has(kind) && ref === null)
    return { field: 'ref', message: `a ${kind} record must name the started record it ends in ref` };
  if (!REF_KINDS.has(kind) && ref !== null && ref !== undefined)
    return { field: 'ref', message: `a ${kind} record has no ref (ref must be null)` };
  const error = value('error');
  if (FAILED_KINDS.has(kind) && error === null)
    return { field: 'error', message: `a ${kind} record must carry its error (error must not be null)` };
  if (!FAILED_KINDS.has(kind) && error !== null && error !== undefined)
    return { field: 'error', message: `only a failed record carries an error; a ${kind} record has error null` };
  return null;
}

/**
 * The v2 record before commitment hashing: its members and rules. Its seal is never used: commitProfiles
 * gives the stored form (the record salt, FORMAT §12) and the public form a publication writes (REDACTION
 * §12), both hashing one salted digest per slot (the redactable members) and kind, ref and the envelope in
 * clear.
 */
const STEP_V2_BASE: RecordProfile = {
  id: 'step/v2',
  version: RECORD_VERSION_V2,
  members: MEMBERS,
  memberNames: new Set(MEMBERS.map((m) => m.name)),
  contentFields: CONTENT_FIELDS_V2,
  defaults: { kind: 'step' },
  computed: ['v', 'seq', 'prev_hash', 'step_hash'],
  blobFields: new Set(PAYLOAD_FIELDS),
  redactable: [...PAYLOAD_FIELDS, 'meta'].sort(),
  diffFields: {
    content: [...CONTENT_FIELDS_V2, 'meta'],
    envelope: ['v', 'seq', 'step_id', 'ts', 'prev_hash', 'step_hash'],
  },
  relationDefect,
  seal: () => {
    throw new TypeError('step/v2 is sealed through commitProfiles');
  },
  stepHashOf: () => 'sha256:undecided',
  key: (texts) => keyOfTexts(CONTENT_FIELDS_V2, texts),
  recordKey: (record) => keyOfRecord(CONTENT_FIELDS_V2, record),
  toolName: (record) => toolNameOf(record.tool_call),
};

/** The stored v2 record (the one append writes) and its public form (a publication's, REDACTION §12). */
export const { stored: STEP_V2, published: STEP_V2_PUBLIC } = commitProfiles(STEP_V2_BASE);

const GENESIS_MEMBERS = ['created_at', 'format', 'journal_id', 'run'] as const;
const RUN_MEMBERS: ReadonlySet<string> = new Set(['agent', 'conversation_id', 'labels', 'parent_run_id']);
/** Label names: like ids but at most 64 characters. Values: strings of at most 1024 UTF-16 units. */
const LABEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
export const MAX_LABELS = 64;
export const MAX_LABEL_VALUE = 1024;
export const MAX_AGENT_NAME = 256;

/** Why a run journal's genesis (v2 and v3: the same members, FORMAT §11.1, §14) breaks its rules, or null. */
export function runGenesisDefect(format: string, g: Record<string, unknown>): string | null {
  const keys = Object.keys(g).sort();
  if (keys.join(',') !== GENESIS_MEMBERS.join(',')) {
    return `a ${format} genesis must have exactly the members created_at, format, journal_id, run (found ${keys.join(', ') || 'none'})`;
  }
  if (!isValidId(g.journal_id)) return 'genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]';
  if (!isValidTimestamp(g.created_at)) return 'genesis created_at must be an RFC 3339 UTC timestamp with milliseconds';
  return runIdentityDefect(g.run);
}

/** Why a run identity breaks FORMAT §11.1, or null. */
export function runIdentityDefect(run: unknown): string | null {
  if (!isObject(run)) return 'genesis run must be a JSON object';
  for (const k of Object.keys(run))
    if (!RUN_MEMBERS.has(k))
      return `unknown member ${JSON.stringify(k)} in the genesis run (allowed: agent, conversation_id, labels, parent_run_id)`;
  if (run.conversation_id !== undefined && !isValidId(run.conversation_id))
    return 'run conversation_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit';
  if (run.parent_run_id !== undefined && !isValidId(run.parent_run_id))
    return 'run parent_run_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit';
  if (
    run.agent !== undefined &&
    (typeof run.agent !== 'string' || run.agent.length === 0 || run.agent.length > MAX_AGENT_NAME)
  )
    return `run agent must be a string of 1–${MAX_AGENT_NAME} characters`;
  if (run.labels !== undefined) {
    if (!isObject(run.labels)) return 'run labels must be a JSON object of strings';
    const names = Object.keys(run.labels);
    if (names.length > MAX_LABELS) return `run labels hold at most ${MAX_LABELS} names (found ${names.length})`;
    for (const name of names) {
      if (!LABEL_NAME.test(name))
        return `label name ${JSON.stringify(name)} must be 1–64 characters from [A-Za-z0-9._:-] starting with a letter or digit`;
      const v = run.labels[name];
      if (typeof v !== 'string' || v.length > MAX_LABEL_VALUE)
        return `label ${JSON.stringify(name)} must be a string of at most ${MAX_LABEL_VALUE} characters`;
    }
  }
  return null;
}

export const JOURNAL_V2: JournalFormat = {
  format: FORMAT_V2,
  capabilities: {
    runRecords: true,
    fieldSalts: true,
    parts: false,
    erasure: false,
    approvals: false,
    publication: 'slots',
    // Still written when asked for (`--format v2`, `format: 'stepchain/v2'`), and appended to in v2 journals.
    written: true,
  },
  genesisMembers: GENESIS_MEMBERS,
  genesisDefect: (g) => runGenesisDefect(FORMAT_V2, g),
  records: [STEP_V2, STEP_V2_PUBLIC],
  // A public-form record carries `salts` (REDACTION.md §12.2); every other record is read as the stored form.
  select: (member) => (member('salts') !== undefined ? STEP_V2_PUBLIC : STEP_V2),
  memberNames: new Set([...STEP_V2.memberNames, ...STEP_V2_PUBLIC.memberNames]),
};

/** Whether a kind continues a started record (names it in ref). */
export function endsStarted(kind: string): boolean {
  return REF_KINDS.has(kind);
}
