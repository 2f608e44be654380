/**
 * Pinned replay (spec/REPLAY.md): `replayFrom(journal | receipt)` verifies the recorded run, then answers
 * each live request with the recorded outcome it matches — `nextModelResult(request)`,
 * `nextToolResult(call)` — under one of three modes. Framework-free: an adapter turns the answer back into
 * its framework's types and, where the mode allows, calls the live model or tool itself.
 */
import type { Json, JsonObject } from '../canonical/json.js';
import type { ChainSource } from '../chain/source.js';
import { describeLocation, type ChainReport } from '../chain/report.js';
import { IgnoreSet, VOLATILE_PATTERNS, type FieldDiff } from '../diff/index.js';
import { dottedPath, renderValue } from '../diff/summary.js';
import { capabilitiesOf } from '../record/formats.js';
import { readCassette, type Cassette, type RecordedOutcome } from './cassette.js';
import { ReplayError } from './errors.js';
import {
  matchKey,
  modelProjection,
  requestDiff,
  toolProjection,
  type ModelRequest,
  type RequestKind,
  type ToolRequest,
} from './request.js';

export type ReplayMode = 'strict' | 'lenient' | 'record-missing';

export interface ReplayOptions {
  /** strict (default): no live calls, a mismatch fails; lenient: unmatched goes live; record-missing: strict until the recording is used up, then live. */
  mode?: ReplayMode;
  /** More JSON Pointer patterns (diff's grammar) to leave out of the matching key. */
  ignore?: readonly string[];
  /** Whether the volatile members (VOLATILE_PATTERNS) are left out of the key (default true). */
  volatile?: boolean;
  /** The head the recording must end at (a step hash): the pin. A different head is REPLAY_UNVERIFIED. */
  expectHead?: string;
}

/** A verified receipt as a chain source (stepchain/format's receiptSource or openReceiptSource). */
interface VerifiedSource extends ChainSource {
  readonly report: ChainReport;
}
/** A journal: it verifies itself. */
interface VerifiableSource extends ChainSource {
  verify(options?: { expectHead?: string }): Promise<ChainReport>;
}
export type ReplaySource = VerifiedSource | VerifiableSource;

/** The head a replay replays from, as the replay run's labels name it. */
export interface ReplayedHead {
  journal_id: string;
  seq: number;
  step_hash: string;
}

/** A recorded answer, or the word that the caller must ask its live model or tool. */
export type ReplayAnswer =
  | {
      source: 'recorded';
      seq: number;
      ordinal: number;
      record: JsonObject;
      result: Json;
      toolCalls: Json;
      meta: JsonObject | null;
      error: Json | null;
    }
  | { source: 'live'; reason: 'unmatched' | 'exhausted' };

/** One served request, in the order asked. */
export interface ReplayEntry {
  kind: RequestKind;
  source: 'recorded' | 'live';
  /** The recorded outcome's seq, when recorded. */
  seq?: number;
  key: string;
}

const MODES: readonly ReplayMode[] = ['strict', 'lenient', 'record-missing'];

export async function replayFrom(source: ReplaySource, options: ReplayOptions = {}): Promise<Replay> {
  const mode = options.mode ?? 'strict';
  if (!MODES.includes(mode))
    throw new ReplayError(
      'REPLAY_OPTION_INVALID',
      `mode must be strict, lenient or record-missing, not ${JSON.stringify(mode)}`,
    );
  const head = await verified(source, options.expectHead);
  const ignore = new IgnoreSet([...(options.volatile === false ? [] : VOLATILE_PATTERNS), ...(options.ignore ?? [])]);
  return new Replay(mode, head, ignore, await readCassette(source, ignore));
}

