/**
 * `stepchain verify` of a run journal names what the run left for an auditor (issue 36; RUNS.md §2, §5):
 * effects of unknown outcome, decisions recorded for them, a step_id repeated by a start (STEP_ID_REPEATED),
 * and a run that ended with effects pending — as notes beside the verdict and in `--json` `notes`, never
 * as problems: a valid journal still exits 0 and its report is unchanged. stepchain/v2 and v3 journals, and complete
 * receipts of them (a receipt holds the run's records). Real journals, the built CLI: in one process of its
 * own (cliInProcess, support.ts), but for the last test's call (control characters escaped on stderr), which
 * starts a real process.
 */
import { describe, expect, test } from 'vitest';
import { exportReceipt, FileStore, startRun, type Run } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

const started = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 60_000, env: { NO_COLOR: '1' } });
const cli = cliInProcess({ NO_COLOR: '1' });
const root = tempDir('stepchain-verify-notes-');
let n = 0;

interface Case {
  name: string;
  /** Writes the run; the store keeps a step_id window of 1, so a repeated start can be written by a raw append. */
  write(run: Run): Promise<void>;
  codes: string[];
  /** A phrase the people's text must hold. */
  says: string | null;
}

const CASES: Case[] = [
  {
    name: 'a clean run: no notes',
    write: async (run) => {
      const e = await run.beginTool({ name: 'get', args: {} });
      await run.endTool(e.id, { result: 1 });
      await run.complete('ok');
    },
    codes: [],
    says: null,
  },
  {
    name: 'an effect of unknown outcome',
    write: async (run) => {
      await run.beginTool({ name: 'pay_invoice', args: { invoice: 'INV-1' }, idempotencyKey: 'INV-1' });
    },
    codes: ['EFFECT_PENDING'],
    says: 'pay_invoice, started at seq 1, key INV-1) has no outcome',
  },
  {
    name: 'a decision recorded for one, another still pending, and the run completed anyway',
    write: async (run) => {
      const a = await run.beginTool({ name: 'send_mail', args: { to: 'a' } });
      await run.beginTool({ name: 'pay_invoice', args: { invoice: 'INV-2' } });
      await run.resolveEffect(
        a.id,
        { abandon: true },
        { by: 'ops@example.com', reason: 'the provider shows no such mail' },
      );
      await run.complete('ok', { leavePending: true });
    },
    codes: ['EFFECT_PENDING', 'EFFECT_RESOLVED', 'RUN_ENDED_PENDING'],
    says: 'abandon, by ops@example.com, because the provider shows no such mail',
  },
  {
    name: "a start that repeats an effect's step_id beyond the idempotency window",
    write: async (run) => {
      await run.journal.append({
        step_id: 'eff-1',
        kind: 'tool.started',
        tool_call: { name: 'pay', arguments: { n: 1 } },
      } as never);
      await run.journal.append({ input: 'between' });
      await run.journal.append({
        step_id: 'eff-1',
        kind: 'tool.started',
        tool_call: { name: 'pay', arguments: { n: 2 } },
      } as never);
    },
    codes: ['EFFECT_PENDING', 'STEP_ID_REPEATED'],
    says: 'repeats step_id "eff-1"',
  },
  {
    name: 'a plain step that repeats a step_id beyond the idempotency window',
    write: async (run) => {
      await run.journal.append({ step_id: 'search-1', input: { q: 'a' } });
      await run.journal.append({ input: 'between' });
      await run.journal.append({ step_id: 'search-1', input: { q: 'b' } });
    },
    codes: ['STEP_ID_REPEATED'],
    says: 'the step at seq 3 repeats step_id "search-1" of the step at seq 1',
  },
];

