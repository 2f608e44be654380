/**
 * The chain verifier (spec/FORMAT.md §6): walks stored lines from a starting hash and reports every
 * problem with its code and location. Pure — bytes in, report out, no I/O, no Node-only imports — so it
 * runs in a browser, and it never throws on hostile input: every defect becomes a Problem.
 *
 * It is incremental (beginFile / line / finish) so a store or a receipt can feed it one line at a time:
 * memory is bounded by the longest line, not by the chain. State between lines is O(1): the previous
 * step's seq and stored step_hash.
 */
import { MAX_LINE_BYTES, MAX_RECORD_DEPTH, RESERVED_PREFIX } from '../canonical/limits.js';
import { scanCanonical, type MarkerSpan } from '../canonical/scan.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';
import { CONTENT_FIELDS, RECORD_FIELDS, genesisDefect, genesisHash, isValidId, isValidTimestamp, type Genesis } from './record.js';
import type { ChainReport, Problem, ProblemCode, ProblemLocation } from './report.js';

export const BLOB_MARKER = `${RESERVED_PREFIX}blob`;
export const REDACTED_MARKER = `${RESERVED_PREFIX}redacted`;

/** A blob reference found in a verified line (spec/FORMAT.md §7). */
export interface BlobRef {
  digest: string;
  size: number;
}

/** What the verifier learned about one line that parsed as a canonical record. */
export interface VerifiedLine {
  file: string | undefined;
  line: number;
  /** The line's text without its newline. */
  text: string;
  /** seq as stored, or null when it is missing or invalid. */
  seq: number | null;
  step_hash: string | null;
  /** Whether this line raised no problem of its own. */
  clean: boolean;
  blobs: Array<BlobRef & { field: string }>;
  markers: MarkerSpan[];
}

export interface ChainVerifierOptions {
  /** The journal's genesis object; its hash is where the chain starts. */
  genesis?: unknown;
  /** For a partial range: the seq and prev_hash of its first step. Overrides the genesis start. */
  start?: { seq: number; prev_hash: string };
  /** A head pinned out of band: the last step_hash must equal it. */
  expectHead?: string;
  /** Keep at most this many problems (default 1000); the report says when more were found. */
  maxProblems?: number;
  /** Called for every complete line that scanned as a canonical JSON object. */
  onLine?: (line: VerifiedLine) => void;
}

const BUCKET_NAME_RE = /^(\d{16})\.jsonl$/;
const REQUIRED_FIELDS = ['input', 'model', 'prev_hash', 'prompt', 'result', 'seq', 'step_hash', 'step_id', 'tool_call', 'ts', 'v'];
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

export class ChainVerifier {
  private readonly problems: Problem[] = [];
  private truncated = false;
  private readonly maxProblems: number;
  private readonly startHash: string | null;
  private readonly startSeq: number;
  private readonly fromGenesis: boolean;
  private file: string | undefined;
  private fileFirstSeq: number | null = null;
  private fileLines = 0;
  private steps = 0;
  /** seq of the last line whose seq was readable; startSeq - 1 before any. */
  private lastSeq: number;
  /** Complete lines since then whose seq could not be read: each may have been a step or an intruder. */
  private slack = 0;
  /** stored step_hash of the previous complete line; null when it is unknown. */
  private lastHash: string | null;
  private lastLineHash: string | null = null;
  private lastLineSeq: number | null = null;
  private lastLocation: ProblemLocation = {};

  constructor(private readonly options: ChainVerifierOptions = {}) {
    this.maxProblems = options.maxProblems ?? 1000;
    if (options.start) {
      this.fromGenesis = false;
      const { seq, prev_hash: prev } = options.start as { seq: unknown; prev_hash: unknown };
      this.startSeq = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : 0;
      this.startHash = isDigest(prev) ? prev : null;
      if (this.startSeq !== seq || this.startHash === null) {
        this.report('GENESIS_INVALID', 'a partial chain starts from a seq (an integer from 0 to 2^53 - 1) and a prev_hash (a digest)', {});
      }
    } else {
      this.fromGenesis = true;
      this.startSeq = 0;
      const defect = genesisDefect(options.genesis);
      if (defect) {
        this.report('GENESIS_INVALID', defect, {});
        this.startHash = null;
      } else {
        this.startHash = genesisHash(options.genesis as Genesis);
      }
    }
    this.lastSeq = this.startSeq - 1;
    this.lastHash = this.startHash;
  }