async function verified(source: ReplaySource, expectHead: string | undefined): Promise<ReplayedHead> {
  if (source === null || typeof source !== 'object' || typeof source.lines !== 'function') {
    throw new ReplayError('REPLAY_OPTION_INVALID', 'replayFrom takes a journal or a verified receipt source');
  }
  let report: ChainReport;
  if ('report' in source && source.report !== undefined) report = source.report;
  else if (typeof (source as VerifiableSource).verify === 'function')
    report = await (source as VerifiableSource).verify(expectHead === undefined ? {} : { expectHead });
  else
    throw new ReplayError(
      'REPLAY_UNVERIFIED',
      'the source can neither verify itself nor carries a verification report',
      { hint: 'pass a Journal, or a receipt opened with receiptSource/openReceiptSource' },
    );
  const where = String(source.genesis.journal_id);
  if (!report.ok) {
    const p = report.problems[0];
    throw new ReplayError(
      'REPLAY_UNVERIFIED',
      `journal ${where} does not verify${p ? `: ${p.code}${describeLocation(p.location) ? ` at ${describeLocation(p.location)}` : ''}: ${p.message}` : ''}`,
      { hint: 'replay only from a run whose chain verifies: run stepchain verify on it' },
    );
  }
  if (report.head === null || report.head_seq === null)
    throw new ReplayError('REPLAY_UNVERIFIED', `journal ${where} is empty: there is nothing to replay`);
  if (expectHead !== undefined && report.head !== expectHead) {
    throw new ReplayError(
      'REPLAY_UNVERIFIED',
      `journal ${where} ends at ${report.head}, not at the pinned head ${expectHead}`,
      { hint: 'the recording changed since it was pinned' },
    );
  }
  // Replay reads a run's model and tool records from its stored lines (a v3 value that stands in a part is read
  // back from the journal's parts: readCassette).
  if (!capabilitiesOf(source.genesis).runRecords)
    throw new ReplayError(
      'REPLAY_UNVERIFIED',
      `journal ${where} is not a run journal (format ${source.genesis.format}); replay reads the model and tool records of a run journal (stepchain/v2 or v3)`,
    );
  return { journal_id: source.genesis.journal_id, seq: report.head_seq, step_hash: report.head };
}

export class Replay {
  /** Every request asked, in order, with where its answer came from. */
  readonly log: ReplayEntry[] = [];
  private modelCursor = 0;
  /** Unserved outcomes by key, lowest ordinal first: matching in any order without a scan. */
  private readonly byKey = new Map<string, RecordedOutcome[]>();

  constructor(
    readonly mode: ReplayMode,
    /** The verified head this replay serves from. */
    readonly head: ReplayedHead,
    private readonly ignore: IgnoreSet,
    private readonly cassette: Cassette,
  ) {
    for (const o of [...cassette.models, ...cassette.tools]) {
      const queue = this.byKey.get(o.key);
      if (queue === undefined) this.byKey.set(o.key, [o]);
      else queue.push(o);
    }
  }

  /** The unserved outcome with this key and the lowest ordinal. */
  private firstUnserved(key: string): RecordedOutcome | undefined {
    const queue = this.byKey.get(key);
    while (queue !== undefined && queue.length > 0 && queue[0]!.served) queue.shift();
    return queue?.[0];
  }

  /** Labels for the replay run's genesis (spec/REPLAY.md §6): the journal and head it replayed from. */
  get labels(): Record<string, string> {
    return {
      'replay.of': this.head.journal_id,
      'replay.head': this.head.step_hash,
      'replay.seq': String(this.head.seq),
      'replay.mode': this.mode,
    };
  }

  /** The recorded run's task (its run.started input), to start the replay run with the same one. */
  get runInput(): Json | undefined {
    return this.cassette.runInput;
  }

  /** The `model` member of the first recorded model request (an adapter names its replay model after it). */
  get recordedModel(): Json | undefined {
    return this.cassette.models[0]?.projection.model;
  }

  /** Recorded outcomes no live request asked for yet. */
  unserved(): { kind: RequestKind; seq: number }[] {
    return [...this.cassette.models, ...this.cassette.tools]
      .filter((o) => !o.served)
      .map((o) => ({ kind: o.kind, seq: o.seq }))
      .sort((a, b) => a.seq - b.seq);
  }

