/**
 * Crashes with real child processes (dist/, built by `npm test`): an agent killed with SIGKILL between a
 * tool's intent and its outcome, or during a model request, leaves a run whose next process sees the
 * effect as pending and whose continuation point excludes it (spec/RUNS.md §2–§3).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { FileStore, resumeRun, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';

const AGENT = fileURLToPath(new URL('./fixtures/agent.mjs', import.meta.url));

function child(args: string[]) {
  const proc = spawn(process.execPath, [AGENT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let err = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (c: string) => (err += c));
  const waiters: Array<() => void> = [];
  proc.stdout.on('data', (c: string) => {
    partial += c;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('close', (_code, signal) => resolve(signal)));
  const until = (pred: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (pred() ? resolve() : waiters.push(check));
      void exited.then(() => reject(new Error(`agent exited early: ${err}`)));
      check();
    });
  return { proc, lines, exited, until };
}

/** The same crashes on the file store (a directory) and on the SQLite store (sqlite:<file>, opened by the agent through openStore). */
const STORES: Array<[string, () => { root: string; store: Store }]> = [
  [
    'file store',
    () => {
      const root = tempDir();
      return { root, store: new FileStore(root, { staleMs: 2000 }) };
    },
  ],
  [
    'sqlite store',
    () => {
      const file = `${tempDir()}/runs.db`;
      return { root: `sqlite:${file}`, store: new SqliteStore(file) };
    },
  ],
];

describe.each(STORES)('on the %s', (_name, make) => {
  describe("an agent killed between a tool's intent and its outcome", () => {
    test('10 kills at random points: every begun-but-unended effect is pending in the next process, and the continuation point is before it', async () => {
      const { root, store } = make();
      const begun: string[] = [];
      const ended = new Set<string>();
      const pendingSoFar = new Set<string>();
      for (let round = 0; round < 10; round++) {
        // The last round's agent hangs inside its third tool, so at least one kill is surely mid-tool.
        const c = child([root, 'run-crash', 'tools', round === 9 ? '2' : '-1']);
        // Let it begin a random number of effects (at least one), then kill it wherever it is.
        const target = round === 9 ? 3 : 1 + Math.floor(Math.random() * 5);
        await c.until(() => c.lines.filter((l) => l.startsWith('begun ')).length >= target);
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        c.proc.kill('SIGKILL');
        expect(await c.exited).toBe('SIGKILL');
        for (const l of c.lines) {
          if (l.startsWith('begun ')) begun.push(l.slice(6));
          if (l.startsWith('ended ')) ended.add(l.slice(6));
        }

        const run = await resumeRun(store, 'run-crash', { readOnly: true });
        expect((await run.journal.verify()).ok).toBe(true);
        const effects = await run.effects();
        const pending = await run.pendingEffects();
        const { seq: continuation } = await run.continuationPoint();
        // Every effect the agent reported as begun is in the journal; every one reported ended is completed.
        const byId = new Map(effects.map((e) => [e.id, e]));
        for (const id of begun) expect(byId.has(id), `effect ${id} was reported begun`).toBe(true);
        for (const id of ended) expect(byId.get(id)!.status).toBe('completed');
        // Pending: started, no outcome. At most one (the loop runs one tool at a time, and resumes finish none).
        for (const e of pending) {
          expect(e.status).toBe('started');
          expect(e.tool).toBe('send_email');
          expect(e.idempotencyKey).toMatch(/^mail-\d+-\d+$/);
          expect(continuation === null || continuation < e.seq).toBe(true);
        }
        // Pending effects of earlier rounds stay pending: a resumed agent does not silently finish or re-run them.
        const ids = new Set(pending.map((e) => e.id));
        for (const id of pendingSoFar) expect(ids.has(id), `effect ${id} pending in an earlier round`).toBe(true);
        for (const id of ids) pendingSoFar.add(id);
        // An effect begun but not reported ended is either pending or completed after its print was cut off.
        const last = begun[begun.length - 1]!;
        if (!ended.has(last)) expect(['started', 'completed']).toContain(byId.get(last)!.status);
        await run.close();
      }
      expect(pendingSoFar.size).toBeGreaterThan(0);
    }, 120_000);

    test('a crash during a model request leaves it in flight, and the continuation point before it', async () => {
      const { root, store } = make();
      const c = child([root, 'run-model', 'model']);
      await c.until(() => c.lines.some((l) => l.startsWith('model ')));
      c.proc.kill('SIGKILL');
      await c.exited;
      const id = c.lines.find((l) => l.startsWith('model '))!.slice(6);
      const run = await resumeRun(store, 'run-model');
      const models = await run.modelCalls();
      expect(models).toEqual([expect.objectContaining({ id, status: 'started', endSeq: null })]);
      const point = await run.continuationPoint();
      expect(point.seq).toBe(0);
      expect(point.steps.map((s) => (s as { kind?: string }).kind)).toEqual(['run.started']);
      // The next process may record the request as failed (the provider's answer is lost), and continue.
      await run.endModel(id, {}, new Error('process killed during the request'));
      expect((await run.continuationPoint()).seq).toBe(2);
      await run.close();
    }, 60_000);
  });
});
