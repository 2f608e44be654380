/**
 * Commitment hashing (spec/FORMAT.md §12): the step hash of a `stepchain/v2` record commits to one salted
 * digest per *slot* (each member a redaction may withhold: the payload fields and meta) instead of to the
 * raw values, so a published receipt can withhold a slot's value and salt, keep its digest, and still
 * verify against the original head — while nobody without the 128-bit salt can test a guess of the value.
 *
 * Two forms of one record share one step hash: the *private* form stored in the journal (values and the
 * record's `salt`, from which every slot salt is derived), and the *public* form a publication writes
 * (REDACTION.md §12: per slot either the value and its slot salt in `salts`, a whole-slot marker carrying
 * the slot digest, or a redacted view with its digest in `digests`). `commitProfiles` (commit-profiles.ts)
 * turns a record profile into the pair. Pure: runs in a browser.
 */
import { canonicalValue } from '../canonical/value.js';
import { isObject } from '../canonical/json.js';
import { digestUtf8, hexUtf8 } from '../canonical/sha256.js';
import {
  SALT_HEX_DIGITS,
  SALT_TEXT,
  SLOT_DIGEST_TAG,
  SLOT_SALT_TAG,
  newRecordSalt,
  slotDigest,
  slotSalts,
} from './salts.js';
import { REDACTED_MARKER } from './markers.js';
import type { Envelope, RecordProfile, StepTexts } from './profile.js';

export {
  SLOT_SALT_TAG,
  SLOT_DIGEST_TAG,
  SALT_HEX_DIGITS,
  isSaltHex,
  newRecordSalt,
  slotSalts,
  slotSalt,
  slotDigest,
} from './salts.js';

/**
 * The step hash from the texts of the members hashed in clear (every member but step_hash, salt and the
 * slots) and one digest per slot: SHA-256 of the JCS of those members plus `"commitments": {slot: digest}`.
 */
export function committedStepHash(
  clear: Readonly<Record<string, string>>,
  digests: Readonly<Record<string, string>>,
  slots: readonly string[],
): string {
  return digestUtf8(committedPreimage(clear, digests, slots));
}

/** The preimage committedStepHash hashes (FORMAT §12.3): for vectors and independent checks. */
export function committedPreimage(
  clear: Readonly<Record<string, string>>,
  digests: Readonly<Record<string, string>>,
  slots: readonly string[],
): string {
  const commitments = commitmentsText(
    slots,
    slots.map((s) => digests[s]!),
  );
  const names = [...Object.keys(clear), 'commitments'].sort();
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const n = names[i]!;
    out += (i === 0 ? '' : ',') + JSON.stringify(n) + ':' + (n === 'commitments' ? commitments : clear[n]!);
  }
  return out + '}';
}

/** The preimage of a stored record given as its member texts (every member but step_hash; FORMAT §12.3). */
export function preimageOfTexts(profile: RecordProfile, texts: Readonly<Record<string, string>>): string {
  const salt = JSON.parse(texts.salt!) as string;
  const salts = slotSalts(salt, profile.redactable);
  const clear: Record<string, string> = {};
  for (const [n, t] of Object.entries(texts)) if (n !== 'salt' && !profile.redactable.includes(n)) clear[n] = t;
  const digests: Record<string, string> = {};
  profile.redactable.forEach((slot, i) => void (digests[slot] = slotDigest(salts[i]!, slot, texts[slot])));
  return committedPreimage(clear, digests, profile.redactable);
}

/**
 * What hashing and sealing one committed profile's records needs, worked out once per profile instead of per
 * record (measured: with per-record sorts, JSON.stringify of names and Record objects a v2 seal took 2.4×
 * the CPU time of a v1 seal; with this plan 1.5×, most of it the twelve hashes themselves): the slots with their constant digest prefixes, the members of the preimage and of the stored
 * line in their sorted (JCS) order, each with its `"name":` text, and which member names the step hash skips.
 * The straightforward forms above (slotSalts, slotDigest, committedPreimage, preimageOfTexts) define the
 * hash; test/record/commit-plan.test.ts holds these fast paths to them on generated records.
 */
