/**
 * The Postgres store's queue of connection-keeping operations (src/store/postgres/holds.ts): at most its
 * capacity run, the rest in arrival order, and a waiter fails with LOCK_TIMEOUT only when none ahead of it
 * started or ended for its wait.
 */
import { describe, expect, test } from 'vitest';
import { ConnectionHolds, appendingTo, holdingJournal, holdsFor } from '../../src/store/postgres/holds.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('ConnectionHolds', () => {
  test('a pool of n connections lets n − 1 hold at once, at least one', () => {
    expect(holdsFor(2, 's').capacity).toBe(1);
    expect(holdsFor(10, 's').capacity).toBe(9);
    expect(holdsFor(undefined, 's').capacity).toBe(9);
    expect(holdsFor(1, 's').capacity).toBe(1);
  });

  test('no more than the capacity run at once, and the rest run in arrival order', async () => {
    const holds = new ConnectionHolds(2, 's');
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, (_, i) =>
        holds.run(`op ${i}`, 5000, async () => {
          order.push(i);
          most = Math.max(most, ++running);
          await sleep(10);
          running--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  test('a waiter outlives a slow queue that makes progress, and fails LOCK_TIMEOUT behind a stuck one', async () => {
    const holds = new ConnectionHolds(1, 'postgres://x (schema s)');
    // 1.2 s of queue ahead of a waiter of 1 s, but a hold ends every 0.4 s.
    const slow = ['a', 'b', 'c'].map((name) => holds.run(name, 1000, () => sleep(400)));
    await expect(holds.run('d', 1000, () => Promise.resolve('ran'))).resolves.toBe('ran');
    await Promise.all(slow);
    let release!: () => void;
    const stuck = holds.run('stuck', 100, () => new Promise<void>((r) => (release = r)));
    const refused = await holds.run('waiting', 100, () => Promise.resolve()).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'LOCK_TIMEOUT' });
    expect(String((refused as Error).message)).toMatch(
      /waiting waited 100 ms .*postgres:\/\/x|postgres:\/\/x.*waiting waited 100 ms/,
    );
    release();
    await stuck;
    // The refused waiter left the queue: the next one runs at once.
    await expect(holds.run('after', 100, () => Promise.resolve(1))).resolves.toBe(1);
  });
});

describe("a journal's holds and appends in one process", () => {
  const later = (): Promise<void> => sleep(30);

  test('a hold begun while an append is under way runs only once it has ended; appends then wait for the hold', async () => {
    const log: string[] = [];
    const endAppend = await appendingTo('j1', 'appending', 5000);
    const hold = holdingJournal('j1', 'holding', 5000, async () => {
      log.push('hold runs');
      await later();
      log.push('hold ends');
    });
    await later();
    expect(log).toEqual([]); // the append under way has not ended
    const next = appendingTo('j1', 'appending again', 5000).then((end) => {
      log.push('second append under way');
      end();
    });
    log.push('first append ends');
    endAppend();
    endAppend(); // ending twice counts once
    await Promise.all([hold, next]);
    expect(log).toEqual(['first append ends', 'hold runs', 'hold ends', 'second append under way']);
  });

  test('appends waiting for a hold all go when it ends, before the holds queued behind it, which keep their order; appends of other journals never wait', async () => {
    const log: string[] = [];
    let release!: () => void;
    const first = holdingJournal('j2', 'first hold', 5000, () => new Promise<void>((r) => (release = r)));
    const queued = [
      holdingJournal('j2', 'second hold', 5000, async () => void log.push('second hold')),
      appendingTo('j2', 'a', 5000).then(async (end) => {
        log.push('append a');
        await later();
        log.push('append a ends');
        end();
      }),
      holdingJournal('j2', 'third hold', 5000, async () => void log.push('third hold')),
      appendingTo('j2', 'b', 5000).then((end) => (log.push('append b'), end())),
    ];
    const other = await appendingTo('elsewhere', 'c', 5000);
    other();
    await later();
    expect(log).toEqual([]);
    release();
    await Promise.all([first, ...queued]);
    // Outsider H: in one queue with the holds, an append to a journal whose holds kept coming waited up to 18.9 s.
    expect(log).toEqual(['append a', 'append b', 'append a ends', 'second hold', 'third hold']);
  });

  test('a hold whose appends under way never end fails LOCK_TIMEOUT, and leaves the journal free', async () => {
    const stuck = await appendingTo('j3', 'appending', 5000);
    const refused = await holdingJournal('j3', 'erasing in journal j3', 100, () => Promise.resolve()).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'LOCK_TIMEOUT' });
    expect(String((refused as Error).message)).toMatch(
      /erasing in journal j3 waited 100 ms for this process's appends/,
    );
    stuck();
    await expect(holdingJournal('j3', 'again', 100, () => Promise.resolve('ran'))).resolves.toBe('ran');
    const end = await appendingTo('j3', 'appending', 100); // at once: nothing holds it
    end();
  });
});
