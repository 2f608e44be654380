/**
 * Format `stepchain/v3` (spec/FORMAT.md §14; docs/design/format-v3.md): every object member, array element
 * and chunk of a long string is a committed unit (record/v3/commit.ts), the record's `root` R commits to all
 * of them, and two tiers bind one record:
 *
 * - the fast tier (every `stepchain verify`): `B` = SHA-256 of the stored line without `step_hash` — a MAC
 *   of the whole private line under its 256-bit `seed` — and the step hash = SHA-256(JCS({bind: B, kind,
 *   prev_hash, ref, root, seq, step_id, ts, v})). Two native hashes per record: any edit of any stored byte
 *   changes B, hence the step hash and the chain.
 * - the deep tier (`verify --deep`, publication): R recomputed from the values (deep.ts).
 *
 * STEP_V3 is the stored (private) form; STEP_V3_PUBLIC is the form a publication writes (`bind` and
 * `secrets` instead of `seed`), whose fast tier takes `bind` as given. Kinds (§10 of the design) are open:
 * a kind that matches the pattern but is not registered is verified for integrity and reported as a notice.
 */
import { isHex64TextAt } from '../canonical/hex-text.js';
import { isObject, type Json } from '../canonical/json.js';
import { canonicalValue } from '../canonical/value.js';
import { isValidId } from './fields.js';
import { SEQ_RULE, STEP_ID_RULE, TS_RULE, digestRule, envelope, invalid } from './rules.js';
import {
  keyOfRecord,
  keyOfTexts,
  stepHashWithout,
  type JournalFormat,
  type MemberRule,
  type RecordProfile,
  type StepTexts,
} from './profile.js';
import { runGenesisDefect, type RunIdentity } from './v2.js';
import { toolNameOf } from './v1.js';
import { CHUNKS_MARKER, PART_MARKER, V3_SLOTS, WITHHELD_MARKER } from './v3/commit.js';
import { KINDS_BY_NAME, KIND_PATTERN, kindRule, type KindSpec } from './v3/kinds.js';
import { publicRecordProblems } from './v3/public.js';
import { RECORD_VERSION_V3, UNDECIDED, precommitV3, sealV3, stepHashV3 } from './v3/seal.js';

export { RECORD_VERSION_V3, sealV3, stepHashV3 };

export const FORMAT_V3 = 'stepchain/v3';

/** The caller-facing content fields of a v3 record: v2's. */
export const CONTENT_FIELDS_V3 = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'] as const;

export interface GenesisV3 {
  format: typeof FORMAT_V3;
  journal_id: string;
  created_at: string;
  run: RunIdentity;
}

/** A stored v3 record (private form). */
export interface StepRecordV3 {
  v: 3;
  seq: number;
  step_id: string;
  ts: string;
  prev_hash: string;
  kind: string;
  ref: string | null;
  input: Json;
  model: Json;
  prompt: Json;
  tool_call: Json;
  result: Json;
  error: Json;
  meta?: Record<string, Json>;
  /** `sha256:` R, the root of the record's unit tree. */
  root: string;
  /** The record seed (256 bits, 64 hex): every slot key and salt derives from it. Private to the journal. */
  seed: string;
  step_hash: string;
}

const content = (name: string, check: MemberRule['check'] = null): MemberRule => ({
  name,
  required: true,
  role: 'content',
  check,
});

function baseMembers(): MemberRule[] {
  return [
    content('error'),
    content('input'),
    content('kind', kindRule),
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
    envelope('root', digestRule('root')),
    SEQ_RULE,
    envelope('step_hash', digestRule('step_hash')),
    STEP_ID_RULE,
    content('tool_call'),
    TS_RULE,
    envelope('v', (text, start, end) => {
      const v = canonicalValue(text, start, end);
      if (v === RECORD_VERSION_V3) return null;
      return typeof v === 'number'
        ? {
            code: 'UNSUPPORTED_VERSION',
            message: `record version ${v} is not supported in a stepchain/v3 journal; it holds version 3`,
          }
        : invalid('v must be the number 3');
    }),
  ];
}

