/**
 * A run: a `stepchain/v2` journal driven by an agent loop (spec/FORMAT.md §11). Every boundary is a
 * record appended before the next thing happens — a model request's start before the provider is called,
 * a tool's intent before it executes — so a process killed anywhere leaves a journal that says what was
 * in flight. Outcomes are checked against the journal itself (re-read before each one), so a second
 * outcome, or one for an id never begun, is refused with a coded error in any process.
 */
import type { Json, JsonObject } from '../canonical/json.js';
import { isValidId } from '../record/fields.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import { FORMAT_V2, type GenesisV2, type RunIdentity } from '../record/v2.js';
import { StepchainError } from '../errors.js';
import type { AppendResult, CreateOptions, Journal, Store } from '../store/types.js';
import { RuntimeError } from './errors.js';
import { emptyState, foldRecord, pendingOf, type Effect, type ModelCall, type RunState } from '../record/run-state.js';
import { errorValue, toJournalValue } from './value.js';

/** A run id: a journal id in every store and a genesis journal_id (FORMAT §11.1). */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface StartRunOptions {
  /** Default: a random UUID. Reusing a run id the store holds is refused (RUN_EXISTS). */
  runId?: string;
  conversationId?: string;
  /** The orchestrator's run, for a delegated sub-agent. */
  parentRunId?: string;
  agent?: string;
  /** user, session, environment…: fixed at creation, covered by the genesis hash. */
  labels?: Record<string, string>;
  /** The run's input (the task), recorded in its run.started record. */
  input?: unknown;
  createdAt?: Date | string;
  segmentBytes?: number;
  blobThreshold?: number;
}

export interface BeginModelOptions {
  model?: unknown;
  prompt?: unknown;
  input?: unknown;
  /** A durable id for the request (default a random UUID); its started record's step_id. */
  id?: string;
  meta?: Record<string, unknown>;
}

export interface ModelOutcome {
  /** The model's output (message, text…). */
  result?: unknown;
  /** The tool calls the model asked for, each {id, name, arguments}: the run is not at a continuation point until each has an outcome. */
  toolCalls?: unknown[];
  usage?: unknown;
  finishReason?: string;
  meta?: Record<string, unknown>;
}

export interface BeginToolOptions {
  name: string;
  args?: unknown;
  /** The id the model gave this tool call, linking the effect to the model's request. */
  callId?: string;
  idempotencyKey?: string;
  summary?: string;
  /** A durable id for the effect (default a random UUID); its started record's step_id. */
  id?: string;
  meta?: Record<string, unknown>;
}

export interface ContinuationPoint {
  /** The last seq where nothing was in flight, or null when the run has no such point. */
  seq: number | null;
  /** The records 0..seq. */
  steps: StepRecord[];
}

function optionError(message: string): RuntimeError {
  return new RuntimeError('RUN_OPTION_INVALID', message);
}

function checkOptionalId(name: string, v: unknown): void {
  if (v !== undefined && !isValidId(v)) throw optionError(`${name} ${JSON.stringify(v)} must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit`);
}

/** The genesis run identity from the library's options. */
export function runIdentity(options: Pick<StartRunOptions, 'conversationId' | 'parentRunId' | 'agent' | 'labels'>): RunIdentity {
  checkOptionalId('conversationId', options.conversationId);
  checkOptionalId('parentRunId', options.parentRunId);
  const run: RunIdentity = {};
  if (options.agent !== undefined) run.agent = options.agent;
  if (options.conversationId !== undefined) run.conversation_id = options.conversationId;
  if (options.labels !== undefined) run.labels = { ...options.labels };
  if (options.parentRunId !== undefined) run.parent_run_id = options.parentRunId;
  return run;
}