// Every case on a directory; on a SQLite location (the store's own verify, then its lines), on a stepchain/v3
// journal, and in a receipt of a v2 and of a v3 run (its lines are the run's records): the case with every kind of note.
type Kind = 'directory' | 'sqlite' | 'v3' | 'receipt' | 'v3-receipt';
const ROWS: ReadonlyArray<readonly [Kind, string, Case]> = [
  ...CASES.map((c) => ['directory', c.name, c] as const),
  ...(['sqlite', 'v3', 'receipt', 'v3-receipt'] as const).map((k) => [k, CASES[2]!.name, CASES[2]!] as const),
];

describe('verify on a run journal', () => {
  test.each(ROWS)(
    '%s: %s',
    async (kind, _name, c) => {
      const dir = `${root}/${kind}-${n++}`;
      const store =
        kind === 'sqlite'
          ? new SqliteStore(`${dir}.db`, { idempotencyWindow: 1 })
          : new FileStore(dir, { idempotencyWindow: 1 });
      const run = await startRun(store, {
        runId: 'run-1',
        ...(kind.startsWith('v3') ? { format: 'stepchain/v3' as const } : {}),
      });
      await c.write(run);
      if (kind.endsWith('receipt')) await exportReceipt(run.journal, { out: `${dir}.tar` });
      await run.close();
      if (store instanceof SqliteStore) await store.close();
      const at =
        kind === 'sqlite' ? `sqlite:${dir}.db?journal=run-1` : kind.endsWith('receipt') ? `${dir}.tar` : `${dir}/run-1`;

      const json = await cli(['verify', at, '--json']);
      expect(json.code).toBe(0);
      const doc = JSON.parse(json.stdout) as {
        ok: boolean;
        notes: Array<{ code: string; seq: number; message: string }>;
        report: { problems: unknown[]; warnings: unknown[] };
      };
      expect(doc.ok).toBe(true);
      expect(doc.report.problems).toEqual([]);
      expect(doc.report.warnings).toEqual([]);
      expect(doc.notes.map((x) => x.code).sort()).toEqual([...c.codes].sort());
      const text = await cli(['verify', at]);
      expect(text.code).toBe(0);
      expect(text.stdout).toBe('');
      if (c.says === null) expect(text.stderr).not.toMatch(/^ +note /m);
      else {
        expect(text.stderr).toContain(c.says);
        for (const code of c.codes) expect(text.stderr).toMatch(new RegExp(`note +${code} at seq \\d+: `));
      }
    },
    60_000,
  );
});

test('a partial receipt has no run notes: the records before its range are not in it', async () => {
  const dir = `${root}/partial`;
  const run = await startRun(new FileStore(dir), { runId: 'run-1' });
  await CASES[2]!.write(run);
  await exportReceipt(run.journal, { out: `${dir}.tar`, from: 2 });
  await exportReceipt(run.journal, { out: `${dir}-whole.tar` });
  await run.close();
  const partial = JSON.parse((await cli(['verify', `${dir}.tar`, '--json'])).stdout) as {
    ok: boolean;
    notes?: unknown;
    report: { scope: string };
  };
  expect(partial.ok).toBe(true);
  expect(partial.report.scope).toBe('partial');
  expect(partial.notes).toBeUndefined();
  // The same run's complete receipt has them.
  const whole = JSON.parse((await cli(['verify', `${dir}-whole.tar`, '--json'])).stdout) as {
    notes?: Array<{ code: string }>;
  };
  expect(whole.notes?.map((x) => x.code).sort()).toEqual(['EFFECT_PENDING', 'EFFECT_RESOLVED', 'RUN_ENDED_PENDING']);
}, 60_000);

test('a tool name with control characters is printed escaped in the notes', async () => {
  const store = new FileStore(`${root}/hostile`);
  const run = await startRun(store, { runId: 'run-1' });
  await run.beginTool({ name: 'pay\u001b[2J\u0007', args: {} });
  await run.close();
  const text = await started(['verify', `${root}/hostile/run-1`]);
  expect(text.code).toBe(0);
  expect(text.stderr).toContain('EFFECT_PENDING');
  expect(text.stderr).not.toContain('\u001b[2J');
  expect(text.stderr).not.toContain('\u0007');
}, 60_000);
