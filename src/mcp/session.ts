/**
 * What the proxy records of one MCP session (spec/MCP.md): a run whose identity comes from the
 * `initialize` exchange, and a tool effect per `tools/call` — its intent durable before the call is
 * forwarded, its outcome from the server's response, a client's cancellation, or the proxy's policy.
 * Recording never throws into the proxy: each method says whether it succeeded, and the proxy decides.
 */
import type {
  Run,
  EffectHandle,
  ModelCallHandle,
  StartRunOptions,
  ApprovalRequest,
  ApprovalOutcome,
} from '../runtime/index.js';
import { journalFormat, type RunFormat } from '../record/formats.js';
import { startRun, toJournalValue, type KeyInput } from '../runtime/index.js';
import type { Store } from '../store/types.js';
import type { Json } from '../canonical/json.js';

/** Label values are at most 1024 code units (FORMAT §11.2); a longer client or server name is cut. */
const cut = (s: unknown, n: number): string | undefined =>
  typeof s === 'string' && s.length > 0 ? s.slice(0, n) : undefined;

export interface SessionOptions {
  store: Store;
  /** The run id: a new journal's name, or undefined for a store, where each session gets a fresh id. */
  runId?: string;
  labels?: Record<string, string>;
  agent?: string;
  conversationId?: string;
  /** The server's command line, recorded in run.started. */
  command: string[];
  blobThreshold?: number;
  /**
   * The run journal's format (default the runtime's, stepchain/v3). Approval records (spec/MCP.md §5.1) need
   * stepchain/v3: on a v2 run a call held for approval is recorded as before, by tool.updated and tool.failed.
   */
  format?: RunFormat;
  /** Where the proxy says what it does and what went wrong (standard error). */
  log: (line: string) => void;
  /** The location of a run of this store, as `stepchain approve` takes it (named to an approver); none when unknown. */
  locate?: (runId: string) => string;
}

/** A fresh run id for a session in a store: sortable by time, unique by its random tail. */
export function sessionRunId(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `mcp-${stamp}-${globalThis.crypto.randomUUID().slice(0, 8)}`;
}

interface Info {
  name?: unknown;
  version?: unknown;
}

/**
 * A JSON-RPC value (parsed JSON, typed unknown at the boundary) as a journal value: converted where the
 * runtime converted it before its options were typed, with the same field, so a refusal reads the same.
 */
function wire(value: unknown, field: string): Json {
  return toJournalValue(value, { field });
}

export class SessionRecorder {
  private run: Promise<Run> | undefined;
  private clientInfo: Info | undefined;
  private initialize: unknown;
  private readonly effects = new Map<string, EffectHandle>();
  /** Effects this session left pending because their outcome could not be recorded: the run completes naming them. */
  private unrecorded = 0;
  /** The server's sampling requests in flight, by its request id: model requests made through the client. */
  private readonly models = new Map<string, ModelCallHandle>();
  /** Calls held for an approval decision (v3), by request key: how to stop waiting. */
  private readonly waiting = new Map<string, AbortController>();
  private readonly stopped = new Set<string>();

  constructor(private readonly options: SessionOptions) {}

  /** The client's initialize params (its clientInfo names the run's agent). */
  noteInitialize(params: unknown): void {
    this.initialize = params ?? null;
    const p = params as { clientInfo?: Info } | null;
    if (p !== null && typeof p === 'object' && p.clientInfo !== null && typeof p.clientInfo === 'object')
      this.clientInfo = p.clientInfo;
  }

  /** Creates the run (once): called with the server's initialize result, or at the first call if none came. */
  start(initialized?: unknown): Promise<Run> {
    if (this.run !== undefined) return this.run;
    const server = (initialized as { serverInfo?: Info } | undefined)?.serverInfo;
    const labels: Record<string, string> = {};
    const put = (k: string, v: unknown): void => {
      const s = cut(v, 1024);
      if (s !== undefined) labels[k] = s;
    };
    put('mcp.client', this.clientInfo?.name);
    put('mcp.client_version', this.clientInfo?.version);
    put('mcp.server', server?.name);
    put('mcp.server_version', server?.version);
    put('mcp.protocol_version', (initialized as { protocolVersion?: unknown } | undefined)?.protocolVersion);
    Object.assign(labels, this.options.labels ?? {});
    const agent = this.options.agent ?? cut(this.clientInfo?.name, 256);
    const options: StartRunOptions = {
      runId: this.options.runId ?? sessionRunId(),
      labels,
      input: wire(
        {
          mcp: {
            server_command: this.options.command,
            initialize: this.initialize ?? null,
            initialized: initialized ?? null,
          },
        },
        'input',
      ),
      ...(agent === undefined ? {} : { agent }),
      ...(this.options.conversationId === undefined ? {} : { conversationId: this.options.conversationId }),
      ...(this.options.blobThreshold === undefined ? {} : { blobThreshold: this.options.blobThreshold }),
      ...(this.options.format === undefined ? {} : { format: this.options.format }),
    };
    this.run = startRun(this.options.store, options);
    this.run.then(
      (run) => this.options.log(`recording this session as run ${run.runId}`),
      (e: unknown) =>
        this.options.log(
          `could not create the run (${message(e)}): tool calls will be refused, since none can be recorded`,
        ),
    );
    return this.run;
  }

