/** Independent time and co-signatures (spec/TIME.md): RFC 3161 tokens over heads, DSSE co-signatures over ranges. Pure. */
export {
  parseTsaCertificate,
  checkToken,
  timeStampRequest,
  tokenFromResponse,
  type TsaCertificate,
  type TsaCertificateResult,
  type TokenCheck,
  type TokenFacts,
} from './tsp.js';
export {
  timestampSubject,
  statementBytes,
  parseStatement,
  envelopeDefect,
  TIMESTAMP_SUBJECT_TYPE,
  COSIGN_STATEMENT_TYPE,
  COSIGN_PAYLOAD_TYPE,
  type CosignStatement,
  type CosignEnvelope,
} from './statements.js';
export { cosign, cosignatureHolds } from './sign.js';
export {
  receiptAttestHooks,
  verifyAttestedReceipt,
  timestampsDefect,
  cosignaturesDefect,
  TIMESTAMPS_MEMBER,
  COSIGNATURES_MEMBER,
  type AttestOptions,
  type AttestReport,
  type AttestedReport,
  type AttestProblemCode,
  type Cosigner,
  type TimestampEntry,
} from './receipt.js';