/** Creates a run journal in the store, with its identity in the genesis, and records run.started. */
export async function startRun(store: Store, options: StartRunOptions = {}): Promise<Run> {
  const runId = options.runId ?? globalThis.crypto.randomUUID();
  if (typeof runId !== 'string' || !RUN_ID.test(runId) || runId.includes('..')) {
    throw optionError(`run id ${JSON.stringify(runId)} must be 1–128 characters from [A-Za-z0-9._-] starting with a letter or digit, without ".."`);
  }
  const create: CreateOptions = { journalId: runId, run: runIdentity(options) };
  if (options.createdAt !== undefined) create.createdAt = options.createdAt;
  if (options.segmentBytes !== undefined) create.segmentBytes = options.segmentBytes;
  if (options.blobThreshold !== undefined) create.blobThreshold = options.blobThreshold;
  let journal: Journal;
  try {
    journal = await store.create(runId, create);
  } catch (e) {
    if (e instanceof StepchainError && e.code === 'JOURNAL_EXISTS') {
      throw new RuntimeError('RUN_EXISTS', `run ${JSON.stringify(runId)} already exists in this store`, { hint: 'resume it with resumeRun, or start a run with another id', cause: e });
    }
    if (e instanceof StepchainError && e.code === 'GENESIS_INVALID') throw optionError(e.message.replace(/^GENESIS_INVALID: /, ''));
    throw e;
  }
  const run = new Run(journal);
  await run.record({ kind: 'run.started', input: toJournalValue(options.input, { field: 'input' }) });
  return run;
}

/** Opens an existing run to continue it (or, readOnly, to inspect it): its pending effects and continuation point are read from the journal. */
export async function resumeRun(store: Store, runId: string, options: { readOnly?: boolean } = {}): Promise<Run> {
  let journal: Journal;
  try {
    journal = await store.open(runId, { readOnly: options.readOnly === true });
  } catch (e) {
    if (e instanceof StepchainError && e.code === 'JOURNAL_NOT_FOUND') throw new RuntimeError('RUN_NOT_FOUND', `no run ${JSON.stringify(runId)} in this store`, { hint: 'list the runs with store.list({})', cause: e });
    throw e;
  }
  const run = Run.of(journal);
  await run.refresh();
  return run;
}

/** The handle of a started model request. */
export interface ModelCallHandle {
  readonly id: string;
  readonly seq: number;
  complete(outcome?: ModelOutcome): Promise<AppendResult>;
  fail(error: unknown): Promise<AppendResult>;
}

/** The handle of a started tool effect. */
export interface EffectHandle {
  readonly id: string;
  readonly seq: number;
  annotate(notes: { idempotencyKey?: string; summary?: string }): Promise<AppendResult>;
  complete(result?: unknown): Promise<AppendResult>;
  fail(error: unknown): Promise<AppendResult>;
}

export class Run {
  readonly journal: Journal;
  private state: RunState = emptyState();
  /** Ids whose outcome is being written by this process: a second concurrent outcome is refused at once. */
  private readonly ending = new Set<string>();
  /** What each begun call recorded, so its outcome repeats it and stands alone as a step. */
  private readonly begun = new Map<string, { input: Json; model: Json; prompt: Json; tool_call: Json }>();

  constructor(journal: Journal) {
    if (journal.genesis.format !== FORMAT_V2) {
      throw new RuntimeError('NOT_A_RUN', `journal ${JSON.stringify(journal.id)} is a ${journal.genesis.format} journal, not a run (stepchain/v2)`, {
        hint: 'create run journals with startRun (or stepchain init --run)',
      });
    }
    this.journal = journal;
  }

  /** Wraps an open run journal (its state is read on the first call that needs it). */
  static of(journal: Journal): Run {
    return new Run(journal);
  }

  get runId(): string {
    return this.journal.genesis.journal_id;
  }

  get identity(): RunIdentity {
    return (this.journal.genesis as GenesisV2).run;
  }

  get createdAt(): string {
    return this.journal.genesis.created_at;
  }

  /** Reads the records appended since the last read (by any process) into the run's state. */
  async refresh(): Promise<RunState> {
    const head = await this.journal.head();
    if (head !== null && head.seq > this.state.lastSeq) {
      for await (const r of this.journal.read({ from: this.state.lastSeq + 1, to: head.seq })) {
        foldRecord(this.state, r);
        this.remember(r);
      }
    }
    return this.state;
  }

