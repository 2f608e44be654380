/**
 * Format `stepchain/v1` (spec/FORMAT.md §5, §6.1): its genesis, and its one record profile, the step record
 * of version 1 — the five content fields, optional meta, and the envelope. Everything a verifier, a writer,
 * redaction and diff need to know about a v1 record is here.
 */
import { digestUtf8 } from '../canonical/sha256.js';
import type { Json } from '../canonical/json.js';
import { canonicalValue } from '../canonical/value.js';
import { isValidId, isValidTimestamp } from './fields.js';
import { SEQ_RULE, STEP_ID_RULE, TS_RULE, digestRule, envelope, invalid } from './rules.js';
import {
  keyOfRecord,
  keyOfTexts,
  stepHashWithout,
  type Envelope,
  type JournalFormat,
  type MemberRule,
  type RecordProfile,
  type StepTexts,
} from './profile.js';

export const FORMAT_V1 = 'stepchain/v1';
export const RECORD_VERSION_V1 = 1;
export const CONTENT_FIELDS = ['input', 'model', 'prompt', 'tool_call', 'result'] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];

export interface GenesisV1 {
  format: typeof FORMAT_V1;
  journal_id: string;
  created_at: string;
}

/** A stored v1 step record (FORMAT §5.1). */
export interface StepRecordV1 {
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
  meta?: Record<string, Json>;
  step_hash: string;
}

const content = (name: string): MemberRule => ({ name, required: true, role: 'content', check: null });

/** The members in UTF-16 order of their names: the order FORMAT §6.3 step 4 reports them in. */
const MEMBERS: readonly MemberRule[] = [
  content('input'),
  {
    name: 'meta',
    required: false,
    role: 'meta',
    check: (text, start) => (text.charCodeAt(start) === 0x7b ? null : invalid('meta must be a JSON object')),
  },
  content('model'),
  envelope('prev_hash', digestRule('prev_hash')),
  content('prompt'),
  content('result'),
  SEQ_RULE,
  envelope('step_hash', digestRule('step_hash')),
  STEP_ID_RULE,
  content('tool_call'),
  TS_RULE,
  envelope('v', (text, start, end) => {
    const v = canonicalValue(text, start, end);
    if (v === RECORD_VERSION_V1) return null;
    return typeof v === 'number'
      ? { code: 'UNSUPPORTED_VERSION', message: `record version ${v} is not supported; this verifier reads version 1` }
      : invalid('v must be the number 1');
  }),
];

/**
 * The v1 seal. The member names are fixed, so their sorted order (input, meta, model, prev_hash, prompt,
 * result, seq, step_hash, step_id, tool_call, ts, v) is written out here once rather than sorted per step,
 * and the preimage is hashed in two parts and never joined. The caller vouches for the texts (each the JCS
 * of a valid value) and for stepId and ts having passed their patterns (ASCII without escapes, so
 * quoting them is their JCS). prev_hash comes from a store's tail, so it keeps JSON.stringify's quoting
 * whatever a store hands over. test/record/profile.test.ts holds it to the generic sealRecord.
 */
function sealV1(texts: StepTexts, e: Envelope): { stepHash: string; line: string } {
  const head =
    '{"input":' +
    texts.input! +
    (texts.meta === undefined ? '' : ',"meta":' + texts.meta) +
    ',"model":' +
    texts.model! +
    ',"prev_hash":' +
    JSON.stringify(e.prevHash) +
    ',"prompt":' +
    texts.prompt! +
    ',"result":' +
    texts.result! +
    ',"seq":' +
    String(e.seq);
  const tail =
    ',"step_id":"' +
    e.stepId +
    '"' +
    ',"tool_call":' +
    texts.tool_call! +
    ',"ts":"' +
    e.ts +
    '"' +
    ',"v":' +
    String(RECORD_VERSION_V1) +
    '}';
  const stepHash = digestUtf8(head, tail);
  return { stepHash, line: head + ',"step_hash":"' + stepHash + '"' + tail + '\n' };
}

/** The tool a step called: `tool_call.name` when tool_call is an object with a string name (REDACTION.md §4). */
export function toolNameOf(toolCall: unknown): string | null {
  if (toolCall !== null && typeof toolCall === 'object' && !Array.isArray(toolCall)) {
    const name = (toolCall as Record<string, unknown>).name;
    if (typeof name === 'string') return name;
  }
  return null;
}

export const STEP_V1: RecordProfile = {
  id: 'step/v1',
  version: RECORD_VERSION_V1,
  members: MEMBERS,
  memberNames: new Set(MEMBERS.map((m) => m.name)),
  contentFields: CONTENT_FIELDS,
  computed: ['v', 'seq', 'prev_hash', 'step_hash'],
  blobFields: new Set(CONTENT_FIELDS),
  redactable: [...CONTENT_FIELDS, 'meta'].sort(),
  diffFields: {
    content: [...CONTENT_FIELDS, 'meta'],
    envelope: ['v', 'seq', 'step_id', 'ts', 'prev_hash', 'step_hash'],
  },
  seal: sealV1,
  stepHashOf: stepHashWithout,
  key: (texts) => keyOfTexts(CONTENT_FIELDS, texts),
  recordKey: (record) => keyOfRecord(CONTENT_FIELDS, record),
  toolName: (record) => toolNameOf(record.tool_call),
};

const GENESIS_MEMBERS = ['created_at', 'format', 'journal_id'] as const;

export const JOURNAL_V1: JournalFormat = {
  format: FORMAT_V1,
  capabilities: {
    runRecords: false,
    fieldSalts: false,
    parts: false,
    erasure: false,
    approvals: false,
    publication: 'reanchored',
    // Still written: store.create() without a run or format, `stepchain init --format v1`, the testing kit.
    written: true,
  },
  genesisMembers: GENESIS_MEMBERS,
  genesisDefect(g) {
    const keys = Object.keys(g).sort();
    if (keys.join(',') !== GENESIS_MEMBERS.join(',')) {
      return `the genesis must have exactly the members created_at, format, journal_id (found ${keys.join(', ') || 'none'})`;
    }
    if (!isValidId(g.journal_id)) return 'genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]';
    if (!isValidTimestamp(g.created_at))
      return 'genesis created_at must be an RFC 3339 UTC timestamp with milliseconds';
    return null;
  },
  records: [STEP_V1],
  select: () => STEP_V1,
  memberNames: STEP_V1.memberNames,
};