interface CommitPlan {
  readonly slots: readonly string[];
  /** `\n["slot",` and `\n["slot"]`: what follows the tag and slot salt in the slot digest's preimage. */
  readonly open: readonly string[];
  readonly absent: readonly string[];
  /** The preimage's members in order: a slot-free content field, an envelope member, or `commitments`. */
  readonly preimage: readonly PlanMember[];
  /** The stored private-form line's members in order. */
  readonly line: readonly PlanMember[];
  /** `{"slot":"sha256:` then `","slot":"sha256:` …: the `commitments` object up to each digest's hex. */
  readonly commitmentKeys: readonly string[];
  /** Member names of a stored line the step hash does not cover (step_hash, the salt(s), the slots). */
  readonly skipPrivate: ReadonlySet<string>;
  readonly skipPublic: ReadonlySet<string>;
}

type MemberSource =
  'content' | 'slot' | 'prev_hash' | 'seq' | 'step_id' | 'ts' | 'v' | 'salt' | 'step_hash' | 'commitments';
interface PlanMember {
  readonly name: string;
  readonly source: MemberSource;
  /** `"name":` for the first member, `,"name":` for the others (a slot may be absent: both are kept). */
  readonly first: string;
  readonly next: string;
}

const ENVELOPE_SOURCES: readonly MemberSource[] = ['prev_hash', 'seq', 'step_id', 'ts', 'v'];

function planMembers(names: readonly (readonly [string, MemberSource])[]): PlanMember[] {
  return [...names]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([name, source]) => ({
      name,
      source,
      first: JSON.stringify(name) + ':',
      next: ',' + JSON.stringify(name) + ':',
    }));
}

const plans = new WeakMap<RecordProfile, CommitPlan>();

/** The plan of a committed profile (built on first use; the profile's members never change). */
function planOf(profile: RecordProfile): CommitPlan {
  let plan = plans.get(profile);
  if (plan === undefined) {
    const slots = profile.redactable;
    const clear = profile.contentFields.filter((f) => !slots.includes(f)).map((f) => [f, 'content'] as const);
    const envelope = ENVELOPE_SOURCES.map((n) => [n, n] as const);
    plan = {
      slots,
      open: slots.map((slot) => '\n["' + slot + '",'),
      absent: slots.map((slot) => '\n["' + slot + '"]'),
      preimage: planMembers([...clear, ...envelope, ['commitments', 'commitments']]),
      line: planMembers([
        ...clear,
        ...envelope,
        ...slots.map((n) => [n, 'slot'] as const),
        ['salt', 'salt'],
        ['step_hash', 'step_hash'],
      ]),
      commitmentKeys: slots.map((slot, i) => (i === 0 ? '{"' : '","') + slot + '":"sha256:'),
      skipPrivate: new Set(['step_hash', 'salt', ...slots]),
      skipPublic: new Set(['step_hash', 'salts', 'digests', ...slots]),
    };
    plans.set(profile, plan);
  }
  return plan;
}

/** The tag and record salt every slot salt block of a record starts with. */
function saltsOf(plan: CommitPlan, recordSalt: string): string[] {
  const out: string[] = new Array<string>(plan.slots.length);
  const head = SLOT_SALT_TAG + recordSalt + '\n';
  for (let j = 0; 2 * j < out.length; j++) {
    const block = hexUtf8(head + j);
    out[2 * j] = block.slice(0, 32);
    if (2 * j + 1 < out.length) out[2 * j + 1] = block.slice(32, 64);
  }
  return out;
}

/** `{"slot":"sha256:<hex>",…}` from the digests' hex in slot order. */
function commitmentsOf(plan: CommitPlan, digests: readonly string[]): string {
  let out = '';
  for (let i = 0; i < digests.length; i++) out += plan.commitmentKeys[i]! + digests[i]!;
  return out + '"}';
}

/**
 * Seals a private-form record from the canonical texts of its content and meta, with `recordSalt` (fresh
 * from newRecordSalt when not given: vectors pass a fixed one). Returns the line and its step hash. The
 * caller vouches for the texts (each the JCS of a valid value), as for every profile's seal.
 */
