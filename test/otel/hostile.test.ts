/**
 * The receiver against what a hostile or broken sender sends (spec/OTEL.md §4, §5): each bad request is
 * answered (400 with an OTLP Status, 401, 413, 415) without a crash and without a run written from it;
 * duplicate span ids and retried exports are recorded once; a trace that never ends is written when it
 * reaches its bounds, and its later spans go to a late run. Arrival order and duplication never change
 * the records (a property test over the mapping).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import protobuf from 'protobufjs/light.js';
import { mapTrace, spansOfRequest, startReceiver, type Receiver } from '../../src/otel.js';
import { jsonRequest, jsonSpan, post, recordsOf, tempStore } from './helpers.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const T = '0af7651916cd43dd8448eb211c80319c';
const agentSpans = (trace = T) => [
  jsonSpan(trace, 'a000000000000001', '', 'invoke_agent bot', 1000, 1010, {
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': 'bot',
  }),
  jsonSpan(trace, 'b000000000000002', 'a000000000000001', 'chat m', 1001, 1003, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'm',
    'gen_ai.output.messages': JSON.stringify([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 1 } }] },
    ]),
  }),
  jsonSpan(trace, 'c000000000000003', 'a000000000000001', 'execute_tool add', 1004, 1005, {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'add',
    'gen_ai.tool.call.id': 'c1',
    'gen_ai.tool.call.arguments': '{"a":1}',
    'gen_ai.tool.call.result': '2',
  }),
  jsonSpan(trace, 'd000000000000004', 'a000000000000001', 'chat m', 1006, 1008, {
    'gen_ai.operation.name': 'chat',
    'gen_ai.request.model': 'm',
    'gen_ai.output.messages': '[]',
  }),
];

async function receiver(options: Parameters<typeof startReceiver>[0] extends infer O ? Partial<O> : never = {}) {
  const { store } = tempStore();
  const r = await startReceiver({ store, port: 0, settleMs: 60_000, ...options });
  receivers.push(r);
  return { r, store };
}

const varint = (n: number): number[] => {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return out;
};
const field = (tag: number, body: Uint8Array): Buffer =>
  Buffer.concat([Buffer.from([tag, ...varint(body.length)]), body]);

/** An ExportTraceServiceRequest whose one attribute is an array in an array … `depth` times, by hand on the wire. */
function deepProtobuf(depth: number): Uint8Array {
  let value: Buffer = field(0x0a, Buffer.from('x'));
  for (let i = 0; i < depth; i++) value = field(0x2a, field(0x0a, value));
  const kv = Buffer.concat([field(0x0a, Buffer.from('k')), field(0x12, value)]);
  const span = Buffer.concat([
    field(0x0a, Buffer.from(T, 'hex')),
    field(0x12, Buffer.from('a000000000000001', 'hex')),
    field(0x4a, kv),
  ]);
  return field(0x0a, field(0x12, field(0x12, span)));
}

const Status = protobuf.Root.fromJSON({
  nested: { S: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } } },
}).lookupType('S');

