/**
 * Erasure findings of the fourth and fifth outsiders left open after the first fixes, kept as attacks that must
 * fail: each runs the finding's steps as real `stepchain` processes (dist/) and asserts the fixed behaviour.
 *
 * - outsider 5, 8: a receipt of steps F..K where an erased record n < F and its erasure record E > K was
 *   refused CHAIN_INVALID ("ERASURE_UNRECORDED at seq n"), a valid journal called corrupt. The range holds
 *   neither end of that erasure: it is written and verifies (spec/ERASURE.md §6.5).
 * - outsider 4, 6: a publication withholding the slot that holds an erased value said the completed erasure
 *   was "recorded but not yet carried out … run --resume" (ERASURE_PENDING); now ERASURE_WITHHELD (§5 step 4).
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
/** The codes of a `verify --json` report's problems and notices. */
const codes = (r: { stdout: string }): string[] => {
  const report = (JSON.parse(r.stdout) as { report: { problems: { code: string }[]; warnings?: { code: string }[] } })
    .report;
  return [...report.problems, ...(report.warnings ?? [])].map((p) => p.code);
};

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

  it('outsider 4, 6: a publication that withholds an erased value does not call its erasure pending', async () => {
    await ok('init', 'p6', '--format', 'v3');
    writeFileSync(join(dir, 'p6-step.json'), '{"result":{"email":"alice@example.org","plan":"pro"}}');
    await ok('append', 'p6', '--file', 'p6-step.json');
    await ok('erase', 'p6', '--seq', '0', '--path', '/result/email', '--reason', 'GDPR');
    const journal = await ok('verify', 'p6', '--json');
    expect(codes(journal)).toContain('VALUE_ERASED');
    // Withheld whole (the slot), and withheld as a member's name (its object shows the others).
    for (const [name, paths] of [
      ['slot', ['/result']],
      ['member', ['/result/plan']],
    ] as const) {
      writeFileSync(join(dir, `p6-${name}.json`), JSON.stringify({ rules: [{ id: 'r', paths }] }));
      await ok('publish', 'p6', '--policy', `p6-${name}.json`, '--opt-in', '-o', `p6-${name}.tar`);
      const published = await ok('verify', `p6-${name}.tar`, '--json');
      expect(codes(published)).not.toContain('ERASURE_PENDING');
      expect(JSON.parse(published.stdout).report.ok).toBe(true);
      if (name === 'slot') expect(codes(published)).toContain('ERASURE_WITHHELD');
    }
  });
});