  /** Records a call's intent; resolves to the effect id once it is durable, or to an Error. */
  async begin(key: string, name: string, args: unknown, meta: Record<string, unknown>): Promise<string | Error> {
    try {
      const run = await this.start();
      const effect = await run.beginTool({
        name,
        args: wire(args === undefined ? null : args, 'tool_call/arguments'),
        meta: { mcp: wire(meta, 'meta/mcp') },
      });
      this.effects.set(key, effect);
      return effect.id;
    } catch (e) {
      this.options.log(
        `could not record the intent of the call ${JSON.stringify(name)} (${message(e)}): it is refused, not forwarded`,
      );
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** Records a server's sampling/createMessage request as a model.started (spec/MCP.md §3); false when it could not be. */
  async beginModel(key: string, params: unknown, requestId: unknown): Promise<boolean> {
    try {
      const run = await this.start();
      const p = (params ?? {}) as { messages?: unknown; modelPreferences?: unknown; systemPrompt?: unknown };
      const rest: Record<string, unknown> = { ...(p as Record<string, unknown>) };
      delete rest.messages; // recorded as the prompt
      const call = await run.beginModel({
        input: wire(rest, 'input'),
        model: wire(p.modelPreferences ?? null, 'model'),
        prompt: wire(p.messages ?? null, 'prompt'),
        meta: { mcp: wire({ request_id: requestId, method: 'sampling/createMessage' }, 'meta/mcp') },
      });
      this.models.set(key, call);
      return true;
    } catch (e) {
      this.options.log(`could not record the server's sampling request (${message(e)}); it is forwarded unrecorded`);
      return false;
    }
  }

  hasModel(key: string): boolean {
    return this.models.has(key);
  }

  /** Records the client's answer to a sampling request: model.completed, or model.failed for a JSON-RPC error. */
  async endModel(key: string, outcome: { result: unknown } | { error: unknown }): Promise<void> {
    const call = this.models.get(key);
    if (call === undefined) return;
    this.models.delete(key);
    try {
      if ('error' in outcome) await call.fail(outcome.error);
      else {
        const stop = (outcome.result as { stopReason?: unknown } | null)?.stopReason;
        await call.complete({
          result: wire(outcome.result, 'result'),
          ...(typeof stop === 'string' ? { finishReason: stop } : {}),
        });
      }
    } catch (e) {
      this.options.log(
        `could not record the answer to a sampling request (${message(e)}); it stays pending in the journal`,
      );
    }
  }

  has(key: string): boolean {
    return this.effects.has(key);
  }

  /** Whether held calls are recorded as approval records (a stepchain/v3 run; spec/MCP.md §5.1). */
  get approvalRecords(): boolean {
    return journalFormat(this.options.format)?.capabilities.approvals === true;
  }

  /** Where an approver finds this session's run (for `stepchain approve`), or null when unknown. */
  async location(): Promise<string | null> {
    const run = await this.start();
    return this.options.locate?.(run.runId) ?? null;
  }

  /** Records approval.requested for a held call (spec/MCP.md §5.1); the request, or an Error when it could not be recorded. */
  async requestApproval(
    key: string,
    name: string,
    args: unknown,
    meta: Record<string, unknown>,
    expiresAt: Date | undefined,
  ): Promise<ApprovalRequest | Error> {
    try {
      const run = await this.start();
      const request = await run.requestApproval(
        { name, args: wire(args === undefined ? null : args, 'input/presented/arguments') },
        { meta: { mcp: wire(meta, 'meta/mcp') }, ...(expiresAt === undefined ? {} : { expiresAt }) },
      );
      this.waiting.set(key, new AbortController());
      return request;
    } catch (e) {
      this.options.log(
        `could not record the approval request of the call ${JSON.stringify(name)} (${message(e)}): it is refused, not forwarded`,
      );
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** Whether the call `key` is waiting for an approval decision. */
  isWaiting(key: string): boolean {
    return this.waiting.has(key);
  }

  /** Stops waiting for the decision on `key` (the client cancelled the call, or closed the session). */
  stopWaiting(key: string, why: string): void {
    const wait = this.waiting.get(key);
    if (wait === undefined) return;
    this.stopped.add(key);
    wait.abort(new Error(why));
  }

  /** Whether the wait for `key` was stopped (the call is then neither forwarded nor answered). */
  wasStopped(key: string): boolean {
    return this.stopped.has(key);
  }

  /** Stops every wait (the client closed the session): those calls are not forwarded, their requests stay undecided. */
  stopAllWaiting(why: string): void {
    for (const key of [...this.waiting.keys()]) this.stopWaiting(key, why);
  }

  /** Waits for the decision on a request, written by any process (`stepchain approve`), until it expires or the wait is stopped. */
  async awaitApproval(key: string, request: ApprovalRequest): Promise<ApprovalOutcome | Error> {
    try {
      const run = await this.start();
      return await run.awaitApproval(request, { signal: this.waiting.get(key)!.signal });
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** The decision recorded on a request so far (by any process), or null when it is still undecided. */
  async decisionOn(request: ApprovalRequest): Promise<ApprovalOutcome | Error | null> {
    const run = await this.start();
    await run.refresh();
    const state = (await run.approvals()).find((a) => a.id === request.id);
    if (state === undefined || state.status === 'pending') return null;
    if (state.status === 'invalid')
      return new Error(`approval request ${request.id} is not well-formed in the journal`);
    return {
      status: state.status,
      request: request.id,
      seq: state.decisionSeq,
      approver: state.approver,
      reason: state.reason,
    };
  }

  /** Signs and records a decision with the proxy's approver key (the verdict of an approval command). */
  async decide(
    request: ApprovalRequest,
    decision: 'granted' | 'denied',
    key: KeyInput,
    name: string | undefined,
    reason: string,
  ): Promise<ApprovalOutcome | Error> {
    try {
      const run = await this.start();
      return await run.decideApproval(request, decision, { key, reason, ...(name === undefined ? {} : { name }) });
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** The call's wait is over (decided, expired or stopped). */
  doneWaiting(key: string): void {
    this.waiting.delete(key);
    this.stopped.delete(key);
  }

  /** Records the intent of an approved call, naming its granted request; the effect id, or an Error. */
  async beginApproved(
    key: string,
    name: string,
    args: unknown,
    meta: Record<string, unknown>,
    request: ApprovalRequest,
  ): Promise<string | Error> {
    try {
      const run = await this.start();
      const effect = await run.beginTool({
        name,
        args: wire(args === undefined ? null : args, 'tool_call/arguments'),
        meta: { mcp: wire(meta, 'meta/mcp') },
        approval: request,
      });
      this.effects.set(key, effect);
      return effect.id;
    } catch (e) {
      this.options.log(
        `could not record the intent of the approved call ${JSON.stringify(name)} (${message(e)}): it is refused, not forwarded`,
      );
      return e instanceof Error ? e : new Error(String(e));
    }
  }

  /** A note on a started effect (an approval), as a tool.updated summary. */
  async note(key: string, summary: string): Promise<boolean> {
    const effect = this.effects.get(key);
    if (effect === undefined) return false;
    try {
      await effect.annotate({ summary });
      return true;
    } catch (e) {
      this.options.log(`could not record a note on an effect (${message(e)})`);
      return false;
    }
  }

  /**
   * Records an outcome (once per call); false when it could not be recorded, which the proxy logs and goes on from.
   * One that cannot be recorded as sent (lines.ts Peeked.unrecordable) gets a note instead (MCP.md §6).
   */
  async end(
    key: string,
    outcome: { result: unknown } | { error: unknown } | { unrecordable: string },
  ): Promise<boolean> {
    const effect = this.effects.get(key);
    if (effect === undefined) return false;
    this.effects.delete(key);
    try {
      if ('unrecordable' in outcome) {
        const why = `the server's response was forwarded but cannot be recorded as sent: ${outcome.unrecordable}`;
        await effect.annotate({ summary: why });
        throw new Error(why);
      }
      if ('error' in outcome) await effect.fail(outcome.error);
      else await effect.complete(outcome.result);
      return true;
    } catch (e) {
      this.unrecorded++;
      this.options.log(
        `could not record the outcome of effect ${effect.id} (${message(e)}); it stays pending in the journal`,
      );
      return false;
    }
  }

  /**
   * Ends the run, then closes it: completed when nothing is in flight and either the client closed the
   * session first (however the server then exited: MCP's stdio shutdown may end it with SIGTERM) or the
   * server exited with status 0; failed otherwise.
   */
  async finish(exit: { code: number | null; signal: string | null }, clientClosed = false): Promise<void> {
    if (this.run === undefined) return;
    let run: Run;
    try {
      run = await this.run;
    } catch {
      return;
    }
    try {
      const inFlight = this.effects.size + this.models.size;
      if (inFlight === 0 && (clientClosed || exit.code === 0))
        // Effects whose outcome could not be recorded stay pending, named in meta.unresolved (RUNS.md §5).
        await run.complete(
          { server_exit: exit, closed_by: clientClosed ? 'client' : 'server' },
          { leavePending: this.unrecorded > 0 },
        );
      else {
        await run.fail({
          name: 'McpServerExited',
          message: `the session ended (the server: ${exit.signal ?? `exit code ${exit.code}`}) with ${inFlight} call(s) in flight; they stay pending`,
          exit,
        });
      }
    } catch (e) {
      this.options.log(`could not record the end of the run (${message(e)})`);
    }
    await run.close().catch((e: unknown) => this.options.log(`could not close the journal (${message(e)})`));
  }
}

export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
