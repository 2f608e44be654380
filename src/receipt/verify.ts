/**
 * The offline receipt verifier (spec/RECEIPT.md §7): archive bytes in, report out. It reads the archive
 * with its own strict ustar reader (general tar libraries accept duplicate names, links, PAX path
 * overrides and bad checksums), checks safety and limits before reading data, verifies the signature over
 * the exact manifest bytes before parsing them, then every entry's digest and count, the chain, the blobs
 * and the pinned head. Memory is bounded by the limits in limits.ts, not by the archive, and reading by
 * what the manifest declares (§6.1): a decompression bomb stops at the first byte beyond it. Problems are
 * reported in the order of §7.1: pins, the receipt's own problems in reading order, the chain's, the head
 * checks, then an extension's (its `finish`).
 *
 * Every byte is hostile: this module never throws on input; each failure is a Problem with a stable code.
 * Pure — no Node-only imports — so it runs in a browser.
 */
import { MAX_LINE_BYTES, MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestBytes, isDigest, sha256Stream, toHex } from '../canonical/sha256.js';
import { genesisHash, type Genesis } from '../record/index.js';
import type { BlobProblemCode, ChainProblemCode, ChainReport, Problem, ProblemLocation } from '../chain/report.js';
import { ChainVerifier, type VerifiedLine } from '../chain/verifier.js';
import { base64Decode } from './base64.js';
import { PAYLOAD_TYPE, SIGNATURE_FORMAT, pae, signatureDefect } from './dsse.js';
import { InflateError, openArchive, type ByteInput } from './inflate.js';
import { decodePublicKey, keyIdOf } from './keys.js';
import {
  MAX_ARCHIVE_BYTES, MAX_BLOB_BYTES, MAX_CHAIN_ENTRY_BYTES, MAX_ENTRIES, MAX_MANIFEST_BYTES, MAX_PREFIX_BYTES, MAX_SIGNATURE_BYTES, MAX_TRAILING_ZEROS,
} from './limits.js';
import {
  BLOB_NAME_RE, CHAIN_NAME_RE, MANIFEST_NAME, RECEIPT_FORMAT, SIGNATURE_NAME, blobEntryName, declaredArchiveBytes, entryNames, parseManifest,
  type ReceiptManifest, type ReceiptRange,
} from './manifest.js';
import { BLOCK, inspectHeader, isZeroBlock, paddedSize } from './tar.js';

export type { ByteInput } from './inflate.js';

/** The problems a receipt verifier reports (spec/RECEIPT.md §5): the chain's, the blobs', and the archive's own. */
export type ReceiptProblemCode =
  | ChainProblemCode
  | BlobProblemCode
  | 'ARCHIVE_INVALID'
  | 'ARCHIVE_UNSAFE'
  | 'ARCHIVE_LIMIT'
  | 'ENTRY_MISSING'
  | 'ENTRY_UNEXPECTED'
  | 'MANIFEST_INVALID'
  | 'DIGEST_MISMATCH'
  | 'COUNT_MISMATCH'
  | 'SIGNATURE_INVALID'
  | 'SIGNATURE_MISSING'
  | 'KEY_MISMATCH';

export interface VerifyReceiptOptions<R extends ReceiptReport<string> = ReceiptReport> {
  /** A head step_hash obtained independently (for example published earlier): the receipt's head must equal it. */
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
  /**
   * Completes the report once the archive is read, for extensions whose checks span the whole receipt
   * (REDACTION.md §7): verifyReceipt returns what it returns. Part of the options, not a separate step,
   * so that a caller who passes an extension's options cannot forget to finish its verification.
   */
  finish?: (report: ReceiptReport) => R;
}

export interface ReceiptReport<Code extends string = ReceiptProblemCode> extends ChainReport<Code> {
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

/** A problem that stops reading: the archive's structure can no longer be trusted. */
class Fatal {
  constructor(readonly code: ReceiptProblemCode, readonly message: string, readonly location: ProblemLocation = {}) {}
}

export class ByteReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private off = 0;
  private done = false;
  /** Bytes handed out so far: the offset in the tar stream. */
  position = 0;
  constructor(private readonly src: AsyncGenerator<Uint8Array>) {}

