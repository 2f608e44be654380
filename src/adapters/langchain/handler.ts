/**
 * `StepchainCallbackHandler`: records what a LangChain.js program does — model requests and tool calls —
 * as stepchain runs (spec/LANGCHAIN.md), without touching the chain: pass it in `callbacks`. LangChain's
 * run tree maps onto run identity: a root LangChain run (and, with `childRuns`, a graph nested inside
 * another) starts a stepchain run whose id is its LangChain run id, nested ones name their parent's; each
 * model or tool run inside becomes a started record and its outcome. Values pass through the runtime's one
 * conversion rule (`toJournalValue`).
 */
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatGeneration, Generation, LLMResult } from '@langchain/core/outputs';
import type { ChainValues } from '@langchain/core/utils/types';
import type { Json, Store } from '../../index.js';
import {
  beginEffect,
  RuntimeError,
  startRun,
  toJournalValue,
  type EffectClass,
  type EffectHandle,
  type ModelCallHandle,
  type Run,
} from '../../runtime.js';
import { messageValue, plainValue, toolArgs, toolCallsOf } from './values.js';

export interface StepchainCallbackOptions {
  /** Where the runs' journals go. */
  store: Store;
  /** Run identity written into every run's genesis. */
  agent?: string;
  conversationId?: string;
  labels?: Record<string, string>;
  /** The stepchain run id for a LangChain run that opens one; default the LangChain run id itself. */
  runId?: (langchainRunId: string) => string;
  /** A graph nested in another (an agent called as a tool) records into a child run of its own (default true). */
  childRuns?: boolean;
  /** Recording failures propagate into the LangChain call (default true: an unrecorded step fails loudly). */
  raiseError?: boolean;
  /**
   * The step_id of each started record, which its outcome's `ref` names: `'sequential'` (default) numbers
   * them in the run (`model-1`, `tool-2`…), so identical runs record identical refs and `diff` finds them
   * the same; `'langchain'` uses the LangChain run id, to match records with LangChain traces.
   */
  stepIds?: 'sequential' | 'langchain';
  /**
   * What kind of effect each tool has (by tool name), deciding what happens when a call would repeat an
   * effect of unknown outcome in the run (RUNS.md §5): read-only and idempotent ones are retried,
   * compensatable ones compensated first; undeclared tools are irreversible: the call is refused
   * (EFFECT_PENDING, raised into LangChain). An idempotent tool's key is recorded with its intent; a key
   * whose effect completed refuses the call (EFFECT_EXISTS): a callback cannot hand LangChain a result.
   */
  effects?: Record<string, EffectClass>;
  /**
   * Records the first root LangChain run into this run — one opened with `resumeRun` — instead of starting
   * a new one: the rerun of an agent whose process died mid-tool. The run's pending effects then refuse a
   * call that would repeat one (EFFECT_PENDING, raised into LangChain; RUNS.md §5), and its step ids go on
   * from the run's. A run that ends in such a refusal is left open (not failed), so that once its pending
   * effect is resolved the agent can be resumed into it again.
   */
  resume?: Run;
}

/** One stepchain run and the queue its records go through, so they are appended in the order LangChain reported them. */
interface Slot {
  run: Promise<Run>;
  queue: Promise<unknown>;
  /** Started records so far: numbers the sequential step ids. */
  begun: number;
}

const GRAPH_RUN_NAMES = new Set(['LangGraph']);

export class StepchainCallbackHandler extends BaseCallbackHandler {
  name = 'StepchainCallbackHandler';
  private readonly options: StepchainCallbackOptions;
  /** The slot each live LangChain run records into. */
  private readonly owners = new Map<string, Slot>();
  /** LangChain runs that opened a stepchain run: their end completes it. */
  private readonly openers = new Map<string, Slot>();
  private readonly models = new Map<string, { call: Promise<ModelCallHandle>; tokens: string[] }>();
  private readonly tools = new Map<string, Promise<EffectHandle>>();
  private readonly started: Promise<Run>[] = [];
  /** Whether the `resume` run has been given to a root LangChain run already. */
  private resumeTaken = false;

