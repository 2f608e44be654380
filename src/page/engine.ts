/**
 * The verification page's engine: one receipt verified exactly as `stepchain verify` does it
 * (the one receipt verifier, src/verifier/index.ts, so plain, published, proven and attested receipts get
 * the same report as on the command line; spec/RECEIPT.md §7, spec/REDACTION.md §7), a
 * disclosure proof checked as `stepchain disclose --check` does, and the step list.
 *
 * Memory: the receipt is streamed from the file (Blob.stream), never copied whole, so the verifier's own
 * bounds hold (spec/RECEIPT.md §6). The step list keeps a small entry per line, plus the text of lines and
 * blobs up to KEEP_CHARS in all; a step whose text was not kept is read again from the file when it is
 * opened, by verifying the file again and checking that the second pass gives the same report.
 *
 * Runs in a Web Worker, or on the page's thread when no worker can start (then `pace` yields between
 * slices so the page keeps responding). Pure: no DOM, no Node.
 */
import { parseTsaCertificate, type TsaCertificate } from '../attest/index.js';
import { lineHashEngine } from '../chain/batch.js';
import { type VerifiedLine } from '../chain/index.js';
import { parseCheckpoint, parseNote, parseVerifierKey } from '../proofs/index.js';
import { type ReceiptReport } from '../receipt/verify.js';
import { verifyDisclosure } from '../redact/disclose.js';
import { HASH_DISCLOSURE_FORMAT, verifyHashDisclosure } from '../redact/disclose-hash.js';
import { STEP_DISCLOSURE_FORMAT, verifyStepDisclosure } from '../redact/disclose-step.js';
import { verifyReceipt, type ReceiptVerifyOptions } from '../verifier/index.js';
import { inThreadHasher, portHasher, type HashPort } from './entry-hasher.js';
import type { EntryHasher } from '../receipt/verify.js';
import { summarize, type BlobLookup, type StepRow } from './summary.js';

/** Characters of line and blob text held for the step list (about as many bytes: receipt text is mostly ASCII). */
export const KEEP_CHARS = 48 * 1024 * 1024;
/** Pieces the file is fed to the verifier in: progress and main-thread slices follow them. */
const PIECE = 64 * 1024;

/** A receipt file: a File or Blob (only its size and stream are used). */
export interface ReceiptFile {
  readonly size: number;
  stream(): ReadableStream<Uint8Array>;
}

export interface VerifyRequest {
  receipt: ReceiptFile;
  /** The receipt's file name, for messages. */
  name: string;
  /** A decoded pinned key (pins.ts). */
  publicKey?: Uint8Array;
  expectHead?: string;
  /** A disclosure proof file, checked against the receipt as `stepchain disclose --check` does. */
  proof?: { name: string; bytes: Uint8Array };
  /** The log's verifier key (vkey text, checked in pins.ts), as `stepchain verify --log-key`. */
  logKey?: string;
  /** An earlier checkpoint (signed note text, checked in pins.ts) the receipt must extend, as `--checkpoint`. */
  checkpoint?: string;
  /** Witness verifier keys and the quorum (checked in pins.ts), as `--witness` and `--quorum`. */
  witnesses?: string[];
  quorum?: number;
  /** A consistency proof file's bytes, as `--proof` with a partial receipt and `--checkpoint`. */
  consistency?: Uint8Array;
  /** TSA certificates' bytes (checked in pins.ts), as `--tsa-cert` (spec/TIME.md). */
  tsaCerts?: Uint8Array[];
  /** Co-signers' decoded keys with their file names, and the threshold (checked in pins.ts), as `--cosigner` and `--threshold`. */
  cosigners?: { name: string; key: Uint8Array }[];
  threshold?: number;
  approvers?: { name: string; key: Uint8Array }[]; // decoded, named by file (pins.ts): `--approver`
}

export interface Progress {
  phase: 'receipt' | 'disclosure' | 'reread';
  bytes: number;
  total: number;
  steps: number;
}

/** The disclosure check's result, shaped as `stepchain disclose --check --json` prints it (less the path). */
export interface DisclosureOutcome {
  ok: boolean;
  kind: 'value' | 'step' | 'hash';
  problems: { code: string; message: string }[];
  seq: number | null;
  path?: string | null;
  rule?: string | null;
  value?: unknown;
  record?: unknown;
  step_hash?: string | null;
  head?: boolean;
  manifest_digest: string | null;
  proves: string[];
  receipt_ok: boolean | null;
  receipt_problems: unknown[];
}

