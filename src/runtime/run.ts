/**
 * A run: a run journal (`stepchain/v3`, or v2) driven by an agent loop (spec/RUNS.md). Every boundary is a
 * record appended before the next thing happens — a model request's start before the provider is called,
 * a tool's intent before it executes — so a process killed anywhere leaves a journal that says what was
 * in flight. A Run keeps the run's state from its own appends without reading them back, and reads only
 * what other writers appended. An outcome is decided on that state and appended only while the chain still
 * ends where the Run last read it (`after`, FILE-STORE.md §17), so a second outcome, or one for an id never
 * begun, is refused with a coded error in any process. Every write and every read of the state goes
 * through one queue in call order, so a Run's records reach the journal in the order they were asked for.
 *
 * Longer than 400 lines because every rule a writer decides on the run's state — one outcome per effect
 * (§11.3), the refusals and resolutions of RUNS.md §5, no record after the run ended — reads and appends through
 * the one queue and the one state this class keeps private; split, they would have to share both.
 */
import { isObject, type Json, type JsonObject } from '../canonical/json.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import { capabilitiesOf, RUN_FORMATS } from '../record/formats.js';
import type { GenesisV2, RunIdentity, StepRecordV2 } from '../record/v2.js';
import { ERASURE_KIND } from '../record/v3/erasure.js';
import { StepchainError } from '../errors.js';
import type { AppendResult, Journal } from '../store/types.js';
import { RuntimeError } from './errors.js';
import {
  committedResend,
  endedRefusal,
  idTaken,
  isRuleRefusal,
  outcomeRefusal,
  pendingAtCompletion,
  pendingError,
  refuseGiven,
  runEnded,
} from './given-record.js';
import {
  emptyState,
  foldRecord,
  intentKey,
  isRunRecord,
  type RunRecord,
  pendingOf,
  RESOLUTION_DECISIONS,
  startOf,
  type Effect,
  type ModelCall,
  type ResolutionDecision,
  type RunState,
} from '../record/run-state.js';
import { errorValue, outcomeValue, toJournalMeta, toJournalValue, type JournalInput, type RunMeta } from './value.js';
import {
  restoreRunState,
  savedApprovalRecords,
  savedPoint,
  saveRunState,
  type Begun,
} from '../record/saved-run-state.js';
import { ApprovalLedger, type ApprovalEntry } from '../approval/ledger.js';
import {
  APPROVAL_DENIED,
  APPROVAL_GRANTED,
  APPROVAL_REQUESTED,
  APPROVAL_STATEMENT_TYPE,
  decisionMetaDefect,
  instant,
  statementDefect,
  type ApprovalStatement,
} from '../approval/records.js';
import { approvalSignatureDefect, signApproval } from '../approval/sign.js';
import { genesisHash } from '../record/formats.js';
import {
  approvalFormatError,
  beginRefusal,
  erasedCallAt,
  outcomeOf,
  refuseForkedRequest,
  requestIdOf,
  unknownRequest,
  waitFor,
  type ApprovalOutcome,
  type ApprovalRequest,
  type ApprovalState,
  type AwaitApprovalOptions,
  type DecideApprovalOptions,
  type RequestApprovalOptions,
  type SignedDecision,
} from './approvals.js';

/**
 * After this many HEAD_MOVED in a row an outcome's retries pause a little (jittered, growing to 64 ms): each
 * HEAD_MOVED means another writer appended in the moment between this Run's read and its append, and two
 * Runs retrying in lockstep would otherwise keep meeting there. An outcome is never appended without
 * `after`: decided on a read, appended unconditionally, it could follow another process's outcome of the same
 * effect landed in between — the double outcome of issue 34, once a Run had been refused eight times in a row.
 */
const TRIES_BEFORE_PAUSING = 8;

/** A record this Run appends: a v2 step with its kind. */
type RunStep = StepInput & { kind: string };

export interface BeginModelOptions {
  /** The model's name (or a description of it). */
  model?: JournalInput;
  prompt?: JournalInput;
  input?: JournalInput;
  /** A durable id for the request (default a random UUID); its started record's step_id. */
  id?: string;
  meta?: RunMeta;
}

/** A tool call a model asked for (FORMAT §11.3, model.completed): the run waits for each one's outcome. */
export interface ModelToolCall {
  /** The model's id for the call (the tool's `callId`). */
  id?: string;
  name: string;
  arguments?: JournalInput;
}

export interface ModelOutcome {
  /** The model's output (message, text…). */
  result?: JournalInput;
  /** The tool calls the model asked for: the run is not at a continuation point until each has an outcome. */
  toolCalls?: readonly ModelToolCall[];
  usage?: JournalInput;
  finishReason?: string;
  meta?: RunMeta;
}

export interface BeginToolOptions {
  name: string;
  args?: JournalInput;
  /** The id the model gave this tool call, linking the effect to the model's request. */
  callId?: string;
  idempotencyKey?: string;
  summary?: string;
  /**
   * A durable id for the effect (default a random UUID); its started record's step_id. An id already in the run
   * names that effect (RUNS.md §5): pending, EFFECT_PENDING; completed with the same tool and arguments, it is
   * returned (status `completed`); else STEP_ID_CONFLICT. Only this Run re-sending the begin it has in flight
   * under that id (its acknowledgement lost) is answered with that effect.
   */
  id?: string;
  /** The effect this one retries (recorded as `meta.retry_of`); default: the matching effect resolved with `retry`, if any (RUNS.md §5). */
  retryOf?: string;
  meta?: RunMeta;
  /**
   * stepchain/v3: the granted approval request this call executes (APPROVALS.md §4), recorded as
   * `meta.approval`. Refused unless the request was granted, is not expired, its grant unused, and the call
   * equals what it presented (APPROVAL_PENDING, _DENIED, _EXPIRED, _USED, _MISMATCH).
   */
  approval?: ApprovalRequest | string;
}

