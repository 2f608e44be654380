/**
 * The offline receipt verifier (spec/RECEIPT.md §7): archive bytes in, report out, as a sequence of named
 * phases — the pins; the manifest and its signature (signature.ts) over the exact bytes before they are
 * parsed; each listed entry in the archive's fixed order, read by the strict ustar reader (tar-reader.ts)
 * within what the manifest declares (§6.1); what was listed but never came; the chain's report and the
 * head checks; an extension's `finish`. Problems are reported in the order of §7.1: pins, the receipt's own
 * problems in reading order, the chain's, the head checks, then the extension's.
 *
 * Observers see every verified chain line (`onLine`, with its seq and step_hash) and every canonical blob
 * (`onBlob`): extensions such as the publication checks and a proofs phase plug in there.
 *
 * Every byte is hostile: this module never throws on input; each failure is a Problem with a stable code.
 * Pure — no Node-only imports — so it runs in a browser. Longer than 400 lines because every phase of §7
 * reads and writes the one verification's state (listing, chain feeder, a v3 receipt's parts, the report),
 * kept in one class read top to bottom as the procedure is; the parts' own checks live in parts.ts.
 */
import { LINEAGE_MEMBER, lineageDefect, type ReceiptLineage } from './lineage.js';
import { checkPartList, partListOf, PART_NAME_RE, PARTS_MEMBER, ReceiptParts } from './parts.js';
import { MAX_LINE_BYTES, MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestBytes, isDigest, sha256Stream, toHex, wholeDigest, type Sha256Stream } from '../canonical/sha256.js';
import type { LineCheckPool } from '../chain/batch.js';
import { ChainFeeder } from '../chain/feeder.js';
import { LineSplitter } from '../chain/lines.js';
import { ProblemList } from '../chain/problems.js';
import type { ChainProblemCode, ChainReport, ProblemLocation } from '../chain/report.js';
import { pinHeld, settleVerdict, type VerdictFields } from '../chain/verdict.js';
import { ChainVerifier, type VerifiedLine } from '../chain/verifier.js';
import { capabilitiesOf, DEFAULT_FORMAT, formatOf, genesisHash, type Genesis } from '../record/formats.js';
import { emptyState, foldReadLine, type RunState } from '../record/run-state.js';
import { describe } from './describe.js';
import { InflateError, openArchive, type ByteInput } from './inflate.js';
import { decodePublicKey, keyIdOf } from './keys.js';
import {
  MAX_ARCHIVE_BYTES,
  MAX_BLOB_BYTES,
  MAX_CHAIN_ENTRY_BYTES,
  MAX_MANIFEST_BYTES,
  MAX_PREFIX_BYTES,
  MAX_SIGNATURE_BYTES,
  MAX_TRAILING_ZEROS,
} from './limits.js';
import {
  BLOB_NAME_RE,
  CHAIN_NAME_RE,
  MANIFEST_NAME,
  RECEIPT_FORMAT,
  SIGNATURE_NAME,
  blobEntryName,
  declaredArchiveBytes,
  entryNames,
  parseManifest,
  type ReceiptManifest,
  type ReceiptRange,
} from './manifest.js';
import { FatalProblem, type ReceiptProblemCode, type ReceiptReading } from './problems.js';
import { checkSignature } from './signature.js';
import { TarReader, type TarEntry } from './tar-reader.js';
import type { PublicPartFile } from '../record/v3/public-part.js';

export type { ByteInput } from './inflate.js';
export type { ReceiptProblemCode } from './problems.js';