const seedRule: MemberRule = envelope('seed', (text, start, end) =>
  isHex64TextAt(text, start, end) ? null : invalid('seed must be 64 lowercase hex digits (256 bits)'),
);
const bindRule: MemberRule = envelope('bind', digestRule('bind'));
const secretsRule: MemberRule = envelope('secrets', (text, start, end) =>
  isObject(canonicalValue(text, start, end)) ? null : invalid('secrets must be a JSON object'),
);

const byName = (a: MemberRule, b: MemberRule): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const STORED_MEMBERS = [...baseMembers(), seedRule].sort(byName);
const PUBLIC_MEMBERS = [...baseMembers(), bindRule, secretsRule].sort(byName);
// erasure (spec/ERASURE.md): the sealed form keeps bind, the other slot keys and the erased slot's salts.
const objectRule = (name: string): MemberRule =>
  envelope(name, (text, start, end) =>
    isObject(canonicalValue(text, start, end)) ? null : invalid(`${name} must be a JSON object`),
  );
const SEALED_MEMBERS = [...baseMembers(), bindRule, objectRule('keys'), objectRule('salts')].sort(byName);

/** The step hash of a stored line from its member spans: B from the line itself (private) or `bind` (public). */
function lineStepHash(
  text: string,
  stepHashSpan: readonly [number, number],
  spans: ReadonlyMap<string, readonly [number, number]>,
  bindFromLine: boolean,
): string {
  let bind: string;
  if (bindFromLine) {
    // A line without a valid seed is no private v3 record: B of it is never what the writer sealed.
    const seed = spans.get('seed');
    if (seed === undefined) return UNDECIDED;
    bind = stepHashWithout(text, stepHashSpan);
  } else {
    const b = spans.get('bind');
    if (b === undefined) return UNDECIDED;
    bind = text.slice(b[0] + 1, b[1] - 1);
    if (!/^sha256:[0-9a-f]{64}$/.test(bind)) return UNDECIDED;
  }
  return stepHashV3(bind, (n) => {
    const s = spans.get(n);
    return s === undefined ? undefined : text.slice(s[0], s[1]);
  });
}

/** The slot values of a record from the canonical texts of its content and meta (absent meta: undefined). */
export function slotValuesOfTexts(texts: StepTexts): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const slot of V3_SLOTS) if (texts[slot] !== undefined) values[slot] = JSON.parse(texts[slot]);
  return values;
}

/** Rules between members for the registered kinds (v2's and v3's own); an unregistered kind is only notified. */
function relationDefect(value: (name: string) => unknown): { field: string; message: string } | null {
  const kind = value('kind');
  if (typeof kind !== 'string') return null;
  const spec: KindSpec | undefined = KINDS_BY_NAME.get(kind);
  if (spec === undefined) return null;
  const ref = value('ref');
  if (spec.ref === 'required' && ref === null)
    return { field: 'ref', message: `a ${kind} record must name the record it continues in ref` };
  if (spec.ref === 'none' && ref !== null && ref !== undefined)
    return { field: 'ref', message: `a ${kind} record has no ref (ref must be null)` };
  const error = value('error');
  if (spec.error === 'required' && error === null)
    return { field: 'error', message: `a ${kind} record must carry its error (error must not be null)` };
  if (spec.error === 'none' && error !== null && error !== undefined)
    return { field: 'error', message: `only a failed record carries an error; a ${kind} record has error null` };
  return null;
}

const BASE: Omit<RecordProfile, 'id' | 'members' | 'memberNames' | 'computed' | 'seal' | 'stepHashOf'> = {
  version: RECORD_VERSION_V3,
  contentFields: CONTENT_FIELDS_V3,
  defaults: { kind: 'step' },
  // v3 has parts (design §8), not blobs: no whole-field blob reference.
  blobFields: new Set<string>(),
  redactable: [...V3_SLOTS],
  diffFields: {
    content: [...CONTENT_FIELDS_V3, 'meta'],
    envelope: ['v', 'seq', 'step_id', 'ts', 'prev_hash', 'root', 'step_hash'],
  },
  relationDefect,
  key: (texts) => keyOfTexts(CONTENT_FIELDS_V3, texts),
  recordKey: (record) => keyOfRecord(CONTENT_FIELDS_V3, record),
  toolName: (record) => toolNameOf(record.tool_call),
};

