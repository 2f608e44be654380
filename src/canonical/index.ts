/** Canonical JSON (RFC 8785), the strict I-JSON gate, the canonical-line scanner and SHA-256. */
export { CanonicalError, type CanonicalErrorCode } from './errors.js';
export { canonicalJson, canonicalBytes } from './jcs.js';
export { assertIJson, type ValidateOptions } from './validate.js';
export { scanCanonical, type ScanCode, type ScanDefect, type ScanResult, type MarkerSpan } from './scan.js';
export { digestUtf8, digestBytes, isDigest, toHex, sha256Stream, type Sha256Stream } from './sha256.js';
export { toPointer, parsePointer, escapeToken } from './pointer.js';
export { MAX_VALUE_DEPTH, MAX_RECORD_DEPTH, MAX_LINE_BYTES, RESERVED_PREFIX } from './limits.js';
