/**
 * Export and verification stream: exporting and verifying a journal needs memory well below the journal's
 * size (measured above the journal itself, which the test holds), so it does not grow with its length.
 */
import { describe, expect, test } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { genesisHash, makeGenesis, sealRecord } from '../../src/record/index.js';
import type { ChainSource, SeqRange, StoredLine } from '../../src/chain/source.js';
import { exportReceipt, verifyReceiptFile } from '../../src/receipt/index.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-receipt-stream-');

/** A journal held as stored lines (the baseline the measurement starts from). */
function heldJournal(steps: number, pad: number): ChainSource {
  const genesis = makeGenesis({ journalId: 'held', createdAt: '2026-01-01T00:00:00.000Z' });
  const stored: StoredLine[] = [];
  let prev = genesisHash(genesis);
  for (let seq = 0; seq < steps; seq++) {
    const { record, line } = sealRecord({
      v: 1,
      seq,
      step_id: `s${seq}`,
      ts: '2026-01-01T00:00:00.000Z',
      prev_hash: prev,
      input: { n: seq, pad: 'p'.repeat(pad) },
      model: 'm',
      prompt: null,
      tool_call: null,
      result: seq,
    });
    prev = record.step_hash;
    stored.push({
      segment: `${String(Math.floor(seq / 1000) * 1000).padStart(16, '0')}.jsonl`,
      seq,
      text: line.slice(0, -1),
    });
  }
  return {
    genesis,
    async head() {
      return { seq: steps - 1, step_hash: prev };
    },
    async *lines(range: SeqRange = {}) {
      for (const l of stored) {
        if (l.seq < (range.from ?? 0)) continue;
        if (range.to !== undefined && l.seq > range.to) return;
        yield l;
      }
    },
    async blob() {
      return null;
    },
  };
}

describe('streaming', () => {
  test('an 8 000-step journal (~48 MB) exports and verifies without memory growing with it', async () => {
    const src = heldJournal(8_000, 6000);
    const out = join(dir, 'long.tar');
    const mem = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers;
    };
    const start = mem();
    let peak = 0;
    const timer = setInterval(() => {
      peak = Math.max(peak, mem() - start);
    }, 5);
    try {
      const res = await exportReceipt(src, { out });
      expect(res.entries).toBe(1 + 8);
      const r = await verifyReceiptFile(out);
      expect(r.problems).toEqual([]);
      expect(r.steps).toBe(8_000);
    } finally {
      clearInterval(timer);
    }
    expect(statSync(out).size).toBeGreaterThan(100_000);
    console.log(`streaming: peak ${(peak / 2 ** 20).toFixed(1)} MiB over the baseline`);
    expect(peak).toBeLessThan(32 * 1024 * 1024); // holding the ~48 MB receipt, or a copy of the chain, would exceed it
  });
});
