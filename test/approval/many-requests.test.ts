/**
 * A chain of many approval requests of one tool and many calls of that tool with other arguments (spec/APPROVALS.md
 * §5 step 4), as an outsider made it (outsider I): each call against each request is a notice, so n of each made n²
 * — `stepchain verify` of a 1 MB journal (n = 2 000) wrote 1.25 GB of notices, and n = 4 000 ran out of memory. The
 * approval check lists at most 1 000 notices and says how many more it found; its time grows with the chain, not
 * with the pairs; and the verdict and every request's state are what they were.
 */
import { describe, expect, test } from 'vitest';
import { ApprovalLedger } from '../../src/approval/ledger.js';
import { MOST_KEPT } from '../../src/approval/findings.js';
import { MemoryStore } from '../../src/store/memory.js';

async function chain(n: number): Promise<Awaited<ReturnType<MemoryStore['create']>>> {
  const j = await new MemoryStore().create('many', { format: 'stepchain/v3', run: { agent: 'a' } });
  await j.appendMany(
    Array.from({ length: n }, (_, i) => ({
      kind: 'approval.requested',
      step_id: `req-${i}`,
      ref: null,
      input: { presented: { name: 't', arguments: { i } }, expires_at: null },
    })),
  );
  await j.appendMany(
    Array.from({ length: n }, (_, i) => ({
      kind: 'step',
      step_id: `st-${i}`,
      tool_call: { name: 't', arguments: { x: i } },
    })),
  );
  return j;
}

describe('n requests of one tool and n calls of it with other arguments', () => {
  test('at 3 000 of each (9 000 000 pairs): the first 1 000 notices and a count of the rest', async () => {
    const report = await (await chain(3000)).verify();
    expect(report.ok).toBe(true);
    const unchecked = report.warnings.filter((n) => n.code === 'APPROVAL_UNCHECKED');
    expect(unchecked).toHaveLength(MOST_KEPT + 1);
    expect(unchecked.at(-1)!.message).toBe(
      `${3000 * 3000 - MOST_KEPT} more approval notices like those above are not listed (the first ${MOST_KEPT} are)`,
    );
  }, 60_000);

  test('every request stays unchecked, as when each pair was listed', async () => {
    const j = await chain(30);
    const ledger = new ApprovalLedger({ genesisHash: null, partial: false });
    for await (const r of j.read()) ledger.record(r as unknown as Record<string, unknown>);
    const entries = ledger.entries();
    expect(entries).toHaveLength(30);
    for (const e of entries) expect(e).toMatchObject({ status: 'pending', unchecked: true });
    expect(ledger.finish().filter((f) => f.code === 'APPROVAL_UNCHECKED')).toHaveLength(30 * 30);
  });
});
