/**
 * The identifiers of spec/TIME.md (§3, §5), in a module of their own that imports nothing: the signing code
 * (sign.ts) needs the payload type without the statements' parser, so the CLI's chunks stay as they were.
 */
export const TIMESTAMP_SUBJECT_TYPE = 'stepchain-timestamp-subject/v1';
export const COSIGN_STATEMENT_TYPE = 'stepchain-cosignature/v1';
export const COSIGN_PAYLOAD_TYPE = 'application/vnd.stepchain.cosignature+json';
