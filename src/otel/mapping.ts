/**
 * The spans of one trace as run journals (spec/OTEL.md §1–§2): which spans make a run, its identity, and
 * its records in one deterministic order. Pure: the same spans, in whatever order they arrived, give the
 * same runs with the same records.
 */
import type { StepInput } from '../index.js';
import { operationOf, parseJson, SpanReader, toolCallsOf, type Operation } from './attributes.js';
import type { OtelSpan } from './otlp.js';
import { causalOrder, consumedIds } from './order.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface MappedRun {
  runId: string;
  /** The agent invocation span, or null for the trace's run (spans under no agent invocation). */
  span: OtelSpan | null;
  agent?: string;
  conversationId?: string;
  parentRunId?: string;
  labels: Record<string, string>;
  createdAt: string;
  steps: StepInput[];
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const runIdOf = (traceId: string, spanId: string | null): string =>
  spanId === null ? `otel-${traceId}` : `otel-${traceId}-${spanId}`;

/** A nanosecond time as a record timestamp (milliseconds, UTC). */
export function timestampOf(nanos: string): string {
  const ms = Number(BigInt(nanos) / 1_000_000n);
  return new Date(Math.min(ms, 253402300799999)).toISOString();
}

/** What a record keeps of its span beyond what the mapping read: everything (§2). */
function otelMeta(span: OtelSpan, reader: SpanReader, withResource: boolean): Record<string, Json> {
  const meta: Record<string, Json> = {
    trace_id: span.trace_id,
    span_id: span.span_id,
    parent_span_id: span.parent_span_id,
    name: span.name,
    kind: span.kind,
    start_time_unix_nano: span.start_time_unix_nano,
    end_time_unix_nano: span.end_time_unix_nano,
    status: span.status,
    scope: span.scope,
    attributes: reader.unused(),
  };
  if (span.events.length > 0) meta.events = span.events as unknown as Json;
  if (span.links.length > 0) meta.links = span.links as unknown as Json;
  if (withResource) meta.resource = span.resource;
  return meta;
}

const failed = (s: OtelSpan): boolean => s.status.code === 2;
const errorOf = (s: OtelSpan, r: SpanReader): Json => ({
  name: r.string('error.type') ?? 'Error',
  message: s.status.message,
});

/**
 * A span's records stand together — its start, then its end — and spans are ordered by their end, then their
 * start, then their id (§5.1). The SDKs stamp a span's start with the wall clock in milliseconds and its end
 * with a monotonic clock in nanoseconds, so ends order spans that starts would tie.
 */
interface Event {
  t: bigint;
  s: bigint;
  id: string;
  sub: number;
  step: StepInput;
}

/**
 * What a model span says, read from whichever convention it carries (gen_ai.*, the AI SDK's ai.*,
 * OpenLLMetry's): the model, prompt, system instructions, output or response, and the usage and finish
 * reason for the end record's meta.
 */
function readModelCall(r: SpanReader): {
  model: { name: string | null; provider: string | null };
  prompt: Json;
  input: Json;
  output: Json | undefined;
  aiCalls: Json | undefined;
  result: Json;
  endMeta: Record<string, Json>;
} {
  const model = {
    name: r.string('gen_ai.request.model', 'ai.model.id') ?? null,
    provider: r.string('gen_ai.provider.name', 'gen_ai.system', 'ai.model.provider') ?? null,
  };
  const prompt =
    r.structured('gen_ai.input.messages', 'ai.prompt.messages', 'gen_ai.prompt') ?? r.indexed('gen_ai.prompt') ?? null;
  const input = r.structured('gen_ai.system_instructions') ?? null;
  const output = r.structured('gen_ai.output.messages', 'gen_ai.completion') ?? r.indexed('gen_ai.completion');
  const aiText = r.get('ai.response.text');
  const aiCalls = r.structured('ai.response.toolCalls');
  const result =
    output ??
    (aiText !== undefined || aiCalls !== undefined ? { text: aiText ?? null, tool_calls: aiCalls ?? null } : null);
  const usage: Record<string, Json> = {};
  const inTokens = r.get(
    'gen_ai.usage.input_tokens',
    'gen_ai.usage.prompt_tokens',
    'ai.usage.inputTokens',
    'ai.usage.promptTokens',
  );
  const outTokens = r.get(
    'gen_ai.usage.output_tokens',
    'gen_ai.usage.completion_tokens',
    'ai.usage.outputTokens',
    'ai.usage.completionTokens',
  );
  if (inTokens !== undefined) usage.input_tokens = inTokens;
  if (outTokens !== undefined) usage.output_tokens = outTokens;
  const finish = r.get('gen_ai.response.finish_reasons', 'ai.response.finishReason');
  const endMeta: Record<string, Json> = {};
  if (Object.keys(usage).length > 0) endMeta.usage = usage;
  if (finish !== undefined) endMeta.finish_reason = finish;
  return { model, prompt, input, output, aiCalls, result, endMeta };
}

