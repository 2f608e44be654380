/**
 * Errors of the redaction publisher (spec/REDACTION.md). Two classes, each with a closed union of stable
 * codes: `PolicyError` for a policy that does not validate (it names the rule by id or index and the bad
 * member), `RedactError` for publishing and disclosing. Verification never throws: it reports.
 */
import { StepchainError } from '../errors.js';

export type PolicyErrorCode =
  /** Not a JSON object with a `rules` array, or the text is not JSON. */
  | 'POLICY_INVALID'
  /** A member the schema does not define (a typo must not silently disable a rule). */
  | 'UNKNOWN_MEMBER'
  /** A rule is not an object, selects nothing, or a member has the wrong type or value. */
  | 'RULE_INVALID'
  /** A rule id is missing or not an id (`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`). */
  | 'RULE_ID_INVALID'
  /** Two rules share an id. */
  | 'RULE_ID_DUPLICATE'
  /** A path pattern that is not a JSON Pointer pattern into a content field or meta. */
  | 'PATH_INVALID'
  /** A detector id that is not built in. */
  | 'DETECTOR_UNKNOWN';

export class PolicyError extends StepchainError<PolicyErrorCode> {}

export type RedactErrorCode =
  /** publish was called without `optIn: true`. Nothing was read or written. */
  | 'OPT_IN_REQUIRED'
  /** Bad arguments: missing `out`, a bad salt source, a bad seq or path. */
  | 'ARGUMENT_INVALID'
  /** The journal does not verify, or already holds redaction markers. */
  | 'SOURCE_INVALID'
  /** An erasure the journal records is not yet carried out (ERASURE.md §4): run `stepchain erase --resume` first. */
  | 'ERASURE_PENDING'
  /**
   * The journal changed under the publication: an erase recorded its erasure past the head read at the start
   * and carried it out in a line already read (ERASURE.md §4.1). `publish` tries again itself; run it again.
   */
  | 'SOURCE_CHANGED'
  /** A string a rule matched still appears in the published bytes (the policy selects it in one place, not another). */
  | 'LEAK_DETECTED'
  /** An envelope member (step_id, ts, the genesis), which is never redacted, matches a detector of the policy. */
  | 'ENVELOPE_SECRET'
  /** The published receipt would break a limit (a line over 16 MiB, a manifest over 16 MiB). */
  | 'LIMIT_EXCEEDED'
  /** The secrets file (or a proof file) exists; it is never overwritten. */
  | 'OUTPUT_EXISTS'
  /** The secrets file (or a proof file) could not be written (the cause is the file system's error). */
  | 'OUTPUT_FAILED'
  /** A secrets file that is not one, or belongs to another receipt. */
  | 'SECRETS_INVALID'
  /** Disclosure asked for a location that was not redacted. */
  | 'NOT_REDACTED'
  /** The receipt a disclosure is made against does not verify as a published receipt. */
  | 'RECEIPT_INVALID';

export class RedactError extends StepchainError<RedactErrorCode> {}
