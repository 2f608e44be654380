#!/usr/bin/env node
// Issue 33's storage benchmark, in one run: the 40-turn agent whose tool returns 100 KB per turn, recorded
// (1) through the AI SDK adapter with the SDK's own mock model (`MockLanguageModelV3`) into a run journal
// in the file store (fsync none), and (2) as the same shape of generic steps appended by
// `stepchain append --jsonl`; each into a stepchain/v2 journal (today: whole-field blobs) and a
// stepchain/v3 journal (parts, spec/PARTS.md). Measures journal bytes and receipt bytes against the
// distinct content the agent saw (target ≤ 1.3×), the journal's growth per turn, and the time per turn;
// then a 200 KB image sent in five turns. Writes its section of bench/RESULTS.md (or RESULTS-quick.md
// with --quick: 10 turns). Built from dist/: run `npm run build` first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { exportReceipt, FileStore, startRun } from '../dist/index.js';
import { recordTools, stepchainMiddleware } from '../dist/adapters/ai-sdk/index.js';
import { writeSection } from './lib/results-section.mjs';

const quick = process.argv.includes('--quick');
const TURNS = quick ? 10 : 40;
const PAGE = 100_000;
const IMAGE = 200 * 1024;
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const usage = { inputTokens: { total: 10, noCache: 10 }, outputTokens: { total: 5, text: 5 } };

/** A 100 KB page of words, different for every turn (deterministic). */
function page(n) {
  let x = (n + 1) * 2654435761;
  let out = `page ${n}:`;
  while (out.length < PAGE) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += ' w' + (x % 100000).toString(36);
  }
  return out.slice(0, PAGE);
}

