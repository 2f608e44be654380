/**
 * The real Python emitters (test/otel/requirements.txt, installed from PyPI): a pydantic-ai agent with its
 * own OpenTelemetry instrumentation and TestModel, and an OpenAI Agents SDK agent traced by
 * opentelemetry-instrumentation-openai-agents with a scripted model — each exporting through
 * opentelemetry-exporter-otlp-proto-http to `stepchain collect` (the built CLI, a process of its own, into a
 * SQLite store), with no stepchain code in the agent. SIGTERM writes what was accepted and exits 0.
 *
 * The interpreter: $STEPCHAIN_PYTHON, else <repo>/.venv/bin/python, made by scripts/python-env.mjs first
 * (test/helpers/python-env.ts). When it cannot be made, the tests fail and say why (they are not skipped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openStore, type OpenedStore } from '../../src/index.js';
import { PYTHON_ENV_TIMEOUT_MS, pythonInterpreter } from '../helpers/python-env.js';
import { recordsOf, tempStore } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'dist/cli/main.js');
const EMITTERS = join(ROOT, 'test/otel/emitters');

let collector: ChildProcess;
let url = '';
let stderr = '';
let exit: Promise<number | null>;
let location = '';

let python = '';

beforeAll(async () => {
  python = await pythonInterpreter();
  if (!existsSync(python)) {
    throw new Error(
      `no Python interpreter at ${python}: STEPCHAIN_PYTHON names none, or .venv is broken (remove it; npm test makes it again)`,
    );
  }
  location = `sqlite:${join(tempStore().dir, 'runs.db')}`;
  collector = spawn(process.execPath, [CLI, 'collect', location, '--listen', '127.0.0.1:0', '--settle', '200'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exit = new Promise((resolve) => collector.once('exit', (code) => resolve(code)));
  url = await new Promise<string>((resolve, reject) => {
    collector.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m !== null) resolve(m[1]!);
    });
    collector.once('exit', () => reject(new Error(`stepchain collect exited: ${stderr}`)));
  });
}, PYTHON_ENV_TIMEOUT_MS + 60_000);

afterAll(() => {
  if (collector.exitCode === null) collector.kill('SIGKILL');
});

/** Runs an emitter to its end; both run side by side (each spends most of its time importing). */
async function emit(script: string): Promise<string> {
  const child = spawn(python, [join(EMITTERS, script)], {
    env: {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_SERVICE_NAME: script.replace(/\.py$/, ''),
      OPENAI_API_KEY: 'unused-by-the-test-model',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, `${script}: ${err}`).toBe(0);
  return out;
}

describe('Python agents with their own OpenTelemetry instrumentation, recorded by stepchain collect', () => {
  let opened: OpenedStore;

  test('both agents run and export; SIGTERM writes everything and exits 0', async () => {
    const [pydantic, openai] = await Promise.all([emit('pydantic_ai_agent.py'), emit('openai_agents_agent.py')]);
    expect(pydantic).toContain('sunny');
    expect(openai).toContain('Sunny in Paris');
    collector.kill('SIGTERM');
    expect(await exit).toBe(0);
    expect(stderr).toMatch(/stopped: \d+ runs written/);
    opened = await openStore(location);
  }, 180_000);

  test('pydantic-ai: one run per agent invocation, its model calls and the tool effect, verified', async () => {
    const runs = await opened.store.runs({});
    const run = runs.find((r) => r.run?.labels?.['service.name'] === 'pydantic_ai_agent')!;
    expect(run.run?.agent).toBe('weather');
    expect(typeof run.run?.conversation_id).toBe('string');
    expect((await opened.verify(run.id)).ok).toBe(true);
    const records = await recordsOf(opened.store, run.id);
    expect(records.map((r) => r.kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'model.started',
      'model.completed',
      'run.completed',
    ]);
    const tool = records[3]!.tool_call as { name: string; arguments: unknown; call_id: string };
    expect(tool.name).toBe('forecast');
    expect(records[2]!.tool_call).toEqual([{ id: tool.call_id, name: 'forecast', arguments: tool.arguments }]);
    expect(records[4]!.result).toMatch(/^sunny in /);
    expect(records[1]!.model).toEqual({ name: 'test', provider: 'test' });
    expect((records[2]!.meta as { usage: unknown }).usage).toEqual({
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
    });
  });

  test('OpenAI Agents SDK: the workflow is a run, the agent a child run with the model calls and the tool effect, verified', async () => {
    const runs = (await opened.store.runs({})).filter((r) => r.run?.labels?.['service.name'] === 'openai_agents_agent');
    const agent = runs.find((r) => r.run?.agent === 'weather')!;
    const workflow = runs.find((r) => r.id === agent.run?.parent_run_id)!;
    expect(workflow).toBeDefined();
    for (const r of runs) expect((await opened.verify(r.id)).ok).toBe(true);
    const records = await recordsOf(opened.store, agent.id);
    expect(records.map((r) => r.kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'model.started',
      'model.completed',
      'run.completed',
    ]);
    expect(records[3]!.tool_call).toMatchObject({ name: 'forecast', arguments: { city: 'Paris' } });
    expect(records[4]!.result).toBe('sunny in Paris');
    await opened.close();
  });
});
