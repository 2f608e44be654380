/**
 * The chain verifier (spec/FORMAT.md §6): walks stored lines from a starting hash and reports every
 * problem with its code and location. Pure — bytes in, report out, no I/O, no Node-only imports — so it
 * runs in a browser, and it never throws on hostile input: every defect becomes a Problem.
 *
 * It is incremental (beginSegment / line / finish) so a store or a receipt can feed it one line at a time:
 * memory is bounded by the longest line, not by the chain. Each line goes through the per-line check
 * (line.ts), which needs nothing but the line, then through the sequential link check (links.ts).
 * Segments are opaque labels (a bucket file, a receipt entry, a database range): the caller says which
 * first seq a segment's name declares, if any.
 */
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import type { MarkerSpan } from '../canonical/scan.js';
import { isDigest } from '../canonical/sha256.js';
import { formatOf, genesisDefect, genesisHash, type Genesis } from '../record/formats.js';
import type { BlobRef } from '../record/markers.js';
import type { JournalFormat } from '../record/profile.js';
import { deepCheckLine } from '../record/v3/deep.js';
import { ErasureLedger } from '../record/v3/erasure-ledger.js';
import { ApprovalLedger, type PinnedApprover } from '../approval/ledger.js';
import { storedCall, storedKey } from '../approval/calls.js';
import { checkLine, decodeLine, lineTooLong, type LineFacts, type LineProblem } from './line.js';
import { isOutcomeLine, tsOfCallFreeLine } from './line-reading.js';
import { LinkChecker } from './links.js';
import { ProblemList } from './problems.js';
import type { ChainProblemCode, ChainReport, ProblemLocation } from './report.js';
import { ownString } from '../bytes.js';

/** What the verifier learned about one line that parsed as a canonical record: what observers see. */
export interface VerifiedLine {
  /** The label of the segment the line is in (a bucket file, a receipt's chain entry), as problem locations name it. */
  file: string | undefined;
  /** 1-based line number within the segment. */
  line: number;
  /** The line's text without its newline. */
  text: string;
  /** seq as stored, or null when it is missing or invalid. */
  seq: number | null;
  step_hash: string | null;
  /** Whether this line raised no problem of its own. */
  clean: boolean;
  blobs: (BlobRef & { field: string })[];
  markers: MarkerSpan[];
  /**
   * A run record's top-level kind is "step", and its step_id (as record/line-members.ts kindIsStep and
   * stepIdOf read them from `text`), where the line was checked in a batch; absent otherwise.
   */
  kindIsStep?: boolean;
  stepId?: string | null;
}

export interface ChainVerifierOptions {
  /** The journal's genesis object; its hash is where the chain starts, and its format picks the record profiles. */
  genesis?: unknown;
  /** For a partial range: the seq and prev_hash of its first step. Overrides the genesis start. */
  start?: { seq: number; prev_hash: string };
  /** A partial range's journal format, when the genesis is not given (default: the genesis's, else stepchain/v1). */
  format?: JournalFormat;
  /** A head pinned out of band: the last step_hash must equal it. */
  expectHead?: string;
  /** Keep at most this many problems (default 1000); the report says when more were found. */
  maxProblems?: number;
  /** Called for every complete line that scanned as a canonical JSON object. */
  onLine?: (line: VerifiedLine) => void;
  /**
   * The deep tier of stepchain/v3 (FORMAT §14.7): recompute every private record's root from its values
   * (ROOT_MISMATCH). No effect on other formats. Default false: the fast tier (B and the step hash) only.
   */
  deep?: boolean;
  /**
   * The lines are a journal's stored records (a store, a full receipt's chain): a v3 record in a
   * publication's public form is refused (WITHHELD_IN_JOURNAL), since its `bind` is taken as given and only
   * a publication's verifier, which checks every public record deep, may accept one.
   */
  storedOnly?: boolean;
  /**
   * stepchain/v3: the approvers whose keys are pinned (spec/APPROVALS.md §5): a decision signed by another key
   * is APPROVER_UNKNOWN. Without pins, decisions are checked and listed, their approvers unauthenticated.
   */
  approvers?: readonly PinnedApprover[];
  /** A fork's last step copied from its parent (its lineage's from_step): see ApprovalLedgerOptions.forkedAt. */
  forkedAt?: number;
  /** Steps may follow the chain read (a receipt's range): see ApprovalLedgerOptions.openEnd. */
  openEnd?: boolean;
}