export interface VerifyReceiptOptions<R extends ReceiptReport = ReceiptReport<ReceiptProblemCode>> {
  /** A head step_hash obtained independently (for example published earlier): the receipt's head must equal it. */
  /** stepchain/v3: the pinned approvers (spec/APPROVALS.md §5); a decision by another key is APPROVER_UNKNOWN. */
  approvers?: readonly { key: Uint8Array; name?: string }[];
  expectHead?: string;
  /**
   * A pinned Ed25519 public key, in a form of spec/RECEIPT.md §5.2 (32 raw bytes; or text: base64 of them, or
   * an SPKI PEM): the receipt must be signed by it. A key that is given but unusable — empty, malformed, not
   * a valid Ed25519 key — is KEY_MISMATCH: a pin never falls back to "unpinned".
   */
  publicKey?: Uint8Array | string;
  /** Keep at most this many problems (default 1000). */
  maxProblems?: number;
  /** Extra manifest members this caller understands, each with a check returning a reason or null. */
  extensions?: Record<string, (value: unknown) => string | null>;
  /** Observes every chain line that scanned as a canonical record, for extensions that check the chain (REDACTION.md §7). */
  onLine?: (line: VerifiedLine) => void;
  /** Observes every blob entry whose bytes are canonical JSON: its digest and text (REDACTION.md §7). */
  onBlob?: (digest: string, text: string) => void;
  /** Observes every public part file of a published v3 receipt whose address checked (REDACTION.md §13.10). */
  onPublicPart?: (address: string, file: PublicPartFile) => void;
  /** Runs the chain's per-line checks on these threads (`createLineCheckPool` from `stepchain`); the report is the same. */
  pool?: LineCheckPool;
  /**
   * Hashes each chain entry's bytes somewhere of the caller's choosing (the page: another Web Worker); the
   * digest is compared with the manifest's exactly as the built-in one is, so the report is the same.
   */
  entryHasher?: () => EntryHasher;
  /**
   * Completes the report once the archive is read, for extensions whose checks span the whole receipt
   * (REDACTION.md §7): verifyReceipt returns what it returns. Part of the options, not a separate step,
   * so that a caller who passes an extension's options cannot forget to finish its verification.
   */
  finish?: (report: ReceiptReport<ReceiptProblemCode>, reading: ReceiptReading) => R;
}

/** An archive entry's SHA-256, fed the entry's bytes in order (it may keep none of them), then asked once. */
export interface EntryHasher {
  update(piece: Uint8Array): void;
  digest(): Promise<Uint8Array>;
}

