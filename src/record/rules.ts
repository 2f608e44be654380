/**
 * The member rules every record version shares (spec/FORMAT.md §5.1, §11.2): the envelope members a writer
 * computes (prev_hash, step_hash, seq, step_id, ts), each checked on its canonical text in place.
 */
import { isSeq } from '../canonical/json.js';
import { isDigestTextAt } from '../canonical/hex-text.js';
import { canonicalValue } from '../canonical/value.js';
import { isValidId, isValidTimestamp } from './fields.js';
import type { MemberRule } from './profile.js';

export const invalid = (message: string): { message: string } => ({ message });

export const envelope = (name: string, check: MemberRule['check']): MemberRule => ({
  name,
  required: true,
  role: 'envelope',
  check,
});

/** A digest's canonical text: no escape can occur in it, so the text alone decides (and nothing is sliced). */
export const digestRule =
  (name: string): MemberRule['check'] =>
  (text, start, end) =>
    isDigestTextAt(text, start, end) ? null : invalid(`${name} must be "sha256:" followed by 64 lowercase hex digits`);

export const SEQ_RULE: MemberRule = envelope('seq', (text, start, end) =>
  isSeq(canonicalValue(text, start, end)) ? null : invalid('seq must be an integer from 0 to 2^53 - 1'),
);

export const STEP_ID_RULE: MemberRule = envelope('step_id', (text, start, end) =>
  isValidId(canonicalValue(text, start, end))
    ? null
    : invalid('step_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit'),
);

export const TS_RULE: MemberRule = envelope('ts', (text, start, end) =>
  isValidTimestamp(canonicalValue(text, start, end))
    ? null
    : invalid('ts must be an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z'),
);