  private async fill(): Promise<boolean> {
    while (this.off >= this.chunk.length) {
      if (this.done) return false;
      const r = await this.src.next();
      if (r.done) {
        this.done = true;
        return false;
      }
      this.chunk = r.value;
      this.off = 0;
    }
    return true;
  }

  /** Exactly n bytes, or fewer at the end of input. */
  async read(n: number): Promise<Uint8Array> {
    if (!(await this.fill())) return new Uint8Array(0);
    if (this.chunk.length - this.off >= n) {
      const out = this.chunk.subarray(this.off, this.off + n);
      this.off += n;
      this.position += n;
      return out;
    }
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n && (await this.fill())) {
      const take = Math.min(n - got, this.chunk.length - this.off);
      out.set(this.chunk.subarray(this.off, this.off + take), got);
      this.off += take;
      got += take;
    }
    this.position += got;
    return got === n ? out : out.subarray(0, got);
  }

  /** Passes the next n bytes to fn in pieces; returns how many there were (fewer at the end of input). */
  async stream(n: number, fn: (piece: Uint8Array) => void): Promise<number> {
    let got = 0;
    while (got < n && (await this.fill())) {
      const take = Math.min(n - got, this.chunk.length - this.off);
      fn(this.chunk.subarray(this.off, this.off + take));
      this.off += take;
      got += take;
    }
    this.position += got;
    return got;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Splits a chain entry's bytes into lines for the chain verifier, never holding more than one line. */
class LineFeeder {
  private buf = new Uint8Array(64 * 1024);
  private len = 0;
  /** Bytes of the current line when it is too long to hold (-1 when not skipping). */
  private skipped = -1;
  lines = 0;
  constructor(private readonly chain: ChainVerifier) {}

  push(piece: Uint8Array): void {
    let start = 0;
    while (start < piece.length) {
      const nl = piece.indexOf(0x0a, start);
      const end = nl < 0 ? piece.length : nl;
      this.append(piece, start, end);
      if (nl < 0) return;
      this.lines++;
      if (this.skipped >= 0) {
        this.chain.longLine(this.skipped);
        this.skipped = -1;
      } else {
        this.chain.line(this.buf.subarray(0, this.len), true);
      }
      this.len = 0;
      start = nl + 1;
    }
  }

  private append(piece: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.skipped >= 0) {
      this.skipped += n;
      return;
    }
    if (this.len + n >= MAX_LINE_BYTES) {
      this.skipped = this.len + n;
      this.len = 0;
      return;
    }
    if (this.len + n > this.buf.length) {
      let size = this.buf.length * 2;
      while (size < this.len + n) size *= 2;
      const next = new Uint8Array(Math.min(size, MAX_LINE_BYTES));
      next.set(this.buf.subarray(0, this.len));
      this.buf = next;
    }
    this.buf.set(piece.subarray(start, end), this.len);
    this.len += n;
  }

  end(): void {
    if (this.skipped >= 0) this.chain.line(new Uint8Array(0), false);
    else if (this.len > 0) this.chain.line(this.buf.subarray(0, this.len), false);
    this.len = 0;
    this.skipped = -1;
  }
}

function emptyReport(): ReceiptReport {
  return {
    ok: false, start_hash: null, start_seq: 0, head: null, head_seq: null, steps: 0, problems: [], warnings: [], problems_truncated: false,
    format: null, compressed: false, scope: null, range: null, genesis: null, journal_id: null, manifest_digest: null, signed_by: null,
    proves: [], does_not_prove: [], entries: 0, blobs: 0, manifest: null,
  };
}

