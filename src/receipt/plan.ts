/**
 * The receipt writer's first pass (spec/RECEIPT.md §3–§6): verify the chain (a receipt is never written for
 * a broken one), measure every chain entry (size, steps, SHA-256) because a tar header states its size up
 * front, collect and check the referenced blobs, and build the manifest and its signature, within the
 * limits every verifier enforces. Memory is bounded by the longest line, not the journal. Same input, same
 * plan: no clock, no randomness (Ed25519 signatures are deterministic). writer.ts is the second pass.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalJson } from '../canonical/jcs.js';
import { digestBytes, isDigest, sha256Stream, toHex, type Sha256Stream } from '../canonical/sha256.js';
import { describeProblem, type Problem } from '../chain/report.js';
import { ErasureSplit, describeSplit, type ErasureSplitAt } from '../record/v3/erasure-split.js';
import { PendingErasures, describePending } from '../record/v3/erasure-pending.js';
import type { StoredLine } from '../chain/source.js';
import { ChainVerifier, type VerifiedLine } from '../chain/verifier.js';
import type { Json } from '../canonical/json.js';
import { fetchBlob as fetchChecked } from '../record/blobs.js';
import { capabilitiesOf, genesisHash, type Genesis } from '../record/formats.js';
import { signManifest } from './dsse.js';
import { ReceiptError } from './errors.js';
import { keyIdOf, parsePrivateKey, type KeyInput } from './keys.js';
import {
  MAX_ARCHIVE_BYTES,
  MAX_BLOB_BYTES,
  MAX_CHAIN_ENTRY_BYTES,
  MAX_ENTRIES,
  MAX_MANIFEST_BYTES,
  MAX_SIGNATURE_BYTES,
} from './limits.js';
import {
  BASE_MEMBERS,
  RECEIPT_FORMAT,
  chainEntryName,
  declaredArchiveBytes,
  type BlobEntry,
  type ChainEntry,
  type ReceiptManifest,
} from './manifest.js';
import { EXPORTER } from './version.js';
import { collectParts } from './parts-collect.js';
import { PARTS_MEMBER, type PartEntry } from './parts.js';
import type { PartSource } from '../record/v3/parts.js';

export interface ReceiptWriterInput {
  genesis: Genesis;
  /**
   * The chain's stored lines in seq order, from its start through at least `to`; called once per pass.
   * Lines before `from` are verified, not written.
   */
  lines: () => AsyncIterable<StoredLine>;
  /**
   * The journal's lines after `to`, when it has any: read only when the range holds an erased value whose
   * erasure record it does not (spec/ERASURE.md §6.5), to tell such a range from a chain that does not verify.
   */
  after?: () => AsyncIterable<StoredLine>;
  /**
   * The lines are a journal's own (an export, not a publication's public records): an erasure of a step of the
   * range that it records but has not carried out is refused (ERASURE_PENDING, spec/ERASURE.md §4); `after`
   * is then read whole.
   */
  journalLines?: true;
  /** Where `lines()` starts when it is not the genesis (a re-anchored chain): its first seq and prev_hash. */
  start?: { seq: number; prev_hash: string };
  from: number;
  to: number;
  blob: (digest: string) => Promise<Uint8Array | null>;
  /** A stepchain/v3 journal's parts (PARTS.md §8): each part the range reaches is carried once. */
  parts?: PartSource | null;
  /**
   * The parts to carry, when the caller lists them (a v3 publication's public part files, REDACTION.md
   * §13.10, which `parts` serves): then the range's references are not collected from the lines.
   */
  partList?: PartEntry[];
  /** Extra top-level manifest members (I-JSON; may not reuse a base member's name). */
  extra?: Record<string, Json>;
  /** Ed25519 signing key: 32 seed bytes or { pem } holding a PKCS#8 PEM. */
  sign?: KeyInput;
  /** The manifest's exporter string; defaults to this package's name and version. */
  exporter?: string;
}

export interface ReceiptPlan {
  manifest: ReceiptManifest;
  manifestBytes: Uint8Array;
  signatureBytes: Uint8Array | null;
  /** digest of manifestBytes: identifies the receipt's content. */
  manifestDigest: string;
  signedBy: string | null;
  input: ReceiptWriterInput;
}

const encoder = new TextEncoder();

