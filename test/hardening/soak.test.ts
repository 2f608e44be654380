/**
 * Load soak (issue 8): several processes append to one journal while others verify it and export and
 * verify receipts of it, for a bounded time (15 s; 10 min with STEPCHAIN_LONG=1). At the end the chain is
 * valid, every acknowledged step is in it at its seq exactly once, nothing unacknowledged is, every verify
 * along the way was clean, and every receipt exported along the way verifies and is a prefix of the final
 * chain (its head is the final chain's step at that seq).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { verifyReceiptFile } from '../../src/receipt/index.js';
import { tempDir } from '../helpers/tmp.js';
import { FIXTURES, LONG, runNode, type Ran } from './support.js';

const SOAK_MS = LONG ? 600_000 : 15_000;
const root = tempDir('stepchain-soak-');

describe('soak', () => {
  test(
    '3 appending processes, 1 verifying and 1 exporting, concurrently and bounded in time',
    async () => {
      const store = new FileStore(root);
      // Small buckets and a low blob threshold so rotation and blobs happen under contention too.
      await (await store.create('soak', { segmentBytes: 64 * 1024, blobThreshold: 4096 })).close();
      const outdir = join(root, 'receipts');
      mkdirSync(outdir);
      const timeout = SOAK_MS + 60_000;
      const appenders = [0, 1, 2].map((i) =>
        runNode(
          [
            FIXTURES + 'appender.mjs',
            root,
            'soak',
            String(-SOAK_MS),
            String(50 + i * 300),
            JSON.stringify({ fsync: i === 0 ? 'always' : 'batch', lockTimeoutMs: 30_000 }),
          ],
          { timeoutMs: timeout },
        ),
      );
      const readers = (['verify', 'export'] as const).map((mode) =>
        runNode([FIXTURES + 'reader.mjs', root, 'soak', mode, String(SOAK_MS), outdir], { timeoutMs: timeout }),
      );
      const done: Ran[] = await Promise.all([...appenders, ...readers]);
      for (const r of done) {
        expect(r.signal, r.stderr).toBeNull();
        expect(r.stderr).toBe('');
      }

      // Appenders: every one finished cleanly; collect acknowledgements.
      const acked = new Map<number, string>();
      for (const r of done.slice(0, 3)) {
        expect(r.code, r.stdout.slice(-500)).toBe(0);
        expect(r.stdout).toMatch(/done \d+\n$/);
        for (const l of r.stdout.split('\n')) {
          if (!l.startsWith('ack ')) continue;
          const [, seq, id] = l.split(' ');
          expect(acked.has(Number(seq)), `seq ${seq} acknowledged twice`).toBe(false);
          acked.set(Number(seq), id!);
        }
      }
      expect(acked.size).toBeGreaterThan(200);

      // The final chain: valid, exactly the acknowledged steps, each at its seq.
      const j = await store.open('soak', { readOnly: true });
      try {
        const report = await j.verify();
        expect(report.problems).toEqual([]);
        expect(report.warnings).toEqual([]);
        expect(report.steps).toBe(acked.size);
        const hashes: string[] = [];
        for await (const line of j.lines()) {
          expect(acked.get(line.seq)).toBe((JSON.parse(line.text) as { step_id: string }).step_id);
          hashes[line.seq] = (JSON.parse(line.text) as { step_hash: string }).step_hash;
        }
        expect(hashes.length).toBe(acked.size);

        // Readers: every round clean; every receipt verifies again here and is a prefix of the final chain.
        const rounds = done.slice(3).flatMap((r) =>
          r.stdout
            .trim()
            .split('\n')
            .map(
              (l) =>
                JSON.parse(l) as {
                  mode: string;
                  ok: boolean;
                  head: string | null;
                  head_seq: number | null;
                  file?: string;
                  codes: string[];
                  error?: string;
                },
            ),
        );
        const verifies = rounds.filter((r) => r.mode === 'verify');
        const exports = rounds.filter((r) => r.mode === 'export');
        expect(verifies.length).toBeGreaterThan(3);
        expect(exports.length).toBeGreaterThan(3);
        for (const r of rounds) {
          expect(r.error, JSON.stringify(r)).toBeUndefined();
          expect(r.ok, JSON.stringify(r)).toBe(true);
          if (r.head_seq !== null) expect(r.head).toBe(hashes[r.head_seq]);
        }
        // Re-verify a spread of at most 12 of them against the final chain's hash at their head.
        const step = Math.max(1, Math.ceil(exports.length / 12));
        for (const r of exports.filter((_, i) => i % step === 0 || i === exports.length - 1)) {
          const again = await verifyReceiptFile(r.file!, { expectHead: hashes[r.head_seq!]! });
          expect(again.ok).toBe(true);
        }
      } finally {
        await j.close();
      }
    },
    SOAK_MS + 120_000,
  );
});
