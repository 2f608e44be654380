/**
 * The invariant behind outsider 5's 4.sh (spec/APPROVALS.md §4, §8 *Copies and forks*): whatever the fork point,
 * whenever the grant is given, and whatever stepchain's own copies and appends run between a parent and its
 * fork, in either direction, one grant never authorises an effect in two journals that both verify clean.
 * Real file stores in a temporary directory; the runtime's own refusals are part of what is tested.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, resumeRun, startRun } from '../../src/index.js';
import { keyPairFromSeed } from '../../src/receipt/keys.js';
import { copyJournal } from '../../src/store/copy.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-fork-copy-property-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ALICE = keyPairFromSeed(new Uint8Array(32).fill(7));
const CALL = { name: 'unlock', args: { pin: '4821' } };

type Op =
  | { op: 'copy'; from: 'r' | 'f'; to: 'r' | 'f' }
  | { op: 'step'; in: 'r' | 'f' }
  | { op: 'decide'; in: 'r' | 'f' }
  | { op: 'effect'; in: 'r' | 'f' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom<Op>({ op: 'copy', from: 'r', to: 'f' }, { op: 'copy', from: 'f', to: 'r' }),
  fc.constantFrom<'r' | 'f'>('r', 'f').map((j): Op => ({ op: 'step', in: j })),
  fc.constantFrom<'r' | 'f'>('r', 'f').map((j): Op => ({ op: 'decide', in: j })),
  fc.constantFrom<'r' | 'f'>('r', 'f').map((j): Op => ({ op: 'effect', in: j })),
);

/** Runs `op` through the public API; a coded refusal is an outcome like any other (the attack did not work). */
async function apply(store: FileStore, op: Op): Promise<void> {
  try {
    if (op.op === 'copy') {
      const source = await store.open(op.from, { readOnly: true });
      await copyJournal(source, store, op.to).finally(() => source.close());
      return;
    }
    const run = await resumeRun(store, op.in);
    try {
      if (op.op === 'step') await (await run.beginModel({ input: 'more' })).complete({ result: 'ok' });
      else if (op.op === 'decide')
        await run.decideApproval('req-1', 'granted', { key: ALICE.privateKey, name: 'alice' });
      else await (await run.beginTool({ ...CALL, approval: 'req-1' })).complete({ ok: true });
    } finally {
      await run.close();
    }
  } catch (e) {
    if (typeof (e as { code?: unknown }).code !== 'string') throw e;
  }
}

/** Whether journal `id` verifies clean and says req-1's grant ran there. */
async function grantRan(store: FileStore, id: string): Promise<boolean> {
  const j = await store.open(id, { readOnly: true });
  try {
    const report = await j.verify();
    return report.ok && (report.approvals ?? []).some((a) => a.request === 'req-1' && a.effect_seq !== null);
  } finally {
    await j.close();
  }
}

describe('approvals across a fork and its copies (fast-check)', () => {
  it('one grant never runs in two journals that both verify clean', { timeout: 300_000 }, async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 3 }),
        fc.boolean(),
        fc.nat({ max: 3 }),
        fc.array(opArb, { minLength: 1, maxLength: 6 }),
        async (before, grantFirst, forkAt, ops) => {
          const store = new FileStore(join(dir, `s${n++}`), { fsync: 'none' });
          const run = await startRun(store, { runId: 'r', format: 'stepchain/v3', input: 'go' });
          for (let i = 0; i < before; i++) await (await run.beginModel({ input: i })).complete({ result: 'ok' });
          await run.requestApproval(CALL, { id: 'req-1' });
          if (grantFirst) await run.decideApproval('req-1', 'granted', { key: ALICE.privateKey, name: 'alice' });
          await run.close();
          const parent = await store.open('r', { readOnly: true });
          const head = (await parent.head())!.seq;
          await (await store.fork(parent, { fromStep: Math.min(forkAt * 2, head), to: 'f' })).close();
          await parent.close();
          for (const op of ops) await apply(store, op);
          const ran = [await grantRan(store, 'r'), await grantRan(store, 'f')];
          expect(ran.filter(Boolean).length, JSON.stringify({ before, grantFirst, forkAt, ops })).toBeLessThanOrEqual(
            1,
          );
        },
      ),
      {
        numRuns: 15,
        // 4.sh itself (fork at 0, before the request; copy the granted parent into it; run the grant in both), then
        // fast-check's own draws.
        examples: [
          [
            0,
            true,
            0,
            [
              { op: 'copy', from: 'r', to: 'f' },
              { op: 'effect', in: 'r' },
              { op: 'effect', in: 'f' },
            ],
          ],
        ],
      },
    );
  });
});
