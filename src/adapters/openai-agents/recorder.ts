/**
 * The OpenAI Agents SDK recorder (docs/openai-agents.md): one object that wraps models
 * (every request and response), defines recorded tools (intent durable before `execute`, then the outcome
 * or the real error — the SDK's hooks only ever see the error string given to the model), and is the
 * tracing processor that tells which agent is speaking, so a handoff target or an agent used as a tool
 * writes to its own child run (parent run id: the run of the agent that handed off or called it). Handoffs
 * and guardrail results are recorded from their spans in the run of the agent they belong to. With tracing
 * off everything is written to the recorder's run.
 */
import {
  getCurrentSpan,
  tool as sdkTool,
  type FunctionTool,
  type Model,
  type ModelProvider,
  type Span,
  type Trace,
  type TracingProcessor,
} from '@openai/agents';
import {
  beginEffect,
  Run,
  RuntimeError,
  toJournalValue,
  withEffect,
  type EffectClass,
  type EffectHandle,
} from '../../runtime.js';
import { recordModel, recordProvider, type ModelRouting } from './model.js';
import type { AdapterRun, ChildRunFactory } from './run.js';
import { SpanTree } from './spans.js';

type Execute = (input: unknown, context?: unknown, details?: { toolCall?: { callId?: string } }) => unknown;

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export class AgentsRecorder implements TracingProcessor {
  private readonly names = new Set<string>();
  /**
   * A tool call refused as a repeat of an effect of unknown outcome. The SDK gives a tool's error to the
   * model as text and goes on; the next model call throws the refusal instead, so the run stops with it.
   */
  private refused: Error | undefined;
  private readonly routing: ModelRouting = {
    runFor: () => this.currentRun(),
    recordedTools: this.names,
    throwRefusal: () => {
      const error = this.refused;
      this.refused = undefined;
      if (error !== undefined) throw error;
    },
  };
  private readonly tree = new SpanTree();
  private readonly runs = new Map<string, Promise<AdapterRun>>();
  /** The child runs opened for agent spans, to complete when their span ends. */
  private readonly childOf = new Map<string, Promise<Run>>();
  private readonly traceSpans = new Map<string, string[]>();
  /** Records written from span events, in the order the SDK reported them; `flush` waits for them. */
  private queue: Promise<void> = Promise.resolve();
  private queueError: unknown = undefined;
  private readonly children: Run[] = [];

  /** `run` takes the writes of the recorder's own agent; a Run keeps each run's writes in call order. */
  constructor(
    readonly run: AdapterRun,
    private readonly childRun: ChildRunFactory,
    private readonly effects: Readonly<Record<string, EffectClass>> = {},
  ) {}

  /** `model` recorded; `name` defaults to the model's own `model` field or class name. */
  model(model: Model, name?: string): Model {
    return recordModel(model, this.routing, name);
  }

  /** A provider whose every model is recorded, for `new Runner({ modelProvider })`. */
  provider(provider: ModelProvider): ModelProvider {
    return recordProvider(provider, this.routing);
  }

  /**
   * Begins a tool call's effect under its declared class (RUNS.md §5); a refusal (EFFECT_PENDING) is
   * noted for the next model call to throw, and thrown.
   */
  private async begin(
    run: AdapterRun,
    name: string,
    args: unknown,
    callId: string | undefined,
    effectClass: EffectClass | undefined,
  ): Promise<EffectHandle> {
    try {
      const recorded = toJournalValue(args, { field: 'tool_call/arguments' });
      return await beginEffect(run, { name, args: recorded, ...(callId === undefined ? {} : { callId }) }, effectClass);
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'EFFECT_PENDING') this.refused ??= error;
      throw error;
    }
  }

  /**
   * The SDK's `tool(options)`, with `execute` recorded as a tool effect. Its class (the recorder's `effects`,
   * by tool name: read-only, idempotent with its key, compensatable with its compensation, irreversible: the
   * default) decides what happens to its effect when a crash left the outcome unknown. Inside `execute`,
   * `currentEffect()` gives the run and the effect.
   */
  readonly tool: typeof sdkTool = ((options: { name?: string; execute: Execute }) => {
    const execute = options.execute;
    const made = sdkTool({
      ...options,
      name: options.name ?? execute.name,
      execute: (input: unknown, context?: unknown, details?: { toolCall?: { callId?: string } }) =>
        recorded(input, context, details),
    } as Parameters<typeof sdkTool>[0]);
    const name = made.name;
    this.names.add(name);
    const recorded: Execute = async (input, context, details) => {
      const run = await this.currentRun();
      const effect = await this.begin(run, name, input, details?.toolCall?.callId, this.effects[name]);
      // An idempotent call whose key completed: its recorded result; the tool does not run again.
      if (effect.status === 'completed') return effect.result;
      let output: unknown;
      try {
        output = await (run instanceof Run
          ? withEffect(run, effect, () => execute(input, context, details))
          : execute(input, context, details));
      } catch (error) {
        await effect.fail(error);
        throw error;
      }
      // What the journal cannot represent is recorded as markers (RUNS.md §6); the SDK gets the real value.
      await effect.complete(output);
      return output;
    };
    return made;
  }) as typeof sdkTool;

  /**
   * An existing function tool — `agent.asTool(…)`, an MCP tool — recorded around its `invoke`. The SDK turns
   * a tool's error into the text given to the model inside `invoke`; it is recorded as the effect's error
   * when the tool's function span says so (tracing on), else as its result.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- FunctionTool's parameters are invariant: only any takes every tool
  wrapTool<T extends FunctionTool<any, any, any>>(
    functionTool: T,
    effectClass: EffectClass | undefined = this.effects[functionTool.name],
  ): T {
    const invoke = functionTool.invoke;
    this.names.add(functionTool.name);
    const recorded: typeof invoke = async (context, input, details) => {
      const run = await this.currentRun();
      const effect = await this.begin(run, functionTool.name, parsed(input), details?.toolCall?.callId, effectClass);
      if (effect.status === 'completed') return effect.result;
      let output: unknown;
      try {
        output = await (run instanceof Run
          ? withEffect(run, effect, () => invoke.call(functionTool, context, input, details))
          : invoke.call(functionTool, context, input, details));
      } catch (error) {
        await effect.fail(error);
        throw error;
      }
      const spanError = getCurrentSpan()?.error;
      if (spanError != null)
        await effect.fail({ name: 'ToolError', message: spanError.message, output, data: spanError.data });
      else await effect.complete(output);
      return output;
    };
    return { ...functionTool, invoke: recorded };
  }

  /** The child runs this recorder opened (handoff targets, agents used as tools), in the order they were opened. */
  childRuns(): readonly Run[] {
    return this.children;
  }

  /** Waits for the records written from span events (handoffs, guardrails, child runs completing). */
  async flush(): Promise<void> {
    await this.queue;
    if (this.queueError !== undefined) {
      const error = this.queueError;
      this.queueError = undefined;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the queued write rejected with, unchanged
      throw error;
    }
  }

  private currentRun(): Promise<AdapterRun> {
    const agent = this.tree.agentOf(getCurrentSpan()?.spanId);
    return agent === undefined ? Promise.resolve(this.run) : this.runOfAgent(agent);
  }

  private runOfAgent(agentSpan: string): Promise<AdapterRun> {
    let run = this.runs.get(agentSpan);
    if (run === undefined) {
      const place = this.tree.place(agentSpan);
      if (place.kind === 'root') run = Promise.resolve(this.run);
      else {
        const child = this.runOfAgent(place.parentAgentSpan).then(async (parent) => {
          const opened = await this.childRun(parent, place.agent);
          this.children.push(opened);
          return opened;
        });
        this.childOf.set(agentSpan, child);
        run = child;
      }
      this.runs.set(agentSpan, run);
    }
    return run;
  }

  private later(work: () => Promise<unknown>): void {
    this.queue = this.queue.then(work).then(
      () => undefined,
      (error: unknown) => {
        this.queueError ??= error;
      },
    );
  }

  private recordEvent(spanId: string, name: string, args: unknown, result: unknown): void {
    const agent = this.tree.agentOf(spanId);
    this.later(async () => {
      const run = agent === undefined ? this.run : await this.runOfAgent(agent);
      const effect = await run.beginTool({ name, args: toJournalValue(args, { field: 'tool_call/arguments' }) });
      await effect.complete(result);
    });
  }

  // The TracingProcessor side. The SDK does not await these; their writes go through `later`.
  async onTraceStart(trace: Trace): Promise<void> {
    this.traceSpans.set(trace.traceId, []);
  }

  async onTraceEnd(trace: Trace): Promise<void> {
    const spans = this.traceSpans.get(trace.traceId) ?? [];
    this.traceSpans.delete(trace.traceId);
    // Forget the trace's shape once its records are written; runs already opened stay.
    this.later(async () => {
      this.tree.forget(spans);
      for (const id of spans) {
        this.runs.delete(id);
        this.childOf.delete(id);
      }
    });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK's TracingProcessor declares Span<any>
  async onSpanStart(span: Span<any>): Promise<void> {
    const data = span.spanData as { type: string; name?: string };
    this.tree.started(span.spanId, {
      type: data.type,
      parentId: span.parentId,
      ...(data.type === 'agent' && data.name !== undefined ? { name: data.name } : {}),
    });
    this.traceSpans.get(span.traceId)?.push(span.spanId);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the SDK's TracingProcessor declares Span<any>
  async onSpanEnd(span: Span<any>): Promise<void> {
    const data = span.spanData as {
      type: string;
      name?: string;
      triggered?: boolean;
      from_agent?: string;
      to_agent?: string;
    };
    if (data.type === 'handoff')
      this.recordEvent(
        span.spanId,
        'handoff',
        { from_agent: data.from_agent ?? null, to_agent: data.to_agent ?? null },
        { to_agent: data.to_agent ?? null },
      );
    else if (data.type === 'guardrail')
      this.recordEvent(span.spanId, 'guardrail', { name: data.name ?? null }, { triggered: data.triggered === true });
    else if (data.type === 'agent') {
      const run = this.childOf.get(span.spanId);
      if (run !== undefined) {
        const error = span.error;
        this.later(async () => {
          const child = await run;
          if (error === null) await child.complete();
          else await child.fail(error);
        });
      }
    }
  }

  async shutdown(): Promise<void> {
    await this.flush();
  }

  async forceFlush(): Promise<void> {
    await this.flush();
  }
}
