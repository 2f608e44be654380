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
/** The uncompressed archive: headers, data, padding, end marker and trailing zeros. */
export const MAX_ARCHIVE_BYTES = 8 * 1024 * 1024 * 1024;
/** Zero bytes allowed after the two-block end marker. */
export const MAX_TRAILING_ZEROS = 1024 * 1024;
/** Gzip: uncompressed bytes may exceed this many times the compressed bytes read so far ... */
export const MAX_GZIP_RATIO = 256;
/** ... only by this allowance. */
export const GZIP_RATIO_ALLOWANCE = 16 * 1024 * 1024;
/** Signatures in the DSSE envelope (v1 receipts carry exactly one). */
export const MAX_SIGNATURES = 1;
