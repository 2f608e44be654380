// Peak RSS of one operation in a process of its own, so nothing else the harness holds is counted.
// Usage: node rss.mjs <verify|verify-parallel|export|receipt-verify|idle> <storeRoot> <journalId> [<out>]
// Prints { op, steps, ms, ok, maxRssMB }.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { FileStore } from '../../dist/store/index.js';
import { exportReceipt, verifyReceiptFile } from '../../dist/receipt/index.js';

const [op, root, id, out] = process.argv.slice(2);
let steps = 0;
let ok = true;
const t0 = performance.now();
if (op === 'verify' || op === 'verify-parallel') {
  // verify-parallel: the default pool (a worker per core but this thread's, this thread checking too); peak RSS counts every thread.
  const { createLineCheckPool } = await import('../../dist/parallel/index.js');
  const pool = op === 'verify-parallel' ? createLineCheckPool() : undefined;
  const journal = await new FileStore(root).open(id, { readOnly: true });
  const report = await journal.verify(pool ? { pool } : {});
  await pool?.close();
  steps = report.steps;
  ok = report.ok;
} else if (op === 'export') {
  const journal = await new FileStore(root).open(id, { readOnly: true });
  const result = await exportReceipt(journal, { out });
  steps = result.head.seq + 1;
} else if (op === 'receipt-verify') {
  const report = await verifyReceiptFile(out);
  ok = report.ok;
  steps = report.steps ?? report.chain?.steps ?? 0;
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ op, steps, ok, ms, maxRssMB: peakRssMB() }) + '\n');

/**
 * Peak RSS of this process. On Linux getrusage's maxRSS carries over the parent's peak through fork and
 * exec (so a child of a big harness looks big); VmHWM belongs to this process image alone.
 */
function peakRssMB() {
  try {
    const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 1024;
}
