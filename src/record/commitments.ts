/**
 * Commitment hashing (spec/FORMAT.md §12): the step hash of a `stepchain/v2` record commits to one salted
 * digest per *slot* (each member a redaction may withhold: the payload fields and meta) instead of to the
 * raw values, so a published receipt can withhold a slot's value and salt, keep its digest, and still
 * verify against the original head — while nobody without the 128-bit salt can test a guess of the value.
 *
 * Two forms of one record share one step hash: the *private* form stored in the journal (values and the
 * record's `salt`, from which every slot salt is derived), and the *public* form a publication writes
 * (REDACTION.md §12: per slot either the value and its slot salt in `salts`, a whole-slot marker carrying
 * the slot digest, or a redacted view with its digest in `digests`). `commitProfiles` turns a record
 * profile into the pair. Pure: runs in a browser.
 */
import { canonicalValue } from '../canonical/value.js';
import { isObject } from '../canonical/json.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { REDACTED_MARKER } from './markers.js';
import type { Envelope, MemberRule, RecordProfile, StepTexts } from './profile.js';

/** Tags that separate these hashes from every other SHA-256 in stepchain (FORMAT §12.2). */
export const SLOT_SALT_TAG = 'stepchain/v2 salt\n';
export const SLOT_DIGEST_TAG = 'stepchain/v2 slot\n';
/** A record salt and a slot salt: 128 bits, as 32 lowercase hex digits. */
export const SALT_HEX_DIGITS = 32;
const SALT_RE = /^[0-9a-f]{32}$/;
const SALT_TEXT = /"[0-9a-f]{32}"/y;

export function isSaltHex(value: unknown): value is string {
  return typeof value === 'string' && value.length === SALT_HEX_DIGITS && SALT_RE.test(value);
}

let pool = new Uint8Array(0);
let poolAt = 0;
/**
 * A fresh record salt: 16 bytes from the platform's CSPRNG (crypto.getRandomValues), as hex. Drawn from a
 * pool of 4 KiB so a group commit of many steps asks the platform once (the OS call dominated otherwise).
 */
export function newRecordSalt(): string {
  if (poolAt + 16 > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    poolAt = 0;
  }
  let out = '';
  for (let i = poolAt; i < poolAt + 16; i++) out += (pool[i]! < 16 ? '0' : '') + pool[i]!.toString(16);
  pool.fill(0, poolAt, poolAt + 16);
  poolAt += 16;
  return out;
}

/**
 * The salts of a record's slots, in the order of `slots` (UTF-16 order of the names): block j is
 * SHA-256(tag ‖ record salt ‖ "\n" ‖ decimal j) in hex; the slot at index i takes the first half of block
 * ⌊i/2⌋ when i is even, the second when odd. One hash serves two slots (a hash costs more than the rest of
 * a slot), and half a SHA-256 output says nothing about the other half, so disclosing one slot's salt
 * reveals neither its neighbour's nor the record salt.
 */
export function slotSalts(recordSalt: string, slots: readonly string[]): string[] {
  const out: string[] = [];
  for (let j = 0; 2 * j < slots.length; j++) {
    const block = digestUtf8(SLOT_SALT_TAG + recordSalt + '\n' + j);
    out.push(block.slice(7, 39));
    if (2 * j + 1 < slots.length) out.push(block.slice(39, 71));
  }
  return out;
}

/** The salt of one slot of a record whose slots are `slots` (slotSalts, for one). */
export function slotSalt(recordSalt: string, slot: string, slots: readonly string[]): string {
  const i = slots.indexOf(slot);
  if (i < 0) throw new RangeError(`${slot} is not one of the slots ${slots.join(', ')}`);
  const block = digestUtf8(SLOT_SALT_TAG + recordSalt + '\n' + Math.floor(i / 2));
  return i % 2 === 0 ? block.slice(7, 39) : block.slice(39, 71);
}

