/**
 * What the human-output tests share (test/cli/human-output.test.ts, test/cli/hostile-output.test.ts): the
 * built CLI run as a child process, the placeholders that make its output comparable (ids, times, hashes,
 * the temporary directory), and a set of journals built from one piece of content — plain words for the
 * golden outputs, terminal escapes for the hostile ones — so both suites run every verb over the same shapes:
 * a stepchain/v1 journal and a changed copy, a plain stepchain/v2 journal, two run journals (a model call,
 * a failed and a pending tool effect) and a LangGraph thread's journal.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, startRun } from '../../src/index.js';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI in `cwd` without colour (as in CI), with a generous limit for a starved machine. */
export function cli(args: string[], cwd: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end();
  });
}

/**
 * Output with what changes between runs replaced by placeholders: the directory, full digests, the short
 * hashes `log` prints, times, UUIDs, base64 roots and keys, byte counts of gzip files.
 */
export function placeholders(text: string, dir: string): string {
  return text
    .split(dir)
    .join('<dir>')
    .replace(/sha256:[0-9a-f]{64}/g, 'sha256:<hash>')
    .replace(/\b[0-9a-f]{64}\b/g, '<hex64>')
    .replace(/"[0-9a-f]{32}"/g, '"<hex32>"')
    .replace(/^( {0,3}\d+) [0-9a-f]{12}  /gm, '$1 <hash12>  ')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
    .replace(/\b\d+ ms\b/g, '<n> ms');
}

/** The content every journal is built from. */
export interface Content {
  /** Any text: prompts, results, arguments, labels, an error message. */
  text: string;
  /** A tool's name, an idempotency key and a model id. */
  name: string;
}

export const PLAIN: Content = { text: 'Weather in Paris?', name: 'weather' };

/** Builds the journals under `dir`: v1, v1-changed, v2, run, run-changed, thread. */
export async function buildJournals(dir: string, c: Content): Promise<void> {
  const store = new FileStore(dir, { fsync: 'none' });
  for (const [id, last] of [
    ['v1', c.text],
    ['v1-changed', `${c.text}!`],
  ] as const) {
    const j = await store.create(id, { format: 'stepchain/v1' });
    await j.append({
      input: { q: c.text },
      model: c.name,
      prompt: c.text,
      tool_call: { name: c.name, arguments: { q: c.text } },
      result: { text: c.text },
    });
    await j.append({
      input: null,
      model: 'gpt-4o',
      prompt: [{ role: 'user', content: c.text }],
      tool_call: null,
      result: last,
    });
    await j.close();
  }
  const v2 = await store.create('v2', { format: 'stepchain/v2' });
  await v2.append({
    input: { user: 'u1', api_key: 'sk-live-0123456789abcdef' },
    model: c.name,
    prompt: c.text,
    tool_call: null,
    result: { ok: true, tool: c.name },
  });
  await v2.close();
  for (const [id, prompt] of [
    ['run', c.text],
    ['run-changed', `${c.text} please`],
  ] as const) {
    const run = await startRun(store, { runId: id, input: c.text, agent: c.text, labels: { env: c.text } });
    const call = await run.beginModel({
      model: { provider: 'mock', modelId: c.name },
      prompt: [{ role: 'user', content: prompt }],
    });
    await call.complete({ result: c.text, toolCalls: [{ id: 'c1', name: c.name, arguments: { city: c.text } }] });
    const failed = await run.beginTool({
      name: c.name,
      args: { city: c.text },
      callId: 'c1',
      idempotencyKey: c.name,
      summary: c.text,
    });
    await failed.fail({ name: 'Timeout', message: c.text });
    await run.beginTool({ name: c.name, args: { city: c.text }, callId: 'c1', idempotencyKey: `${c.name}-2` });
    await run.journal.close();
  }
  const thread = await store.create('thread', { format: 'stepchain/v1' });
  const stored = (v: unknown) => ({ type: 'json', text: JSON.stringify(v) });
  await thread.append({
    input: {
      kind: 'langgraph.checkpoint',
      thread_id: c.text,
      checkpoint_ns: '',
      checkpoint_id: '1f0c-01',
      parent: null,
      checkpoint: stored({ v: 4, id: '1f0c-01' }),
      metadata: stored({ source: 'input', step: -1 }),
    },
    model: null,
    prompt: null,
    tool_call: null,
    result: { channel_values: { messages: { version: 1, value: stored([c.text]) } } },
  });
  await thread.append({
    input: {
      kind: 'langgraph.writes',
      thread_id: c.text,
      checkpoint_ns: '',
      checkpoint_id: '1f0c-01',
      task_id: 'task-1',
      task_path: 'agent',
    },
    model: null,
    prompt: null,
    tool_call: null,
    result: { writes: [{ idx: 0, channel: 'messages', value: stored(c.text) }] },
  });
  await thread.close();
  writeFileSync(
    join(dir, 'policy.json'),
    JSON.stringify({
      rules: [
        { id: 'keys', paths: ['/input/api_key'] },
        { id: 'prompts', paths: ['/prompt'] },
      ],
    }),
  );
}
