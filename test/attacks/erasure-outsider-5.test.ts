/**
 * Erasure findings of the fourth and fifth outsiders left open after the first fixes, kept as attacks that must
 * fail: each runs the finding's steps as real `stepchain` processes (dist/) and asserts the fixed behaviour.
 *
 * - outsider 5, 8: a receipt of steps F..K where an erased record n < F and its erasure record E > K was
 *   refused CHAIN_INVALID ("ERASURE_UNRECORDED at seq n"), a valid journal called corrupt. The range holds
 *   neither end of that erasure: it is written and verifies (spec/ERASURE.md §6.5).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore, startRun } from '../../src/index.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-erasure-outsider5-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const { run, ok } = cliIn(dir);

/** A v3 run journal `<store>/r` whose request req-1 (seq 1) presents unlock {pin: 4821}. */
async function requested(store: string): Promise<void> {
  const r = await startRun(new FileStore(join(dir, store)), { runId: 'r', format: 'stepchain/v3', input: 'go' });
  await r.requestApproval({ name: 'unlock', args: { pin: '4821' } }, { id: 'req-1' });
  await r.close();
}

describe('erasure: the fourth and fifth outsiders, what was left (real processes)', { timeout: 300_000 }, () => {
  it('outsider 5, 8: a receipt between an erased record and its erasure record, holding neither, is written and verifies', async () => {
    await requested('e8');
    writeFileSync(join(dir, 'e8-step.json'), '{"kind":"step","input":{"note":"unrelated"}}');
    await ok('append', 'e8/r', '--file', 'e8-step.json');
    await ok('erase', 'e8/r', '--seq', '1', '--path', '/input/presented/arguments/pin', '--reason', 'gdpr');
    // seq 1 erased, erasure record at seq 3: steps 2..2 hold neither.
    await ok('export', 'e8/r', '--from', '2', '--to', '2', '-o', 'e8.tar.gz');
    const verified = await ok('verify', 'e8.tar.gz', '--json');
    expect(JSON.parse(verified.stdout).report.ok).toBe(true);
    // A range holding the erased record but not its erasure record is still refused, with the ends that work.
    const split = await run('export', 'e8/r', '--from', '1', '--to', '2', '-o', 'e8b.tar.gz');
    expect(split.code).not.toBe(0);
    expect(split.stderr).toContain('RANGE_SPLITS_ERASURE');
    expect(split.stderr).not.toContain('CHAIN_INVALID');
  });
});
