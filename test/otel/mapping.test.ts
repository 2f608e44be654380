/**
 * The mapping's older names (spec/OTEL.md §3): OpenLLMetry's indexed prompt and completion attributes,
 * `gen_ai.system` and the prompt/completion token counts, `llm.request.type` and `traceloop.span.kind`
 * recognized as a model call, an agent and a tool — recorded as the current names would be, and a run that
 * verifies.
 */
import { describe, expect, test } from 'vitest';
import { spansOfRequest, SpanCollector } from '../../src/otel.js';
import { jsonRequest, jsonSpan, recordsOf, tempStore } from './helpers.js';

const T = '5af7651916cd43dd8448eb211c80319c';

describe('older attribute names', () => {
  test("OpenLLMetry's legacy attributes become the same records as the current conventions", async () => {
    const spans = spansOfRequest(
      jsonRequest([
        jsonSpan(T, 'a000000000000001', '', 'planner.agent', 1000, 1010, {
          'traceloop.span.kind': 'agent',
          'traceloop.entity.name': 'planner',
        }),
        jsonSpan(T, 'b000000000000002', 'a000000000000001', 'openai.chat', 1001, 1003, {
          'llm.request.type': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'plan a trip',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.content': 'Go to Oslo.',
          'gen_ai.usage.prompt_tokens': 7,
          'gen_ai.usage.completion_tokens': 3,
          'llm.is_streaming': 'false',
        }),
        jsonSpan(T, 'c000000000000003', 'a000000000000001', 'book.tool', 1004, 1005, {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'book',
          'traceloop.entity.input': '{"city":"Oslo"}',
          'traceloop.entity.output': '"booked"',
        }),
      ]),
    );
    const { store } = tempStore();
    const collector = new SpanCollector(store);
    collector.accept(spans);
    await collector.close();
    const id = `otel-${T}-a000000000000001`;
    expect((await store.verify(id)).ok).toBe(true);
    expect((await store.runs({}))[0]!.run?.agent).toBe('planner');
    const records = await recordsOf(store, id);
    expect(records.map((r) => r.kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'run.completed',
    ]);
    const model = records[2]!;
    expect(model.model).toEqual({ name: 'gpt-4o', provider: 'openai' });
    expect(model.prompt).toEqual([{ role: 'user', content: 'plan a trip' }]);
    expect(model.result).toEqual([{ role: 'assistant', content: 'Go to Oslo.' }]);
    expect((model.meta as { usage: unknown }).usage).toEqual({ input_tokens: 7, output_tokens: 3 });
    // Read names are not repeated; the rest is kept.
    expect((model.meta as { otel: { attributes: unknown } }).otel.attributes).toEqual({
      'llm.request.type': 'chat',
      'llm.is_streaming': 'false',
    });
    expect(records[3]!.tool_call).toEqual({ name: 'book', arguments: { city: 'Oslo' } });
    expect(records[4]!.result).toBe('booked');
  });
});