function chainInvalid(message: string): ReceiptError {
  return new ReceiptError('CHAIN_INVALID', message, {
    hint: 'run `stepchain verify` on the journal; a receipt is only written for a chain that verifies',
  });
}

/** Pass 1: verify, measure, check blobs, build and sign the manifest. */
export async function planReceipt(input: ReceiptWriterInput): Promise<ReceiptPlan> {
  const { from, to } = input;
  const startSeq = input.start?.seq ?? 0;
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < startSeq || to < from) {
    throw new ReceiptError(
      'RANGE_INVALID',
      `range ${from}..${to} is not a range of seqs from ${startSeq} with from ≤ to`,
    );
  }
  if (
    input.start &&
    (!Number.isSafeInteger(input.start.seq) || input.start.seq < 0 || !isDigest(input.start.prev_hash))
  ) {
    throw new ReceiptError(
      'ARGUMENT_INVALID',
      'start must be {seq: <non-negative integer>, prev_hash: "sha256:<hex>"}',
    );
  }
  const privateKey = input.sign === undefined ? null : parsePrivateKey(input.sign);
  const measured = await new ChainMeasure(input).run();
  const blobList: BlobEntry[] = [...measured.blobs.entries()]
    .map(([digest, size]) => ({ digest, size }))
    .sort((a, b) => (a.digest < b.digest ? -1 : 1));
  // A v3 journal without a part source still has its references checked: a receipt missing its parts is never written.
  const partSource = input.parts ?? (capabilitiesOf(input.genesis).parts ? async () => null : null);
  const partList = input.partList ?? (partSource ? await collectParts(input.lines(), from, to, partSource) : []);
  const entries = 2 + measured.chain.length + blobList.length + partList.length;
  if (entries > MAX_ENTRIES)
    throw new ReceiptError(
      'LIMIT_EXCEEDED',
      `the receipt would hold ${entries} entries; a verifier accepts at most ${MAX_ENTRIES}`,
      { hint: 'export a shorter range' },
    );
  for (const b of blobList) await fetchBlob(input, b);
  const manifest = buildManifest(
    partList.length === 0
      ? input
      : { ...input, extra: { ...input.extra, [PARTS_MEMBER]: partList as unknown as Json } },
    measured,
    blobList,
  );
  return sealManifest(input, manifest, privateKey);
}

interface Measured {
  chain: ChainEntry[];
  /** Referenced blobs: digest → size. */
  blobs: Map<string, number>;
  /** The prev_hash of step `from`, and the head. */
  prevHash: string;
  head: string;
}

/** How many problems the writer's walk collects before it stops listing them. */
const MAX_PROBLEMS = 10;

/** The verifying, measuring walk over the source's lines (pass 1's chain half). */
class ChainMeasure {
  private readonly verifier: ChainVerifier;
  private readonly blobs = new Map<string, number>();
  private readonly chain: ChainEntry[] = [];
  private entry: { name: string; size: number; steps: number; hash: Sha256Stream; segment: string } | null = null;
  private blobConflict: string | null = null;
  private seqConflict: string | null = null;
  private lastHash: string | null;
  private prevHash: string | null = null;
  private inRange = false;
  /** Erased markers of the range and the erasure records they name (ERASURE.md §6.5). */
  private readonly split = new ErasureSplit();
  private readonly erasures = new PendingErasures();
  private currentSeq = -1;

  constructor(private readonly input: ReceiptWriterInput) {
    this.lastHash = input.start?.prev_hash ?? genesisHash(input.genesis);
    this.verifier = new ChainVerifier({
      ...(input.start ? { start: input.start } : { genesis: input.genesis }),
      maxProblems: MAX_PROBLEMS,
      onLine: (line) => this.observe(line),
    });
  }

  private observe(line: VerifiedLine): void {
    this.lastHash = line.step_hash;
    if (line.seq !== this.currentSeq && this.seqConflict === null)
      this.seqConflict = `the source says seq ${this.currentSeq} for a line whose seq is ${String(line.seq)}`;
    if (!this.inRange) return;
    for (const ref of line.blobs) {
      const known = this.blobs.get(ref.digest);
      if (known !== undefined && known !== ref.size && this.blobConflict === null)
        this.blobConflict = `blob ${ref.digest} is referenced with sizes ${known} and ${ref.size}`;
      this.blobs.set(ref.digest, ref.size);
    }
  }

