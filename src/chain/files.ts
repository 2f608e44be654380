/**
 * The chain verifier over whole files held in memory (spec/FORMAT.md §4.4, §6.3): each file is a segment,
 * split into lines, and a file named as a bucket (16 decimal digits and ".jsonl", FILE-STORE.md §5) declares its first
 * seq (§6.3 step 8). Pure: runs in a browser.
 */
import { LineSplitter } from './lines.js';
import type { ChainReport } from './report.js';
import { ChainVerifier, type ChainVerifierOptions } from './verifier.js';

const BUCKET_NAME_RE = /^(\d{16})\.jsonl$/;

/**
 * The seq a segment's file name declares: a bucket's name, or a receipt entry's (`chain/<16 digits>.jsonl`),
 * is the seq of its first step; any other name declares none.
 */
export function declaredFirstSeq(name: string): number | null {
  const m = BUCKET_NAME_RE.exec(name.slice(name.lastIndexOf('/') + 1));
  return m ? Number(m[1]) : null;
}

/** Feeds every line of a whole file to `verifier`, as one segment. */
export function verifyFile(verifier: ChainVerifier, name: string, bytes: Uint8Array): void {
  verifier.beginSegment(name, declaredFirstSeq(name));
  const splitter = new LineSplitter();
  splitter.split(bytes, (line) => verifier.line(line, true));
  const torn = splitter.end();
  if (torn !== null) verifier.line(torn.bytes, false);
}

export interface VerifyChainInput extends ChainVerifierOptions {
  files: Iterable<{ name: string; bytes: Uint8Array }>;
}

/** Verifies whole files held in memory. For streaming, drive a ChainVerifier directly. */
export function verifyChain(input: VerifyChainInput): ChainReport {
  const verifier = new ChainVerifier(input);
  for (const f of input.files) verifyFile(verifier, f.name, f.bytes);
  return verifier.finish();
}