const encoder = new TextEncoder();

export class ChainVerifier {
  private readonly problems: ProblemList<ChainProblemCode>;
  /** The journal format whose profiles check each line. */
  readonly format: JournalFormat;
  private readonly startHash: string | null;
  private readonly startSeq: number;
  private readonly links: LinkChecker;
  private segment: string | undefined;
  private declaredFirstSeq: number | null = null;
  private segmentLines = 0;
  private steps = 0;
  private lastLocation: ProblemLocation = {};
  /** Notices by code and kind: the first location and how many records (FORMAT §14.8). */
  private readonly notices = new Map<
    string,
    { code: ChainProblemCode; message: string; location: ProblemLocation; count: number }
  >();
  /** Sealed records and erasure records (v3), cross-checked at the end (ERASURE.md §5); null until one is met. */
  private erasures: ErasureLedger | null = null;
  /** Approval requests, decisions and the effects begun for them (APPROVALS.md §5); null until a request is met. */
  private approvals: ApprovalLedger | null = null;

  constructor(private readonly options: ChainVerifierOptions = {}) {
    this.problems = new ProblemList(options.maxProblems ?? 1000);
    this.format = options.format ?? formatOf(options.genesis);
    if (options.start) {
      const { seq, prev_hash: prev } = options.start as { seq: unknown; prev_hash: unknown };
      this.startSeq = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : 0;
      this.startHash = isDigest(prev) ? prev : null;
      if (this.startSeq !== seq || this.startHash === null) {
        this.problems.add(
          'GENESIS_INVALID',
          'a partial chain starts from a seq (an integer from 0 to 2^53 - 1) and a prev_hash (a digest)',
        );
      }
    } else {
      this.startSeq = 0;
      const defect = genesisDefect(options.genesis);
      if (defect) this.problems.add('GENESIS_INVALID', defect);
      this.startHash = defect ? null : genesisHash(options.genesis as Genesis);
    }
    this.links = new LinkChecker({ seq: this.startSeq, hash: this.startHash, fromGenesis: !options.start });
  }

  /**
   * Starts a new segment. Lines are numbered from 1 in each. `declaredFirstSeq` is the seq the segment's
   * name declares (a bucket `<16 digits>.jsonl`, FORMAT §6.3 step 8), or null when its name declares none.
   */
  beginSegment(label: string, declaredFirstSeq: number | null = null): void {
    this.segment = label;
    this.declaredFirstSeq = declaredFirstSeq;
    this.segmentLines = 0;
  }

  private location(): ProblemLocation {
    return this.segment === undefined ? { line: this.segmentLines } : { file: this.segment, line: this.segmentLines };
  }

  /**
   * One line without its newline. `terminated` says whether a newline followed it; a final line without
   * one is a torn write.
   */
  line(bytes: Uint8Array | string, terminated: boolean): void {
    this.segmentLines++;
    const loc = this.location();
    if (!terminated) {
      const byteLength = typeof bytes === 'string' ? encoder.encode(bytes).length : bytes.length;
      this.problems.add(
        'TRUNCATED_LINE',
        `the file ends inside a line (${byteLength} bytes without a newline): a torn write; the step was never committed`,
        loc,
      );
      return;
    }
    this.steps++;
    this.lastLocation = loc;
    // A string of n UTF-16 units is at most 3n UTF-8 bytes: only a long one is measured.
    const text =
      typeof bytes !== 'string'
        ? decodeLine(bytes)
        : bytes.length * 3 + 1 > MAX_LINE_BYTES
          ? (lineTooLong(encoder.encode(bytes).length) ?? bytes)
          : bytes;
    if (typeof text === 'string') this.record(text, checkLine(text, this.format), loc);
    else this.record('', text, loc);
  }

  /**
   * A complete line whose per-line check (`checkLineBytes`) ran elsewhere — a worker thread — handed in
   * chain order: counted, located and linked exactly as `line` would. `text` is asked for only when an
   * observer reads it.
   */
  checkedLine(facts: LineFacts, text: () => string): void {
    this.segmentLines++;
    const loc = this.location();
    this.steps++;
    this.lastLocation = loc;
    this.record(text, facts, loc);
  }