/** How a pending effect (outcome unknown) is resolved (RUNS.md §5). */
export type EffectDecision =
  /** It did not happen, or may be repeated: recorded as failed; the next effect with its call id, key or intent names it as retried. */
  | { retry: true }
  /** It happened, with this result: recorded as completed. */
  | { done: true; result?: JournalInput }
  /** Given up: recorded as failed; nothing will repeat it. */
  | { abandon: true }
  /** Undone by a compensating action (optionally the id of the effect that compensated it): recorded as failed. */
  | { compensated: true; compensation?: string };

export interface ResolveOptions {
  /** Why: what was checked (the provider's dashboard, a log), for an auditor. Required. */
  reason: string;
  /** Who or what decided: a person, a policy (default "caller"). */
  by?: string;
}

export interface CompleteOptions {
  /** Complete although effects are pending: their ids are recorded as `meta.unresolved` (default false: EFFECT_PENDING). */
  leavePending?: boolean;
}

export interface ContinuationPoint {
  /** The last seq where nothing was in flight, or null when the run has no such point. */
  seq: number | null;
  /** The records 0..seq, typed as the run format's (read `.kind` without a cast). */
  steps: RunRecord[];
}

function decisionOf(d: EffectDecision): ResolutionDecision {
  const given =
    d === null || typeof d !== 'object'
      ? []
      : RESOLUTION_DECISIONS.filter(
          (k) => k in d && (d as Record<string, unknown>)[k === 'done' ? 'done' : k] === true,
        );
  if (given.length !== 1)
    throw optionError(
      'resolveEffect needs exactly one decision: { retry: true }, { done: true, result }, { abandon: true } or { compensated: true }',
    );
  return given[0]!;
}

export function optionError(message: string): RuntimeError {
  return new RuntimeError('RUN_OPTION_INVALID', message);
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
  /**
   * `completed` when beginTool found an effect that completed under the same idempotency key: this is that
   * effect, `result` its recorded result, and the tool must not run again (RUNS.md §5). Else `started`.
   */
  readonly status: 'started' | 'completed';
  readonly result?: Json;
  annotate(notes: { idempotencyKey?: string; summary?: string }): Promise<AppendResult>;
  complete(result?: unknown): Promise<AppendResult>;
  fail(error: unknown): Promise<AppendResult>;
}

/**
 * The record `step` became, from what was asked and what the journal answered, for the run reader. The
 * reader needs neither the salt nor the hashes' preimage, so the salt (the store's, FORMAT §12) is not
 * asked for; the values are the ones the append accepted, so they are JSON.
 */
function ownRecord(step: RunStep, at: AppendResult): StepRecordV2 {
  const record = {
    v: 2,
    seq: at.seq,
    step_id: at.step_id,
    ts: at.ts,
    prev_hash: at.prev_hash,
    step_hash: at.step_hash,
    kind: step.kind,
    ref: step.ref ?? null,
    input: step.input ?? null,
    model: step.model ?? null,
    prompt: step.prompt ?? null,
    tool_call: step.tool_call ?? null,
    result: step.result ?? null,
    error: step.error ?? null,
  };
  return (step.meta === undefined ? record : { ...record, meta: step.meta }) as StepRecordV2;
}

const headMoved = (e: unknown): boolean => e instanceof StepchainError && e.code === 'HEAD_MOVED';
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How a Run reads its journal. */
export interface RunOpenOptions {
  /**
   * Start from the state the store saved beside the chain (FILE-STORE.md §19), checked against the chain's
   * step hash at its seq, and fold only the records after it (default true). `resumeRun`, which verifies
   * the whole journal, folds every record it verified instead.
   */
  savedState?: boolean;
}

export class Run {
  readonly journal: Journal;
  private state: RunState = emptyState();
  /** What each begun call recorded, so its outcome repeats it and stands alone as a step. */
  private begun: Begun = new Map();
  /** The step hash of the last record folded (null before any): where a saved state is anchored. */
  private lastHash: string | null = null;
  /** Whether the store's saved state may be read on the first fold (FILE-STORE §19), and the seq it was saved at. */
  private savedUsable: boolean;
  private savedSeq = -1;
  /** Whether an erasure record was folded: the state may hold a value it erased, so it is not saved. */
  private erasedHere = false;
  /** The queue: the last write or read asked for; each starts when the one before it has settled. */
  private last: Promise<unknown> = Promise.resolve();
  /** Effects this Run began: in flight here, so a same-intent call beside them is not a repeat of an unknown outcome. */
  private readonly mine = new Set<string>();
  /**
   * The tool.started records this Run sent under a caller's id, until their outcome: re-sent as they were when
   * the caller begins that id again (its acknowledgement was lost), so the store's idempotent retry answers.
   */
  private readonly sending = new Map<string, RunStep>();
  /** stepchain/v3: the run's approval records (APPROVALS.md), read whole on the first approval call, then kept by fold. */
  private approvalBook: ApprovalLedger | null = null;
  /**
   * How many folded records may be approval records (null: unknown, a saved state that does not count them).
   * While none is, no call can have been presented for approval, so beginning an effect reads no ledger: its
   * cost stays flat in the run's length (issue 45). Once one is, beginTool's catch-ups read the ledger.
   */
  private approvalRecords: number | null = 0;
  private ledgerWanted = false;

  constructor(journal: Journal, options: RunOpenOptions = {}) {
    this.savedUsable = options.savedState !== false;
    if (!capabilitiesOf(journal.genesis).runRecords) {
      throw new RuntimeError(
        'NOT_A_RUN',
        `journal ${JSON.stringify(journal.id)} is a ${journal.genesis.format} journal, not a run (${RUN_FORMATS.join(' or ')})`,
        {
          hint: 'create run journals with startRun (or stepchain init --run)',
        },
      );
    }
    this.journal = journal;
  }