/**
 * The digest of one slot: SHA-256(tag ‖ slot salt ‖ "\n" ‖ JCS([name, value])), or JCS([name]) when the
 * (optional) member is absent — absence is committed too, so a withheld meta does not say whether there
 * was one. `valueText` is the member's canonical text as stored (a blob reference stays a reference).
 */
export function slotDigest(salt: string, slot: string, valueText: string | undefined): string {
  return digestUtf8(SLOT_DIGEST_TAG + salt + '\n["' + slot + (valueText === undefined ? '"]' : '",' + valueText + ']'));
}

/**
 * The step hash from the texts of the members hashed in clear (every member but step_hash, salt and the
 * slots) and one digest per slot: SHA-256 of the JCS of those members plus `"commitments": {slot: digest}`.
 */
export function committedStepHash(clear: Readonly<Record<string, string>>, digests: Readonly<Record<string, string>>, slots: readonly string[]): string {
  return digestUtf8(committedPreimage(clear, digests, slots));
}

/** The preimage committedStepHash hashes (FORMAT §12.3): for vectors and independent checks. */
export function committedPreimage(clear: Readonly<Record<string, string>>, digests: Readonly<Record<string, string>>, slots: readonly string[]): string {
  const commitments = commitmentsText(slots, slots.map((s) => digests[s]!));
  const names = [...Object.keys(clear), 'commitments'].sort();
  let out = '{';
  for (let i = 0; i < names.length; i++) {
    const n = names[i]!;
    out += (i === 0 ? '' : ',') + JSON.stringify(n) + ':' + (n === 'commitments' ? commitments : clear[n]);
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

/** Joins member texts into a canonical line, step_hash placed in its sorted position. */
function lineOf(texts: Readonly<Record<string, string>>): string {
  const names = Object.keys(texts).sort();
  let out = '{';
  for (let i = 0; i < names.length; i++) out += (i === 0 ? '' : ',') + JSON.stringify(names[i]) + ':' + texts[names[i]!];
  return out + '}\n';
}

/** The members hashed in clear: the envelope a writer adds and the content that is not a slot (v2: kind, ref). */
function clearTexts(profile: RecordProfile, texts: StepTexts, e: Envelope): Record<string, string> {
  const clear: Record<string, string> = {
    prev_hash: JSON.stringify(e.prevHash), seq: String(e.seq), step_id: JSON.stringify(e.stepId), ts: JSON.stringify(e.ts), v: String(profile.version),
  };
  for (const f of profile.contentFields) if (!profile.redactable.includes(f)) clear[f] = texts[f]!;
  return clear;
}

/**
 * Seals a private-form record from the canonical texts of its content and meta, with `recordSalt` (fresh
 * from newRecordSalt when not given: vectors pass a fixed one). Returns the line and its step hash.
 */
export function sealCommitted(profile: RecordProfile, texts: StepTexts, e: Envelope, recordSalt: string = newRecordSalt()): { stepHash: string; line: string } {
  const clear = clearTexts(profile, texts, e);
  const digests: Record<string, string> = {};
  const salts = slotSalts(recordSalt, profile.redactable);
  profile.redactable.forEach((slot, i) => void (digests[slot] = slotDigest(salts[i]!, slot, texts[slot])));
  const stepHash = committedStepHash(clear, digests, profile.redactable);
  const all: Record<string, string> = { ...clear, salt: JSON.stringify(recordSalt), step_hash: JSON.stringify(stepHash) };
  for (const slot of profile.redactable) if (texts[slot] !== undefined) all[slot] = texts[slot]!;
  return { stepHash, line: lineOf(all) };
}

type Spans = ReadonlyMap<string, readonly [number, number]>;

/** Not a digest: what a record whose slots cannot all be decided hashes to, so it never matches (HASH_MISMATCH). */
export const UNDECIDED = 'sha256:undecided';

/** `{"slot":"digest",…}` in slot order: the value of `commitments` in the preimage. */
function commitmentsText(slots: readonly string[], digests: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < slots.length; i++) out += (i === 0 ? '"' : ',"') + slots[i] + '":"' + digests[i] + '"';
  return out + '}';
}

/**
 * The step hash from a stored line's spans: the members in their (canonical, so sorted) order, without
 * the skipped ones, with `commitments` put in its sorted place — one pass, no sort, no parse.
 */
function hashFromSpans(text: string, spans: Spans, skip: (name: string) => boolean, commitments: string): string {
  let out = '{';
  let placed = false;
  for (const [name, span] of spans) {
    if (skip(name)) continue;
    if (!placed && name > 'commitments') {
      out += (out.length > 1 ? ',' : '') + '"commitments":' + commitments;
      placed = true;
    }
    out += (out.length > 1 ? ',"' : '"') + name + '":' + text.slice(span[0], span[1]);
  }
  if (!placed) out += (out.length > 1 ? ',' : '') + '"commitments":' + commitments;
  return digestUtf8(out + '}');
}

/** The step hash of a stored private-form line, from its member spans (FORMAT §12.3). */
export function privateStepHash(profile: RecordProfile, text: string, spans: Spans): string {
  const saltSpan = spans.get('salt');
  const salt = saltSpan ? canonicalValue(text, saltSpan[0], saltSpan[1]) : undefined;
  if (!isSaltHex(salt)) return UNDECIDED;
  const slots = profile.redactable;
  const salts = slotSalts(salt, slots);
  const digests: string[] = [];
  for (let i = 0; i < slots.length; i++) {
    const span = spans.get(slots[i]!);
    digests.push(slotDigest(salts[i]!, slots[i]!, span ? text.slice(span[0], span[1]) : undefined));
  }
  return hashFromSpans(text, spans, (n) => n === 'step_hash' || n === 'salt' || slots.includes(n), commitmentsText(slots, digests));
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
    const whole = valueText !== undefined && valueText.startsWith(WHOLE_MARKER_PREFIX) ? wholeMarker(valueText) : null;
    const states = (salt !== undefined ? 1 : 0) + (digest !== undefined ? 1 : 0) + (whole !== null ? 1 : 0);
    if (states !== 1) {
      out.set(slot, { kind: 'invalid', why: `slot ${slot} must be exactly one of: disclosed (a salt in salts), withheld whole (a redaction marker as its value), a redacted view (a digest in digests)` });
    } else if (whole !== null) {
      out.set(slot, { kind: 'withheld', digest: whole.commitment, rule: whole.rule });
    } else if (digest !== undefined) {
      out.set(slot, valueText === undefined ? { kind: 'invalid', why: `slot ${slot} has a digest in digests but no redacted view` } : { kind: 'view', digest: digest as string });
    } else {
      out.set(slot, { kind: 'disclosed', salt: salt as string, present: valueText !== undefined });
    }
  }
  return out;
}