  private remember(r: StepRecord): void {
    if (r.v === 2 && (r.kind === 'model.started' || r.kind === 'tool.started')) {
      this.begun.set(r.step_id, { input: r.input, model: r.model, prompt: r.prompt, tool_call: r.tool_call });
    }
  }

  /** Appends one v2 record (kind, ref, content) and folds it in. */
  async record(step: StepInput & { kind: string }): Promise<AppendResult> {
    const appended = await this.journal.append(step);
    await this.refresh();
    return appended;
  }

  async beginModel(options: BeginModelOptions = {}): Promise<ModelCallHandle> {
    const step: StepInput & { kind: string } = {
      kind: 'model.started',
      input: toJournalValue(options.input, { field: 'input' }),
      model: toJournalValue(options.model, { field: 'model' }),
      prompt: toJournalValue(options.prompt, { field: 'prompt' }),
    };
    if (options.id !== undefined) step.step_id = options.id;
    if (options.meta !== undefined) step.meta = toJournalValue(options.meta, { field: 'meta' });
    const at = await this.record(step);
    return {
      id: at.step_id,
      seq: at.seq,
      complete: (outcome = {}) => this.endModel(at.step_id, outcome, null),
      fail: (error) => this.endModel(at.step_id, {}, error),
    };
  }

  /** Records a model request's outcome by id (also from another process than the one that began it). */
  async endModel(id: string, outcome: ModelOutcome, error: unknown): Promise<AppendResult> {
    return this.end(id, 'model', async (begun) => {
      const meta: Record<string, unknown> = { ...(outcome.meta ?? {}) };
      if (outcome.usage !== undefined) meta.usage = outcome.usage;
      if (outcome.finishReason !== undefined) meta.finish_reason = outcome.finishReason;
      const step: StepInput & { kind: string; ref: string; error?: Json } = {
        kind: error === null ? 'model.completed' : 'model.failed',
        ref: id,
        ...begun,
        tool_call: outcome.toolCalls === undefined ? null : toJournalValue(outcome.toolCalls, { field: 'tool_call' }),
        result: toJournalValue(outcome.result, { field: 'result' }),
      };
      if (error !== null) step.error = errorValue(error);
      const m = toJournalValue(meta, { field: 'meta' }) as JsonObject;
      if (Object.keys(m).length > 0) step.meta = m;
      return step;
    });
  }

  async beginTool(options: BeginToolOptions): Promise<EffectHandle> {
    if (options === null || typeof options !== 'object' || typeof options.name !== 'string' || options.name.length === 0) {
      throw optionError('beginTool needs { name: the tool\'s name, args }');
    }
    const call: Record<string, Json> = { name: options.name, arguments: toJournalValue(options.args, { field: 'tool_call/arguments' }) };
    if (options.callId !== undefined) call.call_id = options.callId;
    if (options.idempotencyKey !== undefined) call.idempotency_key = options.idempotencyKey;
    if (options.summary !== undefined) call.summary = options.summary;
    const step: StepInput & { kind: string } = { kind: 'tool.started', tool_call: call };
    if (options.id !== undefined) step.step_id = options.id;
    if (options.meta !== undefined) step.meta = toJournalValue(options.meta, { field: 'meta' });
    const at = await this.record(step);
    return this.effect(at.step_id, at.seq);
  }

  /** The handle of an effect begun earlier (in this process or another): to record its outcome. */
  effect(id: string, seq = this.state.effects.get(id)?.seq ?? -1): EffectHandle {
    return {
      id,
      seq,
      annotate: (notes) => this.annotate(id, notes),
      complete: (result) => this.endTool(id, { result }),
      fail: (error) => this.endTool(id, { error }),
    };
  }