  constructor(options: StepchainCallbackOptions) {
    super({ _awaitHandler: true, raiseError: options.raiseError ?? true });
    this.options = options;
  }

  /** The stepchain runs this handler started, in the order they started (after every record is written). */
  async runs(): Promise<Run[]> {
    await this.flush();
    return Promise.all(this.started);
  }

  /** Waits until everything reported so far is recorded. */
  async flush(): Promise<void> {
    const slots = new Set([...this.owners.values(), ...this.openers.values()]);
    await Promise.all([...slots].map((s) => s.queue.catch(() => {})));
  }

  /** The slot for a LangChain run: its parent's, or a new stepchain run when it opens one. */
  private slotFor(runId: string, parentRunId: string | undefined, opens: boolean, input?: unknown): Slot {
    const parent = parentRunId === undefined ? undefined : this.owners.get(parentRunId);
    if (parent !== undefined && !opens) {
      this.owners.set(runId, parent);
      return parent;
    }
    const o = this.options;
    const resumed = parent === undefined && !this.resumeTaken ? o.resume : undefined;
    if (resumed !== undefined) {
      this.resumeTaken = true;
      const slot: Slot = { run: Promise.resolve(resumed), queue: Promise.resolve(), begun: 0 };
      // Sequential step ids go on past the greatest the run holds (model-N, tool-N), so none names an earlier one.
      slot.run = (async () => {
        for (const { id } of [...(await resumed.effects()), ...(await resumed.modelCalls())]) {
          const n = /^(?:model|tool)-(\d{1,15})$/.exec(id)?.[1];
          if (n !== undefined) slot.begun = Math.max(slot.begun, Number(n));
        }
        return resumed;
      })();
      slot.queue = slot.run;
      this.started.push(slot.run);
      this.owners.set(runId, slot);
      this.openers.set(runId, slot);
      return slot;
    }
    const run = (async () => {
      const parentRun = parent === undefined ? undefined : await parent.run;
      return startRun(o.store, {
        runId: o.runId?.(runId) ?? runId,
        ...(parentRun === undefined ? {} : { parentRunId: parentRun.runId }),
        ...(o.agent === undefined ? {} : { agent: o.agent }),
        ...(o.conversationId === undefined ? {} : { conversationId: o.conversationId }),
        ...(o.labels === undefined ? {} : { labels: o.labels }),
        input: stateValue(input, 'input'),
      });
    })();
    this.started.push(run);
    const slot: Slot = { run, queue: run, begun: 0 };
    this.owners.set(runId, slot);
    this.openers.set(runId, slot);
    return slot;
  }

  /** The step_id of a started record, taken in the slot's queue, which holds the starts in the order LangChain reported them. */
  private stepId(slot: Slot, what: 'model' | 'tool', langchainRunId: string): string {
    slot.begun += 1;
    return this.options.stepIds === 'langchain' ? langchainRunId : `${what}-${slot.begun}`;
  }

  /** Runs `fn` on the slot's run after everything queued before it. */
  private enqueue<T>(slot: Slot, fn: (run: Run) => Promise<T>): Promise<T> {
    const next = slot.queue.then(
      async () => fn(await slot.run),
      async () => fn(await slot.run),
    );
    slot.queue = next.catch(() => {});
    return next;
  }

  /** After a LangChain run ends: the stepchain run it opened ends with it. */
  private async closeRun(runId: string, outcome: { result?: unknown; error?: unknown }): Promise<void> {
    const slot = this.openers.get(runId);
    this.owners.delete(runId);
    if (slot === undefined) return;
    this.openers.delete(runId);
    // A run stopped by a refusal (it would have repeated an effect of unknown outcome) is not failed: it is
    // interrupted, and stays open for the decision and the next resume (a failed run refuses every record).
    if ('error' in outcome && refusal(outcome.error)) return;
    await this.enqueue(slot, (run) =>
      'error' in outcome ? run.fail(outcome.error) : run.complete(stateValue(outcome.result, 'result')),
    );
  }