/** The start and end records of one span inside a run, each with its place in the order. */
function spanEvents(span: OtelSpan, op: Operation, childRun: string | undefined): Event[] {
  const r = new SpanReader(span);
  r.get('gen_ai.operation.name');
  const start = BigInt(span.start_time_unix_nano);
  const endRaw = BigInt(span.end_time_unix_nano);
  const at = (step: StepInput, end: boolean): Event => ({
    t: endRaw > start ? endRaw : start,
    s: start,
    id: span.span_id,
    sub: end ? 1 : 0,
    step,
  });
  const startId = `${span.span_id}.start`;
  const ts = (end: boolean) => timestampOf(end && endRaw > start ? span.end_time_unix_nano : span.start_time_unix_nano);
  if (op === 'model') {
    const { model, prompt, input, output, aiCalls, result, endMeta } = readModelCall(r);
    const begin: StepInput = { kind: 'model.started', step_id: startId, ts: ts(false), model, prompt, input };
    const end: StepInput = {
      kind: failed(span) ? 'model.failed' : 'model.completed',
      step_id: `${span.span_id}.end`,
      ref: startId,
      ts: ts(true),
      model,
      prompt,
      input,
      tool_call: toolCallsOf(output, aiCalls),
      result,
    };
    if (failed(span)) end.error = errorOf(span, r);
    end.meta = { ...endMeta, otel: otelMeta(span, r, false) };
    return [at(begin, false), at(end, true)];
  }
  if (op === 'tool') {
    const call: Record<string, Json> = {
      name: r.string('gen_ai.tool.name', 'ai.toolCall.name', 'traceloop.entity.name') ?? span.name,
      arguments:
        r.structured('gen_ai.tool.call.arguments', 'ai.toolCall.args', 'ai.toolCall.input', 'traceloop.entity.input') ??
        null,
    };
    const callId = r.string('gen_ai.tool.call.id', 'ai.toolCall.id');
    if (callId !== undefined) call.call_id = callId;
    const result =
      r.structured('gen_ai.tool.call.result', 'ai.toolCall.result', 'ai.toolCall.output', 'traceloop.entity.output') ??
      null;
    const begin: StepInput = { kind: 'tool.started', step_id: startId, ts: ts(false), tool_call: call };
    const end: StepInput = {
      kind: failed(span) ? 'tool.failed' : 'tool.completed',
      step_id: `${span.span_id}.end`,
      ref: startId,
      ts: ts(true),
      tool_call: call,
      result: failed(span) ? null : result,
    };
    if (failed(span)) end.error = errorOf(span, r);
    end.meta = { otel: otelMeta(span, r, false) };
    return [at(begin, false), at(end, true)];
  }
  const meta: Record<string, Json> = { otel: otelMeta(span, r, false) };
  if (childRun !== undefined) meta.child_run = childRun;
  return [at({ kind: 'step', step_id: `${span.span_id}.span`, ts: ts(true), meta }, true)];
}

function compare(a: Event, b: Event): number {
  if (a.t !== b.t) return a.t < b.t ? -1 : 1;
  if (a.s !== b.s) return a.s < b.s ? -1 : 1;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return a.sub - b.sub;
}

/** Which run each span belongs to: its nearest agent invocation at or above it, else the trace's run. */
function partition(spans: readonly OtelSpan[]): { runOf: Map<string, string>; ops: Map<string, Operation> } {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const ops = new Map(spans.map((s) => [s.span_id, operationOf(s)]));
  const runOf = new Map<string, string>();
  const find = (s: OtelSpan): string => {
    const known = runOf.get(s.span_id);
    if (known !== undefined) return known;
    // Walk up without recursion (a hostile trace may be a chain of any length), guarding against cycles.
    const path: OtelSpan[] = [];
    const seen = new Set<string>();
    let at: OtelSpan | undefined = s;
    let run = runIdOf(s.trace_id, null);
    while (at !== undefined && !seen.has(at.span_id)) {
      const done = runOf.get(at.span_id);
      if (done !== undefined) {
        run = done;
        break;
      }
      if (ops.get(at.span_id) === 'agent') {
        run = runIdOf(at.trace_id, at.span_id);
        break;
      }
      seen.add(at.span_id);
      path.push(at);
      at = at.parent_span_id === '' ? undefined : byId.get(at.parent_span_id);
    }
    for (const p of path) runOf.set(p.span_id, run);
    return runOf.get(s.span_id) ?? run;
  };
  for (const s of spans) find(s);
  return { runOf, ops };
}