export interface Outcome {
  /** The report `stepchain verify --json` prints for this receipt. */
  report: ReceiptReport;
  /** The manifest has the members of a published (redacted) receipt. */
  published: boolean;
  /** Lines listed in the step list. */
  listed: number;
  /** Of those, lines whose text is held in memory. */
  kept: number;
  /** Listed lines that raised a problem of their own. */
  flagged: number;
  ms: number;
  disclosure: DisclosureOutcome | null;
  /**
   * The SHA-256 engine the line hashes went through: 'wasm-simd-4' where the page's CSP lets the worker compile
   * the batched kernel, else the portable one (spec/RECEIPT.md's verdict is the same with either).
   */
  lineHash: string;
  /** Where the chain entries' digests were computed: a second Web Worker (entry-hasher.ts), or this thread. */
  entryHash: 'second worker' | 'this thread';
}

export interface BlobView {
  digest: string;
  field: string;
  size: number;
  /** The blob's canonical JSON text, or null when it was not kept (or not in the receipt). */
  text: string | null;
}

export interface StepDetail {
  row: StepRow;
  /** The stored line exactly as hashed. */
  text: string;
  blobs: BlobView[];
  /** The text was read again from the file (it was beyond KEEP_CHARS). */
  reread: boolean;
}

interface Entry {
  seq: number | null;
  file: string | null;
  line: number;
  clean: boolean;
  blobs: { digest: string; size: number; field: string }[];
  text: string | null;
}

export type Pace = () => Promise<void>;

const NO_BLOBS: Entry['blobs'] = [];

export class Session {
  private entries: Entry[] = [];
  private flagged: number[] = [];
  private blobTexts = new Map<string, string>();
  private room: number;
  private request: VerifyRequest | null = null;
  private fingerprint: string | null = null;
  private entryHasher: () => EntryHasher = inThreadHasher;
  private entryHash: Outcome['entryHash'] = 'this thread';

  constructor(
    private readonly keepChars = KEEP_CHARS,
    private readonly pace?: Pace,
  ) {
    this.room = keepChars;
  }

  /** From now on, chain entries are digested by the hashing worker at this port's other end (entry-hasher.ts). */
  hashOn(port: HashPort): void {
    this.entryHasher = portHasher(port);
    this.entryHash = 'second worker';
  }

  /** Verifies a receipt (and a disclosure proof, if one is given); replaces any earlier session state. */
  async verify(request: VerifyRequest, onProgress: (p: Progress) => void = () => {}): Promise<Outcome> {
    const started = Date.now();
    this.entries = [];
    this.flagged = [];
    this.blobTexts = new Map();
    this.room = this.keepChars;
    this.request = request;
    this.fingerprint = null;
    const report = await this.pass(
      request,
      'receipt',
      onProgress,
      (line) => this.list(line),
      (digest, text) => this.keepBlob(digest, text),
    );
    this.fingerprint = fingerprint(report);
    let disclosure: DisclosureOutcome | null = null;
    if (request.proof) disclosure = await this.disclose(request, onProgress);
    const m = report.manifest;
    return {
      report,
      published: m !== null && ('anchor' in m || 'redactions' in m || 'publication' in m),
      listed: this.entries.length,
      kept: this.entries.reduce((n, e) => n + (e.text === null ? 0 : 1), 0),
      flagged: this.flagged.length,
      ms: Date.now() - started,
      disclosure,
      lineHash: lineHashEngine(),
      entryHash: this.entryHash,
    };
  }

  /** Rows of the step list: `count` from position `from`, of every line or only of those with problems. */
  rows(from: number, count: number, only: 'all' | 'flagged' = 'all'): StepRow[] {
    const rows: StepRow[] = [];
    const total = only === 'all' ? this.entries.length : this.flagged.length;
    for (let i = Math.max(0, from); i < Math.min(total, from + count); i++) {
      const index = only === 'all' ? i : this.flagged[i]!;
      rows.push(this.row(index));
    }
    return rows;
  }