describe('bad requests are answered, never half-kept', () => {
  const deep = (n: number): string =>
    `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${T}","spanId":"a000000000000001","attributes":[{"key":"k","value":${'{"arrayValue":{"values":['.repeat(n)}{"stringValue":"x"}${']}}'.repeat(n)}}]}]}]}]}`;
  const cases: Array<[string, string | Uint8Array, Record<string, string>, number]> = [
    ['not JSON', '{"resourceSpans": [', { 'content-type': 'application/json' }, 400],
    [
      'a span id of the wrong length',
      JSON.stringify(jsonRequest([{ ...agentSpans()[0], spanId: 'abc' }])),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'an all-zero trace id',
      JSON.stringify(jsonRequest([{ ...agentSpans()[0], traceId: '0'.repeat(32) }])),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'a number where a list belongs',
      JSON.stringify({ resourceSpans: 7 }),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'an attribute value of the wrong type',
      JSON.stringify(jsonRequest([{ ...agentSpans()[0], attributes: [{ key: 'k', value: { intValue: 'twelve' } }] }])),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'a time that is not an integer',
      JSON.stringify(jsonRequest([{ ...agentSpans()[0], startTimeUnixNano: -5 }])),
      { 'content-type': 'application/json' },
      400,
    ],
    [
      'a lone surrogate',
      JSON.stringify(jsonRequest([{ ...agentSpans()[0], name: '\ud800' }])),
      { 'content-type': 'application/json' },
      400,
    ],
    ['attributes nested 200 deep', deep(200), { 'content-type': 'application/json' }, 400],
    ['attributes nested 100 000 deep', deep(100_000), { 'content-type': 'application/json' }, 400],
    [
      'protobuf garbage',
      new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]),
      { 'content-type': 'application/x-protobuf' },
      400,
    ],
    ['protobuf attributes nested 3000 deep', deepProtobuf(3000), { 'content-type': 'application/x-protobuf' }, 400],
    [
      'gzip that does not inflate',
      new Uint8Array([1, 2, 3, 4]),
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      400,
    ],
    [
      'a gzip bomb',
      gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)),
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      413,
    ],
    ['a body over the limit', 'x'.repeat(9 * 1024 * 1024), { 'content-type': 'application/json' }, 413],
    ['another content type', 'hello', { 'content-type': 'text/plain' }, 415],
    ['another content encoding', 'hello', { 'content-type': 'application/json', 'content-encoding': 'br' }, 415],
  ];

  test.each(cases)('%s', async (_what, body, headers, status) => {
    const { r, store } = await receiver();
    const answer = await post(r.url, body, headers);
    expect(answer.status).toBe(status);
    if (answer.type === 'application/x-protobuf') {
      const decoded = Status.toObject(Status.decode(answer.body)) as { code: number; message: string };
      expect(decoded.message.length).toBeGreaterThan(0);
    } else
      expect(JSON.parse(Buffer.from(answer.body).toString()) as unknown).toMatchObject({
        code: expect.any(Number),
        message: expect.any(String),
      });
    // A good request after it is taken, and only its run is written.
    expect((await post(r.url, JSON.stringify(jsonRequest(agentSpans())))).status).toBe(200);
    await r.collector.flush();
    expect(await store.list()).toEqual([`otel-${T}-a000000000000001`]);
  });

  test('a protobuf body whose string field is not UTF-8 is refused, saying so; the same span in UTF-8 is taken', async () => {
    const { r, store } = await receiver();
    // protobufjs reads proto3 strings strictly (Reader.stringVerify), as the Collector does: a pin of that.
    // One span named "café", by hand on the wire: name (field 5) after traceId and spanId, its é in UTF-8 or Latin-1.
    const body = (name: Buffer): Uint8Array =>
      field(
        0x0a,
        field(
          0x12,
          field(
            0x12,
            Buffer.concat([
              field(0x0a, Buffer.from(T, 'hex')),
              field(0x12, Buffer.from('a000000000000001', 'hex')),
              field(0x2a, name),
            ]),
          ),
        ),
      );
    const headers = { 'content-type': 'application/x-protobuf' };
    const latin1 = await post(r.url, body(Buffer.from('caf\xe9', 'latin1')), headers);
    expect(latin1.status).toBe(400);
    const status = Status.toObject(Status.decode(latin1.body)) as { message: string };
    expect(status.message).toMatch(/not an ExportTraceServiceRequest: .*not valid for encoding utf-8/i);
    expect((await post(r.url, body(Buffer.from('café', 'utf8')), headers)).status).toBe(200);
    await r.collector.flush();
    expect(await store.list()).toEqual([`otel-${T}`]); // the UTF-8 one's run only (a span of no agent: the trace's)
  });

  test('a JSON body that is not UTF-8, or holds a number a run would hold as another, is refused, saying where', async () => {
    const { r, store } = await receiver();
    const withValue = (value: string): string =>
      JSON.stringify(jsonRequest(agentSpans())).replace(
        '"spans":[',
        `"spans":[{"traceId":"${T}","spanId":"e000000000000005","parentSpanId":"a000000000000001","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2","attributes":[{"key":"k","value":${value}}]},`,
      );
    // "café" with its é in Latin-1: decoded with replacement, the run would hold U+FFFD where the sender's é was.
    const text = withValue('{"stringValue":"cafX"}');
    const at = Buffer.from(text.slice(0, text.indexOf('cafX') + 3));
    const latin1 = Buffer.concat([at, Buffer.from([0xe9]), Buffer.from(text.slice(text.indexOf('cafX') + 4))]);
    const refused: Array<[string | Uint8Array, string]> = [
      [withValue('{"stringValue":"café"}'), ''],
      [latin1, `the JSON body is not UTF-8: byte ${at.length} (0xe9)`],
      // An int64 as a JSON number past 2^53 (OTLP/JSON sends it as a string), digits a double drops, overflow.
      [withValue('{"intValue":9007199254740993}'), 'holds the number 9007199254740993'],
      [withValue('{"doubleValue":0.1000000000000000000001}'), 'holds the number 0.1000000000000000000001'],
      [withValue('{"doubleValue":1e400}'), 'holds the number 1e400'],
    ];
    for (const [body, says] of refused) {
      const answer = await post(r.url, body);
      if (says === '') {
        expect(answer.status).toBe(200);
        continue;
      }
      expect(answer.status, says).toBe(400);
      expect((JSON.parse(Buffer.from(answer.body).toString()) as { message: string }).message).toContain(says);
    }
    await r.collector.flush();
    // Only the first body, which is UTF-8 and exact, made a run.
    expect(await store.list()).toEqual([`otel-${T}-a000000000000001`]);
  });

  test('a value sent as JSON text that holds a number JSON.parse would round is kept as the text', async () => {
    const { r, store } = await receiver();
    const spans = agentSpans();
    const tool = spans[2] as { attributes: { key: string; value: { stringValue?: string } }[] };
    const args = tool.attributes.find((a) => a.key === 'gen_ai.tool.call.arguments')!;
    args.value = { stringValue: '{"account":9007199254740993}' };
    expect((await post(r.url, JSON.stringify(jsonRequest(spans)))).status).toBe(200);
    await r.collector.flush();
    const started = (await recordsOf(store, `otel-${T}-a000000000000001`)).find((x) => x.kind === 'tool.started')!;
    expect(started.tool_call).toMatchObject({ name: 'add', arguments: '{"account":9007199254740993}' });
  });

  test('a request with one bad span among good ones is refused whole', async () => {
    const { r, store } = await receiver();
    const spans = [...agentSpans(), { ...agentSpans()[1], spanId: 'zz' }];
    expect((await post(r.url, JSON.stringify(jsonRequest(spans)))).status).toBe(400);
    await r.collector.flush();
    expect(await store.list()).toEqual([]);
  });

  test('a bearer token: without it 401, with it 200', async () => {
    const { r } = await receiver({ token: 's3cret' });
    expect((await post(r.url, JSON.stringify(jsonRequest(agentSpans())))).status).toBe(401);
    expect(
      (
        await post(r.url, JSON.stringify(jsonRequest(agentSpans())), {
          'content-type': 'application/json',
          authorization: 'Bearer wrong',
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await post(r.url, JSON.stringify(jsonRequest(agentSpans())), {
          'content-type': 'application/json',
          authorization: 'Bearer s3cret',
        })
      ).status,
    ).toBe(200);
  });
});

