/**
 * The journal verbs on what issue 15 found: `log --jsonl` (a stream, memory bounded), what `log` calls the
 * prompt of a chat turn, bucket names above 2^53, a metadata file verify must report rather than throw, and
 * a blob holding a marker that `show` must refuse rather than print. The built CLI: in one process of its own
 * (cliInProcess, support.ts), but for the memory bound's two calls, which start a process under a 48 MB heap
 * (a node flag, the process's own limit).
 */
import { copyFileSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/index.js';
import { genesisHash, sealRecord } from '../../src/record/index.js';
import { describePrompt } from '../../src/cli/verbs/journal.js';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';

const root = tempDir('stepchain-journal-cli-');
const inProcess = cliInProcess();
/** A call given node flags starts a process with them; the rest run in the file's one process of the CLI. */
const cli = (args: string[], options: { input?: string; node?: string[] } = {}) => {
  const input = options.input === undefined ? {} : { input: options.input };
  return options.node === undefined
    ? inProcess(args, input)
    : runNode([...options.node, CLI, ...args], { timeoutMs: 60_000, ...input });
};

const CHAT = [
  { role: 'system', content: 'You are a weather bot.' },
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: null, tool_calls: [{ name: 'get_weather' }] },
  { role: 'tool', content: '{"temperature":18.5}' },
];

beforeAll(async () => {
  const store = new FileStore(root, { fsync: 'none' });
  const j = await store.create('chat');
  await j.append({
    input: { q: 'paris' },
    model: 'm',
    prompt: CHAT.slice(0, 2),
    tool_call: { name: 'get_weather', arguments: { city: 'Paris' } },
    result: { temperature: 18.5 },
  });
  await j.append({ input: null, model: 'm', prompt: CHAT, result: 'It is 18.5 °C in Paris.' });
  await j.append({ input: null, model: 'm', prompt: 'plain prompt', result: 'ok' });
  await j.close();
});

describe('log --jsonl', () => {
  test('one object per step, then a summary line with the verdict; exit 0', async () => {
    const r = await cli(['log', join(root, 'chat'), '--jsonl']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    const j = await new FileStore(root).open('chat', { readOnly: true });
    const steps: unknown[] = [];
    for await (const s of j.read()) steps.push({ type: 'step', step: s });
    const report = await j.verify();
    await j.close();
    expect(lines.slice(0, 3)).toEqual(steps);
    expect(lines[3]).toEqual({
      type: 'summary',
      format: 'stepchain-cli/v1',
      command: 'log',
      ok: true,
      verification: report,
    });
  });

  test('--from/--to select steps; the summary still covers the whole chain', async () => {
    const r = await cli(['log', join(root, 'chat'), '--jsonl', '--from', '1', '--to', '1']);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; step?: { seq: number }; verification?: { steps: number } });
    expect(lines.map((l) => l.type)).toEqual(['step', 'summary']);
    expect(lines[0]!.step!.seq).toBe(1);
    expect(lines[1]!.verification!.steps).toBe(3);
  });

  test('a broken chain: the summary says ok false, exit 1', async () => {
    const dir = join(root, 'broken');
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('broken');
    await j.append({ input: 1 });
    await j.append({ input: 2 });
    await j.close();
    const bucket = join(dir, 'buckets', readdirSync(join(dir, 'buckets'))[0]!);
    writeFileSync(bucket, readFileSync(bucket, 'utf8').replace('"input":1', '"input":7'));
    const r = await cli(['log', dir, '--jsonl']);
    expect(r.code).toBe(1);
    const last = JSON.parse(r.stdout.trimEnd().split('\n').at(-1)!) as {
      type: string;
      ok: boolean;
      verification: { problems: Array<{ code: string }> };
    };
    expect(last.type).toBe('summary');
    expect(last.ok).toBe(false);
    expect(last.verification.problems[0]!.code).toBe('HASH_MISMATCH');
  });

  test('--json and --jsonl together are a usage error', async () => {
    const r = await cli(['log', join(root, 'chat'), '--jsonl', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('choose one');
  });

  test('--help says which form to use when', async () => {
    const r = await cli(['log', '--help']);
    expect(r.stdout).toContain('--jsonl');
    expect(r.stdout).toMatch(/--jsonl for long runs and pipelines/);
  });

  test('memory is bounded: under a 48 MB heap, --jsonl streams 40 000 steps to a pipe; --json of the same run does not fit', async () => {
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('long');
    await j.appendMany(
      Array.from({ length: 40_000 }, (_, i) => ({
        input: { i, text: 'lorem ipsum '.repeat(30) },
        model: 'm',
        prompt: CHAT,
        result: { ok: i },
      })),
    );
    await j.close();
    const cap = ['--max-old-space-size=48'];
    const stream = await cli(['log', join(root, 'long'), '--jsonl'], { node: cap });
    expect(stream.code, stream.stderr.slice(0, 2000)).toBe(0);
    expect(stream.stdout.split('\n').length).toBe(40_002); // 40 000 steps, the summary, the final newline
    // The limit bites: the one-document form holds every step at once, and fails under it.
    const whole = await cli(['log', join(root, 'long'), '--json'], { node: cap });
    expect(whole.code).not.toBe(0);
    expect(whole.stderr).toMatch(/heap out of memory|Allocation failed/);
  }, 120_000);
});

describe('what log calls the prompt', () => {
  test.each([
    ['a string is itself', 'Be brief.', 'Be brief.'],
    [
      "a chat turn after a tool call: the last message is the tool's, the question is the user's",
      CHAT,
      '4 messages, the last from tool; last user message: What is the weather in Paris?',
    ],
    [
      'a chat of system and user',
      CHAT.slice(0, 2),
      '2 messages, the last from user; last user message: What is the weather in Paris?',
    ],
    [
      'content parts',
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at' },
            { type: 'image_url', image_url: 'x' },
            { type: 'text', text: 'this' },
          ],
        },
      ],
      '1 message, the last from user; last user message: Look at this',
    ],
    ['no user message', [{ role: 'system', content: 'x' }], '1 message, the last from system'],
    ['not a chat', { template: 't' }, '{"template":"t"}'],
  ] as const)('%s', (_what, prompt, shown) => {
    expect(describePrompt(prompt as never, 200)).toBe(shown);
  });

  test("log shows a tool turn's prompt as the conversation it is, not as the tool's result", async () => {
    const r = await cli(['log', join(root, 'chat')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'prompt: 4 messages, the last from tool; last user message: What is the weather in Paris?',
    );
    expect(r.stdout).not.toContain('prompt: {"temperature":18.5}');
  });
});