export function sealCommitted(
  profile: RecordProfile,
  texts: StepTexts,
  e: Envelope,
  recordSalt: string = newRecordSalt(),
): { stepHash: string; line: string } {
  const plan = planOf(profile);
  const salts = saltsOf(plan, recordSalt);
  const digests: string[] = new Array<string>(plan.slots.length);
  for (let i = 0; i < digests.length; i++) {
    const text = texts[plan.slots[i]!];
    digests[i] = hexUtf8(
      SLOT_DIGEST_TAG + salts[i]! + (text === undefined ? plan.absent[i]! : plan.open[i]! + text + ']'),
    );
  }
  const envelope = (source: MemberSource): string =>
    source === 'prev_hash'
      ? JSON.stringify(e.prevHash)
      : source === 'seq'
        ? String(e.seq)
        : source === 'step_id'
          ? JSON.stringify(e.stepId)
          : source === 'ts'
            ? JSON.stringify(e.ts)
            : String(profile.version);
  let pre = '{';
  for (let i = 0; i < plan.preimage.length; i++) {
    const m = plan.preimage[i]!;
    pre +=
      (i === 0 ? m.first : m.next) +
      (m.source === 'commitments'
        ? commitmentsOf(plan, digests)
        : m.source === 'content'
          ? texts[m.name]!
          : envelope(m.source));
  }
  const stepHash = digestUtf8(pre + '}');
  let line = '{';
  for (const m of plan.line) {
    let value: string | undefined;
    if (m.source === 'content' || m.source === 'slot') value = texts[m.name];
    else if (m.source === 'salt') value = JSON.stringify(recordSalt);
    else if (m.source === 'step_hash') value = '"' + stepHash + '"';
    else value = envelope(m.source);
    if (value !== undefined) line += (line.length === 1 ? m.first : m.next) + value;
  }
  return { stepHash, line: line + '}\n' };
}

type Spans = ReadonlyMap<string, readonly [number, number]>;

/** Not a digest: what a record whose slots cannot all be decided hashes to, so it never matches (HASH_MISMATCH). */
export const UNDECIDED = 'sha256:undecided';

/** `{"slot":"digest",…}` in slot order: the value of `commitments` in the preimage. */
function commitmentsText(slots: readonly string[], digests: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < slots.length; i++) out += (i === 0 ? '"' : ',"') + slots[i]! + '":"' + digests[i]! + '"';
  return out + '}';
}

/**
 * The step hash from a stored line's spans and the slot digests: every member in the line's (canonical, so
 * sorted) order but the skipped ones, with `commitments` put in its sorted place — one pass, no sort, no
 * parse. Members the profile does not know are hashed too (the line then also has UNKNOWN_FIELD).
 */
function hashFromSpans(text: string, spans: Spans, skip: ReadonlySet<string>, commitments: string): string {
  let out = '{';
  let placed = false;
  for (const [name, span] of spans) {
    if (skip.has(name)) continue;
    if (!placed && name > 'commitments') {
      out += (out.length > 1 ? ',"commitments":' : '"commitments":') + commitments;
      placed = true;
    }
    out += (out.length > 1 ? ',"' : '"') + name + '":' + text.slice(span[0], span[1]);
  }
  if (!placed) out += (out.length > 1 ? ',"commitments":' : '"commitments":') + commitments;
  return digestUtf8(out + '}');
}

/** The digest of slot i (its hex) from its salt and the member's span in the line (absent: committed as absent). */
function slotDigestAt(
  plan: CommitPlan,
  i: number,
  salt: string,
  text: string,
  span: readonly [number, number] | undefined,
): string {
  return hexUtf8(
    SLOT_DIGEST_TAG +
      salt +
      (span === undefined ? plan.absent[i]! : plan.open[i]! + text.slice(span[0], span[1]) + ']'),
  );
}

/** The step hash of a stored private-form line, from its member spans (FORMAT §12.3). */
export function privateStepHash(profile: RecordProfile, text: string, spans: Spans): string {
  const saltSpan = spans.get('salt');
  if (saltSpan === undefined) return UNDECIDED;
  // The salt rule's own test (a salt's canonical text has no escape, so the text alone decides).
  SALT_TEXT.lastIndex = saltSpan[0];
  if (saltSpan[1] - saltSpan[0] !== SALT_HEX_DIGITS + 2 || !SALT_TEXT.test(text)) return UNDECIDED;
  const plan = planOf(profile);
  const salts = saltsOf(plan, text.slice(saltSpan[0] + 1, saltSpan[1] - 1));
  const digests: string[] = new Array<string>(plan.slots.length);
  for (let i = 0; i < digests.length; i++)
    digests[i] = slotDigestAt(plan, i, salts[i]!, text, spans.get(plan.slots[i]!));
  return hashFromSpans(text, spans, plan.skipPrivate, commitmentsOf(plan, digests));
}

