// What the MCP journaling proxy (`stepchain mcp`, spec/MCP.md) adds to a tool call: the real
// @modelcontextprotocol/sdk client calling a tool of the test server (test/mcp/fixtures/server.mjs) over
// stdio, directly and through the proxy writing to a run journal with fsync none and always. Each recorded
// call is two appends (intent before forwarding, outcome before the answer is passed on); with fsync
// always each is on disk before the message moves on. Sequential calls give the latency per call; 16
// calls in flight at once give calls per second. The configurations take turns round by round, so each
// sees the same load; medians over the rounds.
//
//   npm run build && node bench/mcp.mjs            # writes the "MCP proxy" section of bench/RESULTS.md
//   node bench/mcp.mjs --quick                     # fewer calls; prints only
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { writeSection } from './lib/results-section.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 2 : 5;
const SEQUENTIAL = quick ? 100 : 300;
const CONCURRENT = quick ? 200 : 1000;
const IN_FLIGHT = 16;
const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist/cli/main.js');
const SERVER = join(root, 'test/mcp/fixtures/server.mjs');
const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-mcp-'));

const CONFIGS = [
  { name: 'direct (no proxy)', args: () => [SERVER] },
  {
    name: 'proxy, fsync none',
    args: (i) => [CLI, 'mcp', join(dir, `none-${i}`), '--fsync', 'none', '--', process.execPath, SERVER],
  },
  {
    name: 'proxy, fsync always',
    args: (i) => [CLI, 'mcp', join(dir, `always-${i}`), '--fsync', 'always', '--', process.execPath, SERVER],
  },
];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function session(config, i) {
  const transport = new StdioClientTransport({ command: process.execPath, args: config.args(i), stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(transport);
  const call = (n) => client.callTool({ name: 'echo', arguments: { text: `call ${n}: ${'x'.repeat(200)}` } });
  for (let n = 0; n < 20; n++) await call(n); // warm-up
  const lat = [];
  for (let n = 0; n < SEQUENTIAL; n++) {
    const t0 = performance.now();
    await call(n);
    lat.push(performance.now() - t0);
  }
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONCURRENT) await call(next++);
    }),
  );
  const rate = CONCURRENT / ((performance.now() - t0) / 1000);
  await client.close();
  return { latency: median(lat), p99: lat.sort((a, b) => a - b)[Math.floor(lat.length * 0.99)], rate };
}

const results = CONFIGS.map(() => ({ latency: [], p99: [], rate: [] }));
for (let round = 0; round < ROUNDS; round++) {
  for (const [k, config] of CONFIGS.entries()) {
    const r = await session(config, `${round}`);
    results[k].latency.push(r.latency);
    results[k].p99.push(r.p99);
    results[k].rate.push(r.rate);
    console.error(
      `round ${round + 1}/${ROUNDS} ${config.name}: ${r.latency.toFixed(3)} ms/call, ${r.rate.toFixed(0)} calls/s`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });

const base = median(results[0].latency);
const lines = [
  '## MCP proxy',
  '',
  `\`node bench/mcp.mjs\`${quick ? ' --quick' : ''} (issue 44): the SDK's client calling \`echo\` on the test server over stdio, directly and through`,
  "`stepchain mcp` recording to a run journal. Latency: median of each session's median over sequential calls; calls/s: " +
    `${IN_FLIGHT} calls in flight.`,
  `${ROUNDS} rounds, ${SEQUENTIAL} sequential and ${CONCURRENT} concurrent calls each; the configurations take turns. Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
  'The machine was shared with other jobs and loaded while this ran: read the ratios, not the absolute figures.',
  '',
  '| configuration | latency per call | added by the proxy | p99 | calls/s (16 in flight) |',
  '|---|---:|---:|---:|---:|',
  ...CONFIGS.map((c, k) => {
    const l = median(results[k].latency);
    return `| ${c.name} | ${l.toFixed(3)} ms | ${k === 0 ? '–' : `+${(l - base).toFixed(3)} ms`} | ${median(results[k].p99).toFixed(3)} ms | ${median(results[k].rate).toFixed(0)} |`;
  }),
  '',
  'Each recorded call is two appends (the intent before the call is forwarded, the outcome before the answer is',
  "passed on), so with fsync always a call waits for two fsyncs of the journal on this machine's disk; with fsync",
  "none, the proxy's cost is the parsing, hashing and writing of two records and one more process hop each way.",
  '',
];
console.log(lines.join('\n'));
if (!quick) writeSection(join(root, 'bench/RESULTS.md'), '## MCP proxy', lines);
