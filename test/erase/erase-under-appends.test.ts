/**
 * An erase of a journal that other processes keep appending to, without a pause (spec/ERASURE.md §4): it is
 * recorded and carried out while they append, not once they stop. The erasure record follows the head its check
 * read unless a line appended since is an erasure of the same record (store/append.ts UNLESS_AFTER, read by the
 * store under its lock); before, each append that moved the head sent it back to read and try again, and with
 * writers appending back to back it waited for as long as they went on (outsider H, on Postgres: 15 s and more,
 * until the writers stopped). Real processes (dist/), a real file store and the run's Postgres server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { eraseValue } from '../../src/erase.js';
import { FileStore } from '../../src/store/file/store.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import type { StepInput } from '../../src/record/input.js';
import type { Store } from '../../src/store/types.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const root = tempDir('stepchain-erase-under-appends-');
const pg = await postgresHarness('eraseappends', 3);
/** Long enough for a loaded machine; the writers, left alone, never stop before it. */
const DEADLINE_MS = 45_000;
const WRITERS = 2;

/**
 * A writer process: appends back to back until `stop` exists — one step, three steps, and a stream of twenty that
 * holds the journal while it pauses twice (as a writer streaming a tool's output does).
 */
function writer(open: string, stop: string, counted: string, w: number): ChildProcess {
  const script = `
    const { writeFileSync, existsSync } = await import('node:fs');
    ${open}
    let n = 0;
    while (!existsSync(${JSON.stringify(stop)})) {
      if (n % 3 === 0) await journal.append({ step_id: 'w${w}-' + n, input: { n }, result: n });
      else if (n % 3 === 1) await journal.appendMany([0, 1, 2].map((k) => ({ step_id: 'w${w}-' + n + '-' + k, input: { n, k }, result: k })));
      else await journal.appendStream((async function* () {
        for (let k = 0; k < 20; k++) {
          yield { step_id: 'w${w}-' + n + '-' + k, input: { n, k }, result: k };
          if (k % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })());
      n++;
      writeFileSync(${JSON.stringify(counted)}, String(n));
    }
    await journal.close();
    await store.close?.();
  `;
  return spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
}

interface Backend {
  name: string;
  store(): Store;
  /** Module code that sets `store` and `journal` (journal `hot`) in a writer process. */
  open(store: Store): string;
}

const BACKENDS: Backend[] = [
  {
    name: 'file',
    store: () => new FileStore(join(root, 'file'), { fsync: 'none' }),
    open: () => `
      const { FileStore } = await import(${JSON.stringify(DIST + 'store/index.js')});
      const store = new FileStore(${JSON.stringify(join(root, 'file'))}, { fsync: 'none' });
      const journal = await store.open('hot');`,
  },
  {
    name: 'postgres',
    store: () => pg.store(),
    open: (store) => `
      const { PostgresStore } = await import(${JSON.stringify(DIST + 'store/postgres/index.js')});
      const store = new PostgresStore({ connectionString: ${JSON.stringify(pg.url)}, schema: ${JSON.stringify((store as PostgresStore).tables.schema)}, connection: { max: 2 } });
      const journal = await store.open('hot');`,
  },
];

describe.each(BACKENDS)('$name store', (backend) => {
  test(
    'the erase is recorded and carried out while two writer processes, and six writers beside it, append back to back',
    async () => {
      const store = backend.store();
      const hot = await store.create('hot', { format: 'stepchain/v3' });
      await hot.append({ input: { email: 'erin.busy@example.org' }, model: 'm', prompt: 'p', result: 'ok' });
      const stop = join(root, `${backend.name}.stop`);
      const counts = Array.from({ length: WRITERS }, (_, w) => join(root, `${backend.name}.${w}.count`));
      const errors: string[] = [];
      const writers = counts.map((counted, w) => {
        const child = writer(backend.open(store), stop, counted, w);
        child.stderr!.on('data', (d: Buffer) => errors.push(d.toString()));
        return child;
      });
      const exited = writers.map((c) => new Promise((resolve) => c.on('exit', resolve)));
      // And writers in the erasing process itself, on its handle of the journal: two of each kind, back to back.
      let stopped = false;
      const local = [0, 1, 2, 3, 4, 5].map(async (w) => {
        const journal = hot as typeof hot & { appendStream(steps: AsyncIterable<StepInput>): Promise<unknown> };
        for (let n = 0; !stopped; n++) {
          const id = `l${w}-${n}`;
          if (w % 3 === 0) await journal.append({ step_id: id, input: { n }, result: n });
          else if (w % 3 === 1)
            await journal.appendMany([0, 1, 2].map((k) => ({ step_id: `${id}-${k}`, input: { n, k }, result: k })));
          else
            await journal.appendStream(
              (async function* () {
                for (let k = 0; k < 20; k++) {
                  yield { step_id: `${id}-${k}`, input: { n, k }, result: k };
                  if (k % 7 === 0) await delay(5);
                }
              })(),
            );
        }
      });
      const appended = (): number[] => counts.map((f) => (existsSync(f) ? Number(readFileSync(f, 'utf8')) : 0));
      try {
        while (appended().some((c) => c < 3) && errors.length === 0) await delay(20);
        expect(errors).toEqual([]);
        const erasing = eraseValue(store, 'hot', { seq: 0, path: '/input/email', reason: 'GDPR Art. 17', by: 'dpo' });
        const outcome = await Promise.race([erasing, delay(DEADLINE_MS).then(() => 'still waiting' as const)]);
        const during = appended();
        expect(outcome).not.toBe('still waiting');
        // The writers were still appending when it ended: each appends again after it.
        while (appended().some((c, w) => c <= during[w]!) && errors.length === 0) await delay(20);
      } finally {
        stopped = true;
        writeFileSync(stop, '');
        await Promise.all([...exited, ...local]);
      }
      expect(errors).toEqual([]);
      const journal = await store.open('hot');
      const report = await journal.verify();
      expect(report.ok).toBe(true);
      const [first] = await journal
        .lines({ from: 0, to: 0 })
        [Symbol.asyncIterator]()
        .next()
        .then((r) => [r.value]);
      expect(first!.text).not.toContain('erin.busy@example.org');
      expect(first!.text).toContain('$stepchain:erased');
      await journal.close();
    },
    DEADLINE_MS + 30_000,
  );
});