function isWithheldMarker(v: unknown): boolean {
  return isObject(v) && Object.keys(v).length === 1 && REDACTED_MARKER in v;
}

function wholeMarker(valueText: string): { commitment: string; rule: string } | null {
  try {
    const v = (JSON.parse(valueText) as Record<string, unknown>)[REDACTED_MARKER];
    if (isObject(v) && typeof v.commitment === 'string' && typeof v.rule === 'string') return { commitment: v.commitment, rule: v.rule };
  } catch {
    // Not JSON: the scanner has already reported the line.
  }
  return null;
}

/** The step hash of a stored public-form line (REDACTION.md §12.3): UNDECIDED when a slot is not in exactly one state. */
export function publicStepHash(profile: RecordProfile, text: string, spans: Spans): string {
  const slots = profile.redactable;
  const states = slotStates(profile, text, spans);
  const digests: string[] = [];
  for (const slot of slots) {
    const state = states.get(slot)!;
    if (state.kind === 'invalid') return UNDECIDED;
    if (state.kind === 'disclosed') {
      const span = spans.get(slot);
      digests.push(slotDigest(state.salt, slot, span ? text.slice(span[0], span[1]) : undefined));
    } else digests.push(state.digest);
  }
  return hashFromSpans(text, spans, (n) => n === 'step_hash' || n === 'salts' || n === 'digests' || slots.includes(n), commitmentsText(slots, digests));
}