  override async handleChainStart(
    chain: Serialized,
    inputs: ChainValues,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    _runType?: string,
    runName?: string,
  ): Promise<void> {
    // LangChain's CallbackManager passes the parent run id fourth and the run name eighth, whatever the
    // declaration's parameter names say (notes-frameworks §3.1).
    const nestedGraph = (this.options.childRuns ?? true) && GRAPH_RUN_NAMES.has(runName ?? chain?.id?.at(-1) ?? '');
    const opens = parentRunId === undefined || !this.owners.has(parentRunId) || nestedGraph;
    const slot = this.slotFor(runId, parentRunId, opens, opens ? inputs : undefined);
    if (opens) await slot.run;
  }

  override async handleChainEnd(outputs: ChainValues, runId: string): Promise<void> {
    await this.closeRun(runId, { result: outputs });
  }

  override async handleChainError(err: unknown, runId: string): Promise<void> {
    await this.closeRun(runId, { error: err });
  }

  override async handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): Promise<void> {
    await this.beginModel(
      llm,
      messages.map((batch) => batch.map(messageValue)),
      runId,
      parentRunId,
      extraParams,
      metadata,
      runName,
    );
  }

  override async handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    _tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): Promise<void> {
    await this.beginModel(llm, prompts, runId, parentRunId, extraParams, metadata, runName);
  }

  private async beginModel(
    llm: Serialized,
    prompt: unknown[],
    runId: string,
    parentRunId: string | undefined,
    extraParams: Record<string, unknown> | undefined,
    metadata: Record<string, unknown> | undefined,
    runName: string | undefined,
  ): Promise<void> {
    const slot = this.slotFor(runId, parentRunId, parentRunId === undefined || !this.owners.has(parentRunId));
    const model = { provider: metadata?.ls_provider, name: metadata?.ls_model_name ?? runName ?? llm?.id?.at(-1) };
    // One prompt is recorded as itself; LangChain's batch form (several prompts in one run) as the list.
    const call = this.enqueue(slot, (run) =>
      run.beginModel({
        id: this.stepId(slot, 'model', runId),
        // LangChain's values reach the handler untyped: converted here, in the order Run.beginModel converts.
        input: toJournalValue({ invocation_params: extraParams?.invocation_params }, { field: 'input' }),
        model: toJournalValue(model, { field: 'model' }),
        prompt: toJournalValue(prompt.length === 1 ? prompt[0] : prompt, { field: 'prompt' }),
      }),
    );
    this.models.set(runId, { call, tokens: [] });
    await call;
  }

  override async handleLLMNewToken(token: string, _idx: unknown, runId: string): Promise<void> {
    this.models.get(runId)?.tokens.push(token);
  }

  override async handleLLMEnd(output: LLMResult, runId: string): Promise<void> {
    const m = this.models.get(runId);
    if (m === undefined) return;
    this.models.delete(runId);
    const slot = this.owners.get(runId)!;
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the chat members (message) are not on Generation's declared type
    const generation = output.generations[0]?.[0] as (Generation & Partial<ChatGeneration>) | undefined;
    const message = generation?.message === undefined ? undefined : messageValue(generation.message);
    const streamed = m.tokens.join('');
    // The message a streaming model ends with is assembled from its tokens; where it arrives without its
    // text (or there is no message at all), the tokens are the text.
    const result =
      message !== undefined
        ? message.content === '' && streamed !== ''
          ? { ...message, content: streamed }
          : message
        : { text: generation?.text || streamed };
    const usage: unknown =
      (generation?.message as { usage_metadata?: unknown } | undefined)?.usage_metadata ?? output.llmOutput?.tokenUsage;
    const finish: unknown = generation?.generationInfo?.finish_reason;
    const handle = await m.call;
    // Converted in the order Run.endModel converts (meta, tool calls, result): a refusal names the same field.
    await this.enqueue(slot, () =>
      handle.complete({
        ...(usage === undefined ? {} : { usage: toJournalValue(usage, { field: 'meta/usage' }) }),
        ...(message?.tool_calls === undefined ? {} : { toolCalls: toolCallsOf(message.tool_calls) }),
        result: toJournalValue(result, { field: 'result' }),
        ...(typeof finish === 'string' ? { finishReason: finish } : {}),
        ...(m.tokens.length > 0 ? { meta: { streamed_tokens: m.tokens.length } } : {}),
      }),
    );
    await this.closeRun(runId, { result });
  }

  override async handleLLMError(err: unknown, runId: string): Promise<void> {
    const m = this.models.get(runId);
    if (m === undefined) return;
    this.models.delete(runId);
    const slot = this.owners.get(runId)!;
    const handle = await m.call;
    const partial = m.tokens.join('');
    await this.enqueue(slot, (run) =>
      run.endModel(
        handle.id,
        partial === '' ? {} : { result: { text: partial }, meta: { streamed_tokens: m.tokens.length } },
        err,
      ),
    );
    await this.closeRun(runId, { error: err });
  }

  override async handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): Promise<void> {
    const slot = this.slotFor(runId, parentRunId, parentRunId === undefined || !this.owners.has(parentRunId));
    const name = runName ?? (tool as { name?: string })?.name ?? tool?.id?.at(-1) ?? 'tool';
    const effectClass = this.options.effects?.[name];
    const effect = this.enqueue(slot, async (run) => {
      const id = this.stepId(slot, 'tool', runId);
      const begun = await beginEffect(
        run,
        {
          id,
          name,
          args: toJournalValue(toolArgs(input), { field: 'tool_call/arguments' }),
          ...(toolCallId === undefined ? {} : { callId: toolCallId }),
        },
        effectClass,
      );
      if (begun.status === 'completed') {
        throw new RuntimeError(
          'EFFECT_EXISTS',
          `tool ${JSON.stringify(name)}: its idempotency key belongs to effect ${begun.id} (seq ${begun.seq}), which completed: not run again`,
          { location: { seq: begun.seq } },
        );
      }
      return begun;
    });
    this.tools.set(runId, effect);
    await effect;
  }

  override async handleToolEnd(output: unknown, runId: string): Promise<void> {
    await this.endTool(runId, { result: plainValue(output) });
  }

  override async handleToolError(err: unknown, runId: string): Promise<void> {
    await this.endTool(runId, { error: err });
  }

  private async endTool(runId: string, outcome: { result?: unknown; error?: unknown }): Promise<void> {
    const effect = this.tools.get(runId);
    if (effect === undefined) return;
    this.tools.delete(runId);
    const slot = this.owners.get(runId)!;
    const handle = await effect;
    await this.enqueue(slot, () => ('error' in outcome ? handle.fail(outcome.error) : handle.complete(outcome.result)));
    await this.closeRun(runId, outcome);
  }
}

/** Whether an error is (or was caused by) the runtime refusing to repeat an effect (EFFECT_PENDING, EFFECT_EXISTS). */
function refusal(e: unknown): boolean {
  for (let k = 0; k < 8 && e !== null && typeof e === 'object'; k++, e = (e as { cause?: unknown }).cause) {
    if (e instanceof RuntimeError && (e.code === 'EFFECT_PENDING' || e.code === 'EFFECT_EXISTS')) return true;
  }
  return false;
}

/**
 * A graph's input or output state as recorded in run.started / run.completed. State may hold anything a
 * user put in it; what the runtime's rule cannot represent is recorded as a note saying so, so that the
 * model requests and tool calls of the run — which must be recorded or fail — are still recorded.
 */
function stateValue(v: unknown, field: string): Json {
  const plain = plainValue(v);
  try {
    return toJournalValue(plain, { field });
  } catch (e) {
    if (e instanceof RuntimeError && e.code === 'VALUE_UNREPRESENTABLE') return { unrepresentable: e.message };
    throw e;
  }
}