  /** One step, whole: from memory, or read again from the file when its text was not kept. */
  async step(index: number, onProgress: (p: Progress) => void = () => {}): Promise<StepDetail> {
    const e = this.entries[index];
    if (!e) throw new RangeError(`no step at position ${index} of the list`);
    let text = e.text;
    let reread = false;
    const blobTexts = new Map<string, string>();
    if (text === null) {
      text = await this.reread(
        index,
        e.blobs.map((b) => b.digest),
        blobTexts,
        onProgress,
      );
      reread = true;
    }
    const lookup: BlobLookup = (d) => this.blobTexts.get(d) ?? blobTexts.get(d) ?? null;
    return {
      row: summarize(
        { index, seq: e.seq, file: e.file, line: e.line, clean: e.clean, step_hash: null, blobs: e.blobs.length },
        text,
        lookup,
      ),
      text,
      blobs: e.blobs.map((b) => ({ ...b, text: lookup(b.digest) })),
      reread,
    };
  }

  /** The list position of a line: by its file and line number when given, else the first with this seq; -1 when none. */
  find(where: { seq?: number; file?: string; line?: number }): number {
    if (where.file !== undefined && where.line !== undefined)
      return this.entries.findIndex((e) => e.file === where.file && e.line === where.line);
    if (where.seq !== undefined) return this.entries.findIndex((e) => e.seq === where.seq);
    return -1;
  }

  private row(index: number): StepRow {
    const e = this.entries[index]!;
    const lookup: BlobLookup = (d) => this.blobTexts.get(d) ?? null;
    return summarize(
      { index, seq: e.seq, file: e.file, line: e.line, clean: e.clean, step_hash: null, blobs: e.blobs.length },
      e.text,
      lookup,
    );
  }

  private list(line: VerifiedLine): void {
    const index = this.entries.length;
    let text: string | null = null;
    if (line.text.length <= this.room) {
      text = line.text;
      this.room -= text.length;
    }
    // Only what is kept refers to the line's text: a retained substring (a step_hash) would keep the whole line alive.
    this.entries.push({
      seq: line.seq,
      file: line.file ?? null,
      line: line.line,
      clean: line.clean,
      blobs:
        line.blobs.length === 0
          ? NO_BLOBS
          : line.blobs.map((b) => ({ digest: b.digest, size: b.size, field: b.field })),
      text,
    });
    if (!line.clean) this.flagged.push(index);
  }

  private keepBlob(digest: string, text: string): void {
    if (text.length > this.room || this.blobTexts.has(digest)) return;
    this.blobTexts.set(digest, text);
    this.room -= text.length;
  }

  /** One verification pass over the file: the one receipt verifier, as `stepchain verify` calls it, with the page's observers. */
  private async pass(
    request: VerifyRequest,
    phase: Progress['phase'],
    onProgress: (p: Progress) => void,
    onLine: (line: VerifiedLine) => void,
    onBlob: (digest: string, text: string) => void,
  ): Promise<ReceiptReport> {
    let steps = 0;
    const input = this.feed(request.receipt, (bytes) =>
      onProgress({ phase, bytes, total: request.receipt.size, steps }),
    );
    return verifyReceipt(input, {
      ...verifyOptions(request),
      entryHasher: this.entryHasher,
      onLine: (line) => {
        steps++;
        onLine(line);
      },
      onBlob,
    });
  }

