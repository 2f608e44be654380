// What the approval checks cost `verify` (spec/APPROVALS.md §5), from dist/: a stepchain/v3 run journal of N
// tool calls (tool.started + tool.completed each), verified whole; then the same journal with every call
// approved first (approval.requested + a signed approval.granted, the effect naming its request). Prints the
// median of 5 verifies of each on this thread, and per approval flow. Usage: node bench/approvals.mjs [N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, startRun } from '../dist/index.js';
import { keyPairFromSeed } from '../dist/receipt/keys.js';

const N = Number(process.argv[2] ?? 2000);
const key = keyPairFromSeed(new Uint8Array(32).fill(7)).privateKey;
const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-approvals-'));
try {
  const store = new FileStore(dir, { fsync: 'none' });
  const plain = await startRun(store, { runId: 'plain', format: 'stepchain/v3', input: null });
  const approved = await startRun(store, { runId: 'approved', format: 'stepchain/v3', input: null });
  for (let i = 0; i < N; i++) {
    const call = { name: 'pay_invoice', args: { invoice: `INV-${i}`, amount: i } };
    await (await plain.beginTool(call)).complete({ paid: true });
    const req = await approved.requestApproval(call);
    await approved.decideApproval(req, 'granted', { key });
    await (await approved.beginTool({ ...call, approval: req })).complete({ paid: true });
  }
  const median = async (journal) => {
    const times = [];
    for (let k = 0; k < 5; k++) {
      const t = performance.now();
      const r = await journal.verify();
      times.push(performance.now() - t);
      if (!r.ok) throw new Error(JSON.stringify(r.problems.slice(0, 3)));
    }
    return times.sort((a, b) => a - b)[2];
  };
  const p = await median(plain.journal);
  const a = await median(approved.journal);
  console.log(`plain:    ${N} calls, ${2 * N + 1} records, verify ${p.toFixed(0)} ms`);
  console.log(
    `approved: ${N} calls, ${4 * N + 1} records, verify ${a.toFixed(0)} ms (${(((a - p) / N) * 1000).toFixed(0)} µs more per approval flow)`,
  );
  await plain.close();
  await approved.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