/** What a public-form slot holds (REDACTION.md §12.2). */
export type SlotState =
  | { kind: 'disclosed'; salt: string; present: boolean }
  | { kind: 'withheld'; digest: string; rule: string }
  | { kind: 'view'; digest: string }
  | { kind: 'invalid'; why: string };

const WHOLE_MARKER_PREFIX = `{"${REDACTED_MARKER}":`;

/** The state of each slot of a public-form record, or why it is undecided. Never throws. */
export function slotStates(profile: RecordProfile, text: string, spans: Spans): Map<string, SlotState> {
  const read = (name: string): unknown => {
    const s = spans.get(name);
    return s ? canonicalValue(text, s[0], s[1]) : undefined;
  };
  const salts = read('salts');
  const digests = read('digests');
  const out = new Map<string, SlotState>();
  for (const slot of profile.redactable) {
    const span = spans.get(slot);
    const salt = isObject(salts) ? salts[slot] : undefined;
    const digest = isObject(digests) ? digests[slot] : undefined;
    const valueText = span ? text.slice(span[0], span[1]) : undefined;
    const whole = valueText?.startsWith(WHOLE_MARKER_PREFIX) ? wholeMarker(valueText) : null;
    const states = (salt !== undefined ? 1 : 0) + (digest !== undefined ? 1 : 0) + (whole !== null ? 1 : 0);
    if (states !== 1) {
      out.set(slot, {
        kind: 'invalid',
        why: `slot ${slot} must be exactly one of: disclosed (a salt in salts), withheld whole (a redaction marker as its value), a redacted view (a digest in digests)`,
      });
    } else if (whole !== null) {
      out.set(slot, { kind: 'withheld', digest: whole.commitment, rule: whole.rule });
    } else if (digest !== undefined) {
      out.set(
        slot,
        valueText === undefined
          ? { kind: 'invalid', why: `slot ${slot} has a digest in digests but no redacted view` }
          : { kind: 'view', digest: digest as string },
      );
    } else {
      out.set(slot, { kind: 'disclosed', salt: salt as string, present: valueText !== undefined });
    }
  }
  return out;
}

export function isWithheldMarker(v: unknown): boolean {
  return isObject(v) && Object.keys(v).length === 1 && REDACTED_MARKER in v;
}

/** The body of a slot withheld whole: a marker (FORMAT §3.5: exactly one member) whose commitment and rule are strings. */
function wholeMarker(valueText: string): { commitment: string; rule: string } | null {
  try {
    const marker: unknown = JSON.parse(valueText);
    if (!isWithheldMarker(marker)) return null;
    const v = (marker as Record<string, unknown>)[REDACTED_MARKER];
    if (isObject(v) && typeof v.commitment === 'string' && typeof v.rule === 'string')
      return { commitment: v.commitment, rule: v.rule };
  } catch {
    // Not JSON: the scanner has already reported the line.
  }
  return null;
}

/** The step hash of a stored public-form line (REDACTION.md §12.3): UNDECIDED when a slot is not in exactly one state. */
export function publicStepHash(profile: RecordProfile, text: string, spans: Spans): string {
  const plan = planOf(profile);
  const states = slotStates(profile, text, spans);
  const digests: string[] = new Array<string>(plan.slots.length);
  for (let i = 0; i < digests.length; i++) {
    const state = states.get(plan.slots[i]!)!;
    if (state.kind === 'invalid') return UNDECIDED;
    // A withheld slot's digest is copied from the line as it stands (the member rules judge its form).
    digests[i] =
      state.kind === 'disclosed'
        ? 'sha256:' + slotDigestAt(plan, i, state.salt, text, spans.get(plan.slots[i]!))
        : state.digest;
  }
  return hashFromSpans(text, spans, plan.skipPublic, commitmentsText(plan.slots, digests));
}