function bytesUnder(path) {
  let n = 0;
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

const utf8 = (s) => Buffer.byteLength(s, 'utf8');

/** The agent through the AI SDK adapter; returns bytes per turn, the distinct content, the time. */
async function aiSdkAgent(root, format) {
  const store = new FileStore(root, { fsync: 'none' });
  const run = await startRun(store, { runId: 'agent', format });
  const dir = join(root, 'agent');
  const script = [];
  for (let i = 0; i < TURNS; i++)
    script.push({
      content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'fetch_page', input: JSON.stringify({ n: i }) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    });
  script.push({
    content: [{ type: 'text', text: 'Here is what the pages say.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  });
  const mock = new MockLanguageModelV3({ doGenerate: script });
  const growth = [];
  const fetchPage = tool({
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      growth.push(bytesUnder(dir));
      return page(n);
    },
  });
  const started = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const result = await generateText({
    model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
    tools: recordTools(run, { fetch_page: fetchPage }),
    stopWhen: stepCountIs(TURNS + 1),
    maxRetries: 0,
    prompt: 'Read the pages one by one and summarize them.',
  });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  await run.close();
  growth.push(bytesUnder(dir));
  // Distinct content: the last prompt holds every message of the conversation once; plus the answer.
  const last = mock.doGenerateCalls.at(-1).prompt;
  const distinct = utf8(JSON.stringify(last)) + utf8(result.text);
  const journal = bytesUnder(dir);
  const receipt = await receiptBytes(store, 'agent', root);
  return {
    journal,
    receipt,
    distinct,
    growth,
    msPerTurn: ms / TURNS,
    cpuPerTurn: (cpu.user + cpu.system) / 1000 / TURNS,
  };
}

async function receiptBytes(store, id, root) {
  const j = await store.open(id, { readOnly: true });
  try {
    const out = join(root, `${id}.receipt.tar`);
    const r = await exportReceipt(j, { out });
    return r.bytes;
  } catch (e) {
    return `not exported (${e.code ?? e.message})`;
  } finally {
    await j.close();
  }
}

/** The same shape as generic steps, appended by the CLI: per turn the model call (whole prompt), its answer, the tool call, the tool's result. */
function jsonlAgent(root, format) {
  mkdirSync(root, { recursive: true });
  const dir = join(root, 'jsonl');
  const lines = [];
  const messages = [{ role: 'user', content: 'Read the pages one by one and summarize them.' }];
  for (let i = 0; i < TURNS; i++) {
    lines.push({ input: { turn: i, call: 'model' }, model: 'mock-model', prompt: [...messages] });
    const call = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'fetch_page', input: { n: i } }],
    };
    lines.push({ input: { turn: i, call: 'model' }, model: 'mock-model', result: call });
    lines.push({ input: { turn: i, call: 'tool' }, tool_call: { name: 'fetch_page', arguments: { n: i } } });
    const text = page(i);
    lines.push({ input: { turn: i, call: 'tool' }, result: { text } });
    messages.push(call, {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: `c${i}`, toolName: 'fetch_page', output: { type: 'text', value: text } },
      ],
    });
  }
  lines.push({ input: { turn: TURNS, call: 'model' }, model: 'mock-model', prompt: [...messages] });
  const answer = 'Here is what the pages say.';
  lines.push({
    input: { turn: TURNS, call: 'model' },
    model: 'mock-model',
    result: { role: 'assistant', content: answer },
  });
  const file = join(root, 'steps.jsonl');
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  execFileSync(process.execPath, [CLI, 'init', dir, '--format', format.slice('stepchain/'.length)], {
    stdio: 'ignore',
  });
  const started = process.hrtime.bigint();
  // The child's CPU time: user + system of the whole append process, from the shell's `times`.
  const times = execFileSync(
    '/bin/sh',
    ['-c', `"$0" "$1" append "$2" --jsonl --file "$3" >/dev/null 2>&1; times`, process.execPath, CLI, dir, file],
    { encoding: 'utf8' },
  );
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const child = times
    .trim()
    .split('\n')
    .pop()
    .trim()
    .split(/\s+/)
    .map((t) => {
      const m = /^(\d+)m([\d.]+)s$/.exec(t);
      return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
    });
  const cpuPerTurn = (((child[0] ?? 0) + (child[1] ?? 0)) * 1000) / TURNS;
  const distinct = utf8(JSON.stringify(messages)) + utf8(answer);
  const journal = bytesUnder(dir);
  let receipt;
  try {
    execFileSync(process.execPath, [CLI, 'export', dir, '-o', join(root, 'jsonl.tar')], { stdio: 'ignore' });
    receipt = statSync(join(root, 'jsonl.tar')).size;
  } catch (e) {
    receipt = 'not exported';
  }
  return { journal, receipt, distinct, msPerTurn: ms / TURNS, cpuPerTurn };
}

/** A 200 KB image sent with the user's message, so in every one of five model calls' prompts. */
async function imageAgent(root, format) {
  const store = new FileStore(root, { fsync: 'none' });
  const run = await startRun(store, { runId: 'image', format });
  const png = new Uint8Array(IMAGE);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < png.length; i++) png[i] = (i * 2654435761) >>> 24;
  const script = [];
  for (let i = 0; i < 4; i++)
    script.push({
      content: [{ type: 'tool-call', toolCallId: `z${i}`, toolName: 'zoom', input: JSON.stringify({ level: i }) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage,
      warnings: [],
    });
  script.push({
    content: [{ type: 'text', text: 'A chart.' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  });
  const mock = new MockLanguageModelV3({ doGenerate: script });
  const zoom = tool({
    inputSchema: z.object({ level: z.number() }),
    execute: async ({ level }) => `zoomed to ${level}`,
  });
  await generateText({
    model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
    tools: recordTools(run, { zoom }),
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'file', mediaType: 'image/png', data: png },
        ],
      },
    ],
  });
  await run.close();
  const dir = join(root, 'image');
  return { journal: bytesUnder(dir), image: IMAGE, calls: mock.doGenerateCalls.length };
}

const x = (a, b) => (typeof a === 'number' ? `${(a / b).toFixed(2)}×` : a);
const mb = (n) => (typeof n === 'number' ? `${(n / 1e6).toFixed(2)} MB` : n);
const kb = (n) => `${(n / 1e3).toFixed(1)} KB`;

