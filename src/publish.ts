/**
 * `stepchain/publish`: for publishers — a receipt with its secrets redacted (spec/REDACTION.md), and the
 * disclosures that later open what it hides: a value, a step, a hashed field, (a v2 journal's publication) one
 * withheld slot opened from the journal, or (a v3 journal's) one withheld unit opened from the journal. Node only: these read journals and write files.
 * Verifying any of them is `stepchain/verify`.
 */
export {
  publish,
  disclose,
  discloseStep,
  discloseHash,
  type PublishOptions,
  type PublishResult,
} from './redact/node.js';
export { openSlot, type SlotOpening } from './redact/opening.js';
// verifyDisclosureFiles checks any proof file: a unit opening of a v3 publication too (node-opening.ts).
export { discloseUnit, verifyProofFile as verifyDisclosureFiles } from './redact/node-opening.js';
export { PolicyError, RedactError, type PolicyErrorCode, type RedactErrorCode } from './redact/errors.js';
export type { PolicyDocument } from './redact/policy.js';
export type { PublishedReport, VerifyPublishedOptions, UnboundText } from './redact/verify.js';
