/**
 * Receipt limits (spec/RECEIPT.md §6). A verifier refuses an archive beyond any of them with ARCHIVE_LIMIT
 * before it reads the offending bytes; the exporter refuses to write a receipt a verifier would refuse.
 * Changing one changes the format.
 */

/** Entries in one archive, manifest and signature included. */
export const MAX_ENTRIES = 65_536;
/** The manifest entry's size. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/** The signature entry's size (its DSSE payload repeats the manifest in base64). */
export const MAX_SIGNATURE_BYTES = 24 * 1024 * 1024;
/** Any chain entry's size. */
export const MAX_CHAIN_ENTRY_BYTES = 1024 * 1024 * 1024;
/** Any blob entry's size (a blob is held in memory to check its canonical form). */
export const MAX_BLOB_BYTES = 64 * 1024 * 1024;
/** The archive size a manifest may declare (§6.1): every entry's header, data and padding, and the end marker. */
export const MAX_ARCHIVE_BYTES = 8 * 1024 * 1024 * 1024;
/** Zero bytes allowed after the two-block end marker. */
export const MAX_TRAILING_ZEROS = 1024 * 1024;
/**
 * Tar bytes a verifier reads at most before the manifest is parsed (§6.1): the manifest and the signature
 * at their limits with their headers, then the end marker and the zeros after it (a manifest-only archive).
 * There is no compression ratio limit: after the manifest, the bound is what the manifest declares.
 */
export const MAX_PREFIX_BYTES = 512 + MAX_MANIFEST_BYTES + 512 + MAX_SIGNATURE_BYTES + 1024 + MAX_TRAILING_ZEROS;
/** Signatures in the DSSE envelope (v1 receipts carry exactly one). */
export const MAX_SIGNATURES = 1;