  private report(code: ProblemCode, message: string, location: ProblemLocation): void {
    if (this.problems.length >= this.maxProblems) {
      this.truncated = true;
      return;
    }
    this.problems.push({ code, message, location });
  }

  /** Starts a new file (bucket or chain entry). Lines are numbered from 1 in each file. */
  beginFile(name: string): void {
    this.file = name;
    const m = BUCKET_NAME_RE.exec(name.slice(name.lastIndexOf('/') + 1));
    this.fileFirstSeq = m ? Number(m[1]) : null;
    this.fileLines = 0;
  }

  /** Verifies every line of a whole file held in memory. */
  addFile(name: string, bytes: Uint8Array): void {
    this.beginFile(name);
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(0x0a, start);
      if (nl < 0) {
        if (start < bytes.length) this.line(bytes.subarray(start), false);
        return;
      }
      this.line(bytes.subarray(start, nl), true);
      start = nl + 1;
    }
  }

  /**
   * One line without its newline. `terminated` says whether a newline followed it; a final line without
   * one is a torn write.
   */
  line(bytes: Uint8Array | string, terminated: boolean): void {
    this.fileLines++;
    const loc: ProblemLocation = this.file === undefined ? { line: this.fileLines } : { file: this.file, line: this.fileLines };
    const byteLength = typeof bytes === 'string' ? utf8Length(bytes) : bytes.length;
    if (!terminated) {
      this.report('TRUNCATED_LINE', `the file ends inside a line (${byteLength} bytes without a newline): a torn write; the step was never committed`, loc);
      return;
    }
    this.steps++;
    this.lastLocation = loc;
    if (byteLength + 1 > MAX_LINE_BYTES) {
      this.report('LINE_TOO_LONG', `line of ${byteLength + 1} bytes exceeds the limit of ${MAX_LINE_BYTES}`, loc);
      this.unreadable();
      return;
    }
    let text: string;
    if (typeof bytes === 'string') text = bytes;
    else {
      try {
        text = decoder.decode(bytes);
      } catch {
        const column = firstInvalidUtf8(bytes) + 1;
        this.report('MALFORMED_LINE', `line is not valid UTF-8 (first bad byte at column ${column})`, { ...loc, column });
        this.unreadable();
        return;
      }
    }
    this.record(text, loc);
  }

  /**
   * A complete line the caller did not hold because it exceeds MAX_LINE_BYTES (a streaming reader stops
   * buffering at the limit): counted and reported as LINE_TOO_LONG, exactly as `line` would.
   */
  longLine(byteLength: number): void {
    this.fileLines++;
    const loc: ProblemLocation = { ...(this.file === undefined ? {} : { file: this.file }), line: this.fileLines };
    this.steps++;
    this.lastLocation = loc;
    this.report('LINE_TOO_LONG', `line of ${byteLength + 1} bytes exceeds the limit of ${MAX_LINE_BYTES}`, loc);
    this.unreadable();
  }

  private unreadable(): void {
    this.slack++;
    this.lastHash = null;
    this.lastLineHash = null;
    this.lastLineSeq = null;
  }

  private record(text: string, loc: ProblemLocation): void {
    if (text.length === 0) {
      this.report('MALFORMED_LINE', 'empty line', { ...loc, column: 1 }); // met at the end of the text (FORMAT §4.3)
      this.unreadable();
      return;
    }
    const scan = scanCanonical(text, { maxDepth: MAX_RECORD_DEPTH });
    if (scan.defect) {
      const d = scan.defect;
      const top = d.path.split('/')[1];
      const field = top === undefined ? undefined : unescapeToken(top);
      this.report(d.code, `${d.reason}`, {
        ...loc,
        column: utf8Length(text.slice(0, d.index)) + 1,
        ...(field !== undefined && RECORD_FIELDS.has(field) ? { field } : {}),
        ...(d.path ? { path: d.path } : {}),
      });
      this.unreadable();
      return;
    }
    const members = scan.members;
    if (members === null) {
      this.report('MALFORMED_LINE', 'a step line must be a JSON object', loc);
      this.unreadable();
      return;
    }
    const before = this.problems.length + (this.truncated ? 1 : 0);
    const raw = (name: string): string | undefined => {
      const span = members.get(name);
      return span ? text.slice(span[0], span[1]) : undefined;
    };
    const json = (name: string): unknown => {
      const span = members.get(name);
      return span ? canonicalValue(text, span[0], span[1]) : undefined;
    };

    const seqValue = json('seq');
    const seq = typeof seqValue === 'number' && Number.isSafeInteger(seqValue) && seqValue >= 0 ? seqValue : null;
    const at: ProblemLocation = seq === null ? loc : loc.file === undefined ? { line: loc.line, seq } : { file: loc.file, line: loc.line, seq };
    // One line's problems come in a fixed order (FORMAT §6.3 step 4): unknown members in line order, then
    // each required or optional member in UTF-16 order (missing, or breaking its rule), then markers.
    for (const name of members.keys()) {
      if (!RECORD_FIELDS.has(name)) this.report('UNKNOWN_FIELD', `unknown member ${JSON.stringify(name)} in a step record`, { ...at, field: name });
    }
    const missing = (name: string): boolean => {
      if (members.has(name)) return false;
      if (REQUIRED_FIELDS.includes(name)) this.report('MISSING_FIELD', `required member "${name}" is missing`, { ...at, field: name });
      return true;
    };
    const invalid = (name: string, message: string): void => this.report('FIELD_INVALID', message, { ...at, field: name });
    missing('input');
    missing('model');
    const meta = raw('meta');
    if (!missing('meta') && meta![0] !== '{') invalid('meta', 'meta must be a JSON object');
    const prevValue = json('prev_hash');
    // Usually the previous line's step_hash, already proven a digest: skip the pattern test then.
    const prevHash = (prevValue === this.lastHash && prevValue !== null) || isDigest(prevValue) ? (prevValue as string) : null;
    if (!missing('prev_hash') && prevHash === null) invalid('prev_hash', 'prev_hash must be "sha256:" followed by 64 lowercase hex digits');
    missing('prompt');
    missing('result');
    if (!missing('seq') && seq === null) invalid('seq', 'seq must be an integer from 0 to 2^53 - 1');
    const hashValue = json('step_hash');
    const stepHash = isDigest(hashValue) ? hashValue : null;
    if (!missing('step_hash') && stepHash === null) invalid('step_hash', 'step_hash must be "sha256:" followed by 64 lowercase hex digits');
    if (!missing('step_id') && !isValidId(json('step_id'))) invalid('step_id', 'step_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit');
    missing('tool_call');
    if (!missing('ts') && !this.validTs(json('ts'))) invalid('ts', 'ts must be an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z');
    const v = json('v');
    if (!missing('v') && v !== 1) {
      if (typeof v === 'number') this.report('UNSUPPORTED_VERSION', `record version ${v} is not supported; this verifier reads version 1`, { ...at, field: 'v' });
      else invalid('v', 'v must be the number 1');
    }

    const blobs = this.checkMarkers(text, scan.markers, at);

    // The hash covers the record without its step_hash member (FORMAT §5.2).
    if (stepHash !== null) {
      const span = members.get('step_hash')!;
      const keyStart = span[0] - '"step_hash":'.length;
      const computed =
        text.charCodeAt(keyStart - 1) === 0x2c
          ? digestUtf8(text.slice(0, keyStart - 1), text.slice(span[1]))
          : digestUtf8(text.slice(0, keyStart), text.slice(span[1] + (text.charCodeAt(span[1]) === 0x2c ? 1 : 0)));
      if (computed !== stepHash) {
        this.report('HASH_MISMATCH', `stored step_hash ${stepHash} does not match the record's content (${computed}): a covered field was altered after hashing, or step_hash itself was edited`, { ...at, field: 'step_hash' });
      }
    }

    // Sequence and link (FORMAT §6.3).
    const expectedSeq = this.lastSeq + 1;
    const latestSeq = expectedSeq + this.slack;
    if (seq !== null && seq < expectedSeq && stepHash !== null && stepHash === this.lastLineHash && seq === this.lastLineSeq) {
      this.report('DUPLICATE_STEP', `step ${seq} appears again (the same step_hash as the previous line)`, { ...at, field: 'seq' });
      return; // a repeated line is skipped: the next line links to the original
    }
    if (seq !== null && (seq < expectedSeq || seq > latestSeq)) {
      if (seq > latestSeq) {
        const expected = latestSeq === expectedSeq ? `${expectedSeq}` : `${expectedSeq}–${latestSeq}`;
        this.report('SEQ_GAP', latestSeq === seq - 1 ? `expected seq ${expected}, found ${seq}: step ${seq - 1} is missing` : `expected seq ${expected}, found ${seq}: steps ${latestSeq}–${seq - 1} are missing`, { ...at, field: 'seq' });
      } else {
        this.report('SEQ_OUT_OF_ORDER', `expected seq ${expectedSeq}, found ${seq}: steps are out of order or repeated`, { ...at, field: 'seq' });
      }
    }
    if (this.fileFirstSeq !== null && this.fileLines === 1 && seq !== null && seq !== this.fileFirstSeq) {
      this.report('BUCKET_MISNAMED', `bucket is named for seq ${this.fileFirstSeq} but its first step is seq ${seq}`, { ...at, field: 'seq' });
    }
    if (prevHash !== null && this.lastHash !== null && prevHash !== this.lastHash) {
      const first = this.steps === 1;
      if (first && this.fromGenesis) {
        this.report('GENESIS_MISMATCH', `the first step's prev_hash ${prevHash} is not the genesis hash ${this.lastHash}: the chain belongs to another journal or its genesis was altered`, { ...at, field: 'prev_hash' });
      } else if (first) {
        this.report('LINK_BROKEN', `the first step's prev_hash ${prevHash} is not the range's starting hash ${this.lastHash}`, { ...at, field: 'prev_hash' });
      } else {
        this.report('LINK_BROKEN', `prev_hash ${prevHash} is not the previous step's step_hash ${this.lastHash}: a step before this one was removed, inserted, reordered or altered`, { ...at, field: 'prev_hash' });
      }
    }

    if (seq === null) this.slack++;
    else {
      this.lastSeq = seq;
      this.slack = 0;
    }
    this.lastHash = stepHash;
    this.lastLineHash = stepHash;
    this.lastLineSeq = seq;
    const clean = this.problems.length + (this.truncated ? 1 : 0) === before;
    this.options.onLine?.({ file: this.file, line: this.fileLines, text, seq, step_hash: stepHash, clean, blobs, markers: scan.markers });
  }

  /** A group commit gives its steps one ts, so remembering the last valid one skips most date parsing. */
  private lastValidTs: string | null = null;

  private validTs(value: unknown): boolean {
    if (value === this.lastValidTs) return true;
    if (!isValidTimestamp(value)) return false;
    this.lastValidTs = value;
    return true;
  }

  /** Marker objects (FORMAT §3.5): exactly one member with a defined name and a value of the right shape. */
  private checkMarkers(text: string, markers: MarkerSpan[], at: ProblemLocation): Array<BlobRef & { field: string }> {
    const blobs: Array<BlobRef & { field: string }> = [];
    for (const m of markers) {
      const loc = { ...at, field: unescapeToken(m.path.split('/')[1] ?? ''), path: m.path };
      if (m.names.length !== 1) {
        this.report('MARKER_INVALID', `a marker object must have exactly one member (found ${m.names.length})`, loc);
        continue;
      }
      const name = m.names[0]!;
      const body = (JSON.parse(text.slice(m.start, m.end)) as Record<string, unknown>)[name];
      if (name === BLOB_MARKER) {
        const field = m.path.slice(1);
        if (!(CONTENT_FIELDS as readonly string[]).includes(field)) {
          this.report('MARKER_INVALID', 'a blob reference may only stand as a whole content field', loc);
          continue;
        }
        if (!isBlobBody(body)) {
          this.report('MARKER_INVALID', 'a blob reference is {"$stepchain:blob":{"digest":"sha256:<hex>","size":<bytes>}}', loc);
          continue;
        }
        blobs.push({ field, digest: body.digest, size: body.size });
      } else if (name === REDACTED_MARKER) {
        // Checked wherever it stands (FORMAT §3.5): outside the content fields and meta — in ts, seq, an
        // unknown member — it is invalid even when its shape is right, besides that member's own problem.
        if (!(CONTENT_FIELDS as readonly string[]).includes(loc.field) && loc.field !== 'meta') {
          this.report('MARKER_INVALID', `a redaction marker may stand only inside a content field or meta, not in ${JSON.stringify(loc.field)}`, loc);
        } else if (!isRedactedBody(body)) {
          this.report('MARKER_INVALID', 'a redaction marker is {"$stepchain:redacted":{"commitment":"sha256:<hex>","rule":"<id>"}} with an optional "text"', loc);
        }
      } else {
        this.report('MARKER_INVALID', `unknown marker ${JSON.stringify(name)}`, loc);
      }
    }
    return blobs;
  }

  /** Ends the walk and returns the report. */
  finish(): ChainReport {
    const head = this.lastLineHash;
    if (this.options.expectHead !== undefined && head !== this.options.expectHead) {
      this.report('HEAD_MISMATCH', head === null
        ? `expected head ${this.options.expectHead}, but the chain has no readable last step`
        : `expected head ${this.options.expectHead}, found ${head}: the chain was truncated, extended or replaced`,
      { ...this.lastLocation, ...(this.lastLineSeq === null || head === null ? {} : { seq: this.lastLineSeq }), field: 'step_hash' });
    }
    return {
      ok: this.problems.length === 0 && !this.truncated,
      start_hash: this.startHash,
      start_seq: this.startSeq,
      head,
      head_seq: head === null ? null : this.lastLineSeq,
      steps: this.steps,
      problems: this.problems,
      warnings: [],
      problems_truncated: this.truncated,
    };
  }
}