  /** Wraps an open run journal (its state is read on the first call that needs it). */
  static of(journal: Journal, options: RunOpenOptions = {}): Run {
    return new Run(journal, options);
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

  /**
   * Runs `work` after everything asked of this Run before it: writes reach the journal in call order, and
   * only one piece of work folds records into the state at a time. A write never waits on a tool — only
   * on the writes asked for before it — and a failed one does not hold up the next.
   */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.last.then(work);
    this.last = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Reads the records appended since the last read (by any process) into the run's state. */
  refresh(): Promise<RunState> {
    return this.inTurn(() => this.catchUp());
  }

  /** Folds in the records after the last one folded, up to `to` (default: the chain's end). */
  private async catchUp(to?: number): Promise<RunState> {
    const end = to ?? (await this.journal.head())?.seq ?? -1;
    if (this.savedUsable) {
      this.savedUsable = false;
      if (this.state.lastSeq === -1 && end >= 0) await this.loadSaved(end);
    }
    if (end > this.state.lastSeq)
      for await (const r of this.journal.read({ from: this.state.lastSeq + 1, to: end })) this.fold(r);
    if (this.ledgerWanted && this.approvalBook === null && this.approvalRecords !== 0) await this.readLedger();
    return this.state;
  }

  /**
   * Starts from the store's saved state (FILE-STORE §19) when it is folded to a step at or before `end`
   * whose hash the chain holds at that seq; otherwise leaves the state empty, to be folded from the records.
   */
  private async loadSaved(end: number): Promise<void> {
    const text = await this.journal.runStateCache?.read().catch(() => null);
    if (text === null || text === undefined) return;
    const point = savedPoint(text, this.runId);
    if (point === null || point.seq > end) return;
    let hash: string | null = null;
    for await (const l of this.journal.lines({ from: point.seq, to: point.seq })) {
      const line: unknown = JSON.parse(l.text);
      hash = isObject(line) && typeof line.step_hash === 'string' ? line.step_hash : null;
    }
    if (hash !== point.step_hash || (await erasedSince(this.journal, point.seq, end))) return;
    const restored = restoreRunState(point.saved);
    if (restored === null) return;
    this.state = restored.state;
    this.begun = restored.begun;
    this.lastHash = point.step_hash;
    this.savedSeq = point.seq;
    this.approvalRecords = savedApprovalRecords(point.saved);
  }

  /**
   * Saves the run's folded state where the store keeps it (FILE-STORE §19), so the next process that opens
   * the run reads only the records after it. Nothing when the store keeps none, the journal is read-only,
   * or nothing was folded since it was last saved or loaded; a failure to save is ignored (it is a hint).
   */
  saveState(): Promise<void> {
    return this.inTurn(async () => {
      const write = this.journal.runStateCache?.write;
      if (write === undefined || this.lastHash === null || this.state.lastSeq <= this.savedSeq || this.erasedHere)
        return;
      try {
        await write(saveRunState(this.runId, this.state, this.lastHash, this.begun, this.approvalRecords));
        this.savedSeq = this.state.lastSeq;
      } catch {
        // The chain is the truth; the next process folds from the records.
      }
    });
  }

  private fold(r: StepRecord): void {
    // A record folded before an erasure sealed it may hold its value in this state: never saved (ERASURE.md §6.2).
    if ((r as { kind?: unknown }).kind === ERASURE_KIND) this.erasedHere = true;
    this.lastHash = r.step_hash;
    foldRecord(this.state, r);
    if (this.approvalRecords !== null && mayBeApproval(r)) this.approvalRecords++;
    // Folding from the chain's start: the ledger is built as it goes, so no read is needed for it later.
    if (this.approvalBook === null && r.seq === 0 && capabilitiesOf(this.journal.genesis).approvals)
      this.approvalBook = this.newLedger();
    this.approvalBook?.record(r as unknown as Record<string, unknown>);
    const started = startOf(r);
    if (started !== null)
      this.begun.set(started.step_id, {
        input: started.input,
        model: started.model,
        prompt: started.prompt,
        tool_call: started.tool_call,
      });
  }

  /**
   * Appends `step` and folds it in without reading it back. Records other writers appended before it (a
   * gap between the last seq folded and its seq) are read first; an idempotent repeat of a record already
   * folded changes nothing.
   */
  private async appendOwn(step: RunStep, after?: number): Promise<AppendResult> {
    const at = await this.journal.append(step, after === undefined ? undefined : { after });
    if (at.seq > this.state.lastSeq) {
      if (at.seq > this.state.lastSeq + 1) await this.catchUp(at.seq - 1);
      this.fold(ownRecord(step, at));
    }
    return at;
  }

  /**
   * Appends the step `decide` builds from the state, which throws a RuntimeError when the state refuses it.
   * A refusal stands only once the state has been read to the chain's end during this call; an accepted
   * step is appended after the last seq folded, and when another writer appended meanwhile (HEAD_MOVED)
   * the Run reads what it lacks and decides again.
   */
  private async checked(decide: () => RunStep): Promise<AppendResult>;
  private async checked(decide: () => RunStep | Effect): Promise<AppendResult | Effect>;
  private async checked(decide: () => RunStep | Effect): Promise<AppendResult | Effect> {
    let current = false;
    for (let tries = 1; ; tries++) {
      let step: RunStep | Effect;
      try {
        step = decide();
      } catch (e) {
        if (current || !(e instanceof RuntimeError)) throw e;
        await this.catchUp();
        current = true;
        continue;
      }
      // An effect that completed under the key asked for: an outcome never changes, so no read can undo this.
      if (!('kind' in step)) return step;
      try {
        return await this.appendOwn(step, this.state.lastSeq);
      } catch (e) {
        if (!headMoved(e)) throw e;
        if (tries >= TRIES_BEFORE_PAUSING)
          await pause(Math.min(64, 2 ** (tries - TRIES_BEFORE_PAUSING)) * (0.5 + Math.random()));
        await this.catchUp();
        current = true;
      }
    }
  }

  /**
   * Appends one record given whole (kind, ref, content) in turn and folds it in, under the rules the other calls
   * keep (RUNS.md §1, §5; given-record.ts): RUN_ENDED once the run has ended (but for a resolution); an outcome
   * for no started record, or a second one (EFFECT_UNKNOWN, EFFECT_ALREADY_ENDED); a start that repeats a
   * pending effect (EFFECT_PENDING) or takes an id of the run (STEP_ID_CONFLICT); run.completed while effects
   * are pending without meta.unresolved (EFFECT_PENDING).
   */
  record(step: RunStep): Promise<AppendResult> {
    return this.inTurn(async () => {
      try {
        return await this.checked(() => {
          const ended = endedRefusal(this.runId, this.state.status, step);
          if (ended !== null) throw ended;
          refuseGiven(this.runId, this.state, step);
          return step;
        });
      } catch (e) {
        // The very record re-sent after a lost acknowledgement: answered with the step it is, as the store would.
        const resent = isRuleRefusal(e) ? await committedResend(this.journal, step, this.state.lastSeq) : null;
        if (resent === null) throw e;
        return resent;
      }
    });
  }

  /** RUN_ENDED when the state read so far has the run's run.completed or run.failed. */
  private refuseEnded(what: string): void {
    if (this.state.status !== 'running') throw runEnded(this.runId, this.state.status, what);
  }

  async beginModel(options: BeginModelOptions = {}): Promise<ModelCallHandle> {
    const step: RunStep = {
      kind: 'model.started',
      input: toJournalValue(options.input, { field: 'input' }),
      model: toJournalValue(options.model, { field: 'model' }),
      prompt: toJournalValue(options.prompt, { field: 'prompt' }),
    };
    if (options.id !== undefined) step.step_id = options.id;
    if (options.meta !== undefined) step.meta = toJournalMeta(options.meta);
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
    // The values are converted now, as they are when asked for; the start they repeat is read in turn.
    const meta: Record<string, unknown> = { ...(outcome.meta ?? {}) };
    if (outcome.usage !== undefined) meta.usage = outcome.usage;
    if (outcome.finishReason !== undefined) meta.finish_reason = outcome.finishReason;
    const m = toJournalMeta(meta);
    const toolCall = outcome.toolCalls === undefined ? null : toJournalValue(outcome.toolCalls, { field: 'tool_call' });
    const result = toJournalValue(outcome.result, { field: 'result' });
    const failure = error === null ? null : errorValue(error);
    return this.end(id, 'model', (begun) => {
      const step: RunStep = {
        kind: failure === null ? 'model.completed' : 'model.failed',
        ref: id,
        ...begun,
        tool_call: toolCall,
        result,
      };
      if (failure !== null) step.error = failure;
      if (Object.keys(m).length > 0) step.meta = m;
      return step;
    });
  }

  /**
   * Records a tool's intent before it runs (§11.3) — unless that would repeat an effect of unknown outcome
   * (RUNS.md §5): a pending effect with the same call id, idempotency key, or tool and arguments (one this Run
   * did not begin) is refused with EFFECT_PENDING naming it; resolve it first (resolveEffect). An effect that
   * completed under the same idempotency key is returned instead of a new one (status `completed`, its result).
   * These checks come before any answer by `id`: an id already in the run is never a new effect (see `id`).
   */
  async beginTool(options: BeginToolOptions): Promise<EffectHandle> {
    if (
      options === null ||
      typeof options !== 'object' ||
      typeof options.name !== 'string' ||
      options.name.length === 0
    ) {
      throw optionError("beginTool needs { name: the tool's name, args }");
    }
    const args = toJournalValue(options.args, { field: 'tool_call/arguments' });
    const call: Record<string, Json> = { name: options.name, arguments: args };
    if (options.callId !== undefined) call.call_id = options.callId;
    if (options.idempotencyKey !== undefined) call.idempotency_key = options.idempotencyKey;
    if (options.summary !== undefined) call.summary = options.summary;
    const meta = options.meta === undefined ? undefined : toJournalMeta(options.meta);
    const intent = intentKey(options.name, args);
    const approvalId = options.approval === undefined ? undefined : requestIdOf(options.approval);
    // Every effect of a v3 journal is checked against its requests: a call presented for approval is begun only
    // for its granted request (APPROVALS.md §4: APPROVAL_REQUIRED, or APPROVAL_DENIED when it was denied).
    if (approvalId !== undefined && options.summary !== undefined) {
      throw new RuntimeError(
        'APPROVAL_MISMATCH',
        `run ${this.runId}: an effect begun for approval request ${JSON.stringify(approvalId)} carries no summary: the approver saw the call's name and arguments only (APPROVALS.md §4)`,
      );
    }

    // The record of the last decision that let an append go ahead: once sent, it is what this Run re-sends.
    let sent: RunStep | undefined;
    // The ledger loads in the append's turn, so the records still reach the journal in call order.
    const at = await this.inTurn(async () => {
      await this.ledgerForBegin(approvalId);
      return this.checked(() => {
        sent = undefined;
        this.refuseEnded('tool.started');
        const approval = this.approvalMeta(approvalId, options.name, args);
        const sameId = options.id === undefined ? undefined : this.state.effects.get(options.id);
        // This Run re-sending the effect it is beginning (its append's acknowledgement was lost): the very record
        // again, which the store's idempotent retry answers (FILE-STORE.md §10). Nothing else is answered by id.
        const resent = options.id === undefined ? undefined : this.sending.get(options.id);
        if (resent !== undefined && (sameId === undefined || sameId.status === 'started')) return resent;
        const step: RunStep = { kind: 'tool.started', tool_call: call };
        if (options.id !== undefined) step.step_id = options.id;
        const matches = [
          options.idempotencyKey === undefined
            ? undefined
            : this.state.effects.get(this.state.byKey.get(options.idempotencyKey) ?? ''),
          options.callId === undefined
            ? undefined
            : this.state.effects.get(this.state.byCallId.get(options.callId) ?? ''),
          this.state.effects.get(this.state.byIntent.get(intent) ?? ''),
        ];
        const [byKey, byCall, byIntent] = matches;
        // The repeat checks of RUNS.md §5 come first, whatever id is asked for.
        if (byKey?.status === 'completed') return byKey;
        const pending =
          byKey?.status === 'started'
            ? byKey
            : byCall?.status === 'started'
              ? byCall
              : byIntent?.status === 'started' && !this.mine.has(byIntent.id)
                ? byIntent
                : undefined;
        if (pending !== undefined) throw pendingError(this.runId, pending, options.name);
        if (sameId !== undefined) {
          // An id already in the run names that effect, never a new one (RUNS.md §5).
          if (sameId.status === 'started') throw pendingError(this.runId, sameId, options.name);
          if (
            sameId.status === 'completed' &&
            sameId.tool === options.name &&
            intentKey(sameId.tool, sameId.args) === intent
          )
            return sameId;
          throw idTaken(this.runId, sameId);
        }
        const retried =
          options.retryOf ?? matches.find((e) => e?.resolution?.decision === 'retry' && !this.retried(e.id))?.id;
        const m: JsonObject = { ...(meta ?? {}) };
        if (retried !== undefined) m.retry_of = retried;
        if (approval !== undefined) m.approval = approval;
        if (Object.keys(m).length > 0) step.meta = m;
        sent = step;
        return step;
      });
    }).catch((e: unknown) => {
      // An append that failed after its decision (an I/O error, a lost acknowledgement) may have landed.
      if (options.id !== undefined && sent !== undefined) this.sending.set(options.id, sent);
      throw e;
    });
    if (options.id !== undefined && sent !== undefined) this.sending.set(options.id, sent);
    if (!('step_hash' in at)) {
      return { ...this.effect(at.id, at.seq), status: 'completed', result: at.result };
    }
    this.mine.add(at.step_id);
    return this.effect(at.step_id, at.seq);
  }

  /**
   * The `meta.approval` of an effect begun for request `id` (APPROVALS.md §4), or a RuntimeError when the
   * request does not let it begin; without a request, a refusal when the call is one presented for approval.
   */
  private approvalMeta(id: string | undefined, name: string, args: Json): JsonObject | undefined {
    const book = this.approvalBook;
    if (book === null) return undefined;
    if (id === undefined) {
      const presented = book.presenting(name, args);
      if (presented === undefined) return undefined;
      if (presented.status === 'denied') throw beginRefusal(this.runId, presented, true, Date.now())!;
      throw new RuntimeError(
        'APPROVAL_REQUIRED',
        `run ${this.runId}: this call was presented for approval as request ${JSON.stringify(presented.request)} (seq ${presented.request_seq}); begin it with { approval: request } once granted`,
      );
    }
    const e = book.state(id, Date.now());
    if (e === undefined) throw unknownRequest(this.runId, id);
    if (book.copiedFromParent(id)) {
      throw new RuntimeError(
        'APPROVAL_REQUIRED',
        `run ${this.runId}: approval request ${JSON.stringify(id)} (seq ${e.request_seq}) was copied from the parent journal by this fork: a decision on it is the parent's, so it authorises no effect here; request approval again in the fork (APPROVALS.md §4)`,
      );
    }
    const usedBy = e.status === 'granted' && e.effect === null ? book.hidden.mayBeUsed(id) : null;
    if (usedBy !== null)
      throw new RuntimeError(
        'APPROVAL_USED',
        `run ${this.runId}: the grant of approval request ${JSON.stringify(id)} (seq ${e.request_seq}) may have been used by the effect at seq ${usedBy}, whose meta was erased: one grant, one effect (ask again)`,
      );
    const refusal = beginRefusal(this.runId, e, book.presents(id, name, args), Date.now());
    if (refusal !== null) throw refusal;
    return { request: id, request_hash: e.request_hash };
  }

  /**
   * The approval ledger a begin decides with, inside its turn: read when the begin names a request, or when
   * the run holds an approval record (a call may have been presented); none is read while it holds none.
   */
  private async ledgerForBegin(approvalId: string | undefined): Promise<void> {
    if (approvalId !== undefined) await this.approvalsLoaded(false);
    else if (capabilitiesOf(this.journal.genesis).approvals) {
      this.ledgerWanted = true; // from now on a catch-up that folds an approval record reads the ledger
      if (this.approvalBook === null) await this.catchUp();
    }
  }

  /** Reads the run's approval records (the whole chain, once; then fold keeps them) to the chain's end. */
  private approvalsRead(): Promise<ApprovalLedger> {
    return this.inTurn(() => this.approvalsLoaded(true));
  }

  /**
   * The approval ledger, read from the chain the first time (inside a turn); `fresh` reads to the chain's end
   * first. A decision on a stale ledger is safe: a refusal is re-decided after a read, an append after another
   * writer's is refused (HEAD_MOVED) and re-decided (checked).
   */
  private async approvalsLoaded(fresh: boolean): Promise<ApprovalLedger> {
    if (!capabilitiesOf(this.journal.genesis).approvals)
      throw approvalFormatError(this.runId, this.journal.genesis.format);
    if (fresh || this.approvalBook === null) await this.catchUp();
    return this.approvalBook ?? (await this.readLedger());
  }

  /** Builds the approval ledger from the chain's records up to the last one folded. */
  private async readLedger(): Promise<ApprovalLedger> {
    const book = this.newLedger();
    let count = 0;
    if (this.state.lastSeq >= 0)
      for await (const r of this.journal.read({ from: 0, to: this.state.lastSeq })) {
        if (mayBeApproval(r)) count++;
        book.record(r as unknown as Record<string, unknown>);
      }
    this.approvalRecords = count; // counted now, for the state saved next
    return (this.approvalBook = book);
  }

  /** A fork's last step copied from its parent (its lineage's from_step), or undefined for a journal that is no fork. */
  private forkedAt(): number | undefined {
    const lineage = (this.journal as { lineage?: { from_step?: unknown } | null }).lineage;
    return typeof lineage?.from_step === 'number' ? lineage.from_step : undefined;
  }

  private newLedger(): ApprovalLedger {
    const forkedAt = this.forkedAt();
    return new ApprovalLedger({
      genesisHash: genesisHash(this.journal.genesis),
      ...(forkedAt === undefined ? {} : { forkedAt }),
    });
  }

  /**
   * Presents a tool call for approval (APPROVALS.md §2): appends an approval.requested record with the call
   * and the digest of exactly what was presented. stepchain/v3 journals only (APPROVAL_FORMAT).
   */
  async requestApproval(
    call: { name: string; args?: JournalInput },
    options: RequestApprovalOptions = {},
  ): Promise<ApprovalRequest> {
    if (!capabilitiesOf(this.journal.genesis).approvals)
      throw approvalFormatError(this.runId, this.journal.genesis.format);
    if (call === null || typeof call !== 'object' || typeof call.name !== 'string' || call.name.length === 0)
      throw optionError("requestApproval needs { name: the tool's name, args }");
    const presented = { name: call.name, arguments: toJournalValue(call.args, { field: 'input/presented/arguments' }) };
    let expiresAt: string | null = null;
    if (options.expiresAt !== undefined) {
      const t = options.expiresAt instanceof Date ? options.expiresAt.getTime() : Date.parse(options.expiresAt);
      if (!Number.isFinite(t)) throw optionError('requestApproval: expiresAt must be a Date or an ISO 8601 timestamp');
      expiresAt = new Date(t).toISOString();
    }
    // No digest of the call (APPROVALS.md §2): the record's step hash commits to it through salted units.
    const step: RunStep = { kind: APPROVAL_REQUESTED, input: { presented, expires_at: expiresAt } };
    if (options.id !== undefined) step.step_id = options.id;
    if (options.meta !== undefined) step.meta = toJournalMeta(options.meta);
    const at = await this.record(step);
    return {
      id: at.step_id,
      seq: at.seq,
      stepHash: at.step_hash,
      call: presented,
      expiresAt,
      genesisHash: genesisHash(this.journal.genesis),
    };
  }

  /**
   * Waits for a decision on a request, reading the journal every `pollMs` (another process may decide: the
   * CLI's `stepchain approve`). Resolves granted, denied, or expired once its expiry passes undecided; a
   * decision that does not verify does not count.
   */
  async awaitApproval(request: ApprovalRequest | string, options: AwaitApprovalOptions = {}): Promise<ApprovalOutcome> {
    const id = requestIdOf(request);
    const pollMs = options.pollMs ?? 250;
    if (!(pollMs > 0)) throw optionError('awaitApproval: pollMs must be a positive number of milliseconds');
    for (;;) {
      options.signal?.throwIfAborted();
      const e = (await this.approvalsRead()).state(id, Date.now());
      if (e === undefined) throw unknownRequest(this.runId, id);
      if (e.status === 'invalid')
        throw new RuntimeError(
          'APPROVAL_INVALID',
          `run ${this.runId}: approval request ${JSON.stringify(id)} is not a well-formed request`,
        );
      const outcome = outcomeOf(e);
      if (outcome !== null) return outcome;
      await waitFor(pollMs, options.signal);
    }
  }

  /**
   * Decides a request: appends approval.granted or approval.denied with the approver's key, its name, and
   * its Ed25519 signature over the statement naming this journal, the request and the decision
   * (APPROVALS.md §3). Refused for a request already decided (APPROVAL_DECIDED) or expired.
   */
  async decideApproval(
    request: ApprovalRequest | string,
    decision: 'granted' | 'denied',
    options: DecideApprovalOptions,
  ): Promise<ApprovalOutcome> {
    if (decision !== 'granted' && decision !== 'denied')
      throw optionError('decideApproval: the decision is "granted" or "denied"');
    if (options === null || typeof options !== 'object' || options.key === undefined)
      throw optionError("decideApproval needs { key: the approver's Ed25519 private key }");
    const reason = options.reason === undefined || options.reason === '' ? null : options.reason;
    return this.appendDecision(requestIdOf(request), (e, now) => {
      const statement: ApprovalStatement = {
        decided_at: new Date(now).toISOString(),
        decision,
        genesis_hash: genesisHash(this.journal.genesis),
        reason,
        request: e.request,
        request_hash: e.request_hash,
        request_seq: e.request_seq,
        type: APPROVAL_STATEMENT_TYPE,
      };
      return { input: statement, meta: signApproval(statement, options.key, options.name) };
    });
  }

  /**
   * Records a decision an approver signed elsewhere (its UI, a resumed LangGraph interrupt), as it is: its
   * statement must name this journal and the request as recorded, and its signature hold (APPROVAL_INVALID
   * otherwise, nothing appended). The same decision already recorded is answered as recorded.
   */
  async recordApprovalDecision(request: ApprovalRequest | string, signed: SignedDecision): Promise<ApprovalOutcome> {
    const id = requestIdOf(request);
    const why =
      signed === null || typeof signed !== 'object'
        ? 'not { input, meta }'
        : (statementDefect(signed.input) ??
          // A writer records statements of the current type only (APPROVALS.md §3): v1's carries an unsalted digest.
          (signed.input.type !== APPROVAL_STATEMENT_TYPE
            ? `input.type must be ${JSON.stringify(APPROVAL_STATEMENT_TYPE)}: a writer records no other`
            : null) ??
          decisionMetaDefect(signed.meta));
    if (why !== null)
      throw new RuntimeError(
        'APPROVAL_INVALID',
        `run ${this.runId}: the decision on ${JSON.stringify(id)} is not a signed approval decision: ${why}`,
      );
    const sigWhy = approvalSignatureDefect(signed.input, signed.meta);
    if (sigWhy !== null)
      throw new RuntimeError(
        'APPROVAL_INVALID',
        `run ${this.runId}: the decision on ${JSON.stringify(id)} does not verify: ${sigWhy}`,
      );
    const existing = (await this.approvalsRead()).state(id);
    if (existing?.decision_seq != null) {
      for await (const r of this.journal.read({ from: existing.decision_seq, to: existing.decision_seq })) {
        if ((r.meta as { signature?: unknown } | undefined)?.signature === signed.meta.signature)
          return outcomeOf(existing)!;
      }
    }
    return this.appendDecision(id, () => signed);
  }

  /** Appends the decision `sign` makes for request `id`, once the run's records let it (APPROVALS.md §3, §5). */
  private async appendDecision(
    id: string,
    sign: (e: ApprovalEntry, now: number) => SignedDecision,
  ): Promise<ApprovalOutcome> {
    await this.approvalsRead();
    let decision: 'granted' | 'denied' = 'granted';
    const at = await this.inTurn(() =>
      this.checked(() => {
        const now = Date.now();
        const e = this.approvalBook!.state(id, now);
        if (e === undefined) throw unknownRequest(this.runId, id);
        refuseForkedRequest(this.runId, e, this.forkedAt());
        if (e.status === 'invalid')
          throw new RuntimeError(
            'APPROVAL_INVALID',
            `run ${this.runId}: approval request ${JSON.stringify(id)} is not a well-formed request`,
          );
        if (e.status === 'granted' || e.status === 'denied')
          throw new RuntimeError(
            'APPROVAL_DECIDED',
            `run ${this.runId}: approval request ${JSON.stringify(id)} was already ${e.status} at seq ${e.decision_seq}; one decision per request`,
          );
        if (e.status === 'expired')
          throw new RuntimeError(
            'APPROVAL_EXPIRED',
            `run ${this.runId}: approval request ${JSON.stringify(id)} expired at ${e.expires_at}; a decision no longer counts`,
          );
        const { input, meta } = sign(e, now);
        decision = input.decision;
        const bad =
          input.request !== id
            ? `it is about request ${JSON.stringify(input.request)}`
            : input.request_seq !== e.request_seq || input.request_hash !== e.request_hash
              ? `it names request seq ${input.request_seq} ${input.request_hash}, but the request is seq ${e.request_seq} ${e.request_hash}`
              : input.genesis_hash !== genesisHash(this.journal.genesis)
                ? `it names the journal with genesis ${input.genesis_hash}, not this one`
                : e.expires_at !== null && instant(input.decided_at)! > Date.parse(e.expires_at)
                  ? `it was decided at ${input.decided_at}, after the request expired (${e.expires_at})`
                  : null;
        if (bad !== null)
          throw new RuntimeError(
            'APPROVAL_INVALID',
            `run ${this.runId}: the decision does not bind approval request ${JSON.stringify(id)}: ${bad}`,
          );
        this.refuseEnded(decision === 'granted' ? APPROVAL_GRANTED : APPROVAL_DENIED);
        return {
          kind: decision === 'granted' ? APPROVAL_GRANTED : APPROVAL_DENIED,
          ref: id,
          ts: input.decided_at,
          input: input,
          meta: meta,
        };
      }),
    );
    const e = this.approvalBook!.state(id)!;
    return { status: decision, request: id, seq: at.seq, approver: e.approver, reason: e.reason };
  }

  /** Every approval request of the run, in order, with where it stands now. */
  async approvals(): Promise<ApprovalState[]> {
    const book = await this.approvalsRead();
    const g = genesisHash(this.journal.genesis);
    const forkedAt = this.forkedAt() ?? -1;
    const out: ApprovalState[] = [];
    for (const e of book.entries(Date.now())) {
      const input = book.presented(e.request);
      // A request with an erased value (ERASURE.md §6.3) is not compared, but still shown: what remains of it.
      const remains = input === null ? await erasedCallAt(this.journal, e.request_seq) : null;
      out.push({
        ...e,
        id: e.request,
        seq: e.request_seq,
        stepHash: e.request_hash,
        call: remains ?? { name: input?.presented.name ?? '', arguments: (input?.presented.arguments ?? null) as Json },
        ...(remains === null ? {} : { erased: true as const }),
        ...(e.request_seq <= forkedAt ? { forked: true as const } : {}),
        expiresAt: e.expires_at,
        genesisHash: g,
        decisionSeq: e.decision_seq,
      });
    }
    return out;
  }

  /** Whether an effect was already retried by a later one (its retry_of), so a second match does not name it again. */
  private retried(id: string): boolean {
    for (const e of this.state.effects.values()) if (e.retryOf === id) return true;
    return false;
  }

  /** The handle of an effect begun earlier (in this process or another): to record its outcome. */
  effect(id: string, seq = this.state.effects.get(id)?.seq ?? -1): EffectHandle {
    return {
      id,
      seq,
      status: 'started',
      annotate: (notes) => this.annotate(id, notes),
      complete: (result) => this.endTool(id, { result }),
      fail: (error) => this.endTool(id, { error }),
    };
  }

  /** Records a tool effect's outcome by id: `{ result }` for completed, `{ error }` for failed. */
  async endTool(id: string, outcome: { result?: unknown; error?: unknown }): Promise<AppendResult> {
    const failed = 'error' in outcome && outcome.error !== undefined;
    // What the tool returned stands whatever it holds: a part JSON cannot represent is recorded as a
    // marker, listed in meta.unrepresentable (§11.6), never turned into a failure after the fact.
    const converted = failed ? outcomeValue(outcome.error, 'error') : outcomeValue(outcome.result, 'result');
    const failure = failed ? errorValue(converted.value) : null;
    try {
      return await this.end(id, 'tool', (begun) => {
        const step: RunStep = {
          kind: failed ? 'tool.failed' : 'tool.completed',
          ref: id,
          tool_call: begun.tool_call,
          result: failed ? null : converted.value,
        };
        if (failure !== null) step.error = failure;
        if (converted.unrepresentable.length > 0)
          step.meta = { unrepresentable: converted.unrepresentable as unknown as Json };
        return step;
      });
    } finally {
      this.mine.delete(id);
      this.sending.delete(id);
    }
  }

  /**
   * Records the decision that resolves a pending effect, one whose outcome is unknown (RUNS.md §5): its outcome
   * record, `tool.completed` for `done` (with the result given) or `tool.failed` (error EffectResolved) for
   * `retry`, `abandon` and `compensated`, carrying `meta.resolution` {decision, by, reason}. Allowed after the
   * run ended (a decision taken later about an effect left pending). EFFECT_NOT_PENDING when it has an outcome.
   */
  async resolveEffect(id: string, decision: EffectDecision, options: ResolveOptions): Promise<AppendResult> {
    const chosen = decisionOf(decision);
    if (
      options === null ||
      typeof options !== 'object' ||
      typeof options.reason !== 'string' ||
      options.reason.trim() === ''
    ) {
      throw optionError('resolveEffect needs { reason: why this decision (what was checked) }');
    }
    const by = options.by ?? 'caller';
    if (typeof by !== 'string' || by === '') throw optionError('resolveEffect: by must be a non-empty string');
    const resolution: JsonObject = { decision: chosen, by, reason: options.reason };
    if ('compensated' in decision && decision.compensation !== undefined)
      resolution.compensation = decision.compensation;
    const done = 'done' in decision;
    const converted = done ? outcomeValue(decision.result, 'result') : { value: null, unrepresentable: [] };
    return this.inTurn(() =>
      this.checked(() => {
        const e = this.state.effects.get(id);
        if (e !== undefined && e.status !== 'started') {
          throw new RuntimeError(
            'EFFECT_NOT_PENDING',
            `effect ${JSON.stringify(id)} of run ${this.runId} is not pending: it ${e.status} at seq ${e.endSeq}`,
            {
              location: { seq: e.endSeq ?? e.seq },
              hint: 'only an effect with no outcome (effect list --pending) is resolved',
            },
          );
        }
        this.pendingEffect(id, 'tool');
        const begun = this.begun.get(id) ?? { tool_call: null };
        const meta: JsonObject = { resolution };
        if (converted.unrepresentable.length > 0) meta.unrepresentable = converted.unrepresentable as unknown as Json;
        const step: RunStep = done
          ? { kind: 'tool.completed', ref: id, tool_call: begun.tool_call, result: converted.value, meta }
          : {
              kind: 'tool.failed',
              ref: id,
              tool_call: begun.tool_call,
              error: {
                name: 'EffectResolved',
                message: `outcome unknown; resolved: ${chosen} (by ${by}): ${options.reason}`,
              },
              meta,
            };
        return step;
      }),
    );
  }

  private annotate(id: string, notes: { idempotencyKey?: string; summary?: string }): Promise<AppendResult> {
    return this.inTurn(() =>
      this.checked(() => {
        const e = this.pendingEffect(id, 'tool');
        const call: Record<string, Json> = { name: e.tool ?? '' };
        if (notes.idempotencyKey !== undefined) call.idempotency_key = notes.idempotencyKey;
        if (notes.summary !== undefined) call.summary = notes.summary;
        return { kind: 'tool.updated', ref: id, tool_call: call };
      }),
    );
  }

  private pendingEffect(id: string, what: 'tool'): Effect;
  private pendingEffect(id: string, what: 'model'): ModelCall;
  private pendingEffect(id: string, what: 'tool' | 'model'): Effect | ModelCall {
    const found = what === 'tool' ? this.state.effects.get(id) : this.state.models.get(id);
    const refused = outcomeRefusal(this.runId, found, id, what);
    if (refused !== null) throw refused;
    return found!;
  }

  private end(
    id: string,
    what: 'tool' | 'model',
    build: (begun: { input: Json; model: Json; prompt: Json; tool_call: Json }) => RunStep,
  ): Promise<AppendResult> {
    return this.inTurn(() =>
      this.checked(() => {
        this.refuseEnded(`the outcome of ${id}`);
        if (what === 'tool') this.pendingEffect(id, 'tool');
        else this.pendingEffect(id, 'model');
        return build(this.begun.get(id) ?? { input: null, model: null, prompt: null, tool_call: null });
      }),
    );
  }

  /** Pending effects this Run did not begin: their process may have died mid-tool (from the state already read). */
  unknownOutcomes(): Effect[] {
    return pendingOf(this.state).filter((e) => !this.mine.has(e.id));
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
  continuationPoint(): Promise<ContinuationPoint> {
    return this.inTurn(async () => {
      const { continuation } = await this.catchUp();
      const steps: RunRecord[] = [];
      // A run journal holds v2 or v3 records only, as its genesis says (a verifier refuses anything else).
      if (continuation !== null)
        for await (const r of this.journal.read({ from: 0, to: continuation })) if (isRunRecord(r)) steps.push(r);
      return { seq: continuation, steps };
    });
  }

  /** The run's status from its records: running until run.completed or run.failed. */
  async status(): Promise<RunState['status']> {
    return (await this.refresh()).status;
  }

  /**
   * Records run.completed. Refused (EFFECT_PENDING) while effects are pending — their outcome is unknown —
   * unless `leavePending`, which records their ids as `meta.unresolved` (RUNS.md §5). RUN_ENDED once ended.
   */
  async complete(result?: JournalInput, options: CompleteOptions = {}): Promise<AppendResult> {
    const value = toJournalValue(result, { field: 'result' });
    return this.inTurn(() =>
      this.checked(() => {
        this.refuseEnded('run.completed');
        const pending = pendingOf(this.state);
        const step: RunStep = { kind: 'run.completed', result: value };
        if (pending.length > 0) {
          if (options.leavePending !== true) throw pendingAtCompletion(this.runId, pending);
          step.meta = { unresolved: pending.map((e) => e.id) };
        }
        return step;
      }),
    );
  }

  /** Records run.failed (allowed with effects pending: a failed run says nothing of their outcome). RUN_ENDED once ended. */
  async fail(error: unknown): Promise<AppendResult> {
    const failure = errorValue(error);
    return this.inTurn(() =>
      this.checked(() => {
        this.refuseEnded('run.failed');
        return { kind: 'run.failed', error: failure };
      }),
    );
  }

  /** Saves the run's state (`saveState`) and closes the journal, once the writes asked for before it are written. */
  async close(): Promise<void> {
    await this.saveState();
    return this.inTurn(() => this.journal.close());
  }
}

/**
 * Whether a record after `seq` (up to `end`) is an erasure record of a record at or before it: a state saved
 * at `seq` was folded before that erasure and may hold the erased value (ERASURE.md §6.2), so it is not used.
 */
async function erasedSince(journal: Journal, seq: number, end: number): Promise<boolean> {
  if (end <= seq) return false;
  for await (const l of journal.lines({ from: seq + 1, to: end })) {
    if (!l.text.includes(`"kind":"${ERASURE_KIND}"`)) continue;
    const r = JSON.parse(l.text) as { kind?: unknown; input?: { target?: unknown } | null };
    if (r.kind === ERASURE_KIND && typeof r.input?.target === 'number' && r.input.target <= seq) return true;
  }
  return false;
}

/** Whether a record may be an approval record (APPROVALS.md): a kind `approval.*`, or no kind to tell. */
function mayBeApproval(r: StepRecord): boolean {
  const kind = (r as { kind?: unknown }).kind;
  return typeof kind !== 'string' || kind.startsWith('approval.');
}