/** Verifies a receipt held in memory or streamed. Never throws; the report says what is wrong and where. */
export async function verifyReceipt<R extends ReceiptReport<string> = ReceiptReport>(input: ByteInput, options: VerifyReceiptOptions<R> = {}): Promise<R> {
  // "Never throws" covers the options too: null (or any non-object) from a caller's config means none.
  if (options === null || typeof options !== 'object') options = {};
  const report = emptyReport();
  const maxProblems = options.maxProblems ?? 1000;
  const problems: Array<Problem<ReceiptProblemCode>> = [];
  const add = (code: ReceiptProblemCode, message: string, location: ProblemLocation = {}): void => {
    if (problems.length >= maxProblems) report.problems_truncated = true;
    else problems.push({ code, message, location });
  };

  // Pins first (§7 step 0): a pin that is given but cannot be used is a problem, never "no pin".
  let pinned: Uint8Array | null = null;
  if (options.publicKey !== undefined) {
    const key = decodePublicKey(options.publicKey);
    if (key.ok) pinned = key.key;
    else add('KEY_MISMATCH', `${key.reason}; a pinned key that cannot be used matches no signer (spec/RECEIPT.md §5.2)`);
  }
  const head: unknown = options.expectHead;
  if (head !== undefined && !isDigest(head)) {
    add('HEAD_MISMATCH', `the pinned head ${typeof head === 'string' ? JSON.stringify(head.slice(0, 80)) : `(${head === null ? 'null' : typeof head})`} is not "sha256:" followed by 64 lowercase hex digits; a pinned head that cannot be used matches no receipt`);
  }

  let chain: ChainVerifier | null = null;
  /** Reading stopped at a fatal problem: the chain was not read to its end. */
  let stopped = false;
  let chainReport: ChainReport | null = null;
  let tarChunks: AsyncGenerator<Uint8Array> | null = null;
  try {
    if (!isByteInput(input)) throw new Fatal('ARCHIVE_INVALID', 'the receipt must be given as bytes (a Uint8Array or a stream of them)');
    const opened = await openArchive(input);
    tarChunks = opened.chunks;
    report.compressed = opened.compressed;
    const reader = new ByteReader(opened.chunks);
    /**
     * The most tar bytes this archive may have (§6.1): until the manifest is parsed, what its first
     * entries can take at their limits; after, the size the manifest declares plus the zeros allowed
     * after the end marker. A decompression bomb is refused before the first byte beyond it is inflated.
     */
    let limit = MAX_PREFIX_BYTES;
    let limitWhy = 'the most an archive can hold before its manifest is read (the manifest and the signature at their limits)';
    const within = (bytes: number, what: string, at: ProblemLocation = {}): void => {
      if (reader.position + bytes > limit) {
        throw new Fatal('ARCHIVE_LIMIT', `${what} would take the uncompressed archive to ${reader.position + bytes} bytes, past ${limit}: ${limitWhy}. Refused before inflating further (a decompression bomb, or a header that lies about its size)`, at);
      }
    };

    const seen = new Set<string>();
    let manifestBytes: Uint8Array | null = null;
    let manifest: ReceiptManifest | null = null;
    let expected: string[] = [];
    let next = 0;
    /** Listed blobs: digest → listed size and whether a step references it. */
    const listed = new Map<string, { size: number; referenced: boolean }>();

    const readWhole = async (name: string, size: number): Promise<Uint8Array> => {
      const bytes = await reader.read(size);
      if (bytes.length < size) throw new Fatal('ARCHIVE_INVALID', `the archive ends inside entry ${name} (${bytes.length} of ${size} bytes)`, { file: name });
      return bytes;
    };
    const readPadding = async (name: string, size: number): Promise<void> => {
      const pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (pad === 0) return;
      const bytes = await reader.read(pad);
      if (bytes.length < pad) throw new Fatal('ARCHIVE_INVALID', `the archive ends inside the padding of entry ${name}`, { file: name });
      if (!isZeroBlock(bytes)) throw new Fatal('ARCHIVE_INVALID', `the padding after entry ${name} is not all zero bytes`, { file: name });
    };

    /** Called once the entry after the manifest is known: checks the signature, then parses the manifest. */
    const settleManifest = (signature: Uint8Array | null): void => {
      const mBytes = manifestBytes!;
      report.manifest_digest = digestBytes(mBytes);
      if (signature) {
        const keyId = checkSignature(signature, mBytes); // throws Fatal SIGNATURE_INVALID
        report.signed_by = keyId;
        if (pinned && keyIdOf(pinned) !== keyId) {
          add('KEY_MISMATCH', `the receipt is signed by key ${keyId}, not by the pinned key ${keyIdOf(pinned)}`, { file: SIGNATURE_NAME });
        }
      } else if (options.publicKey !== undefined) {
        add('SIGNATURE_MISSING', `a public key was pinned but the receipt has no ${SIGNATURE_NAME} entry: it is unsigned`, { file: SIGNATURE_NAME });
      }
      const parsed = parseManifest(mBytes, options.extensions);
      if (!parsed.ok) {
        // One problem, then stop (§7 step 5): a violation of §4 wins over a listing beyond §6's limits.
        const first = parsed.reasons.find((r) => !r.limit) ?? parsed.reasons[0]!;
        const more = parsed.reasons.length - 1;
        throw new Fatal(first.limit ? 'ARCHIVE_LIMIT' : 'MANIFEST_INVALID', `${first.message}${more ? ` (the manifest has ${more} more problem${more === 1 ? '' : 's'}; this is the first)` : ''}`, {
          file: MANIFEST_NAME, ...(first.path ? { path: first.path } : {}),
        });
      }
      const m = parsed.manifest;
      const declared = declaredArchiveBytes(mBytes.length, signature ? signature.length : null, m);
      if (declared > MAX_ARCHIVE_BYTES) {
        throw new Fatal('ARCHIVE_LIMIT', `the manifest declares an archive of ${declared} bytes (headers, data, padding and end marker); the limit is ${MAX_ARCHIVE_BYTES}`, { file: MANIFEST_NAME });
      }
      limit = declared + MAX_TRAILING_ZEROS;
      limitWhy = `the ${declared} bytes the manifest declares (every listed entry with its header and padding, and the end marker) and at most ${MAX_TRAILING_ZEROS} zero bytes after them`;
      manifest = m;
      report.manifest = m;
      report.format = RECEIPT_FORMAT;
      report.range = m.range;
      report.genesis = m.genesis;
      report.journal_id = m.genesis.journal_id;
      report.scope = m.range.from === 0 ? 'complete' : 'partial';
      expected = entryNames(m, signature !== null);
      next = signature ? 2 : 1;
      for (const b of m.blobs) listed.set(b.digest, { size: b.size, referenced: false });
      if (m.range.from === 0 && m.range.prev_hash !== genesisHash(m.genesis)) {
        add('GENESIS_MISMATCH', `range.prev_hash ${m.range.prev_hash} is not the genesis hash ${genesisHash(m.genesis)}, though the range starts at seq 0`, { file: MANIFEST_NAME, path: '/range/prev_hash' });
      }
      chain = new ChainVerifier({
        ...(m.range.from === 0 ? { genesis: m.genesis } : { start: { seq: m.range.from, prev_hash: m.range.prev_hash } }),
        expectHead: m.head.step_hash,
        maxProblems,
        onLine: (line) => {
          for (const ref of line.blobs) {
            const loc: ProblemLocation = { ...(line.segment ? { file: line.segment } : {}), line: line.line, ...(line.seq !== null ? { seq: line.seq } : {}), field: ref.field };
            const entry = listed.get(ref.digest);
            if (!entry) add('BLOB_MISSING', `step references blob ${ref.digest}, which the manifest does not list`, loc);
            else {
              entry.referenced = true;
              if (entry.size !== ref.size) add('BLOB_CORRUPT', `the reference records size ${ref.size} for blob ${ref.digest}, the manifest lists ${entry.size}`, loc);
            }
          }
          options.onLine?.(line);
        },
      });
    };

    let pendingManifest = false;
    let ended = false;
    for (;;) {
      within(BLOCK, 'a header block');
      const header = await reader.read(BLOCK);
      if (header.length < BLOCK) {
        throw new Fatal('ARCHIVE_INVALID', header.length === 0 ? 'the archive ends without the two-block end marker' : 'the archive ends inside a header block');
      }
      if (isZeroBlock(header)) {
        within(BLOCK, 'the end marker\'s second block');
        const second = await reader.read(BLOCK);
        if (second.length < BLOCK || !isZeroBlock(second)) throw new Fatal('ARCHIVE_INVALID', 'the end marker is not two zero blocks');
        let trailing = 0;
        for (;;) {
          const rest = await reader.read(Math.max(1, Math.min(64 * 1024, limit - reader.position)));
          if (rest.length === 0) break;
          within(0, 'zero bytes after the end marker');
          if (!isZeroBlock(rest)) throw new Fatal('ARCHIVE_INVALID', 'bytes other than zeros follow the end marker');
          trailing += rest.length;
          if (trailing > MAX_TRAILING_ZEROS) throw new Fatal('ARCHIVE_LIMIT', `more than ${MAX_TRAILING_ZEROS} zero bytes follow the end marker`);
        }
        ended = true;
        break;
      }
      const verdict = inspectHeader(header);
      if (!verdict.ok) throw new Fatal(verdict.code, verdict.message, verdict.name ? { file: verdict.name } : {});
      const { name, size } = verdict;
      const at: ProblemLocation = { file: name };
      report.entries++;
      if (report.entries > MAX_ENTRIES) throw new Fatal('ARCHIVE_LIMIT', `the archive holds more than ${MAX_ENTRIES} entries`, at);
      if (seen.has(name)) throw new Fatal('ARCHIVE_UNSAFE', `entry ${name} appears twice; a later copy could shadow the verified one`, at);
      seen.add(name);
      /** Before an entry's data is read: it must fit within the bound (§7 step 6). */
      const dataWithin = (): void => within(paddedSize(size), `entry ${name}'s ${size} bytes of data and their padding`, at);

      if (report.entries === 1) {
        if (name !== MANIFEST_NAME) throw new Fatal('ENTRY_UNEXPECTED', `the first entry is ${JSON.stringify(name)}; a receipt starts with ${MANIFEST_NAME}`, at);
        if (size > MAX_MANIFEST_BYTES) throw new Fatal('ARCHIVE_LIMIT', `the manifest is ${size} bytes; the limit is ${MAX_MANIFEST_BYTES}`, at);
        dataWithin();
        manifestBytes = await readWhole(name, size);
        await readPadding(name, size);
        pendingManifest = true;
        continue;
      }
      if (pendingManifest) {
        pendingManifest = false;
        if (name === SIGNATURE_NAME) {
          if (size > MAX_SIGNATURE_BYTES) throw new Fatal('ARCHIVE_LIMIT', `the signature entry is ${size} bytes; the limit is ${MAX_SIGNATURE_BYTES}`, at);
          dataWithin();
          const sig = await readWhole(name, size);
          await readPadding(name, size);
          settleManifest(sig);
          continue;
        }
        settleManifest(null);
      }
      const m = manifest as ReceiptManifest | null;
      if (m === null) throw new Fatal('ARCHIVE_INVALID', 'internal: no manifest');
      if (expected[next] !== name) {
        const where = expected.indexOf(name);
        if (where < 0) {
          throw new Fatal('ENTRY_UNEXPECTED', name === SIGNATURE_NAME
            ? `${SIGNATURE_NAME} must directly follow ${MANIFEST_NAME}`
            : `entry ${JSON.stringify(name)} is not listed in the manifest`, at);
        }
        if (where < next) throw new Fatal('ENTRY_UNEXPECTED', `entry ${name} is out of order: the profile's fixed order expects ${expected[next] ?? 'the end marker'} here`, at);
        // Listed entries were skipped: report each as missing and go on from this one.
        for (let i = next; i < where; i++) add('ENTRY_MISSING', `the manifest lists ${expected[i]}, which the archive does not hold (the next entry is ${name})`, { file: expected[i]! });
        next = where;
      }
      next++;

      if (CHAIN_NAME_RE.test(name)) {
        const c = m.chain.find((e) => e.name === name)!;
        if (size > MAX_CHAIN_ENTRY_BYTES) throw new Fatal('ARCHIVE_LIMIT', `chain entry is ${size} bytes; the limit is ${MAX_CHAIN_ENTRY_BYTES}`, at);
        if (size !== c.size) add('DIGEST_MISMATCH', `chain entry is ${size} bytes; the manifest lists ${c.size}`, at);
        dataWithin();
        const v = chain as unknown as ChainVerifier;
        v.beginSegment(name, Number(CHAIN_NAME_RE.exec(name)![1]));
        const feeder = new LineFeeder(v);
        const h = sha256Stream();
        const got = await reader.stream(size, (piece) => {
          h.update(piece);
          feeder.push(piece);
        });
        if (got < size) throw new Fatal('ARCHIVE_INVALID', `the archive ends inside entry ${name} (${got} of ${size} bytes)`, at);
        feeder.end();
        const digest = 'sha256:' + toHex(h.digest());
        if (digest !== c.digest) add('DIGEST_MISMATCH', `chain entry digest ${digest} differs from the manifest's ${c.digest}`, at);
        if (feeder.lines !== c.steps) add('COUNT_MISMATCH', `chain entry holds ${feeder.lines} complete lines; the manifest lists ${c.steps} steps`, at);
        await readPadding(name, size);
      } else if (BLOB_NAME_RE.test(name)) {
        const digestFromName = 'sha256:' + name.slice('blobs/'.length);
        const b = listed.get(digestFromName)!;
        if (size > MAX_BLOB_BYTES) throw new Fatal('ARCHIVE_LIMIT', `blob entry is ${size} bytes; the limit is ${MAX_BLOB_BYTES}`, at);
        dataWithin();
        const bytes = await readWhole(name, size);
        await readPadding(name, size);
        report.blobs++;
        const digest = digestBytes(bytes);
        if (size !== b.size) add('BLOB_CORRUPT', `blob is ${size} bytes; the manifest lists ${b.size}`, at);
        if (digest !== digestFromName) add('BLOB_CORRUPT', `blob bytes hash to ${digest}, not the digest ${digestFromName} they are stored under`, at);
        else {
          let text: string | null = null;
          try {
            text = utf8.decode(bytes);
          } catch {
            add('BLOB_CORRUPT', 'blob bytes are not valid UTF-8; a blob is the canonical JSON of a content value', at);
          }
          if (text !== null) {
            const scan = scanCanonical(text, { maxDepth: MAX_RECORD_DEPTH, members: false });
            if (scan.defect) add('BLOB_CORRUPT', `blob bytes are not canonical JSON: ${scan.defect.reason}`, { ...at, ...(scan.defect.path ? { path: scan.defect.path } : {}) });
            else options.onBlob?.(digestFromName, text);
          }
        }
      } else {
        throw new Fatal('ENTRY_UNEXPECTED', `entry ${JSON.stringify(name)} is not listed in the manifest`, at);
      }
    }

    if (ended) {
      if (manifestBytes === null) throw new Fatal('ENTRY_MISSING', `the archive holds no ${MANIFEST_NAME}: it is not a receipt`, { file: MANIFEST_NAME });
      if (pendingManifest) settleManifest(null);
      for (let i = next; i < expected.length; i++) add('ENTRY_MISSING', `the manifest lists ${expected[i]}, which the archive does not hold`, { file: expected[i]! });
      const v = chain as ChainVerifier | null;
      if (v) {
        chainReport = v.finish();
        chain = null;
      }
      for (const [digest, b] of listed) {
        if (!b.referenced) add('ENTRY_UNEXPECTED', `blob ${digest} is listed but no step in the range references it`, { file: blobEntryName(digest) });
      }
    }
  } catch (e) {
    stopped = true;
    if (e instanceof Fatal) add(e.code, e.message, e.location);
    else if (e instanceof InflateError) add('ARCHIVE_INVALID', e.message);
    else add('ARCHIVE_INVALID', `the archive could not be read: ${e instanceof Error ? e.message : String(e)}`);
  } finally {
    if (tarChunks) await tarChunks.return(undefined).catch(() => {});
  }
  const pending = chain as ChainVerifier | null;
  if (pending) chainReport = pending.finish();

  if (chainReport) {
    report.start_hash = chainReport.start_hash;
    report.start_seq = chainReport.start_seq;
    report.head = chainReport.head;
    report.head_seq = chainReport.head_seq;
    report.steps = chainReport.steps;
    // After a fatal problem the chain was cut short; its missing head says nothing new.
    for (const p of chainReport.problems) if (!(stopped && p.code === 'HEAD_MISMATCH')) add(p.code, p.message, p.location);
    if (chainReport.problems_truncated) report.problems_truncated = true;
    const m = report.manifest;
    if (m && !stopped && chainReport.head_seq !== null && chainReport.head_seq !== m.head.seq && chainReport.problems.length === 0) {
      add('HEAD_MISMATCH', `the chain ends at seq ${chainReport.head_seq}; the manifest's head is seq ${m.head.seq}`, { file: MANIFEST_NAME, path: '/head/seq' });
    }
    if (!stopped && options.expectHead !== undefined && isDigest(options.expectHead) && chainReport.head !== options.expectHead) {
      add('HEAD_MISMATCH', `the pinned head is ${options.expectHead}, but the receipt's chain ends at ${chainReport.head ?? 'no readable step'}`, { file: MANIFEST_NAME, path: '/head/step_hash' });
    }
  }
  report.problems = problems;
  report.ok = problems.length === 0 && !report.problems_truncated;
  describe(report, options, pinned);
  return options.finish ? options.finish(report) : (report as ReceiptReport<string> as R);

  /** DSSE over the exact manifest bytes; returns the signer's key id or throws Fatal. */
  function checkSignature(bytes: Uint8Array, manifestBytes: Uint8Array): string {
    const fail = (why: string): never => {
      throw new Fatal('SIGNATURE_INVALID', why, { file: SIGNATURE_NAME });
    };
    let doc: unknown;
    try {
      const text = utf8.decode(bytes);
      const scan = scanCanonical(text, { maxDepth: 8, members: false });
      if (scan.defect) fail(`the signature entry is not canonical JSON: ${scan.defect.reason}`);
      doc = JSON.parse(text);
    } catch (e) {
      if (e instanceof Fatal) throw e;
      fail('the signature entry is not UTF-8 JSON');
    }
    const obj = (v: unknown, keys: string[]): Record<string, unknown> | null => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
      const k = Object.keys(v).sort();
      return k.length === keys.length && k.every((x, i) => x === keys[i]) ? (v as Record<string, unknown>) : null;
    };
    const d = obj(doc, ['envelope', 'format', 'public_key']) ?? fail('the signature entry must be {"envelope":{…},"format":…,"public_key":…}');
    if (d.format !== SIGNATURE_FORMAT) fail(`signature format is ${JSON.stringify(d.format)}, not ${JSON.stringify(SIGNATURE_FORMAT)}`);
    const pub = typeof d.public_key === 'string' ? base64Decode(d.public_key) : null;
    if (!pub || pub.length !== 32) fail('public_key must be the base64 of a 32-byte Ed25519 public key');
    const env = obj(d.envelope, ['payload', 'payloadType', 'signatures']) ?? fail('the DSSE envelope must have exactly payload, payloadType and signatures');
    if (env.payloadType !== PAYLOAD_TYPE) fail(`payloadType is ${JSON.stringify(env.payloadType)}, not ${JSON.stringify(PAYLOAD_TYPE)}`);
    const payload = typeof env.payload === 'string' ? base64Decode(env.payload) : null;
    if (!payload) fail('payload is not canonical base64');
    if (!equalBytes(payload!, manifestBytes)) fail(`the envelope's payload is not the exact bytes of ${MANIFEST_NAME}`);
    if (!Array.isArray(env.signatures) || env.signatures.length !== 1) fail('the envelope must carry exactly one signature');
    const s = obj((env.signatures as unknown[])[0], ['keyid', 'sig']) ?? fail('a signature is {"keyid":…,"sig":…}');
    const keyId = keyIdOf(pub!);
    if (s.keyid !== keyId) fail(`keyid ${JSON.stringify(s.keyid)} is not the id of public_key (${keyId})`);
    const sig = typeof s.sig === 'string' ? base64Decode(s.sig) : null;
    if (!sig || sig.length !== 64) fail('sig must be the base64 of a 64-byte Ed25519 signature');
    let why: string | null;
    try {
      why = signatureDefect(pae(PAYLOAD_TYPE, manifestBytes), sig!, pub!);
    } catch (e) {
      why = `the signature could not be checked: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (why) fail(`the Ed25519 signature by ${keyId} does not verify over the manifest: ${why} (spec/RECEIPT.md §5.1)`);
    return keyId;
  }
}

function isByteInput(input: unknown): input is ByteInput {
  if (input instanceof Uint8Array) return true;
  if (input === null || typeof input !== 'object') return false;
  return typeof (input as ReadableStream).getReader === 'function' || typeof (input as AsyncIterable<Uint8Array>)[Symbol.asyncIterator] === 'function';
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The plain-sentence account of what the receipt proves (spec/RECEIPT.md §8). */
function describe(r: ReceiptReport, options: { expectHead?: unknown }, pinned: Uint8Array | null): void {
  if (!r.ok || !r.manifest || !r.range) {
    r.proves = [];
    r.does_not_prove = ['Anything: the receipt failed verification, so none of its contents can be relied on.'];
    return;
  }
  const { from, to, prev_hash } = r.range;
  const j = r.journal_id;
  const steps = from === to ? `Step ${from}` : `Steps ${from}–${to}`;
  const proves: string[] = [];
  const not: string[] = [];
  if (from === 0) {
    proves.push(`${steps} of journal ${j} (created ${r.genesis!.created_at}) form an unbroken hash chain from its genesis to head ${r.head}.`);
  } else {
    proves.push(`${steps} form an unbroken hash chain that starts from prev_hash ${prev_hash} and ends at head ${r.head}.`);
  }
  proves.push('Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.');
  if (r.signed_by) proves.push(`The manifest, and through its digests everything else, was signed with the Ed25519 key ${r.signed_by}${pinned ? ' (the key you pinned)' : ''}.`);
  if (options.expectHead !== undefined) proves.push(`The receipt ends at the head you pinned (${options.expectHead}).`);
  if (from > 0) {
    not.push(`That steps 0–${from - 1} exist, are intact, or lead from the genesis to ${prev_hash}: they are not in this partial receipt, so that hash is the exporter's claim. A trusted step_hash for step ${from - 1} equal to it, or a complete receipt, connects the range to the journal.`);
    not.push(`That these steps belong to journal ${j}: the genesis is named in the manifest but nothing in the range links to it.`);
  }
  if (options.expectHead === undefined) not.push(`That the journal has no steps after seq ${to}: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.`);
  else not.push(`Anything about steps after seq ${to}, if the journal continued past the head you pinned.`);
  if (!r.signed_by) not.push('Who produced the receipt: it is unsigned, so anyone holding the journal, or inventing one, could have made it.');
  else if (!pinned) not.push(`That key ${r.signed_by} belongs to whom you think: no key was pinned; compare the key id with one you trust.`);
  not.push('That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.');
  r.proves = proves;
  r.does_not_prove = not;
}
