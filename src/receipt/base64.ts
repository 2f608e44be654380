/** Strict standard base64 (RFC 4648 §4): moved to crypto/base64.ts, beneath the chain, where approval records need it too. */
export { base64Encode, base64Decode } from '../crypto/base64.js';
