/**
 * The in-memory store: the same Store and Journal contract as the file store, with lines and blobs held
 * in maps. For tests and for agents that need a journal no longer than their process. Pure: runs in a
 * browser. Every Journal opened on one id shares that journal's state, as file journals share a directory.
 */
import { formatTimestamp } from '../record/fields.js';
import { genesisHash, makeGenesis, writerProfile, type Genesis } from '../record/formats.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import type { Problem } from '../chain/report.js';
import type { ChainHead, SeqRange, StoredLine } from '../chain/source.js';
import { ChainVerifier } from '../chain/verifier.js';
import { isDigest } from '../canonical/sha256.js';
import { StoreError } from './errors.js';
import { copyPrefix } from './fork.js';
import { assertJournalId, assertSeq, checkRange, intOption } from './ids.js';
import {
  DEFAULT_BLOB_THRESHOLD, DEFAULT_BUCKET_BYTES, MAX_BLOB_THRESHOLD, MAX_BUCKET_BYTES, MIN_BLOB_THRESHOLD, MIN_BUCKET_BYTES, bucketName,
} from './layout.js';
import { lineageProblems } from './lineage.js';
import { prepareSteps } from './prepare.js';
import { blobDefect } from '../record/blobs.js';
import { blobSizeError, restoreRecord } from './restore.js';
import { IdempotencyWindow, sequenceBatch } from './sequencer.js';
import type { AppendResult, CreateOptions, ForkOptions, Journal, JournalConfig, JournalProblemCode, JournalReport, JournalVerifyOptions, Lineage, OpenOptions, Store } from './types.js';

export interface MemoryStoreOptions {
  /** Defaults for `create`, as in the file store. */
  bucketBytes?: number;
  blobThreshold?: number;
  /** How many most recent steps an idempotent retry is recognized in (default 10,000). */
  idempotencyWindow?: number;
}

interface MemoryState {
  genesis: Genesis;
  config: JournalConfig;
  lineage: Lineage | null;
  /** Stored lines without their newline. */
  lines: string[];
  /** First seq of each bucket, rotated by the same rule as the file store. */
  buckets: number[];
  bucketSize: number;
  hash: string;
  blobs: Map<string, Uint8Array>;
  window: IdempotencyWindow;
}

const encoder = new TextEncoder();