  /**
   * A complete line the caller did not hold because it exceeds MAX_LINE_BYTES (a streaming reader stops
   * buffering at the limit): counted and reported as LINE_TOO_LONG, exactly as `line` would.
   */
  longLine(byteLength: number): void {
    this.segmentLines++;
    const loc = this.location();
    this.steps++;
    this.lastLocation = loc;
    this.problems.add('LINE_TOO_LONG', `line of ${byteLength + 1} bytes exceeds the limit of ${MAX_LINE_BYTES}`, loc);
    this.links.unreadable();
  }

  /** A line's facts from the per-line check, then the link check in chain order. */
  private record(text: string | (() => string), facts: LineFacts, loc: ProblemLocation): void {
    this.addAll(facts.problems, loc);
    if (facts.notices !== undefined) {
      for (const n of facts.notices) {
        const key = n.code + n.message.slice(0, n.message.indexOf(':'));
        const seen = this.notices.get(key);
        if (seen) seen.count++;
        else this.notices.set(key, { code: n.code, message: n.message, location: { ...loc, ...n.location }, count: 1 });
      }
    }
    if (!facts.readable) {
      this.links.unreadable();
      return;
    }
    if (facts.publicForm === true && this.options.storedOnly === true) {
      this.problems.add(
        'WITHHELD_IN_JOURNAL',
        "a record in a publication's public form (bind and secrets, no seed) stands among stored records: its bind cannot be checked here, so its values are not bound; a journal holds every record in its private form",
        { ...loc, ...(facts.seq === null ? {} : { seq: facts.seq }), field: 'bind' },
      );
    }
    if (facts.erasure === true && this.format.capabilities.erasure && facts.problems.length === 0) {
      (this.erasures ??= new ErasureLedger(this.startSeq)).add(typeof text === 'string' ? text : text());
    }
    if (this.format.capabilities.approvals && facts.problems.length === 0) this.approvalOf(text, facts);
    if (
      this.options.deep === true &&
      this.format.capabilities.parts &&
      facts.problems.length === 0 &&
      facts.publicForm !== true
    ) {
      const finding = deepCheckLine(typeof text === 'string' ? text : text());
      if (finding !== null) {
        this.problems.add(finding.code, finding.message, {
          ...loc,
          ...(facts.seq === null ? {} : { seq: facts.seq }),
          field: finding.field,
          ...(finding.path === undefined ? {} : { path: finding.path }),
        });
      }
    }
    const declared = this.segmentLines === 1 ? this.declaredFirstSeq : null;
    const linked = this.links.link(facts, this.steps === 1, declared);
    this.addAll(linked.problems, loc);
    if (linked.duplicate) return;
    const clean = facts.problems.length === 0 && linked.problems.length === 0;
    const onLine = this.options.onLine;
    if (onLine === undefined) return;
    if (typeof text === 'string')
      onLine({
        file: this.segment,
        line: this.segmentLines,
        text,
        seq: facts.seq,
        step_hash: facts.stepHash,
        clean,
        blobs: facts.blobs,
        markers: facts.markers,
        ...(facts.reading === undefined ? {} : { kindIsStep: facts.reading.kindIsStep, stepId: facts.reading.stepId }),
      });
    else onLine(new LazyLine(this.segment, this.segmentLines, text, facts, clean));
  }

  /** What a clean line of a chain with approvals gives the approval check. */
  private approvalOf(text: string | (() => string), facts: LineFacts): void {
    if (facts.approval === true) return this.approval(typeof text === 'string' ? text : text());
    // Every call is read, from the chain's start: one run before its request ran without a grant (APPROVALS.md
    // §5 step 4); a line without a call gives its ts alone (§5 step 3). Before the first request a call is read
    // from the line's tail — by the batch's thread where there was one (line-reading.ts) — not by parsing it.
    const read = facts.reading?.call;
    if (read === undefined) {
      const line = typeof text === 'string' ? text : text();
      const ts = tsOfCallFreeLine(line, this.approvals?.active === true);
      if (ts !== null) return this.ledger().datedText(ts);
      // Its id and key copied (ownString): slices of the line would hold it alive while the ledger holds them.
      const call = this.approvals?.active === true ? null : storedCall(line);
      if (call === null) return this.approval(line);
      this.ledger().storedCall(ownString(call.id), call.seq, call.ts, storedKey(call.form));
    } else if (read === null) {
      if (this.approvals?.active === true) {
        const line = typeof text === 'string' ? text : text();
        if (isOutcomeLine(line)) return this.approval(line);
      }
      if (facts.reading?.ts !== undefined) this.ledger().datedText(facts.reading.ts);
    } else if (read !== 'parse' && this.approvals?.active !== true)
      this.ledger().storedCall(read.id, read.seq, read.ts, read);
    else this.approval(typeof text === 'string' ? text : text());
  }