/**
 * The value of a member whose text the scanner proved canonical, without a general parse in the common
 * cases: a string with no escape is its text between the quotes, a number is Number() of its text (the
 * same double JSON.parse gives); anything else goes through JSON.parse.
 */
function canonicalValue(text: string, start: number, end: number): unknown {
  const c = text.charCodeAt(start);
  if (c === 0x22) {
    const inner = text.slice(start + 1, end - 1);
    return inner.includes('\\') ? JSON.parse(text.slice(start, end)) : inner;
  }
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return Number(text.slice(start, end));
  return JSON.parse(text.slice(start, end));
}

function isBlobBody(body: unknown): body is BlobRef {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  return Object.keys(b).length === 2 && isDigest(b.digest) && typeof b.size === 'number' && Number.isSafeInteger(b.size) && b.size >= 0;
}

function isRedactedBody(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (k !== 'commitment' && k !== 'rule' && k !== 'text') return false;
  return isDigest(b.commitment) && isValidId(b.rule) && (b.text === undefined || typeof b.text === 'string');
}

function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function utf8Length(s: string): number {
  return encoder.encode(s).length;
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  // Binary search for the longest valid prefix; only runs on the failure path.
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, mid), { stream: true });
      lo = mid;
    } catch {
      hi = mid - 1;
    }
  }
  return lo;
}

export interface VerifyChainInput extends ChainVerifierOptions {
  files: Iterable<{ name: string; bytes: Uint8Array }>;
}

/** Verifies whole files held in memory. For streaming, drive a ChainVerifier directly. */
export function verifyChain(input: VerifyChainInput): ChainReport {
  const verifier = new ChainVerifier(input);
  for (const f of input.files) verifier.addFile(f.name, f.bytes);
  return verifier.finish();
}
