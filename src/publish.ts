/**
 * `stepchain/publish`: for publishers — a receipt with its secrets redacted (spec/REDACTION.md), and the
 * disclosures that later open what it hides: a value, a step, a hashed field, or (a v2 journal's
 * publication) one withheld slot opened from the journal. Node only: these read journals and write files.
 * Verifying any of them is `stepchain/verify`.
 */
export {
  publish,
  disclose,
  discloseStep,
  discloseHash,
  verifyDisclosureFiles,
  type PublishOptions,
  type PublishResult,
} from './redact/node.js';
export { openSlot, type SlotOpening } from './redact/opening.js';
export { PolicyError, RedactError, type PolicyErrorCode, type RedactErrorCode } from './redact/errors.js';
export type { PolicyDocument } from './redact/policy.js';
export type { PublishedReport, VerifyPublishedOptions, UnboundText } from './redact/verify.js';