export class MemoryStore implements Store {
  private readonly journals = new Map<string, MemoryState>();
  private readonly bucketBytes: number;
  private readonly blobThreshold: number;
  private readonly windowSize: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.bucketBytes = intOption('bucketBytes', options.bucketBytes, DEFAULT_BUCKET_BYTES, MIN_BUCKET_BYTES, MAX_BUCKET_BYTES);
    this.blobThreshold = intOption('blobThreshold', options.blobThreshold, DEFAULT_BLOB_THRESHOLD, MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD);
    this.windowSize = intOption('idempotencyWindow', options.idempotencyWindow, 10_000, 1, 10_000_000);
  }

  private newState(genesis: Genesis, config: JournalConfig, lineage: Lineage | null): MemoryState {
    return { genesis, config, lineage, lines: [], buckets: [], bucketSize: 0, hash: genesisHash(genesis), blobs: new Map(), window: new IdempotencyWindow(this.windowSize) };
  }

  private taken(id: string): StoreError {
    return new StoreError('JOURNAL_EXISTS', `journal ${JSON.stringify(id)} already exists in this memory store`, { hint: 'open it, or choose another id' });
  }

  async create(id: string, options: CreateOptions = {}): Promise<Journal> {
    assertJournalId(id);
    if (this.journals.has(id)) throw this.taken(id);
    const config = {
      bucket_bytes: intOption('bucketBytes', options.bucketBytes, this.bucketBytes, MIN_BUCKET_BYTES, MAX_BUCKET_BYTES),
      blob_threshold: intOption('blobThreshold', options.blobThreshold, this.blobThreshold, MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD),
    };
    const genesis = makeGenesis({
      ...(options.journalId === undefined ? {} : { journalId: options.journalId }),
      ...(options.createdAt === undefined ? {} : { createdAt: options.createdAt }),
    });
    this.journals.set(id, this.newState(genesis, config, null));
    return this.open(id);
  }

  async open(id: string, options: OpenOptions = {}): Promise<Journal> {
    assertJournalId(id);
    const state = this.journals.get(id);
    if (state === undefined) throw new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in this memory store`, { hint: 'create it first, or check the id with list()' });
    return new MemoryJournal(id, state, options.readOnly === true);
  }

  async list(): Promise<string[]> {
    return [...this.journals.keys()].sort();
  }

  async fork(parent: Journal, options: ForkOptions): Promise<Journal> {
    if (options === null || typeof options !== 'object') throw new StoreError('OPTION_INVALID', 'fork takes { fromStep, to }');
    assertJournalId(options.to, 'fork target id');
    if (this.journals.has(options.to)) throw this.taken(options.to);
    const lines: string[] = [];
    const blobs = new Map<string, Uint8Array>();
    const lineage = await copyPrefix(parent, options.fromStep, {
      line: (text) => void lines.push(text),
      blob: (digest, bytes) => void blobs.set(digest, bytes.slice()),
    });
    if (this.journals.has(options.to)) throw this.taken(options.to);
    const state = this.newState(parent.genesis, parent.config, lineage);
    for (const [d, b] of blobs) state.blobs.set(d, b);
    for (const text of lines) commitLine(state, text);
    this.journals.set(options.to, state);
    return this.open(options.to);
  }
}

/** Adds one sealed line (without newline) to the state, rotating buckets as the file store does. */
function commitLine(state: MemoryState, text: string): void {
  const seq = state.lines.length;
  const bytes = encoder.encode(text).length + 1;
  if (state.buckets.length === 0 || (state.bucketSize > 0 && state.bucketSize + bytes > state.config.bucket_bytes)) {
    state.buckets.push(seq);
    state.bucketSize = 0;
  }
  state.bucketSize += bytes;
  state.lines.push(text);
  const rec = JSON.parse(text) as StepRecord;
  state.hash = rec.step_hash;
}

class MemoryJournal implements Journal {
  private closed = false;

  constructor(
    readonly id: string,
    private readonly state: MemoryState,
    readonly readOnly: boolean,
  ) {}

  get genesis(): Genesis {
    return this.state.genesis;
  }
  get lineage(): Lineage | null {
    return this.state.lineage;
  }
  get config(): JournalConfig {
    return this.state.config;
  }

  append(step: StepInput): Promise<AppendResult> {
    return this.appendGroup([step]).then((r) => r[0]!);
  }

  appendMany(steps: readonly StepInput[]): Promise<AppendResult[]> {
    if (!Array.isArray(steps)) return Promise.reject(new StoreError('OPTION_INVALID', 'appendMany takes an array of steps'));
    if (steps.length === 0) return Promise.resolve([]);
    return this.appendGroup(steps);
  }

  private async appendGroup(steps: readonly StepInput[]): Promise<AppendResult[]> {
    if (this.closed) throw new StoreError('CLOSED', `journal ${this.id} is closed`, { hint: 'open it again' });
    if (this.readOnly) throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, { hint: 'open it without readOnly to append' });
    const prepared = prepareSteps(steps, this.state.config.blob_threshold, writerProfile(this.state.genesis));
    const s = this.state;
    const batch = sequenceBatch([{ steps: prepared }], { seq: s.lines.length - 1, hash: s.hash }, s.window, formatTimestamp(new Date()));
    const outcome = batch.outcomes[0]!;
    if (!outcome.ok) throw outcome.error;
    for (const b of outcome.blobs) if (!s.blobs.has(b.digest)) s.blobs.set(b.digest, b.bytes.slice());
    for (const l of batch.lines) commitLine(s, l.text.slice(0, -1));
    for (const [id, entry] of batch.entries) s.window.add(id, entry);
    return outcome.results;
  }

  async head(): Promise<ChainHead | null> {
    const n = this.state.lines.length;
    return n === 0 ? null : { seq: n - 1, step_hash: this.state.hash };
  }

  async *lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    const { from, to: wanted } = checkRange(range);
    const s = this.state;
    const to = Math.min(wanted ?? s.lines.length - 1, s.lines.length - 1);
    let b = 0;
    for (let seq = from; seq <= to; seq++) {
      while (b + 1 < s.buckets.length && s.buckets[b + 1]! <= seq) b++;
      yield { bucket: bucketName(s.buckets[b]!), seq, text: s.lines[seq]! };
    }
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    for await (const l of this.lines(range)) yield await restoreRecord(this.state.genesis, l.text, l.seq, `memory:${this.id}`, (ref) => this.blob(ref.digest, ref.size));
  }

  async get(seq: number): Promise<StepRecord | null> {
    assertSeq('seq', seq);
    for await (const r of this.read({ from: seq, to: seq })) return r;
    return null;
  }

  async blob(digest: string, size?: number): Promise<Uint8Array | null> {
    if (!isDigest(digest)) return null;
    const b = this.state.blobs.get(digest);
    if (b === undefined) return null;
    if (size !== undefined && b.length !== size) throw blobSizeError(`memory:${this.id}`, digest, b.length, size);
    return b.slice();
  }

  async verify(options: JournalVerifyOptions = {}): Promise<JournalReport> {
    const s = this.state;
    const problems: Array<Problem<JournalProblemCode>> = [];
    let hashAtFrom: string | null = null;
    const verifier = new ChainVerifier({
      genesis: s.genesis,
      ...(options.expectHead === undefined ? {} : { expectHead: options.expectHead }),
      onLine: (l) => {
        if (s.lineage !== null && l.seq === s.lineage.from_step) hashAtFrom = l.step_hash;
        for (const ref of l.blobs) {
          const bytes = s.blobs.get(ref.digest);
          const loc = { ...(l.segment === undefined ? {} : { file: l.segment }), line: l.line, ...(l.seq === null ? {} : { seq: l.seq }), field: ref.field };
          if (bytes === undefined) problems.push({ code: 'BLOB_MISSING', message: `blob ${ref.digest} is not in the store (referenced by ${ref.field})`, location: loc });
          else {
            const defect = blobDefect(bytes, ref);
            if (defect !== null) problems.push({ code: 'BLOB_CORRUPT', message: `blob ${ref.digest} ${defect} (referenced by ${ref.field})`, location: loc });
          }
        }
      },
    });
    let b = -1;
    for (let seq = 0; seq < s.lines.length; seq++) {
      if (b + 1 < s.buckets.length && s.buckets[b + 1] === seq) verifier.beginSegment(bucketName(s.buckets[b + 1]!), s.buckets[++b]!);
      verifier.line(s.lines[seq]!, true);
      options.onProgress?.(seq + 1);
    }
    const report = verifier.finish();
    problems.push(...lineageProblems(s.genesis, s.lineage, hashAtFrom));
    const all = [...report.problems, ...problems];
    return { ...report, ok: all.length === 0 && !report.problems_truncated, problems: all };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