const invalid = (message: string) => ({ message });
const saltRule: MemberRule = {
  name: 'salt', required: true, role: 'envelope',
  check: (text, start, end) => {
    SALT_TEXT.lastIndex = start;
    return end - start === SALT_HEX_DIGITS + 2 && SALT_TEXT.test(text) ? null : invalid('salt must be 32 lowercase hex digits (128 bits)');
  },
};

/** `salts` or `digests` of a public-form record: an object whose members are slots, each a salt or a digest. */
function slotMapRule(name: 'salts' | 'digests', slots: readonly string[], required: boolean): MemberRule {
  const valueOk = name === 'salts' ? isSaltHex : (v: unknown) => typeof v === 'string' && /^sha256:[0-9a-f]{64}$/.test(v);
  return {
    name, required, role: 'envelope',
    check: (text, start, end) => {
      const v = canonicalValue(text, start, end);
      if (!isObject(v)) return invalid(`${name} must be a JSON object`);
      for (const [k, x] of Object.entries(v)) {
        if (!slots.includes(k)) return invalid(`${name} may name only the slots ${slots.join(', ')} (found ${JSON.stringify(k)})`);
        if (!valueOk(x)) return invalid(`${name}.${k} must be ${name === 'salts' ? '32 lowercase hex digits' : 'a digest'}`);
      }
      if (name === 'digests' && Object.keys(v).length === 0) return invalid('digests, when present, names at least one slot');
      return null;
    },
  };
}

const byName = (a: MemberRule, b: MemberRule): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The private and public profiles of a committed record kind, from a base profile that says its members
 * and slots (`redactable`): the private form adds the writer-computed `salt`; the public form has `salts`
 * and optional `digests` instead. Both hash by commitments; only the private form is ever appended.
 */
export function commitProfiles(base: RecordProfile): { stored: RecordProfile; published: RecordProfile } {
  const withoutSalt = base.members.filter((m) => m.name !== 'salt' && m.name !== 'salts' && m.name !== 'digests');
  const storedMembers = [...withoutSalt, saltRule].sort(byName);
  const publishedMembers = [...withoutSalt, slotMapRule('salts', base.redactable, true), slotMapRule('digests', base.redactable, false)].sort(byName);
  const stored: RecordProfile = {
    ...base,
    members: storedMembers,
    memberNames: new Set(storedMembers.map((m) => m.name)),
    computed: [...new Set([...base.computed, 'salt'])],
    seal: (texts, e) => sealCommitted(stored, texts, e, e.salt),
    stepHashOf: (text, _span, spans) => privateStepHash(stored, text, spans),
  };
  const published: RecordProfile = {
    ...base,
    id: `${base.id}+public`,
    members: publishedMembers,
    memberNames: new Set(publishedMembers.map((m) => m.name)),
    computed: [...new Set([...base.computed, 'salts', 'digests'])],
    seal: () => {
      throw new TypeError(`${base.id}: a public-form record is written by the publisher, never appended`);
    },
    stepHashOf: (text, _span, spans) => publicStepHash(published, text, spans),
  };
  // A withheld slot is a marker, not its value: rules between members read it as unknown there.
  const relation = base.relationDefect;
  if (relation) (published as { relationDefect?: RecordProfile['relationDefect'] }).relationDefect = (value) => relation((name) => (isWithheldMarker(value(name)) ? undefined : value(name)));
  return { stored, published };
}
