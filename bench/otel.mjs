// What recording OpenTelemetry GenAI traces costs (spec/OTEL.md):
// 1. Ingest: the built `stepchain collect` (a process of its own, into a directory store) receiving binary
//    protobuf ExportTraceServiceRequests over OTLP/HTTP from this process, 512 spans a request, 4 requests in
//    flight. Each trace is an agent invocation with two model calls and a tool execution (4 spans, one run).
//    "accepted" is spans answered 200 per second; "recorded" counts until SIGTERM has written every run.
// 2. In-process: the added latency per span of StepchainSpanProcessor in the OpenTelemetry JS SDK — creating
//    and ending the same 4-span trace with no processor and with it (writing at forceFlush, timed apart).
// Medians over rounds; the configurations take turns so each sees the same load.
//
//   npm run build && node bench/otel.mjs     # appends/replaces the "OpenTelemetry" section of bench/RESULTS.md
//   node bench/otel.mjs --quick              # fewer spans; prints only
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 3;
const TRACES = quick ? 500 : 1500;
const IN_PROCESS_TRACES = quick ? 300 : 1000;
const LATENCY_TRACES = quick ? 2000 : 10000;
const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist/cli/main.js');
const { encodeProtobufRequest } = await import(join(root, 'dist/otel/proto.js'));
const { StepchainSpanProcessor } = await import(join(root, 'dist/otel.js'));
const { FileStore, MemoryStore } = await import(join(root, 'dist/index.js'));
const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-otel-'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const hexId = (n, bytes) =>
  Buffer.from(
    n
      .toString(16)
      .padStart(bytes * 2, '0')
      .slice(-bytes * 2),
    'hex',
  );
const kv = (key, v) => ({ key, value: typeof v === 'number' ? { intValue: v } : { stringValue: v } });

/** The 4 spans of trace `t` as protobuf-ready objects. */
function traceSpans(t, round) {
  const traceId = hexId(round * 1e7 + t + 1, 16);
  const base = 1_700_000_000_000 + t;
  const span = (k, parent, name, startMs, endMs, attributes) => ({
    traceId,
    spanId: hexId(t * 8 + k + 1, 8),
    parentSpanId: parent === null ? undefined : hexId(t * 8 + parent + 1, 8),
    name,
    kind: 1,
    startTimeUnixNano: String(BigInt(startMs) * 1_000_000n),
    endTimeUnixNano: String(BigInt(endMs) * 1_000_000n),
    attributes,
    status: {},
  });
  const output = JSON.stringify([
    { role: 'assistant', parts: [{ type: 'tool_call', id: `c${t}`, name: 'forecast', arguments: { city: 'Paris' } }] },
  ]);
  return [
    span(0, null, 'invoke_agent weather', base, base + 10, [
      kv('gen_ai.operation.name', 'invoke_agent'),
      kv('gen_ai.agent.name', 'weather'),
    ]),
    span(1, 0, 'chat gpt', base + 1, base + 3, [
      kv('gen_ai.operation.name', 'chat'),
      kv('gen_ai.request.model', 'gpt'),
      kv('gen_ai.input.messages', '[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]'),
      kv('gen_ai.output.messages', output),
      kv('gen_ai.usage.input_tokens', 10),
    ]),
    span(2, 0, 'execute_tool forecast', base + 4, base + 5, [
      kv('gen_ai.operation.name', 'execute_tool'),
      kv('gen_ai.tool.name', 'forecast'),
      kv('gen_ai.tool.call.id', `c${t}`),
      kv('gen_ai.tool.call.arguments', '{"city":"Paris"}'),
      kv('gen_ai.tool.call.result', 'sunny'),
    ]),
    span(3, 0, 'chat gpt', base + 6, base + 8, [
      kv('gen_ai.operation.name', 'chat'),
      kv('gen_ai.request.model', 'gpt'),
      kv('gen_ai.output.messages', '[{"role":"assistant","parts":[{"type":"text","content":"Sunny."}]}]'),
    ]),
  ];
}

function requests(round) {
  const out = [];
  for (let t = 0; t < TRACES; t += 128) {
    const spans = [];
    for (let k = t; k < Math.min(TRACES, t + 128); k++) spans.push(...traceSpans(k, round));
    out.push({
      body: encodeProtobufRequest({
        resourceSpans: [
          {
            resource: { attributes: [kv('service.name', 'bench')] },
            scopeSpans: [{ scope: { name: 'bench' }, spans }],
          },
        ],
      }),
      spans: spans.length,
    });
  }
  return out;
}

