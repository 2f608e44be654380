/**
 * The record profile: everything the format says about one kind of record, in one object that the
 * verifier, the sealer, prepare, the idempotency key, redaction, diff and the testing kit all read
 * (spec/FORMAT.md §5, §10). A journal format (the genesis `format`, §6.1) names the profiles its chain may
 * hold; a new record kind or version is a new profile file and one line in formats.ts.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import { digestUtf8 } from '../canonical/sha256.js';
import type { Json } from '../canonical/json.js';

/** A member rule broken (spec/FORMAT.md §5.1): FIELD_INVALID unless the rule says otherwise. */
export interface RuleViolation {
  code?: 'FIELD_INVALID' | 'UNSUPPORTED_VERSION';
  message: string;
}

export interface MemberRule {
  readonly name: string;
  readonly required: boolean;
  /** content: a caller's value (markers allowed); meta: the caller's object; envelope: the writer's. */
  readonly role: 'content' | 'meta' | 'envelope';
  /**
   * Why the stored value breaks the rule, or null. `text.slice(start, end)` is the member's value as the
   * scanner proved it canonical; `canonicalValue` (canonical/value.ts) reads it without a general parse.
   */
  readonly check: ((text: string, start: number, end: number) => RuleViolation | null) | null;
}

/** The canonical text of each content field (blob references in place), and of meta when the step has it. */
export type StepTexts = Readonly<Record<string, string>>;

/** What a writer adds to a step's content to make its record (spec/FORMAT.md §5.1). */
export interface Envelope {
  seq: number;
  stepId: string;
  ts: string;
  prevHash: string;
  /** v2 (FORMAT §12.2): a record salt carried over by a copy; absent, the seal draws a fresh one. */
  salt?: string;
  /** v3 (FORMAT §14.4): a record seed carried over by a copy (64 hex); absent, the seal draws a fresh one. */
  seed?: string;
  /**
   * v3: the record's seed (64 hex) and R as the profile's `precommit` worked them out for the whole batch
   * before it was sequenced; absent, the seal works them out itself. Set by the sequencer only.
   */
  committed?: { seed: string; root: string };
}

export interface RecordProfile {
  /** Names the kind and version, for messages and tests: "step/v1". */
  readonly id: string;
  /** The record's `v`. */
  readonly version: number;
  /** Every member, in UTF-16 order of the names: the order a verifier reports them in (FORMAT §6.3 step 4). */
  readonly members: readonly MemberRule[];
  readonly memberNames: ReadonlySet<string>;
  /** Content fields in the order a caller lists them; the idempotency key and diff's report use it too. */
  readonly contentFields: readonly string[];
  /** The value of a content field the caller leaves out, where it is not null (v2: kind "step"). */
  readonly defaults?: Readonly<Record<string, Json>>;
  /**
   * A rule between members (v2: kind, ref and error, FORMAT §11.3), read from the members' values once each
   * passed its own rule; the violated member and why, or null. Checked by the verifier and by prepare.
   */
  readonly relationDefect?: (value: (name: string) => unknown) => { field: string; message: string } | null;
  /** Members a writer computes, which a caller may not supply (FIELD_NOT_ALLOWED). */
  readonly computed: readonly string[];
  /** Members that may stand as a whole blob reference (FORMAT §7). */
  readonly blobFields: ReadonlySet<string>;
  /** Members a redaction may stand in, in UTF-16 order (REDACTION.md §4): the content fields and meta. */
  readonly redactable: readonly string[];
  /** What diff compares by default (content, in report order), and what `envelope: true` adds (DIFF.md §3). */
  readonly diffFields: { readonly content: readonly string[]; readonly envelope: readonly string[] };
  /** The stored line and its step hash, from the canonical texts of the content and meta (FORMAT §5.2). */
  seal(texts: StepTexts, envelope: Envelope): { stepHash: string; line: string };
  /**
   * What the seal of each of a batch's records can have worked out before the batch is sequenced (v3: the seed
   * and R, which depend on neither seq, prev_hash nor ts, hashed for the whole batch at once), for its
   * envelope's `committed`; undefined for a record the seal must see itself (it then throws its own error).
   */
  precommit?(
    items: readonly { texts: StepTexts; seed: string | undefined }[],
  ): ({ seed: string; root: string } | undefined)[];
  /**
   * The step hash of a stored line, given the span of its step_hash value and of every top-level member's
   * value (FORMAT §5.2; a committed record, §12.3, hashes digests of its slots, read from their spans).
   */
  stepHashOf(
    text: string,
    stepHashValue: readonly [number, number],
    members: ReadonlyMap<string, readonly [number, number]>,
  ): string;
  /** The idempotency key (FILE-STORE.md §10) from the canonical texts of the content and meta. */
  key(texts: StepTexts): string;
  /** The idempotency key of a parsed record. */
  recordKey(record: Readonly<Record<string, unknown>>): string;
  /** The record's tool name, as redaction policies match it (REDACTION.md §4), or null. */
  toolName(record: Readonly<Record<string, unknown>>): string | null;
}

