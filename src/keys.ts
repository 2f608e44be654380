/**
 * `stepchain/keys`: Ed25519 signing keys (spec/RECEIPT.md §5) — make a pair, derive one from a seed, write
 * and read key files, convert between raw bytes and PEM, and the `sha256:` key id a receipt names its
 * signer by. Node only (key files).
 */
export { keygen, readPublicKeyFile, type KeygenResult } from './receipt/node.js';
export {
  generateKeyPair,
  keyPairFromSeed,
  keyIdOf,
  parsePrivateKey,
  decodePublicKey,
  privateKeyToPem,
  publicKeyToPem,
  type KeyPair,
  type PublicKeyResult,
  type KeyInput,
  type KeyFileInput,
} from './receipt/keys.js';
