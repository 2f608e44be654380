/**
 * What the OTel tests share: a temporary file store, the records of its runs, an agent traced through the
 * real OpenTelemetry API (GenAI semantic conventions v1.37), and OTLP/JSON requests written by hand for the
 * hostile and ordering tests.
 */
import { ROOT_CONTEXT, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { FileStore, type Store } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

/** The store's directory is removed after the test file, like every tempDir (test/helpers/tmp.ts). */
export function tempStore(): { dir: string; store: FileStore } {
  const dir = tempDir('stepchain-otel-');
  return { dir, store: new FileStore(dir) };
}

export type Rec = Record<string, unknown> & { kind: string; seq: number; step_id: string; step_hash: string };

export async function recordsOf(store: Store, id: string): Promise<Rec[]> {
  const j = await store.open(id, { readOnly: true });
  const out: Rec[] = [];
  for await (const r of j.read()) out.push(r as unknown as Rec);
  await j.close();
  return out;
}

/**
 * What a record says, without what a write draws or stamps (v2's salt, v3's seed and commitment root, hashes,
 * seq): for comparing two recordings.
 */
export function contentOf(r: Rec): Record<string, unknown> {
  const { salt: _s, seed: _d, root: _r, step_hash: _h, prev_hash: _p, seq: _q, ...rest } = r;
  return rest;
}

export const messages = (role: string, text: string) =>
  JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]);

/**
 * One agent invocation, as an instrumented framework emits it: a model call asking for a tool, the tool,
 * a model call answering. Returns the agent span's trace and span ids.
 */
export function traceAgent(tracer: Tracer, options: { failTool?: boolean } = {}): { traceId: string; spanId: string } {
  const agent = tracer.startSpan(
    'invoke_agent weather',
    {
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'weather',
        'gen_ai.conversation.id': 'conv-1',
        'gen_ai.input.messages': messages('user', 'Weather in Paris?'),
      },
    },
    ROOT_CONTEXT,
  );
  const inside = trace.setSpan(ROOT_CONTEXT, agent);
  const chat1 = tracer.startSpan(
    'chat gpt-test',
    {
      kind: 2,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.provider.name': 'openai',
        'gen_ai.input.messages': messages('user', 'Weather in Paris?'),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call-1', name: 'forecast', arguments: { city: 'Paris' } }],
          },
        ]),
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'custom.attr': 'kept',
      },
    },
    inside,
  );
  chat1.addEvent('first-token', { 'latency.ms': 3 });
  chat1.end();
  const tool = tracer.startSpan(
    'execute_tool forecast',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'forecast',
        'gen_ai.tool.call.id': 'call-1',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
      },
    },
    inside,
  );
  if (options.failTool === true) {
    tool.setAttribute('error.type', 'TimeoutError');
    tool.setStatus({ code: SpanStatusCode.ERROR, message: 'the forecast service timed out' });
  } else tool.setAttribute('gen_ai.tool.call.result', 'sunny in Paris');
  tool.end();
  const chat2 = tracer.startSpan(
    'chat gpt-test',
    {
      kind: 2,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-test',
        'gen_ai.provider.name': 'openai',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call-1', result: 'sunny in Paris' }] },
        ]),
        'gen_ai.output.messages': messages('assistant', 'Sunny in Paris.'),
        'gen_ai.usage.input_tokens': 20,
        'gen_ai.usage.output_tokens': 4,
      },
    },
    inside,
  );
  chat2.end();
  agent.setAttribute('gen_ai.output.messages', messages('assistant', 'Sunny in Paris.'));
  agent.end();
  return { traceId: agent.spanContext().traceId, spanId: agent.spanContext().spanId };
}

/** An OTLP/JSON span written by hand (ids hex, times decimal strings). */
export function jsonSpan(
  traceId: string,
  spanId: string,
  parent: string,
  name: string,
  start: number,
  end: number,
  attributes: Record<string, string | number> = {},
): Record<string, unknown> {
  return {
    traceId,
    spanId,
    parentSpanId: parent,
    name,
    kind: 1,
    startTimeUnixNano: String(BigInt(start) * 1_000_000n),
    endTimeUnixNano: String(BigInt(end) * 1_000_000n),
    attributes: Object.entries(attributes).map(([key, v]) => ({
      key,
      value: typeof v === 'number' ? { intValue: String(v) } : { stringValue: v },
    })),
    status: {},
  };
}

export const jsonRequest = (spans: unknown[]): Record<string, unknown> => ({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'hand-written' } }] },
      scopeSpans: [{ scope: { name: 'test' }, spans }],
    },
  ],
});

export async function post(
  url: string,
  body: string | Uint8Array,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: Uint8Array; type: string }> {
  const res = await fetch(`${url}/v1/traces`, { method: 'POST', headers, body });
  return {
    status: res.status,
    body: new Uint8Array(await res.arrayBuffer()),
    type: res.headers.get('content-type') ?? '',
  };
}