  /** Records a tool effect's outcome by id: `{ result }` for completed, `{ error }` for failed. */
  async endTool(id: string, outcome: { result?: unknown; error?: unknown }): Promise<AppendResult> {
    const failed = 'error' in outcome && outcome.error !== undefined;
    return this.end(id, 'tool', async (begun) => {
      const step: StepInput & { kind: string; ref: string; error?: Json } = {
        kind: failed ? 'tool.failed' : 'tool.completed',
        ref: id,
        tool_call: begun.tool_call,
        result: failed ? null : toJournalValue(outcome.result, { field: 'result' }),
      };
      if (failed) step.error = errorValue(outcome.error);
      return step;
    });
  }

  private async annotate(id: string, notes: { idempotencyKey?: string; summary?: string }): Promise<AppendResult> {
    await this.refresh();
    const e = this.pendingEffect(id, 'tool');
    const call: Record<string, Json> = { name: e.tool ?? '' };
    if (notes.idempotencyKey !== undefined) call.idempotency_key = notes.idempotencyKey;
    if (notes.summary !== undefined) call.summary = notes.summary;
    return this.record({ kind: 'tool.updated', ref: id, tool_call: call });
  }

  private pendingEffect(id: string, what: 'tool'): Effect;
  private pendingEffect(id: string, what: 'model'): ModelCall;
  private pendingEffect(id: string, what: 'tool' | 'model'): Effect | ModelCall {
    const found = what === 'tool' ? this.state.effects.get(id) : this.state.models.get(id);
    const noun = what === 'tool' ? 'tool effect' : 'model request';
    if (found === undefined) {
      throw new RuntimeError('EFFECT_UNKNOWN', `run ${this.runId} has no ${noun} ${JSON.stringify(id)}`, { hint: `list them with ${what === 'tool' ? 'run.effects()' : 'the journal\'s records'}` });
    }
    if (found.status !== 'started' || this.ending.has(id)) {
      throw new RuntimeError('EFFECT_ALREADY_ENDED', `${noun} ${JSON.stringify(id)} of run ${this.runId} already has its outcome${found.endSeq === null ? ' (being recorded)' : ` (${found.status} at seq ${found.endSeq})`}`, {
        location: { seq: found.endSeq ?? found.seq },
        hint: 'an outcome is recorded once; read it with run.effects()',
      });
    }
    return found;
  }

  private async end(id: string, what: 'tool' | 'model', build: (begun: { input: Json; model: Json; prompt: Json; tool_call: Json }) => Promise<StepInput & { kind: string }>): Promise<AppendResult> {
    await this.refresh();
    if (what === 'tool') this.pendingEffect(id, 'tool');
    else this.pendingEffect(id, 'model');
    this.ending.add(id);
    try {
      const begun = this.begun.get(id) ?? { input: null, model: null, prompt: null, tool_call: null };
      return await this.record(await build(begun));
    } finally {
      this.ending.delete(id);
    }
  }

  /** Every tool effect with no outcome, in seq order: the "outcome unknown after a crash" list. */
  async pendingEffects(): Promise<Effect[]> {
    return pendingOf(await this.refresh());
  }

  /** Every tool effect in seq order, with its status. */
  async effects(): Promise<Effect[]> {
    return [...(await this.refresh()).effects.values()].sort((a, b) => a.seq - b.seq);
  }

  /** Every model request in seq order, with its status. */
  async modelCalls(): Promise<ModelCall[]> {
    return [...(await this.refresh()).models.values()].sort((a, b) => a.seq - b.seq);
  }

  /** The last point where every started model call and tool effect (and every tool call a model asked for) has its outcome. */
  async continuationPoint(): Promise<ContinuationPoint> {
    const { continuation } = await this.refresh();
    const steps: StepRecord[] = [];
    if (continuation !== null) for await (const r of this.journal.read({ from: 0, to: continuation })) steps.push(r);
    return { seq: continuation, steps };
  }

  /** The run's status from its records: running until run.completed or run.failed. */
  async status(): Promise<RunState['status']> {
    return (await this.refresh()).status;
  }

  async complete(result?: unknown): Promise<AppendResult> {
    return this.record({ kind: 'run.completed', result: toJournalValue(result, { field: 'result' }) });
  }

  async fail(error: unknown): Promise<AppendResult> {
    return this.record({ kind: 'run.failed', error: errorValue(error) });
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}