export interface ReceiptReport<Code extends string = string>
  extends ChainReport<Code>, VerdictFields /* RECEIPT §8.1 */ {
  format: typeof RECEIPT_FORMAT | null;
  /** Whether the archive was gzip-compressed. */
  compressed: boolean;
  /** 'complete': the range starts at the genesis; 'partial': it starts at a later step. null if unread. */
  scope: 'complete' | 'partial' | null;
  range: ReceiptRange | null;
  genesis: Genesis | null;
  journal_id: string | null;
  /** digest of the exact manifest bytes: identifies the verified content. */
  manifest_digest: string | null;
  /** Key id ("sha256:" + hex of SHA-256 of the raw public key) whose signature verified, or null. */
  signed_by: string | null;
  /** What a valid receipt establishes, as plain sentences (empty when it is invalid). */
  proves: string[];
  /** What it does not establish. */
  does_not_prove: string[];
  /** Archive entries read. */
  entries: number;
  blobs: number;
  manifest: ReceiptManifest | null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function emptyReport(): ReceiptReport<ReceiptProblemCode> {
  return {
    ok: false,
    start_hash: null,
    start_seq: 0,
    head: null,
    head_seq: null,
    steps: 0,
    problems: [],
    warnings: [],
    problems_truncated: false,
    format: null,
    compressed: false,
    scope: null,
    range: null,
    genesis: null,
    journal_id: null,
    manifest_digest: null,
    signed_by: null,
    proves: [],
    does_not_prove: [],
    entries: 0,
    blobs: 0,
    manifest: null,
    verdict: 'invalid',
    authenticated: false,
    authenticated_by: [],
    to_pin: null,
  };
}

/**
 * The largest chain entry copied aside to be digested whole by WebCrypto where the only streaming SHA-256 is
 * a portable one (readChainEntry): not a format limit, a memory bound on that copy. Larger entries stream.
 */
const MAX_HELD_ENTRY_BYTES = 256 * 1024 * 1024;

/** Verifies a receipt held in memory or streamed. Never throws; the report says what is wrong and where. */
export async function verifyReceipt<R extends ReceiptReport = ReceiptReport<ReceiptProblemCode>>(
  input: ByteInput,
  options: VerifyReceiptOptions<R> = {},
): Promise<R> {
  // "Never throws" covers the options too: null (or any non-object) from a caller's config means none.
  if (options === null || typeof options !== 'object') options = {};
  const v = new ReceiptVerification(options);
  v.checkPins();
  await v.readArchive(input);
  const report = await v.conclude();
  // The verdict again after the extension's checks, which may have found problems of their own.
  return settleVerdict(
    options.finish ? options.finish(report, { stopped: v.stopped }) : (report as ReceiptReport as R),
    'receipt',
  );
}

/** The state of one verification, and its phases in the order they run. */
class ReceiptVerification {
  readonly report = emptyReport();
  private readonly problems: ProblemList<ReceiptProblemCode>;
  private pinned: Uint8Array | null = null;
  /** The manifest's listing, once it parsed: the entries in their fixed order, and the blobs. */
  private expected: string[] = [];
  private chainByName: Map<string, ReceiptManifest['chain'][number]> | null = null;
  private next = 0;
  /** Each listed blob, the first step referencing it, and a changed blob's location, which atEnd (once every line is seen) gives that step. */
  private readonly listed = new Map<
    string,
    { size: number; referenced: { seq?: number; field: string } | null; changed?: ProblemLocation }
  >();
  private chain: ChainFeeder | null = null;
  private parts: ReceiptParts | null = null; // a stepchain/v3 receipt's parts (PARTS.md §8)
  private chainReport: ChainReport<ChainProblemCode> | null = null;
  /** The run reader's state over the range, for a stepchain/v2 journal (RUNS.md §2); null otherwise. */
  private run: RunState | null = null;
  /** Reading stopped at a fatal problem: what followed it was not read. */
  stopped = false;

  constructor(private readonly options: VerifyReceiptOptions<ReceiptReport>) {
    this.problems = new ProblemList(options.maxProblems ?? 1000);
  }

  private add(code: ReceiptProblemCode, message: string, location: ProblemLocation = {}): void {
    this.problems.add(code, message, location);
  }

  /** §7 step 0: a pin that is given but cannot be used is a problem, never "no pin". */
  checkPins(): void {
    if (this.options.publicKey !== undefined) {
      const key = decodePublicKey(this.options.publicKey);
      if (key.ok) this.pinned = key.key;
      else
        this.add(
          'KEY_MISMATCH',
          `${key.reason}; a pinned key that cannot be used matches no signer (spec/RECEIPT.md §5.2)`,
        );
    }
    const head: unknown = this.options.expectHead;
    if (head !== undefined && !isDigest(head)) {
      this.add(
        'HEAD_MISMATCH',
        `the pinned head ${typeof head === 'string' ? JSON.stringify(head.slice(0, 80)) : `(${head === null ? 'null' : typeof head})`} is not "sha256:" followed by 64 lowercase hex digits; a pinned head that cannot be used matches no receipt`,
      );
    }
  }

  /** §7 steps 1–7: the archive, entry by entry; a fatal problem stops reading and is the last of them. */
  async readArchive(input: ByteInput): Promise<void> {
    let chunks: AsyncGenerator<Uint8Array> | null = null;
    let tar: TarReader | null = null;
    try {
      if (!isByteInput(input))
        throw new FatalProblem(
          'ARCHIVE_INVALID',
          'the receipt must be given as bytes (a Uint8Array or a stream of them)',
        );
      const opened = await openArchive(input);
      chunks = opened.chunks;
      this.report.compressed = opened.compressed;
      tar = new TarReader(
        opened.chunks,
        MAX_PREFIX_BYTES,
        'the most an archive can hold before its manifest is read (the manifest and the signature at their limits)',
      );
      let entry = await this.readManifest(tar);
      while (entry !== null) {
        await this.readEntry(tar, entry);
        entry = await tar.next();
      }
      await this.atEnd();
    } catch (e) {
      this.stopped = true;
      if (e instanceof FatalProblem) this.add(e.code, e.message, e.location);
      else if (e instanceof InflateError) this.add('ARCHIVE_INVALID', e.message);
      else this.add('ARCHIVE_INVALID', `the archive could not be read: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      if (tar) this.report.entries = tar.entries;
      if (chunks) await chunks.return(undefined).catch(() => {});
    }
  }

  /** The manifest, and the signature when it follows; returns the entry after them (null at the end). */
  private async readManifest(tar: TarReader): Promise<TarEntry | null> {
    const first = await tar.next();
    if (first === null)
      throw new FatalProblem('ENTRY_MISSING', `the archive holds no ${MANIFEST_NAME}: it is not a receipt`, {
        file: MANIFEST_NAME,
      });
    const at = { file: first.name };
    if (first.name !== MANIFEST_NAME)
      throw new FatalProblem(
        'ENTRY_UNEXPECTED',
        `the first entry is ${JSON.stringify(first.name)}; a receipt starts with ${MANIFEST_NAME}`,
        at,
      );
    if (first.size > MAX_MANIFEST_BYTES)
      throw new FatalProblem(
        'ARCHIVE_LIMIT',
        `the manifest is ${first.size} bytes; the limit is ${MAX_MANIFEST_BYTES}`,
        at,
      );
    tar.reserveData(first);
    const manifestBytes = await tar.readData(first);
    const next = await tar.next();
    if (next?.name !== SIGNATURE_NAME) {
      this.settleManifest(tar, manifestBytes, null);
      return next;
    }
    if (next.size > MAX_SIGNATURE_BYTES)
      throw new FatalProblem(
        'ARCHIVE_LIMIT',
        `the signature entry is ${next.size} bytes; the limit is ${MAX_SIGNATURE_BYTES}`,
        { file: next.name },
      );
    tar.reserveData(next);
    this.settleManifest(tar, manifestBytes, await tar.readData(next));
    return tar.next();
  }

  /** §7 steps 3–5: the signature over the exact manifest bytes, then the manifest itself, then the limit it declares. */
  private settleManifest(tar: TarReader, manifestBytes: Uint8Array, signature: Uint8Array | null): void {
    this.report.manifest_digest = digestBytes(manifestBytes);
    if (signature) {
      const keyId = checkSignature(signature, manifestBytes);
      this.report.signed_by = keyId;
      if (this.pinned && keyIdOf(this.pinned) !== keyId) {
        this.add(
          'KEY_MISMATCH',
          `the receipt is signed by key ${keyId}, not by the pinned key ${keyIdOf(this.pinned)}`,
          { file: SIGNATURE_NAME },
        );
      }
    } else if (this.options.publicKey !== undefined) {
      this.add(
        'SIGNATURE_MISSING',
        `a public key was pinned but the receipt has no ${SIGNATURE_NAME} entry: it is unsigned`,
        { file: SIGNATURE_NAME },
      );
    }
    const parsed = parseManifest(manifestBytes, {
      [PARTS_MEMBER]: checkPartList,
      [LINEAGE_MEMBER]: lineageDefect,
      ...this.options.extensions,
    });
    if (!parsed.ok) {
      // One problem, then stop (§7 step 5): a violation of §4 wins over a listing beyond §6's limits.
      const first = parsed.reasons.find((r) => !r.limit) ?? parsed.reasons[0]!;
      const more = parsed.reasons.length - 1;
      throw new FatalProblem(
        first.limit ? 'ARCHIVE_LIMIT' : 'MANIFEST_INVALID',
        `${first.message}${more ? ` (the manifest has ${more} more problem${more === 1 ? '' : 's'}; this is the first)` : ''}`,
        {
          file: MANIFEST_NAME,
          ...(first.path ? { path: first.path } : {}),
        },
      );
    }
    const m = parsed.manifest;
    const declared = declaredArchiveBytes(manifestBytes.length, signature ? signature.length : null, m);
    if (declared > MAX_ARCHIVE_BYTES) {
      throw new FatalProblem(
        'ARCHIVE_LIMIT',
        `the manifest declares an archive of ${declared} bytes (headers, data, padding and end marker); the limit is ${MAX_ARCHIVE_BYTES}`,
        { file: MANIFEST_NAME },
      );
    }
    tar.setLimit(
      declared + MAX_TRAILING_ZEROS,
      `the ${declared} bytes the manifest declares (every listed entry with its header and padding, and the end marker) and at most ${MAX_TRAILING_ZEROS} zero bytes after them`,
    );
    this.accept(m, signature !== null);
  }

  /** A manifest that parsed: the report's members, the listing to read against, and the chain verifier. */
  private accept(m: ReceiptManifest, signed: boolean): void {
    const r = this.report;
    r.manifest = m;
    r.format = RECEIPT_FORMAT;
    r.range = m.range;
    r.genesis = m.genesis;
    r.journal_id = m.genesis.journal_id;
    r.scope = m.range.from === 0 ? 'complete' : 'partial';
    this.expected = entryNames(m, signed);
    this.next = signed ? 2 : 1;
    for (const b of m.blobs) this.listed.set(b.digest, { size: b.size, referenced: null });
    this.parts = capabilitiesOf(m.genesis).parts ? new ReceiptParts(partListOf(m), this.options.onPublicPart) : null;
    if (this.parts === null && PARTS_MEMBER in m)
      this.add(
        'MANIFEST_INVALID',
        `the manifest lists parts, which only a stepchain/v3 receipt has (this one is ${m.genesis.format ?? DEFAULT_FORMAT.format})`,
        { file: MANIFEST_NAME, path: '/parts' },
      );
    if (m.range.from === 0 && m.range.prev_hash !== genesisHash(m.genesis)) {
      this.add(
        'GENESIS_MISMATCH',
        `range.prev_hash ${m.range.prev_hash} is not the genesis hash ${genesisHash(m.genesis)}, though the range starts at seq 0`,
        { file: MANIFEST_NAME, path: '/range/prev_hash' },
      );
    }
    // The run statements fold the stored lines (kind and ref are envelope members, never parts or withheld; a tool
    // name that stands in a part or is withheld reads as unnamed), as `stepchain verify` folds a v2 or v3 journal's.
    this.run = capabilitiesOf(m.genesis).runRecords ? emptyState() : null;
    const lineage = (m[LINEAGE_MEMBER] ?? null) as ReceiptLineage | null;
    this.chain = new ChainFeeder(
      new ChainVerifier({
        // A partial range starts at its prev_hash, but its lines are still checked by the profiles of the
        // format its genesis names (a stepchain/v2 range is not read as v1).
        ...(m.range.from === 0
          ? { genesis: m.genesis }
          : { start: { seq: m.range.from, prev_hash: m.range.prev_hash }, format: formatOf(m.genesis) }),
        expectHead: m.head.step_hash,
        maxProblems: this.options.maxProblems ?? 1000,
        ...(this.options.approvers === undefined ? {} : { approvers: this.options.approvers }),
        // A fork's receipt (APPROVALS.md §4.1): the fork rule holds as in the journal.
        ...(lineage === null ? {} : { forkedAt: lineage.from_step }),
        // A receipt ends at its head; the journal may go on (APPROVALS.md §5 step 5): "never executed" is not proven.
        openEnd: true,
        onLine: (line) => {
          this.blobReferences(line);
          if (lineage !== null && line.seq === lineage.from_step && line.step_hash !== lineage.parent_step_hash)
            this.add(
              'MANIFEST_INVALID',
              `lineage.parent_step_hash ${lineage.parent_step_hash} is not the step hash of seq ${lineage.from_step} (${String(line.step_hash)}): the receipt does not share the prefix it names`,
              { file: MANIFEST_NAME, path: '/lineage/parent_step_hash' },
            );
          if (this.parts !== null && line.clean)
            this.parts.line(line.text, line.seq, line.file ?? undefined, (c, msg, at) => this.add(c, msg, at));
          // A run journal: read each clean record's boundaries, for what the receipt cannot prove (§8).
          if (this.run !== null && line.clean && line.seq !== null) foldReadLine(this.run, line, line.seq);
          this.options.onLine?.(line);
        },
      }),
      this.options.pool,
    );
  }

  /** Each blob a line references must be listed, with the size the line records. */
  private blobReferences(line: VerifiedLine): void {
    for (const ref of line.blobs) {
      const loc: ProblemLocation = {
        ...(line.file ? { file: line.file } : {}),
        line: line.line,
        ...(line.seq !== null ? { seq: line.seq } : {}),
        field: ref.field,
      };
      const entry = this.listed.get(ref.digest);
      if (!entry) this.add('BLOB_MISSING', `step references blob ${ref.digest}, which the manifest does not list`, loc);
      else {
        entry.referenced ??= { ...(line.seq !== null ? { seq: line.seq } : {}), field: ref.field };
        if (entry.size !== ref.size)
          this.add(
            'BLOB_CORRUPT',
            `the reference records size ${ref.size} for blob ${ref.digest}, the manifest lists ${entry.size}`,
            loc,
          );
      }
    }
  }

  /** §7 step 6: the next listed entry, in the listing's fixed order; listed entries skipped over are missing. */
  private async readEntry(tar: TarReader, entry: TarEntry): Promise<void> {
    const { name } = entry;
    const at: ProblemLocation = { file: name };
    if (this.expected[this.next] !== name) {
      const where = this.expected.indexOf(name);
      if (where < 0) {
        throw new FatalProblem(
          'ENTRY_UNEXPECTED',
          name === SIGNATURE_NAME
            ? `${SIGNATURE_NAME} must directly follow ${MANIFEST_NAME}`
            : `entry ${JSON.stringify(name)} is not listed in the manifest`,
          at,
        );
      }
      if (where < this.next)
        throw new FatalProblem(
          'ENTRY_UNEXPECTED',
          `entry ${name} is out of order: the profile's fixed order expects ${this.expected[this.next] ?? 'the end marker'} here`,
          at,
        );
      for (let i = this.next; i < where; i++)
        this.add(
          'ENTRY_MISSING',
          `the manifest lists ${this.expected[i]}, which the archive does not hold (the next entry is ${name})`,
          { file: this.expected[i]! },
        );
      this.next = where;
    }
    this.next++;
    if (CHAIN_NAME_RE.test(name)) await this.readChainEntry(tar, entry);
    else if (BLOB_NAME_RE.test(name)) await this.readBlobEntry(tar, entry);
    else if (PART_NAME_RE.test(name) && this.parts !== null)
      await this.parts.read(tar, entry, (c, msg, loc) => this.add(c, msg, loc));
    else throw new FatalProblem('ENTRY_UNEXPECTED', `entry ${JSON.stringify(name)} is not listed in the manifest`, at);
  }

  /** A chain entry: its lines through the chain verifier as they stream, its digest, size and step count. */
  private async readChainEntry(tar: TarReader, entry: TarEntry): Promise<void> {
    const { name, size } = entry;
    const at: ProblemLocation = { file: name };
    // Looked up by name: found by a scan of the listing per entry, 65 536 one-line entries took seconds (outsider I).
    const c = (this.chainByName ??= new Map(this.report.manifest!.chain.map((e) => [e.name, e]))).get(name)!;
    if (size > MAX_CHAIN_ENTRY_BYTES)
      throw new FatalProblem(
        'ARCHIVE_LIMIT',
        `chain entry is ${size} bytes; the limit is ${MAX_CHAIN_ENTRY_BYTES}`,
        at,
      );
    if (size !== c.size) this.add('DIGEST_MISMATCH', `chain entry is ${size} bytes; the manifest lists ${c.size}`, at);
    tar.reserveData(entry);
    const chain = this.chain!;
    chain.beginSegment(name, Number(CHAIN_NAME_RE.exec(name)![1]));
    const splitter = new LineSplitter(MAX_LINE_BYTES);
    // Where the only SHA-256 in reach is a portable one (a browser), an entry up to MAX_HELD_ENTRY_BYTES is
    // copied aside as it streams and digested whole by the platform's native WebCrypto; anywhere else, and
    // for a larger entry, it is hashed as it streams.
    // A caller's own hasher (entryHasher) takes precedence over both.
    const given = this.options.entryHasher?.() ?? null;
    const whole = given === null && size <= MAX_HELD_ENTRY_BYTES ? wholeDigest() : null;
    const held = whole === null ? null : new Uint8Array(size);
    let heldAt = 0;
    const h = held === null ? (given ?? streamed(sha256Stream())) : null;
    const onLine = (line: Uint8Array, tooLong: boolean, start: number, end: number): void =>
      tooLong ? chain.longLine(end - start - 1) : chain.line(line, true);
    await tar.streamData(entry, (piece) => {
      if (held !== null) {
        held.set(piece, heldAt);
        heldAt += piece.length;
      } else h!.update(piece);
      splitter.split(piece, onLine);
      return chain.settle();
    });
    const torn = splitter.end();
    if (torn !== null) chain.line(torn.bytes, false);
    const digest = 'sha256:' + toHex(held !== null ? await whole!(held.subarray(0, heldAt)) : await h!.digest());
    if (digest !== c.digest)
      this.add('DIGEST_MISMATCH', `chain entry digest ${digest} differs from the manifest's ${c.digest}`, at);
    if (splitter.lines !== c.steps)
      this.add(
        'COUNT_MISMATCH',
        `chain entry holds ${splitter.lines} complete lines; the manifest lists ${c.steps} steps`,
        at,
      );
    await tar.padding(entry);
  }

  /** A blob entry: its size and digest against the listing and its name, and its canonical form (FORMAT §7). */
  private async readBlobEntry(tar: TarReader, entry: TarEntry): Promise<void> {
    const { name, size } = entry;
    const at: ProblemLocation = { file: name };
    const digestFromName = 'sha256:' + name.slice('blobs/'.length);
    const b = this.listed.get(digestFromName)!;
    if (size > MAX_BLOB_BYTES)
      throw new FatalProblem('ARCHIVE_LIMIT', `blob entry is ${size} bytes; the limit is ${MAX_BLOB_BYTES}`, at);
    tar.reserveData(entry);
    const bytes = await tar.readData(entry);
    this.report.blobs++;
    const whole = wholeDigest();
    const digest = whole === null ? digestBytes(bytes) : 'sha256:' + toHex(await whole(bytes));
    if (size !== b.size) this.add('BLOB_CORRUPT', `blob is ${size} bytes; the manifest lists ${b.size}`, at);
    if (digest !== digestFromName) {
      this.add(
        'BLOB_CORRUPT',
        `blob bytes hash to ${digest}, not the digest ${digestFromName} they are stored under`,
        (b.changed = { ...at }),
      );
      return;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.add('BLOB_CORRUPT', 'blob bytes are not valid UTF-8; a blob is the canonical JSON of a content value', at);
      return;
    }
    const scan = scanCanonical(text, { maxDepth: MAX_RECORD_DEPTH, members: false });
    if (scan.defect)
      this.add('BLOB_CORRUPT', `blob bytes are not canonical JSON: ${scan.defect.reason}`, {
        ...at,
        ...(scan.defect.path ? { path: scan.defect.path } : {}),
      });
    else this.options.onBlob?.(digestFromName, text);
  }

  /** §7 step 7, at the end marker: listed entries that never came, the chain's end, blobs no step references. */
  private async atEnd(): Promise<void> {
    for (let i = this.next; i < this.expected.length; i++)
      this.add('ENTRY_MISSING', `the manifest lists ${this.expected[i]}, which the archive does not hold`, {
        file: this.expected[i]!,
      });
    if (this.chain) {
      this.chainReport = await this.chain.finish();
      this.chain = null;
    }
    this.parts?.finish((c, msg, at) => this.add(c, msg, at));
    for (const [digest, b] of this.listed) {
      if (b.changed && b.referenced) Object.assign(b.changed, b.referenced);
      if (!b.referenced)
        this.add('ENTRY_UNEXPECTED', `blob ${digest} is listed but no step in the range references it`, {
          file: blobEntryName(digest),
        });
    }
  }

  /** §7 steps 8–9: the chain's problems and the head checks; then the verdict and what it proves. */
  async conclude(): Promise<ReceiptReport<ReceiptProblemCode>> {
    const r = this.report;
    if (this.chain) this.chainReport = await this.chain.finish();
    const cr = this.chainReport;
    if (cr) {
      r.start_hash = cr.start_hash;
      r.start_seq = cr.start_seq;
      r.head = cr.head;
      r.head_seq = cr.head_seq;
      r.steps = cr.steps;
      if (cr.approvals !== undefined) r.approvals = cr.approvals;
      // The chain's notices (APPROVAL_UNCHECKED, APPROVER_UNPINNED, VALUE_ERASED, …) are the receipt's too: a
      // receipt says no less than the journal it was made from.
      // (KIND_UNCHECKED is left out: a receipt's own verdict says what it does not check.)
      if (r.manifest && (capabilitiesOf(r.manifest.genesis).approvals || capabilitiesOf(r.manifest.genesis).erasure))
        for (const w of cr.warnings) if (w.code !== 'KIND_UNCHECKED') r.warnings.push(w);
      // After a fatal problem the chain was cut short; its missing head says nothing new.
      for (const p of cr.problems)
        if (!(this.stopped && p.code === 'HEAD_MISMATCH')) this.add(p.code, p.message, p.location);
      const m = r.manifest;
      if (m && !this.stopped && cr.head_seq !== null && cr.head_seq !== m.head.seq && cr.problems.length === 0) {
        this.add('HEAD_MISMATCH', `the chain ends at seq ${cr.head_seq}; the manifest's head is seq ${m.head.seq}`, {
          file: MANIFEST_NAME,
          path: '/head/seq',
        });
      }
      const pin = this.options.expectHead;
      if (!this.stopped && pin !== undefined && isDigest(pin) && cr.head !== pin) {
        this.add(
          'HEAD_MISMATCH',
          `the pinned head is ${pin}, but the receipt's chain ends at ${cr.head ?? 'no readable step'}`,
          { file: MANIFEST_NAME, path: '/head/step_hash' },
        );
      }
    }
    r.problems = this.problems.items;
    r.problems_truncated = this.problems.truncated || (cr?.problems_truncated ?? false);
    r.ok = r.problems.length === 0 && !r.problems_truncated;
    if (r.ok && this.pinned) pinHeld(r, `the manifest is signed with the Ed25519 key you pinned (${r.signed_by})`);
    if (r.ok && this.options.expectHead !== undefined) pinHeld(r, `the chain ends at the head you pinned (${r.head})`);
    describe(r, this.options, this.pinned, this.run);
    return settleVerdict(r, 'receipt');
  }
}

function isByteInput(input: unknown): input is ByteInput {
  if (input instanceof Uint8Array) return true;
  if (input === null || typeof input !== 'object') return false;
  return (
    typeof (input as ReadableStream).getReader === 'function' ||
    typeof (input as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function'
  );
}

/** The built-in incremental hash as an EntryHasher. */
function streamed(h: Sha256Stream): EntryHasher {
  return { update: (piece) => h.update(piece), digest: () => Promise.resolve(h.digest()) };
}