/** The runs of one trace's spans (ids unique), in the order of their run ids. */
export function mapTrace(spans: readonly OtelSpan[]): MappedRun[] {
  if (spans.length === 0) return [];
  const traceId = spans[0]!.trace_id;
  const { runOf, ops } = partition(spans);
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  const members = new Map<string, OtelSpan[]>();
  for (const s of spans) {
    const own = ops.get(s.span_id) === 'agent' ? runIdOf(traceId, s.span_id) : undefined;
    // An agent span is its own run; in the run above it, it is a step naming that run.
    if (own !== undefined) {
      if (!members.has(own)) members.set(own, []);
      const parent = s.parent_span_id === '' ? undefined : byId.get(s.parent_span_id);
      if (parent !== undefined) {
        const above =
          runOf.get(parent.span_id) ??
          (ops.get(parent.span_id) === 'agent' ? runIdOf(traceId, parent.span_id) : runIdOf(traceId, null));
        const target = ops.get(parent.span_id) === 'agent' ? runIdOf(traceId, parent.span_id) : above;
        (members.get(target) ?? members.set(target, []).get(target)!).push(s);
      }
      continue;
    }
    const run = runOf.get(s.span_id)!;
    (members.get(run) ?? members.set(run, []).get(run)!).push(s);
  }
  const runs: MappedRun[] = [];
  for (const [runId, inside] of [...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const own = runId === runIdOf(traceId, null) ? null : (byId.get(runId.slice(`otel-${traceId}-`.length)) ?? null);
    runs.push(buildRun(traceId, runId, own, inside, ops, runOf));
  }
  return runs;
}

function buildRun(
  traceId: string,
  runId: string,
  own: OtelSpan | null,
  inside: OtelSpan[],
  ops: Map<string, Operation>,
  runOf: Map<string, string>,
): MappedRun {
  const groups = inside.map((s) => {
    const op = ops.get(s.span_id)!;
    const evs = spanEvents(s, op, op === 'agent' ? runIdOf(traceId, s.span_id) : undefined).sort(compare);
    const last = evs[evs.length - 1]!.step;
    const asks =
      op === 'model' && Array.isArray(last.tool_call)
        ? (last.tool_call as { id?: unknown }[]).flatMap((c) => (typeof c?.id === 'string' ? [c.id] : []))
        : [];
    const call = op === 'tool' ? (last.tool_call as { call_id?: unknown }) : undefined;
    return {
      end: evs[0]!.t,
      start: evs[0]!.s,
      id: s.span_id,
      asks,
      executes: typeof call?.call_id === 'string' ? call.call_id : undefined,
      consumes: op === 'model' ? consumedIds(last.prompt as never) : [],
      evs,
    };
  });
  const events = causalOrder(groups).flatMap((g) => g.evs);
  const first =
    own ?? [...inside].sort((a, b) => (BigInt(a.start_time_unix_nano) < BigInt(b.start_time_unix_nano) ? -1 : 1))[0];
  const startNs = own?.start_time_unix_nano ?? (events[0] === undefined ? '0' : String(events[0].t));
  const endNs =
    own !== null && BigInt(own.end_time_unix_nano) > BigInt(own.start_time_unix_nano)
      ? own.end_time_unix_nano
      : events.length === 0
        ? startNs
        : String(events[events.length - 1]!.t);
  const labels: Record<string, string> = { 'otel.trace_id': traceId };
  const service = first?.resource['service.name'];
  if (typeof service === 'string') labels['service.name'] = service;
  const run: MappedRun = { runId, span: own, labels, createdAt: timestampOf(startNs), steps: [] };
  const r = own === null ? null : new SpanReader(own);
  r?.get('gen_ai.operation.name');
  const agent =
    r?.string('gen_ai.agent.name', 'ai.telemetry.functionId', 'traceloop.entity.name') ??
    (own === null ? undefined : own.name);
  if (agent !== undefined && agent !== '') run.agent = agent;
  const conversation = r?.string('gen_ai.conversation.id', 'session.id') ?? (own === null ? undefined : undefined);
  if (conversation !== undefined) {
    if (ID.test(conversation)) run.conversationId = conversation;
    else labels['gen_ai.conversation.id'] = conversation;
  }
  if (own !== null && own.parent_span_id !== '') {
    const above =
      runOf.get(own.parent_span_id) ??
      (ops.get(own.parent_span_id) === 'agent' ? runIdOf(traceId, own.parent_span_id) : undefined);
    if (above !== undefined) run.parentRunId = above;
  }
  const input = r?.structured('gen_ai.input.messages', 'ai.prompt', 'gen_ai.prompt') ?? null;
  const output =
    r?.structured('gen_ai.output.messages', 'ai.response.text', 'final_result', 'gen_ai.completion') ?? null;
  const startMeta = own === null ? { trace_id: traceId } : otelMeta(own, r!, true);
  run.steps.push({
    kind: 'run.started',
    step_id: own === null ? 'trace.start' : `${own.span_id}.start`,
    ts: timestampOf(startNs),
    input,
    meta: { otel: startMeta },
  });
  for (const e of events) run.steps.push(e.step);
  const end: StepInput = {
    kind: own !== null && failed(own) ? 'run.failed' : 'run.completed',
    step_id: own === null ? 'trace.end' : `${own.span_id}.end`,
    ts: timestampOf(endNs),
    result: own !== null && failed(own) ? null : output,
  };
  if (own !== null && failed(own)) end.error = errorOf(own, r!);
  run.steps.push(end);
  return run;
}

export { parseJson };
