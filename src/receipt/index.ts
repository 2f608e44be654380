/** Offline-verifiable receipts (spec/RECEIPT.md): export, verify, keys. The pure verifier is in ./verify.js. */
export { ReceiptError, type ReceiptErrorCode } from './errors.js';
export { verifyReceipt, type VerifyReceiptOptions, type ReceiptReport, type ByteInput } from './verify.js';
export type { ReceiptReading } from './problems.js';
export { planReceipt, writeReceipt, receiptTar, type ReceiptWriterInput, type ReceiptPlan } from './writer.js';
export {
  exportReceipt,
  openReceiptSource,
  writePlanToFile,
  receiptBytes,
  receiptInput,
  verifyReceiptFile,
  verifyReceiptAt,
  keygen,
  readKeyFile,
  readPublicKeyFile,
  type ExportOptions,
  type ExportResult,
  type KeygenResult,
} from './node.js';
export {
  generateKeyPair,
  keyPairFromSeed,
  keyIdOf,
  parsePrivateKey,
  parsePublicKey,
  decodePublicKey,
  publicKeyDefect,
  privateKeyToPem,
  publicKeyToPem,
  type KeyPair,
  type PublicKeyResult,
  type KeyInput,
  type KeyFileInput,
} from './keys.js';
export { PAYLOAD_TYPE, SIGNATURE_FORMAT, pae, type DsseEnvelope, type SignatureDocument } from './dsse.js';
export {
  RECEIPT_FORMAT,
  MANIFEST_NAME,
  SIGNATURE_NAME,
  parseManifest,
  chainEntryName,
  blobEntryName,
  type ReceiptManifest,
  type ChainEntry,
  type BlobEntry,
  type ReceiptRange,
} from './manifest.js';
export { receiptSource, type ReceiptSource } from './source.js';
export * as receiptLimits from './limits.js';
