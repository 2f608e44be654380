/**
 * The in-memory store: the journal contract (store/types.ts) with lines and blobs held in maps. For tests
 * and for agents that need a journal no longer than their process. Pure: runs in a browser. Every Journal
 * opened on one id shares that journal's state, as file journals share a directory. Its lines are
 * prepared, sealed, segmented and verified by the shared parts, so they are byte-identical to the file
 * store's.
 */
import { afterOf, appendManyOf, unlessAfterOf } from './append.js';
import { isDigest } from '../canonical/sha256.js';
import type { ChainHead, SeqRange, StoredLine } from '../chain/source.js';
import { formatTimestamp } from '../record/fields.js';
import { capabilitiesOf, makeGenesis, genesisHash, writerProfile, type Genesis } from '../record/formats.js';
import { runEntryOf, selectRuns, type RunEntry, type RunFilter } from './runs.js';
import { withStatus } from './run-progress.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import { defaultConfig, journalConfig } from './config.js';
import { StoreError } from './errors.js';
import { copyPrefix } from './fork.js';
import { IdempotencyWindow } from './idempotency.js';
import { assertJournalId, assertSeq, checkRange, intOption } from './ids.js';
import { prepareSteps } from './prepare.js';
import { blobSizeError, restoreRecord } from './restore.js';
import { JournalParts, resolveRecordParts } from './parts-prepare.js';
import { MemoryPartStore, type PartPayload } from './parts.js';
import { verifyParts } from './parts-verify.js';
import type { PartReader } from '../record/v3/part-reader.js';
import { placeLine, segmentLabel, type SegmentCursor } from './segments.js';
import { MOST_LINES_SINCE, sequenceBatch, type Group, type LinesSince } from './sequencer.js';
import { journalReport, verifySource, type SourceSegment } from './verify-source.js';
import type {
  AppendOptions,
  AppendResult,
  CreateOptions,
  ForkOptions,
  Journal,
  JournalConfig,
  JournalReport,
  JournalVerifyOptions,
  Lineage,
  OpenOptions,
  Store,
} from './types.js';

export interface MemoryStoreOptions {
  /** Defaults for `create`, as in the file store. */
  segmentBytes?: number;
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
  /** First seq of each segment, rotated by the rule every store shares. */
  segments: number[];
  cursor: SegmentCursor;
  hash: string;
  blobs: Map<string, Uint8Array>;
  /** A stepchain/v3 journal's parts (spec/PARTS.md), made on its first append. */
  parts?: JournalParts;
  window: IdempotencyWindow;
}

const encoder = new TextEncoder();

export class MemoryStore implements Store {
  private readonly journals = new Map<string, MemoryState>();
  private readonly defaults: JournalConfig;
  private readonly windowSize: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.defaults = defaultConfig(options);
    this.windowSize = intOption('idempotencyWindow', options.idempotencyWindow, 10_000, 1, 10_000_000);
  }

  private newState(genesis: Genesis, config: JournalConfig, lineage: Lineage | null): MemoryState {
    return {
      genesis,
      config,
      lineage,
      lines: [],
      segments: [],
      cursor: { first: 0, size: 0 },
      hash: genesisHash(genesis),
      blobs: new Map(),
      window: new IdempotencyWindow(this.windowSize),
    };
  }

  private taken(id: string): StoreError {
    return new StoreError('JOURNAL_EXISTS', `journal ${JSON.stringify(id)} already exists in this memory store`, {
      hint: 'open it, or choose another id',
    });
  }

  async create(id: string, options: CreateOptions = {}): Promise<Journal> {
    assertJournalId(id);
    if (this.journals.has(id)) throw this.taken(id);
    const config = journalConfig(options, this.defaults);
    const genesis = makeGenesis(options);
    this.journals.set(id, this.newState(genesis, config, null));
    return this.open(id);
  }

  async open(id: string, options: OpenOptions = {}): Promise<Journal> {
    assertJournalId(id);
    const state = this.journals.get(id);
    if (state === undefined)
      throw new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in this memory store`, {
        hint: 'create it first, or check the id with list()',
      });
    return new MemoryJournal(id, state, options.readOnly === true);
  }

  /** Without a filter: every journal id, sorted. With one: the matching run journals' ids, in chronological order. */
  async list(filter?: RunFilter): Promise<string[]> {
    if (filter !== undefined) return (await this.runs(filter)).map((r) => r.id);
    return [...this.journals.keys()].sort();
  }

  async remove(id: string): Promise<void> {
    assertJournalId(id);
    if (!this.journals.delete(id))
      throw new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in this memory store`, {
        hint: 'check the id with list()',
      });
  }

  async runs(filter: RunFilter = {}): Promise<RunEntry[]> {
    const entries: RunEntry[] = [];
    for (const [id, state] of this.journals) {
      const entry = runEntryOf(id, state.genesis, state.lineage);
      if (entry !== null) entries.push(entry);
    }
    return withStatus(this, selectRuns(entries, filter), filter);
  }

  async fork(parent: Journal, options: ForkOptions): Promise<Journal> {
    if (options === null || typeof options !== 'object')
      throw new StoreError('OPTION_INVALID', 'fork takes { fromStep, to }');
    assertJournalId(options.to, 'fork target id');
    if (this.journals.has(options.to)) throw this.taken(options.to);
    const lines: string[] = [];
    const blobs = new Map<string, Uint8Array>();
    const copiedParts: PartPayload[] = [];
    const { lineage } = await copyPrefix(parent, options.fromStep, {
      line: (text) => void lines.push(text),
      blob: (digest, bytes) => void blobs.set(digest, bytes.slice()),
      part: (address, bytes) => void copiedParts.push({ address, bytes: bytes.slice(), indexKey: '' }),
    });
    if (this.journals.has(options.to)) throw this.taken(options.to);
    const state = this.newState(
      parent.genesis,
      { blobThreshold: parent.config.blobThreshold, segmentBytes: parent.config.segmentBytes },
      lineage,
    );
    for (const [d, b] of blobs) state.blobs.set(d, b);
    if (capabilitiesOf(parent.genesis).parts) {
      state.parts = new JournalParts(new MemoryPartStore());
      await state.parts.store.put(copiedParts);
    }
    for (const text of lines) commitLine(state, text);
    this.journals.set(options.to, state);
    return this.open(options.to);
  }
}

