/**
 * `stepchain collect <store>`: the OTLP/HTTP trace receiver (spec/OTEL.md §4–§5) on the command line, until
 * SIGINT or SIGTERM, which write every accepted span and exit 0. `stepchain otel-export <journal> --endpoint
 * URL`: a recorded run sent as OTLP spans carrying its step hashes (§7).
 */
import { mkdirSync } from 'node:fs';
import { openStore, parseLocation } from '../../location.js';
import { exportRun, startReceiver } from '../../otel.js';
import { intArg } from '../args.js';
import { UsageError, type Verb } from '../cli.js';
import { locate } from '../location.js';

const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

function listenOf(text: string | undefined): { host: string; port: number } {
  if (text === undefined) return { host: '127.0.0.1', port: 4318 };
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || port > 65535)
    throw new UsageError(
      `--listen ${JSON.stringify(text)} must be host:port (e.g. 127.0.0.1:4318, [::1]:4318, 0.0.0.0:4318)`,
      'collect',
    );
  return { host: (m[1] ?? m[2])!, port };
}

export const collectVerb: Verb = {
  name: 'collect',
  summary: 'receive OpenTelemetry GenAI traces (OTLP/HTTP) and record each agent run as a run journal',
  usage: '<store> [--listen host:port] [--token T] [--settle ms]',
  description: [
    'An OTLP/HTTP trace receiver: POST /v1/traces, protobuf or JSON, gzip or not. Each agent invocation (gen_ai.operation.name',
    'invoke_agent) becomes a run journal in <store> (a directory, sqlite:file.db or postgres://…), its model calls model records,',
    "its tool executions tool effects; spans under no agent invocation make the trace's run (spec/OTEL.md). A trace is written",
    'once its root span arrived and nothing came for --settle ms; a span arriving later is recorded in a late run beside it.',
    'Point any OpenTelemetry SDK at it: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318. SIGINT or SIGTERM writes every',
    'accepted span and exits 0. The token may also be given as STEPCHAIN_COLLECT_TOKEN (other users cannot read it from ps).',
  ].join('\n'),
  options: {
    listen: {
      type: 'string',
      arg: 'host:port',
      description: 'where to listen (default 127.0.0.1:4318; port 0: a free one, printed)',
    },
    token: { type: 'string', arg: 'T', description: 'require Authorization: Bearer T on every request' },
    settle: {
      type: 'string',
      arg: 'ms',
      description: 'how long a trace stays open after its last span (default 2000)',
    },
    'max-body': {
      type: 'string',
      arg: 'bytes',
      description: 'the largest request accepted (default 8388608); larger ones are answered 413',
    },
  },
  args: { min: 1, max: 1, names: ['store'] },
  examples: [
    ['stepchain collect runs/', 'receive traces on 127.0.0.1:4318 into the directory runs/'],
    [
      'stepchain collect sqlite:agents.db --listen 127.0.0.1:4319 --token s3cret',
      'into a SQLite file, on another port, with a bearer token',
    ],
  ],
  async run({ out, values, positionals }) {
    const where = positionals[0]!;
    const { host, port } = listenOf(values.listen as string | undefined);
    if (parseLocation(where).backend === 'file') mkdirSync(where, { recursive: true });
    const opened = await openStore(where);
    const token = (values.token as string | undefined) ?? process.env.STEPCHAIN_COLLECT_TOKEN;
    const log = (line: string): void => {
      out.say(`stepchain collect: ${line.replace(CONTROL, '?')}`);
    };
    let runs = 0;
    const receiver = await startReceiver({
      store: opened.store,
      host,
      port,
      log,
      onRun: () => {
        runs++;
      },
      ...(token === undefined || token === '' ? {} : { token }),
      ...(values.settle === undefined ? {} : { settleMs: intArg(values.settle, '--settle', 'collect') }),
      ...(values['max-body'] === undefined
        ? {}
        : { maxBodyBytes: intArg(values['max-body'], '--max-body', 'collect') }),
    });
    log(`listening on ${receiver.url} (POST /v1/traces), recording into ${opened.display}`);
    await new Promise<void>((resolve) => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, () => resolve());
    });
    log('stopping: writing every accepted span');
    await receiver.close();
    await opened.close();
    const failures = receiver.collector.failures;
    log(
      `stopped: ${runs} run${runs === 1 ? '' : 's'} written${failures > 0 ? `, ${failures} not written (named above)` : ''}`,
    );
    if (out.json) out.document('collect', { ok: failures === 0, url: receiver.url, runs, failures });
    return failures === 0 ? 0 : 1;
  },
};

export const otelExportVerb: Verb = {
  name: 'otel-export',
  summary: 'send a recorded run to an OpenTelemetry collector as OTLP spans carrying its step hashes',
  usage: '<journal> --endpoint URL [--header k=v]…',
  description: [
    'Verifies the run journal, then sends it as OTLP/JSON spans to URL (an OTLP/HTTP base such as http://127.0.0.1:4318, or the',
    'full …/v1/traces URL): one span for the run, one per model request, tool effect and step, with the GenAI attributes and',
    'stepchain.journal_id, stepchain.seq, stepchain.step_id, stepchain.step_hash (spec/OTEL.md §7), so a trace viewer links each',
    'span to the verifiable step. A journal that does not verify is not sent.',
  ].join('\n'),
  options: {
    endpoint: { type: 'string', arg: 'URL', description: 'the OTLP/HTTP endpoint (required)' },
    header: {
      type: 'string',
      arg: 'k=v',
      multiple: true,
      description: 'an HTTP header to send (repeatable), e.g. authorization=Bearer T',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain otel-export runs/otel-4bf9… --endpoint http://127.0.0.1:4318',
      'send a recorded run to a local collector',
    ],
  ],
  async run({ out, values, positionals }) {
    if (typeof values.endpoint !== 'string') throw new UsageError('--endpoint URL is required', 'otel-export');
    try {
      new URL(values.endpoint);
    } catch {
      throw new UsageError(`--endpoint ${JSON.stringify(values.endpoint)} is not a URL`, 'otel-export');
    }
    const headers: Record<string, string> = {};
    for (const h of (values.header as string[] | undefined) ?? []) {
      const eq = h.indexOf('=');
      if (eq <= 0) throw new UsageError(`--header ${JSON.stringify(h)} must be name=value`, 'otel-export');
      headers[h.slice(0, eq).trim().toLowerCase()] = h.slice(eq + 1);
    }
    const at = await locate(positionals[0]!);
    try {
      const report = await at.store.verify(at.id!);
      if (!report.ok)
        throw new UsageError(
          `${at.display} does not verify (${report.problems.length} problem(s), first ${report.problems[0]?.code ?? '?'}): not sent; stepchain verify names each`,
          'otel-export',
        );
      const journal = await at.store.open(at.id!, { readOnly: true });
      try {
        const sent = await exportRun(journal, values.endpoint, headers);
        out.say(
          `sent ${sent.spans} span${sent.spans === 1 ? '' : 's'} of ${at.display.replace(CONTROL, '?')} to ${sent.url.replace(CONTROL, '?')}`,
        );
        if (out.json) out.document('otel-export', { ok: true, spans: sent.spans, url: sent.url, journal: at.id });
      } finally {
        await journal.close();
      }
    } finally {
      await at.close();
    }
    return 0;
  },
};