  /** An approval record, or an effect once the chain holds a request, through the ledger (a parsed copy). */
  private approval(text: string): void {
    let r: unknown;
    try {
      r = JSON.parse(text);
    } catch {
      return;
    }
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return;
    this.ledger().record(r as Record<string, unknown>);
  }

  private ledger(): ApprovalLedger {
    return (this.approvals ??= new ApprovalLedger({
      genesisHash: this.options.start ? null : this.startHash,
      partial: this.startSeq > 0,
      ...(this.options.approvers ? { approvers: this.options.approvers } : {}),
      ...(this.options.forkedAt === undefined ? {} : { forkedAt: this.options.forkedAt }),
      ...(this.options.openEnd === true ? { openEnd: true } : {}),
    }));
  }

  private addAll(problems: readonly LineProblem[], loc: ProblemLocation): void {
    for (const p of problems) this.problems.add(p.code, p.message, { ...loc, ...p.location });
  }

  /** Ends the walk and returns the report. */
  finish(): ChainReport<ChainProblemCode> {
    for (const f of this.erasures?.finish() ?? []) {
      const location: ProblemLocation = {
        seq: f.seq,
        field: f.field,
        ...(f.path === undefined ? {} : { path: f.path }),
      };
      if (f.notice)
        this.notices.set(`${f.code}#${this.notices.size}`, { code: f.code, message: f.message, location, count: 1 });
      else this.problems.add(f.code, f.message, location);
    }
    this.erasures = null;
    const approvals = this.approvals;
    for (const f of approvals?.finish() ?? []) {
      const location: ProblemLocation = { seq: f.seq, field: f.field };
      if (f.notice)
        this.notices.set(`${f.code}#${this.notices.size}`, { code: f.code, message: f.message, location, count: 1 });
      else this.problems.add(f.code, f.message, location);
    }
    this.approvals = null;
    const { hash: head, seq: headSeq } = this.links.head();
    const expectHead = this.options.expectHead;
    if (expectHead !== undefined && head !== expectHead) {
      this.problems.add(
        'HEAD_MISMATCH',
        head === null
          ? `expected head ${expectHead}, but the chain has no readable last step`
          : `expected head ${expectHead}, found ${head}: the chain was truncated, extended or replaced`,
        { ...this.lastLocation, ...(headSeq === null ? {} : { seq: headSeq }), field: 'step_hash' },
      );
    }
    return {
      ok: this.problems.items.length === 0 && !this.problems.truncated,
      start_hash: this.startHash,
      start_seq: this.startSeq,
      head,
      head_seq: headSeq,
      steps: this.steps,
      problems: this.problems.items,
      warnings: [...this.notices.values()].map((n) => ({
        code: n.code,
        message: n.count === 1 ? n.message : `${n.message} (${n.count} records; the first is located)`,
        location: n.location,
      })),
      problems_truncated: this.problems.truncated,
      ...(!approvals?.anySeen ? {} : { approvals: approvals.entries() }),
    };
  }
}

/** A VerifiedLine whose text is decoded only when an observer reads it (lines checked in a worker). */
class LazyLine implements VerifiedLine {
  readonly seq: number | null;
  readonly step_hash: string | null;
  readonly blobs: (BlobRef & { field: string })[];
  readonly markers: MarkerSpan[];
  readonly kindIsStep?: boolean;
  readonly stepId?: string | null;
  private decoded: string | null = null;

  constructor(
    readonly file: string | undefined,
    readonly line: number,
    private readonly decode: () => string,
    facts: LineFacts,
    readonly clean: boolean,
  ) {
    this.seq = facts.seq;
    this.step_hash = facts.stepHash;
    this.blobs = facts.blobs;
    this.markers = facts.markers;
    if (facts.reading !== undefined) {
      this.kindIsStep = facts.reading.kindIsStep;
      this.stepId = facts.reading.stepId;
    }
  }

  get text(): string {
    return (this.decoded ??= this.decode());
  }
}