  async run(): Promise<Measured> {
    const { from, to } = this.input;
    let segment: string | null = null;
    let count = 0;
    let lastSeq = (this.input.start?.seq ?? 0) - 1;
    for await (const line of this.input.lines()) {
      if (line.seq > to) break;
      if (line.segment !== segment) this.verifier.beginSegment((segment = line.segment));
      if (line.seq >= from && !this.inRange) {
        this.inRange = true;
        this.prevHash = this.lastHash;
      }
      const bytes = encoder.encode(line.text + '\n');
      this.currentSeq = line.seq;
      this.lastHash = null;
      this.verifier.line(bytes.subarray(0, bytes.length - 1), true); // sets lastHash through onLine
      lastSeq = line.seq;
      this.erasures.line(line.text);
      this.split.inRange(line.text, this.inRange);
      if (!this.inRange) continue;
      count++;
      this.add(line, bytes);
    }
    this.close();
    const report = this.verifier.finish();
    const split = report.ok ? null : await this.splitsErasure(report.problems);
    const held = split?.filter((s) => s.held) ?? [];
    if (held.length > 0) {
      throw new ReceiptError(
        'RANGE_SPLITS_ERASURE',
        `cannot export steps ${from}..${to}: ${describeSplit(held, `a receipt of ${from}..${to}`, 'end the range at')}`,
      );
    }
    // Markers only in records before the range, whose erasure records lie after it: the range holds neither
    // end of those erasures and verifies on its own (ERASURE.md §6.5); the rest of the chain did verify.
    if (!report.ok && split === null) {
      throw chainInvalid(`the chain does not verify: ${describeProblem(report.problems[0]!)}`);
    }
    if (this.seqConflict) throw chainInvalid(this.seqConflict);
    await this.refusePendingErasure();
    if (count === 0) throw new ReceiptError('EMPTY_RANGE', `the journal holds no step in ${from}..${to}`);
    if (lastSeq !== to)
      throw new ReceiptError(
        'RANGE_INVALID',
        `the journal ends at seq ${lastSeq}; the range asks for steps up to ${to}`,
      );
    if (this.blobConflict) throw new ReceiptError('BLOB_CORRUPT', this.blobConflict);
    if (this.prevHash === null || report.head === null) throw chainInvalid('the range has no readable start or head');
    return { chain: this.chain, blobs: this.blobs, prevHash: this.prevHash, head: report.head };
  }

  /** An erasure recorded (in the range or after it) of a step of the range, not yet carried out: refused (ERASURE.md §4). */
  private async refusePendingErasure(): Promise<void> {
    if (this.input.journalLines !== true || !capabilitiesOf(this.input.genesis).erasure) return;
    if (this.input.after !== undefined) for await (const l of this.input.after()) this.erasures.line(l.text, false);
    // A candidate's target is read again from the chain's lines (rare: only an erasure not carried out).
    const p = await this.erasures.first(this.input.to, this.input.from, async (seq) => {
      for await (const l of this.input.lines()) if (l.seq >= seq) return l.seq === seq ? l.text : null;
      return null;
    });
    if (p !== null)
      throw new ReceiptError(
        'ERASURE_PENDING',
        describePending(p, null, `export steps ${this.input.from}..${this.input.to}`),
      );
  }

  /**
   * When the chain's only problems are erased markers (of the range, or of records before it) whose erasure
   * records come after the range (read on from `to`): those erasures; else null. A full list of problems only
   * (fewer than the verifier's cap), so that no other problem hides behind the markers.
   */
  private async splitsErasure(problems: readonly Problem[]): Promise<ErasureSplitAt[] | null> {
    const after = this.input.after;
    if (after === undefined || this.split.open === 0 || problems.length > this.split.open) return null;
    if (problems.length >= MAX_PROBLEMS) return null;
    if (!problems.every((p) => p.code === 'ERASURE_UNRECORDED' && p.location.path !== undefined)) return null;
    for await (const l of after()) if (this.split.after(l.text)) break;
    return this.split.split();
  }