export const STEP_V3: RecordProfile = {
  ...BASE,
  id: 'step/v3',
  members: STORED_MEMBERS,
  memberNames: new Set(STORED_MEMBERS.map((m) => m.name)),
  computed: ['v', 'seq', 'prev_hash', 'step_hash', 'root', 'seed'],
  seal: (texts, e) => {
    const { stepHash, line } = sealV3(texts, e);
    return { stepHash, line };
  },
  precommit: precommitV3,
  stepHashOf: (text, span, spans) => lineStepHash(text, span, spans, true),
};

export const STEP_V3_PUBLIC: RecordProfile = {
  ...BASE,
  id: 'step/v3+public',
  members: PUBLIC_MEMBERS,
  memberNames: new Set(PUBLIC_MEMBERS.map((m) => m.name)),
  computed: ['v', 'seq', 'prev_hash', 'step_hash', 'root', 'bind', 'secrets'],
  seal: () => {
    throw new TypeError('step/v3+public: a public-form record is written by the publisher, never appended');
  },
  stepHashOf: (text, span, spans) => publicStepHash(text, span, spans),
};

/** A record after an erasure (spec/ERASURE.md §2): stored `bind` taken by the fast tier; what remains is checked by the chain's erasure ledger. */
export const STEP_V3_SEALED: RecordProfile = {
  ...BASE,
  id: 'step/v3+sealed',
  members: SEALED_MEMBERS,
  memberNames: new Set(SEALED_MEMBERS.map((m) => m.name)),
  computed: ['v', 'seq', 'prev_hash', 'step_hash', 'root', 'bind', 'keys', 'salts'],
  seal: () => {
    throw new TypeError('step/v3+sealed: a sealed record is written by an erasure, never appended');
  },
  stepHashOf: (text, span, spans) => lineStepHash(text, span, spans, false),
};

/**
 * The step hash of a public-form line. Its envelope takes `bind` and `root` as given, which would bind
 * nothing the line shows; so R is recomputed from the shown values and the secrets (v3/public.ts), and a line
 * whose values do not give its root hashes to nothing (HASH_MISMATCH) on every verifier path. The
 * publication checks name the cause (ROOT_MISMATCH, SECRETS_INVALID, …; REDACTION.md §13).
 */
function publicStepHash(
  text: string,
  span: readonly [number, number],
  spans: ReadonlyMap<string, readonly [number, number]>,
): string {
  const h = lineStepHash(text, span, spans, false);
  if (h === UNDECIDED) return h;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return UNDECIDED;
  }
  return publicRecordProblems(record).length === 0 ? h : UNDECIDED;
}

const GENESIS_MEMBERS = ['created_at', 'format', 'journal_id', 'run'] as const;

export const JOURNAL_V3: JournalFormat = {
  format: FORMAT_V3,
  capabilities: {
    runRecords: true,
    fieldSalts: false,
    parts: true,
    erasure: true,
    approvals: true,
    publication: 'tree',
    written: true,
  },
  genesisMembers: GENESIS_MEMBERS,
  genesisDefect: (g) => runGenesisDefect(FORMAT_V3, g),
  records: [STEP_V3, STEP_V3_PUBLIC, STEP_V3_SEALED],
  // A public-form record carries `bind` and `secrets` (no seed); a sealed one (erasure) `bind` and `keys`; every other record is read as the stored form.
  select: (member) =>
    member('seed') === undefined && member('bind') !== undefined
      ? member('secrets') === undefined && member('keys') !== undefined
        ? STEP_V3_SEALED
        : STEP_V3_PUBLIC
      : STEP_V3,
  memberNames: new Set([...STEP_V3.memberNames, ...STEP_V3_PUBLIC.memberNames, ...STEP_V3_SEALED.memberNames]),
};

/** Markers a v3 record may hold (design §7.1, §8.5): part references in any form, withheld/chunks in public form only. */
export const V3_MARKERS = { part: PART_MARKER, withheld: WITHHELD_MARKER, chunks: CHUNKS_MARKER } as const;
export { KIND_PATTERN };
