/**
 * The run reader folds stepchain/v3 run records as it folds v2's (RUNS.md §2): a v3 run journal read without
 * its saved state (`.run-state.json` gone, as a crash, a copy or another machine leaves it) still shows its
 * pending effect, and its continuation point stops before it — never a false continuation point that would
 * let a resumed agent run the tool again. Found by the Python implementation, which writes v3 run records
 * the TypeScript reader used to skip.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, runNode } from '../hardening/support.js';
import { FileStore } from '../../src/index.js';
import { Run } from '../../src/runtime.js';

const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 120_000 });

describe('a stepchain/v3 run journal read without its saved state', () => {
  test('the CLI still sees the pending effect, and the continuation point stops before it', async () => {
    const journal = join(tempDir('v3-run-reader-'), 'r');
    expect((await cli(['init', journal, '--format', 'v3', '--run'])).code).toBe(0);
    const begun = await cli(['effect', 'begin', journal, '--tool', 'send_mail', '--args', '{"to":"a@example.com"}']);
    expect(begun.code, begun.stderr).toBe(0);
    const id = begun.stdout.trim();
    expect(id).not.toBe('');
    rmSync(join(journal, '.run-state.json'), { force: true });

    const list = await cli(['effect', 'list', journal, '--pending', '--json']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.stringify(JSON.parse(list.stdout))).toContain(id);

    const cont = await cli(['continuation', journal, '--json']);
    expect(cont.code, cont.stderr).toBe(0);
    const point = JSON.parse(cont.stdout) as { seq: number | null; pending: unknown[] };
    expect(point.pending.length).toBe(1);
    expect(JSON.stringify(point.pending)).toContain(id);
    expect(point.seq).toBe(0);

    const log = await cli(['log', journal]);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout + log.stderr).toContain('tool.started');
  }, 240_000);

  test('the library: Run.of folds v3 records, and continuationPoint types them as run records', async () => {
    const root = tempDir('v3-run-reader-lib-');
    const dir = join(root, 'r');
    expect((await cli(['init', dir, '--format', 'v3', '--run'])).code).toBe(0);
    expect((await cli(['effect', 'begin', dir, '--tool', 'pay', '--args', '{"amount":10}'])).code).toBe(0);
    rmSync(join(dir, '.run-state.json'), { force: true });
    const journal = await new FileStore(root).open('r');
    try {
      const run = Run.of(journal, { savedState: false });
      const pending = await run.pendingEffects();
      expect(pending.map((e) => e.tool)).toEqual(['pay']);
      const point = await run.continuationPoint();
      expect(point.steps.map((s) => [s.v, s.kind])).toEqual([[3, 'run.started']]);
    } finally {
      await journal.close();
    }
  }, 240_000);
});