/** Adds one sealed line (without newline) to the state, in the segment the shared rotation rule gives it. */
function commitLine(state: MemoryState, text: string): void {
  const seq = state.lines.length;
  state.cursor = placeLine(state.cursor, seq, encoder.encode(text).length + 1, state.config.segmentBytes);
  if (state.segments[state.segments.length - 1] !== state.cursor.first) state.segments.push(state.cursor.first);
  state.lines.push(text);
  state.hash = (JSON.parse(text) as StepRecord).step_hash;
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

  /** A stepchain/v3 journal's parts (spec/PARTS.md); null before its first append, and for v1/v2. */
  get parts(): JournalParts | null {
    // Made on first use, so a copy can store parts before this journal's first append.
    if (this.state.parts === undefined && capabilitiesOf(this.state.genesis).parts)
      this.state.parts = new JournalParts(new MemoryPartStore());
    return this.state.parts ?? null;
  }

  append(step: StepInput, options?: AppendOptions): Promise<AppendResult> {
    return this.appendGroup([step], options).then((r) => r[0]!);
  }

  appendMany(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return appendManyOf(steps, (s) => this.appendGroup(s, options));
  }

  private async appendGroup(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    if (this.closed) throw new StoreError('CLOSED', `journal ${this.id} is closed`, { hint: 'open it again' });
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to append',
      });
    const s = this.state;
    const after = afterOf(options);
    let prepared = prepareSteps(steps, s.config.blobThreshold, writerProfile(s.genesis));
    if (capabilitiesOf(s.genesis).parts) {
      // Parts are stored before the lines (PARTS.md §7); the tail is read only after, so no append interleaves.
      s.parts ??= new JournalParts(new MemoryPartStore());
      prepared = await s.parts.prepare(prepared);
    }
    const unlessAfter = unlessAfterOf(options);
    const groups: Group[] = [after === undefined ? { steps: prepared } : { steps: prepared, after }];
    if (unlessAfter !== undefined) groups[0]!.unlessAfter = unlessAfter;
    // The window answers at once: no await between reading the tail and committing, so no other append interleaves.
    const known = s.window.lookup(groups[0]!.steps.flatMap((p) => (p.step_id === undefined ? [] : [p.step_id])));
    const tail = s.lines.length - 1;
    const since: LinesSince | undefined =
      unlessAfter !== undefined && after! < tail && tail - after! <= MOST_LINES_SINCE
        ? new Map([[groups[0]!, s.lines.slice(after! + 1).some(unlessAfter)]])
        : undefined;
    const batch = sequenceBatch(groups, { seq: tail, hash: s.hash }, known, formatTimestamp(new Date()), since);
    const outcome = batch.outcomes[0]!;
    if (!outcome.ok) throw outcome.error;
    for (const b of outcome.blobs) if (!s.blobs.has(b.digest)) s.blobs.set(b.digest, b.bytes.slice());
    for (const l of batch.lines) commitLine(s, l.text.slice(0, -1));
    s.window.committed(batch.entries);
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
      while (b + 1 < s.segments.length && s.segments[b + 1]! <= seq) b++;
      yield { segment: segmentLabel(s.segments[b]!), seq, text: s.lines[seq]! };
    }
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    let reader: PartReader | undefined;
    for await (const l of this.lines(range)) {
      const record = await restoreRecord(this.state.genesis, l.text, l.seq, `memory:${this.id}`, (ref) =>
        this.blob(ref.digest, ref.size),
      );
      const parts = this.state.parts;
      yield parts === undefined ? record : await resolveRecordParts(record, l.seq, (reader ??= parts.reader()));
    }
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
    const segments = (): SourceSegment[] =>
      s.segments.map((first, i) => ({
        label: segmentLabel(first),
        declaredFirstSeq: first,
        lines: [s.lines.slice(first, s.segments[i + 1] ?? s.lines.length)],
      }));
    const v = await verifySource(
      {
        genesis: s.genesis,
        lineage: s.lineage,
        segments,
        blob: async (ref) => s.blobs.get(ref.digest) ?? null,
        blobsWhere: 'the store',
      },
      options,
    );
    const report = journalReport(v);
    if (!capabilitiesOf(s.genesis).parts || !report.ok) return report;
    const store = s.parts?.store ?? new MemoryPartStore();
    const problems = await verifyParts(
      (async function* () {
        for (let seq = 0; seq < s.lines.length; seq++) yield { seq, text: s.lines[seq]! };
      })(),
      (a, size) => store.get(a, size),
    );
    return problems.length === 0 ? report : { ...report, ok: false, problems: [...report.problems, ...problems] };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