async function main() {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-v3-storage-'));
  const rows = [];
  const images = [];
  try {
    for (const format of ['stepchain/v2', 'stepchain/v3']) {
      const tag = format.slice('stepchain/'.length);
      console.error(`v3-storage: ${format}, AI SDK adapter, ${TURNS} turns × 100 KB ...`);
      const a = await aiSdkAgent(join(root, `sdk-${tag}`), format);
      const g = a.growth;
      const perTurn = g.slice(1).map((v, i) => v - g[i]);
      const first = perTurn.slice(0, 5);
      const lastFive = perTurn.slice(-5);
      rows.push({
        path: 'AI SDK adapter',
        format,
        ...a,
        firstGrowth: first.reduce((s, v) => s + v, 0) / first.length,
        lastGrowth: lastFive.reduce((s, v) => s + v, 0) / lastFive.length,
      });
      console.error(
        `  journal ${mb(a.journal)} (${x(a.journal, a.distinct)}), receipt ${mb(a.receipt)}, ${a.msPerTurn.toFixed(1)} ms/turn`,
      );
      console.error(`v3-storage: ${format}, stepchain append --jsonl ...`);
      const j = jsonlAgent(join(root, `jsonl-${tag}`), format);
      rows.push({ path: '`stepchain append --jsonl`', format, ...j });
      console.error(`  journal ${mb(j.journal)} (${x(j.journal, j.distinct)}), receipt ${mb(j.receipt)}`);
      const im = await imageAgent(join(root, `image-${tag}`), format);
      images.push({ format, ...im });
      console.error(`  image: journal ${kb(im.journal)} for a ${kb(im.image)} image in ${im.calls} calls`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const L = [];
  L.push(`## Parts: journals that grow with what is new (issue 33, bench/v3-storage.mjs${quick ? ' --quick' : ''})`);
  L.push('');
  L.push(
    `${TURNS} turns; each turn a model call whose prompt holds the whole conversation so far, a tool call, and a tool result of 100 KB (different every turn). File store, fsync none, Node ${process.version}, one run. "Distinct" is the bytes of the conversation's messages once (the last prompt) plus the answer. Growth: journal bytes added per turn, mean of the first five and of the last five turns. Time per turn: the agent's run (AI SDK: in process, the tool's directory walk for the growth column included) or the whole \`append --jsonl\` process (its CPU time from the shell's \`times\`), divided by the turns; the machine is shared (2 cores, 8 helpers), so wall times are loose and CPU times the ones to compare; the --jsonl input itself holds every prompt whole, so its parsing grows with the square of the turns in both formats.`,
  );
  L.push('');
  L.push(
    '| path | format | distinct | journal | ÷ distinct | receipt | ÷ distinct | growth, turns 1–5 | growth, last 5 | wall ms per turn | CPU ms per turn |',
  );
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    L.push(
      `| ${r.path} | ${r.format} | ${mb(r.distinct)} | ${mb(r.journal)} | ${x(r.journal, r.distinct)} | ${mb(r.receipt)} | ${x(r.receipt, r.distinct)} | ${r.firstGrowth === undefined ? '–' : kb(r.firstGrowth)} | ${r.lastGrowth === undefined ? '–' : kb(r.lastGrowth)} | ${r.msPerTurn.toFixed(1)} | ${r.cpuPerTurn.toFixed(1)} |`,
    );
  }
  L.push('');
  L.push("A 200 KB PNG sent with the user's message, so in each of five model calls' prompts (AI SDK adapter):");
  L.push('');
  L.push('| format | journal | ÷ image |');
  L.push('|---|---:|---:|');
  for (const i of images) L.push(`| ${i.format} | ${kb(i.journal)} | ${x(i.journal, i.image)} |`);
  L.push('');
  const file = fileURLToPath(new URL(quick ? 'RESULTS-quick.md' : 'RESULTS.md', import.meta.url));
  writeSection(file, '## Parts: journals that grow with what is new', L);
  console.log(L.join('\n'));
}

await main();