  /** The file's bytes in pieces, counting them, and yielding to the page between slices when asked to. */
  private async *feed(file: ReceiptFile, tick: (bytes: number) => void): AsyncGenerator<Uint8Array> {
    const reader = file.stream().getReader();
    let bytes = 0;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (let at = 0; at < value.length; at += PIECE) {
          const piece = value.subarray(at, Math.min(value.length, at + PIECE));
          bytes += piece.length;
          tick(bytes);
          if (this.pace) await this.pace();
          yield piece;
        }
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  /** `stepchain disclose --check`: the proof's format picks the check (src/redact/node.ts, verifyDisclosureFiles). */
  private async disclose(request: VerifyRequest, onProgress: (p: Progress) => void): Promise<DisclosureOutcome> {
    const proofFile = request.proof!;
    let proof: unknown;
    try {
      proof = JSON.parse(new TextDecoder().decode(proofFile.bytes));
    } catch (e) {
      return {
        ok: false,
        kind: 'value',
        problems: [
          {
            code: 'PROOF_INVALID',
            message: `cannot read ${proofFile.name} as JSON: ${e instanceof Error ? e.message : String(e)}`,
          },
        ],
        seq: null,
        path: null,
        rule: null,
        value: null,
        manifest_digest: null,
        proves: [],
        receipt_ok: null,
        receipt_problems: [],
      };
    }
    const options = request.publicKey !== undefined ? { publicKey: request.publicKey } : {};
    const input = this.feed(request.receipt, (bytes) =>
      onProgress({ phase: 'disclosure', bytes, total: request.receipt.size, steps: 0 }),
    );
    const format = proof !== null && typeof proof === 'object' ? (proof as { format?: unknown }).format : undefined;
    const stepPrefix = STEP_DISCLOSURE_FORMAT.slice(0, STEP_DISCLOSURE_FORMAT.indexOf('/') + 1);
    const kind: DisclosureOutcome['kind'] =
      format === HASH_DISCLOSURE_FORMAT
        ? 'hash'
        : typeof format === 'string' && format.startsWith(stepPrefix)
          ? 'step'
          : 'value';
    const report =
      kind === 'hash'
        ? await verifyHashDisclosure(input, proof, options)
        : kind === 'step'
          ? await verifyStepDisclosure(input, proof, options)
          : await verifyDisclosure(input, proof, options);
    const { receipt, ...rest } = report;
    return { ...rest, kind, receipt_ok: receipt?.ok ?? null, receipt_problems: receipt?.problems ?? [] };
  }

  /** Reads one line (and the blobs it names) again from the file; the pass must give the first pass's report. */
  private async reread(
    index: number,
    digests: string[],
    blobs: Map<string, string>,
    onProgress: (p: Progress) => void,
  ): Promise<string> {
    const request = this.request!;
    let at = 0;
    let text: string | null = null;
    const wanted = new Set(digests);
    const report = await this.pass(
      request,
      'reread',
      onProgress,
      (line) => {
        if (at++ === index) text = line.text;
      },
      (digest, t) => {
        if (wanted.has(digest)) blobs.set(digest, t);
      },
    );
    if (fingerprint(report) !== this.fingerprint || text === null) {
      throw new Error(
        'the receipt file changed since it was verified (a second reading gives another report); verify it again',
      );
    }
    return text;
  }
}

/** The CLI's proofs options from the request's pins (already checked in pins.ts, so they parse). */
/** The CLI's pins from the request (already checked in pins.ts): --pubkey, --head, --log-key with its witnesses, --checkpoint, --proof, --tsa-cert, --cosigner, --threshold. */
function verifyOptions(request: VerifyRequest): ReceiptVerifyOptions {
  const out: ReceiptVerifyOptions = {};
  if (request.expectHead !== undefined) out.expectHead = request.expectHead;
  if (request.publicKey !== undefined) out.publicKey = request.publicKey;
  if (request.approvers?.length) out.approvers = request.approvers;
  if (request.logKey) {
    const witnesses = (request.witnesses ?? []).map((w) => parseVerifierKey(w));
    out.log = { log: parseVerifierKey(request.logKey), witnesses, quorum: request.quorum ?? witnesses.length };
  }
  if (request.consistency) out.consistencyProof = request.consistency;
  if (request.checkpoint) {
    const note = parseNote(request.checkpoint);
    const cp = note.ok ? parseCheckpoint(note.note.text) : null;
    if (cp?.ok) out.checkpoint = cp.checkpoint;
  }
  const tsa = (request.tsaCerts ?? [])
    .map((b) => parseTsaCertificate(b))
    .filter((r): r is { ok: true; tsa: TsaCertificate } => r.ok)
    .map((r) => r.tsa);
  if (tsa.length) out.tsaCerts = tsa;
  if (request.cosigners?.length) out.cosigners = request.cosigners;
  if (request.threshold !== undefined) out.threshold = request.threshold;
  return out;
}

/** What must be equal between two passes over the same file. */
function fingerprint(r: ReceiptReport): string {
  return JSON.stringify([r.ok, r.manifest_digest, r.head, r.steps, r.problems]);
}