describe('retries, duplicates, late and endless traces', () => {
  test('a retried export and duplicate span ids are recorded once; the journal verifies', async () => {
    const { r, store } = await receiver();
    const spans = agentSpans();
    const body = JSON.stringify(jsonRequest([...spans, spans[2]]));
    for (let i = 0; i < 3; i++) expect((await post(r.url, body)).status).toBe(200);
    expect(
      (
        await post(r.url, gzipSync(JSON.stringify(jsonRequest(spans.slice(1)))), {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
        })
      ).status,
    ).toBe(200);
    await r.collector.flush();
    const id = `otel-${T}-a000000000000001`;
    expect(await store.list()).toEqual([id]);
    expect((await recordsOf(store, id)).map((x) => x.kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'model.started',
      'model.completed',
      'run.completed',
    ]);
    expect((await store.verify(id)).ok).toBe(true);
    // The same spans again, after the run was written: the receiver knows them, nothing more is written.
    expect((await post(r.url, body)).status).toBe(200);
    await r.collector.flush();
    expect(await store.list()).toEqual([id]);
  });

  test('a span that arrives after its trace was written goes to a late run beside it', async () => {
    const { r, store } = await receiver();
    const [agent, chat, tool] = agentSpans();
    await post(r.url, JSON.stringify(jsonRequest([agent, chat, tool])));
    await r.collector.flush();
    await post(r.url, JSON.stringify(jsonRequest([agentSpans()[3]])));
    await r.collector.flush();
    const late = `otel-${T}.late-1`;
    expect((await store.list()).sort()).toEqual([`otel-${T}-a000000000000001`, late].sort());
    const records = await recordsOf(store, late);
    expect(records.map((x) => x.kind)).toEqual(['run.started', 'model.started', 'model.completed', 'run.completed']);
    expect((await store.verify(late)).ok).toBe(true);
  });

  test('a trace that never ends is written at its span bound; what follows is late, and the receiver stays up', async () => {
    const { r, store } = await receiver({ maxSpansPerTrace: 50 });
    const child = (k: number) =>
      jsonSpan(T, (0x1000 + k).toString(16).padStart(16, 'e'), 'a000000000000001', 'tick', 2000 + k, 2000 + k, {});
    for (let b = 0; b < 4; b++)
      expect(
        (await post(r.url, JSON.stringify(jsonRequest(Array.from({ length: 30 }, (_, k) => child(b * 30 + k))))))
          .status,
      ).toBe(200);
    await r.collector.flush();
    const runs = (await store.list()).sort();
    expect(runs.length).toBeGreaterThanOrEqual(2);
    for (const id of runs) expect((await store.verify(id)).ok).toBe(true);
    let steps = 0;
    for (const id of runs) steps += (await recordsOf(store, id)).filter((x) => x.kind === 'step').length;
    expect(steps).toBe(120);
  });

  test('a full receiver answers 503 (retry later) and keeps what it held', async () => {
    const { r, store } = await receiver({ maxHeldSpans: 5 });
    expect((await post(r.url, JSON.stringify(jsonRequest(agentSpans())))).status).toBe(200);
    const other = agentSpans('1af7651916cd43dd8448eb211c80319c');
    const answer = await post(r.url, JSON.stringify(jsonRequest(other)));
    expect(answer.status).toBe(503);
    await r.collector.flush();
    expect(await store.list()).toEqual([`otel-${T}-a000000000000001`]);
  });
});

describe('order', () => {
  test('any arrival order, with any duplicates, gives the same runs', () => {
    const spans = spansOfRequest(jsonRequest(agentSpans()));
    const expected = JSON.stringify(mapTrace(spans));
    fc.assert(
      fc.property(
        fc.array(fc.nat(spans.length - 1), { minLength: 0, maxLength: 8 }),
        fc.infiniteStream(fc.nat()),
        (dups, seeds) => {
          const shuffled = [...spans, ...dups.map((i) => spans[i]!)];
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = seeds.next().value % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
          }
          const unique = [...new Map(shuffled.map((s) => [s.span_id, s])).values()];
          expect(JSON.stringify(mapTrace(unique))).toBe(expected);
        },
      ),
      { numRuns: 100 },
    );
  });
});