/**
 * What a journal format can hold (spec/FORMAT.md §10). Code outside record/ asks these instead of comparing
 * the genesis `format` string, so format knowledge stays here (test/architecture.test.ts holds it).
 */
export interface FormatCapabilities {
  /** The genesis names a run and records carry kind, ref and error (FORMAT §11, spec/RUNS.md): a run journal. */
  readonly runRecords: boolean;
  /** Each content field is hashed through a salted slot commitment under a record salt (FORMAT §12). */
  readonly fieldSalts: boolean;
  /** Every member is committed from a record seed, and values may stand in content-addressed parts (FORMAT §14). */
  readonly parts: boolean;
  /** A record may be sealed: its values erased, its hash kept (spec/ERASURE.md). */
  readonly erasure: boolean;
  /** The chain may hold approval records (spec/APPROVALS.md). */
  readonly approvals: boolean;
  /**
   * How a receipt is published with values withheld (spec/REDACTION.md): `reanchored`, a new chain whose
   * anchor names the original head (a v1 record hashes raw values); `slots`, against the journal's own head by
   * opening salted slots (stepchain-redaction/v3); `tree`, by the committed tree (stepchain-redaction/v4).
   */
  readonly publication: 'reanchored' | 'slots' | 'tree';
  /** Whether new journals are created in this format; false: read only, its write path frozen (FORMAT §10). */
  readonly written: boolean;
}

export interface JournalFormat {
  /** The genesis `format` value that selects this format (FORMAT §6.1, §10). */
  readonly format: string;
  /** What a journal of this format can hold: asked instead of the format string. */
  readonly capabilities: FormatCapabilities;
  /** The genesis object's members, in UTF-16 order. */
  readonly genesisMembers: readonly string[];
  /** Why a genesis object whose `format` names this format breaks its rules, or null. */
  genesisDefect(genesis: Record<string, unknown>): string | null;
  /** The profiles a chain of this format may hold; the first is the one `append` writes. */
  readonly records: readonly RecordProfile[];
  /**
   * The profile a stored record is read by, from its members' values. Always one: a record that no
   * profile fits is checked against the first, whose rules then say what is wrong (UNSUPPORTED_VERSION).
   */
  select(member: (name: string) => unknown): RecordProfile;
  /** Every member name a record of this format may have: to name the member a defect stands in. */
  readonly memberNames: ReadonlySet<string>;
}

/** The idempotency key from member texts: digest of the JCS array of the content fields and meta. */
export function keyOfTexts(contentFields: readonly string[], texts: StepTexts): string {
  let out = '[';
  for (const f of contentFields) out += texts[f]! + ',';
  return digestUtf8(out + (texts.meta ?? 'null') + ']');
}

/** The same key from a parsed record's values (JCS of an array is its elements' JCS joined by commas). */
export function keyOfRecord(contentFields: readonly string[], record: Readonly<Record<string, unknown>>): string {
  const values: unknown[] = contentFields.map((f) => record[f] as Json);
  values.push(record.meta ?? null);
  return digestUtf8(canonicalJsonTrusted(values));
}

/** The step hash of a stored line: the SHA-256 of the line without its step_hash member (FORMAT §5.2). */
export function stepHashWithout(text: string, span: readonly [number, number]): string {
  const [head, tail] = stepHashPreimage(text, span);
  return digestUtf8(head, tail);
}

/**
 * What stepHashWithout hashes, as the two texts either side of the step_hash member (its comma included), for
 * a caller that hashes many lines' preimages in one batch (chain/batch.ts).
 */
export function stepHashPreimage(text: string, span: readonly [number, number]): [string, string] {
  const keyStart = span[0] - '"step_hash":'.length;
  return text.charCodeAt(keyStart - 1) === 0x2c
    ? [text.slice(0, keyStart - 1), text.slice(span[1])]
    : [text.slice(0, keyStart), text.slice(span[1] + (text.charCodeAt(span[1]) === 0x2c ? 1 : 0))];
}