async function ingestRound(round) {
  const store = join(dir, `ingest-${round}`);
  const child = spawn(process.execPath, [CLI, 'collect', store, '--listen', '127.0.0.1:0', '--settle', '200'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (c) => {
      err += c;
      const m = /listening on (http:\/\/[^ ]+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', () => reject(new Error(err)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const all = requests(round);
  const t0 = performance.now();
  let next = 0;
  let spans = 0;
  const worker = async () => {
    while (next < all.length) {
      const r = all[next++];
      for (;;) {
        const res = await fetch(`${url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-protobuf' },
          body: r.body,
        });
        await res.arrayBuffer();
        if (res.status === 200) break;
        if (res.status !== 503) throw new Error(`answered ${res.status}`);
        await new Promise((s) => setTimeout(s, 50));
      }
      spans += r.spans;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const accepted = performance.now() - t0;
  child.kill('SIGTERM');
  const code = await exited;
  const recorded = performance.now() - t0;
  if (code !== 0) throw new Error(`collect exited ${code}: ${err.slice(-500)}`);
  if (!/stopped: (\d+) runs written/.test(err) || Number(/stopped: (\d+) runs/.exec(err)[1]) !== TRACES)
    throw new Error(`not every run was written: ${err.slice(-300)}`);
  rmSync(store, { recursive: true, force: true });
  return { accepted: spans / (accepted / 1000), recorded: spans / (recorded / 1000) };
}

function emit(tracer, t) {
  const agent = tracer.startSpan(
    'invoke_agent weather',
    { attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather' } },
    ROOT_CONTEXT,
  );
  const ctx = trace.setSpan(ROOT_CONTEXT, agent);
  const c1 = tracer.startSpan(
    'chat gpt',
    {
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt',
        'gen_ai.output.messages':
          '[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"forecast","arguments":{}}]}]',
      },
    },
    ctx,
  );
  c1.end();
  const tool = tracer.startSpan(
    'execute_tool forecast',
    {
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'forecast',
        'gen_ai.tool.call.id': 'c',
        'gen_ai.tool.call.result': `r${t}`,
      },
    },
    ctx,
  );
  tool.end();
  const c2 = tracer.startSpan(
    'chat gpt',
    { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt' } },
    ctx,
  );
  c2.end();
  agent.end();
}

/** ns per span of emitting `n` traces with `tracer`, after a warm-up of the same code. */
function timeEmit(tracer, n) {
  for (let t = 0; t < 300; t++) emit(tracer, t);
  const t0 = performance.now();
  for (let t = 0; t < n; t++) emit(tracer, t);
  return ((performance.now() - t0) * 1e6) / (n * 4);
}

async function inProcessRound(round) {
  // The latency on the instrumented code's path: the processor holding spans in a memory store, against none;
  // the two take turns (bare, with, bare) so both see the same load, the bare figure the mean of its two.
  const bare = new NodeTracerProvider().getTracer('bench');
  const holding = new NodeTracerProvider({
    spanProcessors: [new StepchainSpanProcessor(new MemoryStore(), { settleMs: 3_600_000, maxHeldSpans: 1e7 })],
  });
  const b1 = timeEmit(bare, LATENCY_TRACES);
  const withNs = timeEmit(holding.getTracer('bench'), LATENCY_TRACES);
  const b2 = timeEmit(bare, LATENCY_TRACES);
  const bareNs = (b1 + b2) / 2;
  // Writing, off that path: what forceFlush/shutdown spends per span into a directory store.
  const store = new FileStore(join(dir, `inproc-${round}`), { fsync: 'none' });
  const recording = new NodeTracerProvider({
    spanProcessors: [new StepchainSpanProcessor(store, { settleMs: 3_600_000, maxHeldSpans: 1e7 })],
  });
  const tr = recording.getTracer('bench');
  for (let t = 0; t < IN_PROCESS_TRACES; t++) emit(tr, t);
  const t0 = performance.now();
  await recording.shutdown();
  const writeUs = ((performance.now() - t0) * 1e3) / (IN_PROCESS_TRACES * 4);
  rmSync(join(dir, `inproc-${round}`), { recursive: true, force: true });
  return { bareNs, withNs, addedNs: withNs - bareNs, writeUs };
}

const ingest = [];
const inproc = [];
for (let round = 0; round < ROUNDS; round++) {
  ingest.push(await ingestRound(round));
  inproc.push(await inProcessRound(round));
}
rmSync(dir, { recursive: true, force: true });

const m = (xs, k) => median(xs.map((x) => x[k]));
const lines = [
  '## OpenTelemetry: `stepchain collect` and the span processor (issue 43)',
  '',
  `\`node bench/otel.mjs\`: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}, load average at the end ${loadavg()[0].toFixed(1)}; medians of ${ROUNDS} rounds.`,
  '',
  `Ingest: the built \`stepchain collect\` into a directory store (fsync always, one run journal per trace), ${TRACES} traces of 4 GenAI spans (agent, model, tool, model) sent as binary protobuf, 512 spans a request, 4 in flight.`,
  '',
  '| measure | spans per second |',
  '|---|---|',
  `| accepted (answered 200; held, not yet written) | ${Math.round(m(ingest, 'accepted')).toLocaleString('en-US')} |`,
  `| recorded (until SIGTERM wrote every run) | ${Math.round(m(ingest, 'recorded')).toLocaleString('en-US')} |`,
  '',
  `In-process: StepchainSpanProcessor in the OpenTelemetry JS SDK (NodeTracerProvider), per span: the latency over ${LATENCY_TRACES} traces of 4 spans (held in a memory store, taking turns with a provider without it), the writing over ${IN_PROCESS_TRACES}:`,
  '',
  '| measure | per span |',
  '|---|---|',
  `| start + end a span, no processor | ${m(inproc, 'bareNs').toFixed(0)} ns |`,
  `| start + end a span, with the processor | ${m(inproc, 'withNs').toFixed(0)} ns |`,
  `| **added latency** on the instrumented code's path | **${m(inproc, 'addedNs').toFixed(0)} ns** |`,
  `| writing, at forceFlush/shutdown (off the code's path; directory store, fsync none) | ${m(inproc, 'writeUs').toFixed(1)} µs |`,
  '',
  'The receiver answers once a request is checked and held; writing (one `create` and one `appendMany` per run) is',
  'what bounds the recorded rate: a run journal per trace costs its directory, files and fsyncs.',
];
console.log(lines.join('\n'));
if (!quick) {
  const file = join(root, 'bench/RESULTS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const start = text.indexOf(lines[0]);
  const next = start < 0 ? -1 : text.indexOf('\n## ', start + 3);
  const out =
    start < 0
      ? `${text.replace(/\n*$/, '\n\n')}${lines.join('\n')}\n`
      : text.slice(0, start) + lines.join('\n') + '\n' + (next >= 0 ? text.slice(next + 1) : '');
  writeFileSync(file, out);
}