  /** The recorded answer to a model request: in strict and record-missing modes, the next one in record order. */
  nextModelResult(request: ModelRequest): ReplayAnswer {
    const live = modelProjection(request);
    const key = matchKey('model', live, this.ignore);
    const models = this.cassette.models;
    if (this.mode === 'lenient') return this.serve('model', key, this.firstUnserved(key));
    while (this.modelCursor < models.length && models[this.modelCursor]!.served) this.modelCursor++;
    const next = models[this.modelCursor];
    if (next === undefined) {
      if (this.mode === 'record-missing') return this.goLive('model', key, 'exhausted');
      throw new ReplayError(
        'REPLAY_EXHAUSTED',
        `model request #${this.count('model') + 1} has no recorded answer: the recording of ${this.head.journal_id} holds ${models.length} model request${models.length === 1 ? '' : 's'}, all served`,
        { hint: 'the agent asks more than it did when recorded; record again, or replay with mode record-missing' },
      );
    }
    if (next.key !== key) throw this.mismatch(next, live);
    return this.serve('model', key, next);
  }

  /** The recorded outcome of a tool call: matched by key and ordinal in any order (parallel calls finish in any order). */
  nextToolResult(call: ToolRequest): ReplayAnswer {
    if (call === null || typeof call !== 'object' || typeof call.name !== 'string')
      throw new ReplayError('REPLAY_OPTION_INVALID', 'nextToolResult takes { name, arguments }');
    const live = toolProjection(call);
    const key = matchKey('tool', live, this.ignore);
    const found = this.firstUnserved(key);
    if (found !== undefined || this.mode === 'lenient') return this.serve('tool', key, found);
    const unserved = this.cassette.tools.filter((o) => !o.served);
    if (unserved.length === 0 && this.mode === 'record-missing') return this.goLive('tool', key, 'exhausted');
    const nearest = unserved.find((o) => (o.projection.tool_call as JsonObject).name === call.name) ?? unserved[0];
    if (nearest === undefined) {
      throw new ReplayError(
        'REPLAY_EXHAUSTED',
        `tool call ${call.name} has no recorded outcome: every recorded tool call of ${this.head.journal_id} was served`,
        { hint: 'record again, or replay with mode record-missing' },
      );
    }
    throw this.mismatch(nearest, live);
  }

  private count(kind: RequestKind): number {
    return this.log.filter((e) => e.kind === kind).length;
  }

  private serve(kind: RequestKind, key: string, o: RecordedOutcome | undefined): ReplayAnswer {
    if (o === undefined) return this.goLive(kind, key, 'unmatched');
    o.served = true;
    this.log.push({ kind, source: 'recorded', seq: o.seq, key });
    const r = o.record as unknown as Record<string, Json | undefined>;
    return {
      source: 'recorded',
      seq: o.seq,
      ordinal: o.ordinal,
      record: o.record as unknown as JsonObject,
      result: r.result ?? null,
      toolCalls: r.tool_call ?? null,
      meta: (r.meta ?? null) as JsonObject | null,
      error: r.error ?? null,
    };
  }

  private goLive(kind: RequestKind, key: string, reason: 'unmatched' | 'exhausted'): ReplayAnswer {
    this.log.push({ kind, source: 'live', key });
    return { source: 'live', reason };
  }

  private mismatch(recorded: RecordedOutcome, live: JsonObject): ReplayError {
    const fields: FieldDiff[] = requestDiff(recorded.projection, live, this.ignore);
    const n = this.count(recorded.kind) + 1;
    const lines = fields
      .slice(0, 20)
      .map(
        (f) =>
          `  ${f.path} (${dottedPath(f.path)}): ${f.kind === 'added' ? '(absent)' : renderValue(f.a as Json, 120)} → ${f.kind === 'removed' ? '(absent)' : renderValue(f.b as Json, 120)}`,
      );
    const what =
      recorded.kind === 'model' ? `model request #${n}` : `tool call ${String((live.tool_call as JsonObject).name)}`;
    const e = new ReplayError(
      'REPLAY_MISMATCH',
      `${what} differs from the recorded one (seq ${recorded.seq} of ${this.head.journal_id}), recorded → live:\n${lines.join('\n')}${fields.length > 20 ? `\n  … ${fields.length - 20} more` : ''}`,
      {
        location: { seq: recorded.seq, ...(fields[0] ? { path: fields[0].path } : {}) },
        hint: 'the request changed (your code): update the recording, ignore the member, or replay in lenient mode',
      },
    );
    e.diff = fields;
    e.recorded = recorded.projection;
    e.live = live;
    return e;
  }
}
