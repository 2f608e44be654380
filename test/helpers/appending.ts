/**
 * A copy (an export, a fork) run while a caller appends to its journal through the same handle without
 * pause: the hold it takes of the journal's appends (spec/ERASURE.md §4.1) must come after at most the batch
 * being committed, and appends must go on after it (test/store/hold-liveness.test.ts, postgres-hold.test.ts).
 */
import type { Journal } from '../../src/store/index.js';

/** Resolves `work`, or fails saying what did not finish within `ms` while the appender ran. */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms of appends`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs `copy` while a caller appends to `journal` through the same handle without pause; returns how many
 * steps were appended before it began, while it ran, and after it ended (at least 20: appends go on).
 */
export async function copyWhileAppending(journal: Journal, copy: () => Promise<unknown>): Promise<number[]> {
  let appended = 0;
  let stop = false;
  const appender = (async () => {
    while (!stop) {
      await journal.append({ input: { n: appended } });
      appended++;
    }
  })();
  const reach = async (n: number): Promise<void> => {
    while (appended < n) await new Promise((r) => setTimeout(r, 5));
  };
  await reach(20);
  const before = appended;
  let failure: unknown = null;
  await within(15_000, 'the copy', copy()).catch((e: unknown) => (failure = e));
  const after = appended;
  await within(15_000, '20 appends after the copy', reach(after + 20)).catch((e: unknown) => (failure ??= e));
  stop = true;
  await appender;
  if (failure !== null) throw failure;
  return [before, after - before, appended - after];
}
