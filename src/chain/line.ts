/**
 * The per-line check of the chain verifier (spec/FORMAT.md §6.3 steps 3–5): one decoded line in, its
 * problems and its facts out — canonical form, the record profile's member rules, markers, the step hash.
 * It depends on nothing but the line and the journal format, never on the lines before it, so a caller
 * may run it for many lines at once (worker threads) and feed the facts to the sequential link check
 * (links.ts) in order. Pure; never throws on hostile input.
 */
import { MAX_LINE_BYTES, MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { isSeq } from '../canonical/json.js';
import { scanCanonical, type MarkerSpan } from '../canonical/scan.js';
import { canonicalValue } from '../canonical/value.js';
import type { BlobRef } from '../record/markers.js';
import { stepHashPreimage, stepHashWithout, type JournalFormat, type RecordProfile } from '../record/profile.js';
import { isKindName, kindStatus } from '../record/v3/kinds.js';
import { ERASED_MARKER, ERASURE_KIND } from '../record/v3/erasure.js';
import { WITHHELD_MARKER } from '../record/v3/commit.js';
import { checkMarkers, unescapeToken } from './line-markers.js';
import type { ChainProblemCode, ProblemLocation } from './report.js';

/** A problem of one line; the caller adds the file and line number to its location. */
export interface LineProblem {
  code: ChainProblemCode;
  message: string;
  /** column, seq, field and path, as known (in that key order). */
  location: ProblemLocation;
}

/** What the per-line check found. */
export interface LineFacts {
  problems: readonly LineProblem[];
  /** False when the line is not a canonical JSON object: its members cannot be read (FORMAT §6.3 step 3). */
  readable: boolean;
  /** seq, prev_hash and step_hash when present and true to their rules, else null. */
  seq: number | null;
  prevHash: string | null;
  stepHash: string | null;
  /** Blob references standing as whole content fields. */
  blobs: (BlobRef & { field: string })[];
  /** Every marker object in the line, valid or not. */
  markers: MarkerSpan[];
  /**
   * Notices that never break integrity (FORMAT §14.8: a v3 record of a kind this verifier does not know or
   * does not check); absent when there is none, so a clean line's facts stay small.
   */
  notices?: readonly LineProblem[];
  /** True for a record in a publication's public form (v3: `bind` and `secrets`, no seed); absent otherwise. */
  publicForm?: true;
  /** v3: a record in sealed form or of kind erasure, which the chain's erasure ledger cross-checks (spec/ERASURE.md §5). */
  erasure?: true;
  /** v3: an approval record, which the chain's approval ledger checks (spec/APPROVALS.md §5). */
  approval?: true;
  /**
   * What the thread that links the chain reads of a run record's text (line-reading.ts), read where the line
   * was checked — a batch's thread (chain/batch.ts) — so that thread need not decode and scan the line again;
   * absent where the line was checked on its own (`checkLine`): the reader then reads the text itself.
   */
  reading?: LineReading;
}

/** A run record's members as the chain's observers and the approval check read them (line-reading.ts). */
export interface LineReading {
  /** Whether the top-level `kind` is "step" (record/line-members.ts kindIsStep). */
  kindIsStep: boolean;
  /** The top-level `step_id` as record/line-members.ts stepIdOf reads it. */
  stepId: string | null;
  /**
   * The record's call as the approval check reads it before the chain's first request (approval/calls.ts
   * storedCall), its compared form as that form's digest: null where the line's tool_call is null, 'parse'
   * where storedCall cannot read it (the line is then parsed). Absent for a format without approvals.
   */
  call?: StoredCallKey | 'parse' | null;
  /** The record's ts where its call is null: the ledger dates the chain by every record (APPROVALS.md §5 step 3). */
  ts?: string;
}

/**
 * A call read from its stored line: its step_id as JSON text, seq, ts, and its key (approval/calls.ts storedKey:
 * the digest of its compared form as 32 one-byte characters, and its name's canonical text where that is a string).
 */
export interface StoredCallKey {
  id: string;
  seq: number;
  ts: string;
  /** Holds the digest's 32 one-byte characters at `digestAt` (a batch's digests, unpacked, are one string). */
  digest: string;
  digestAt: number;
  name: string | null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const NO_PROBLEMS: readonly LineProblem[] = Object.freeze([]);

function unreadable(code: ChainProblemCode, message: string, location: ProblemLocation): LineFacts {
  return {
    problems: [{ code, message, location }],
    readable: false,
    seq: null,
    prevHash: null,
    stepHash: null,
    blobs: [],
    markers: [],
  };
}

/**
 * A complete stored line's bytes (without its newline) as text, or — when it is longer than MAX_LINE_BYTES
 * or not UTF-8 (FORMAT §4.1, §6.3 step 2) — the facts of an unreadable line. Pure, like checkLine.
 */
export function decodeLine(bytes: Uint8Array): string | LineFacts {
  const tooLong = lineTooLong(bytes.length);
  if (tooLong !== null) return tooLong;
  try {
    return decoder.decode(bytes);
  } catch {
    const column = firstInvalidUtf8(bytes) + 1;
    return unreadable('MALFORMED_LINE', `line is not valid UTF-8 (first bad byte at column ${column})`, { column });
  }
}

/** The facts of a line of `byteLength` bytes (without its newline) when it exceeds MAX_LINE_BYTES, else null. */
export function lineTooLong(byteLength: number): LineFacts | null {
  return byteLength + 1 > MAX_LINE_BYTES
    ? unreadable('LINE_TOO_LONG', `line of ${byteLength + 1} bytes exceeds the limit of ${MAX_LINE_BYTES}`, {})
    : null;
}

/**
 * A line's step-hash comparison left to the caller, which hashes many lines' preimages in one batch
 * (chain/batch.ts) and then calls `settleStepHash` with each computed digest: the facts are final only then.
 */
export interface DeferredStepHash {
  facts: LineFacts;
  /** The hashed text is head + tail (FORMAT §5.2: the line without its step_hash member). */
  head: string;
  tail: string;
  stored: string;
  at: ProblemLocation;
}

/**
 * The whole per-line check from a stored line's bytes: decodeLine, then checkLine. What a worker thread runs.
 * With `deferred`, a line whose step hash is the line's SHA-256 without its step_hash member (v1's rule) is
 * not hashed here: its comparison is pushed to `deferred` instead.
 */
export function checkLineBytes(bytes: Uint8Array, format: JournalFormat, deferred?: DeferredStepHash[]): LineFacts {
  const text = decodeLine(bytes);
  return typeof text === 'string' ? checkLine(text, format, deferred) : text;
}

/** Ends a deferred comparison: the problem checkLine reports on a mismatch, at the end of the line's problems as there. */
export function settleStepHash(d: DeferredStepHash, computed: string): void {
  if (computed !== d.stored) d.facts.problems = [...d.facts.problems, hashMismatch(d.stored, computed, d.at)];
}

function hashMismatch(stored: string, computed: string, at: ProblemLocation): LineProblem {
  return {
    code: 'HASH_MISMATCH',
    message: `stored step_hash ${stored} does not match the record's content (${computed}): a covered field was altered after hashing, or step_hash itself was edited`,
    location: { ...at, field: 'step_hash' },
  };
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  // Binary search for the longest valid prefix; only runs on the failure path.
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

/** Checks one complete line (decoded, without its newline) against the journal format. */
export function checkLine(text: string, format: JournalFormat, deferred?: DeferredStepHash[]): LineFacts {
  return checkLineMembers(text, format, deferred).facts;
}

/** checkLine, with the line's top-level members (name → [start, end) of the value) where it is an object. */
export function checkLineMembers(
  text: string,
  format: JournalFormat,
  deferred?: DeferredStepHash[],
): { facts: LineFacts; members: Map<string, [number, number]> | null } {
  // An empty line is met at the end of the text (FORMAT §4.3).
  if (text.length === 0) return { facts: unreadable('MALFORMED_LINE', 'empty line', { column: 1 }), members: null };
  const scan = scanCanonical(text, { maxDepth: MAX_RECORD_DEPTH });
  if (scan.defect) {
    const d = scan.defect;
    const top = d.path.split('/')[1];
    const field = top === undefined ? undefined : unescapeToken(top);
    const facts = unreadable(d.code, d.reason, {
      column: encoder.encode(text.slice(0, d.index)).length + 1,
      ...(field !== undefined && format.memberNames.has(field) ? { field } : {}),
      ...(d.path ? { path: d.path } : {}),
    });
    return { facts, members: null };
  }
  const members = scan.members;
  if (members === null)
    return { facts: unreadable('MALFORMED_LINE', 'a step line must be a JSON object', {}), members: null };

  const value = (name: string): unknown => {
    const span = members.get(name);
    return span ? canonicalValue(text, span[0], span[1]) : undefined;
  };
  const profile = format.select(value);
  const seqValue = value('seq');
  const seq = isSeq(seqValue) ? seqValue : null;
  const at: ProblemLocation = seq === null ? {} : { seq };
  // Most lines have no problem: their list is the shared empty one, and a line's first problem makes its own.
  let problems: LineProblem[] | null = null;
  const report = (code: ChainProblemCode, message: string, location: ProblemLocation): void =>
    void (problems ??= []).push({ code, message, location });

  const { prevValid, stepValid } = checkMembers(text, members, profile, value, at, report);
  const blobs = checkMarkers(text, scan.markers, profile, at, report);

  const prevValue = prevValid ? value('prev_hash') : null;
  const stepValue = stepValid ? value('step_hash') : null;
  const stepHash = typeof stepValue === 'string' ? stepValue : null;
  // The hash covers the record without its step_hash member (FORMAT §5.2). The HASH_MISMATCH problem is the
  // last a v1 line can have, so a deferred comparison (v1's rule only) appends it in the same place.
  let preimage: [string, string] | null = null;
  if (stepHash !== null) {
    const span = members.get('step_hash')!;
    if (deferred !== undefined && profile.stepHashOf === stepHashWithout && profile.version !== 3)
      preimage = stepHashPreimage(text, span);
    else {
      const computed = profile.stepHashOf(text, span, members);
      if (computed !== stepHash) (problems ??= []).push(hashMismatch(stepHash, computed, at));
    }
  }
  const facts: LineFacts = {
    problems: problems ?? NO_PROBLEMS,
    readable: true,
    seq,
    prevHash: typeof prevValue === 'string' ? prevValue : null,
    stepHash,
    blobs,
    markers: scan.markers,
  };
  if (preimage !== null) deferred!.push({ facts, head: preimage[0], tail: preimage[1], stored: stepHash!, at });
  if (profile.version === 3) v3Facts(facts, profile, value('kind'), at);
  // A public record that shows erased values (REDACTION.md §13.12) goes to the erasure ledger too, and one that
  // withholds values: an erasure of a withheld unit cannot be seen (ERASURE.md §5 step 4).
  if (
    facts.publicForm === true &&
    scan.markers.some((m) => m.names.includes(ERASED_MARKER) || m.names.includes(WITHHELD_MARKER))
  )
    facts.erasure = true;
  return { facts, members };
}

/**
 * The member rules of one readable line, reported in a fixed order (FORMAT §6.3 step 4): unknown members
 * in line order, then each member of the profile in UTF-16 order (missing, or breaking its rule), then
 * the rules between members. Says whether the link members are present and true to their rule.
 */
function checkMembers(
  text: string,
  members: Map<string, [number, number]>,
  profile: RecordProfile,
  value: (name: string) => unknown,
  at: ProblemLocation,
  report: (code: ChainProblemCode, message: string, location: ProblemLocation) => void,
): { prevValid: boolean; stepValid: boolean } {
  for (const name of members.keys()) {
    if (!profile.memberNames.has(name))
      report('UNKNOWN_FIELD', `unknown member ${JSON.stringify(name)} in a step record`, { ...at, field: name });
  }
  // The link members are known when present and true to their rule (a digest, for v1).
  let prevValid = false;
  let stepValid = false;
  // Members that broke their own rule: the rules between members read them as unknown (FORMAT §11.3), so
  // a defect is reported once, by its member's rule, not again by a rule that reads it.
  let broke: Set<string> | null = null;
  for (const rule of profile.members) {
    const span = members.get(rule.name);
    if (span === undefined) {
      if (rule.required)
        report('MISSING_FIELD', `required member "${rule.name}" is missing`, { ...at, field: rule.name });
      continue;
    }
    const broken = rule.check?.(text, span[0], span[1]);
    if (broken) {
      report(broken.code ?? 'FIELD_INVALID', broken.message, { ...at, field: rule.name });
      (broke ??= new Set()).add(rule.name);
    } else if (rule.name === 'prev_hash') prevValid = true;
    else if (rule.name === 'step_hash') stepValid = true;
  }
  const relation = profile.relationDefect?.(
    broke === null ? value : (name) => (broke.has(name) ? undefined : value(name)),
  );
  if (relation) report('FIELD_INVALID', relation.message, { ...at, field: relation.field });
  return { prevValid, stepValid };
}

/**
 * What a v3 record adds to its facts: whether it is in public form, and a notice for a well-formed kind
 * this verifier does not check (FORMAT §14.8: never a failure).
 */
function v3Facts(facts: LineFacts, profile: RecordProfile, kind: unknown, at: ProblemLocation): void {
  if (profile.memberNames.has('secrets')) facts.publicForm = true;
  if (profile.memberNames.has('keys') || kind === ERASURE_KIND) facts.erasure = true;
  if (typeof kind === 'string' && kind.startsWith('approval.')) facts.approval = true;
  if (isKindName(kind)) {
    const status = kindStatus(kind);
    if (status !== 'checked') {
      facts.notices = [
        status === 'unknown'
          ? {
              code: 'KIND_UNKNOWN',
              message: `kind ${JSON.stringify(kind)} is not one this verifier knows: its integrity is verified, its meaning is not checked`,
              location: { ...at, field: 'kind' },
            }
          : {
              code: 'KIND_UNCHECKED',
              message: `kind ${JSON.stringify(kind)} is registered, but its own rules are not checked by this verifier: its integrity is verified`,
              location: { ...at, field: 'kind' },
            },
      ];
    }
  }
}