describe('a bucket named above 2^53', () => {
  test('9999999999999999.jsonl is no bucket: head, export and fork ignore it; verify reports JOURNAL_INVALID', async () => {
    const dir = join(root, 'big-name');
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('big-name');
    await j.append({ input: 1 });
    await j.append({ input: 2 });
    await j.close();
    copyFileSync(join(dir, 'buckets', '0000000000000000.jsonl'), join(dir, 'buckets', '9999999999999999.jsonl'));
    const head = await cli(['head', dir]);
    expect(head.code, head.stderr).toBe(0);
    expect(head.stdout).toMatch(/^1 sha256:/);
    const exp = await cli(['export', dir, '-o', join(root, 'big-name.tar.gz')]);
    expect(exp.code, exp.stderr).toBe(0);
    const fork = await cli(['fork', dir, '--from-step', '0', join(root, 'big-name-fork')]);
    expect(fork.code, fork.stderr).toBe(0);
    const verify = await cli(['verify', '--json', dir]);
    expect(verify.code).toBe(1);
    const problems = (JSON.parse(verify.stdout) as { report: { problems: Array<{ code: string; message: string }> } })
      .report.problems;
    expect(problems.map((p) => p.code)).toEqual(['JOURNAL_INVALID']);
    expect(problems[0]!.message).toContain('2^53');
  });
});

describe('a metadata file that breaks FILE-STORE.md §4', () => {
  test('verify reports JOURNAL_INVALID (exit 1); the verbs that open the journal refuse it (exit 2)', async () => {
    const dir = join(root, 'proto');
    const store = new FileStore(root, { fsync: 'none' });
    await (await store.create('proto')).close();
    const meta = readFileSync(join(dir, 'journal.json'), 'utf8');
    writeFileSync(join(dir, 'journal.json'), meta.replace('{"config"', '{"__proto__":{"polluted":true},"config"'));
    const verify = await cli(['verify', '--json', dir]);
    expect(verify.code).toBe(1);
    const report = (JSON.parse(verify.stdout) as { report: { problems: Array<{ code: string; message: string }> } })
      .report;
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]!.code).toBe('JOURNAL_INVALID');
    expect(report.problems[0]!.message).toContain('"__proto__"');
    for (const args of [
      ['log', dir],
      ['head', dir],
      ['append', dir],
    ]) {
      const r = await cli(args, { input: '{"input":1}' });
      expect(r.code, args[0]).toBe(2);
      expect(r.stderr).toContain('JOURNAL_INVALID');
    }
  });
});

describe('a blob holding a marker', () => {
  test("show refuses it with BLOB_CORRUPT instead of printing the marker as the step's content", async () => {
    const dir = join(root, 'marked');
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('marked');
    const genesis = j.genesis;
    await j.close();
    // A consistent journal whose step 0 result is a blob that is itself a blob marker: digest, size and step hash all right.
    const value = canonicalJson(
      { '$stepchain:blob': { digest: 'sha256:' + '0'.repeat(64), size: 1 } },
      { refuseReserved: false },
    );
    const digest = 'sha256:' + createHash('sha256').update(value).digest('hex');
    writeFileSync(join(dir, 'blobs', 'sha256', digest.slice(7)), value);
    const { line } = sealRecord({
      v: 1,
      seq: 0,
      step_id: 's0',
      ts: '2026-01-01T00:00:00.000Z',
      prev_hash: genesisHash(genesis),
      input: null,
      model: null,
      prompt: null,
      tool_call: null,
      result: { '$stepchain:blob': { digest, size: Buffer.byteLength(value) } },
    } as never);
    writeFileSync(join(dir, 'buckets', '0000000000000000.jsonl.tmp'), line);
    renameSync(join(dir, 'buckets', '0000000000000000.jsonl.tmp'), join(dir, 'buckets', '0000000000000000.jsonl'));
    const show = await cli(['show', dir, '0']);
    expect(show.code).toBe(2);
    expect(show.stderr).toContain('BLOB_CORRUPT');
    expect(show.stdout).not.toContain('$stepchain:');
    const verify = await cli(['verify', '--json', dir]);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain('BLOB_CORRUPT');
  });
});