  /** A line into the current chain entry; a new entry where the source's segment changes or the entry would pass its limit. */
  private add(line: StoredLine, bytes: Uint8Array): void {
    if (this.entry?.segment !== line.segment || this.entry.size + bytes.length > MAX_CHAIN_ENTRY_BYTES) {
      this.close();
      this.entry = { name: chainEntryName(line.seq), size: 0, steps: 0, hash: sha256Stream(), segment: line.segment };
    }
    this.entry.size += bytes.length;
    this.entry.steps++;
    this.entry.hash.update(bytes);
  }

  private close(): void {
    const e = this.entry;
    if (e) this.chain.push({ digest: 'sha256:' + toHex(e.hash.digest()), name: e.name, size: e.size, steps: e.steps });
    this.entry = null;
  }
}

function buildManifest(input: ReceiptWriterInput, m: Measured, blobList: BlobEntry[]): ReceiptManifest {
  const manifest: ReceiptManifest = {
    blobs: blobList,
    chain: m.chain,
    exporter: input.exporter ?? EXPORTER,
    format: RECEIPT_FORMAT,
    genesis: input.genesis,
    head: { seq: input.to, step_hash: m.head },
    range: { from: input.from, prev_hash: m.prevHash, to: input.to },
  };
  for (const [k, v] of Object.entries(input.extra ?? {})) {
    if ((BASE_MEMBERS as readonly string[]).includes(k))
      throw new ReceiptError(
        'MANIFEST_INVALID',
        `extra manifest member ${JSON.stringify(k)} would replace a base member`,
      );
    manifest[k] = v;
  }
  return manifest;
}

/** The manifest's exact bytes and its signature, each within the limits a verifier enforces (§6). */
function sealManifest(
  input: ReceiptWriterInput,
  manifest: ReceiptManifest,
  privateKey: Uint8Array | null,
): ReceiptPlan {
  let text: string;
  try {
    text = canonicalJson(manifest);
  } catch (e) {
    throw new ReceiptError(
      'MANIFEST_INVALID',
      `the manifest is not I-JSON: ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  const manifestBytes = encoder.encode(text);
  if (manifestBytes.length > MAX_MANIFEST_BYTES)
    throw new ReceiptError(
      'LIMIT_EXCEEDED',
      `the manifest would be ${manifestBytes.length} bytes; a verifier accepts at most ${MAX_MANIFEST_BYTES}`,
      { hint: 'export a shorter range' },
    );
  let signatureBytes: Uint8Array | null = null;
  let signedBy: string | null = null;
  if (privateKey) {
    signatureBytes = encoder.encode(canonicalJson(signManifest(manifestBytes, privateKey)));
    if (signatureBytes.length > MAX_SIGNATURE_BYTES)
      throw new ReceiptError(
        'LIMIT_EXCEEDED',
        `the signature entry would be ${signatureBytes.length} bytes; the limit is ${MAX_SIGNATURE_BYTES}`,
      );
    signedBy = keyIdOf(ed25519.getPublicKey(privateKey));
  }
  const declared = declaredArchiveBytes(manifestBytes.length, signatureBytes ? signatureBytes.length : null, manifest);
  if (declared > MAX_ARCHIVE_BYTES)
    throw new ReceiptError(
      'LIMIT_EXCEEDED',
      `the receipt would be ${declared} bytes uncompressed; a verifier accepts at most ${MAX_ARCHIVE_BYTES}`,
      { hint: 'export a shorter range' },
    );
  return { manifest, manifestBytes, signatureBytes, manifestDigest: digestBytes(manifestBytes), signedBy, input };
}

/** A listed blob from the source, checked as every reader checks a blob (FORMAT §7). */
export async function fetchBlob(input: ReceiptWriterInput, b: BlobEntry): Promise<Uint8Array> {
  if (b.size > MAX_BLOB_BYTES)
    throw new ReceiptError(
      'LIMIT_EXCEEDED',
      `blob ${b.digest} is ${b.size} bytes; a verifier accepts at most ${MAX_BLOB_BYTES}`,
    );
  const blob = await fetchChecked((ref) => input.blob(ref.digest), b);
  if (!blob.ok && blob.missing)
    throw new ReceiptError('BLOB_MISSING', `a step references blob ${b.digest}, which the journal does not hold`);
  if (!blob.ok) throw new ReceiptError('BLOB_CORRUPT', `the journal's copy of blob ${b.digest} ${blob.defect}`);
  return blob.bytes;
}
