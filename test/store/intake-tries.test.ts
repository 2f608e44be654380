// When an intake waiter tries the journal's lock (spec/POSTGRES.md §6.6 step 3): the rule alone, on a clock
// the test moves. The processes that depend on it are in postgres-processes.test.ts.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { LockTries } from '../../src/store/postgres/intake-tries.js';

const nothing = { notified: false, covered: false };
const others = { notified: true, covered: false };
const mine = { notified: true, covered: true };

describe('LockTries', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
  });
  afterEach(() => vi.useRealTimers());

  test('the first try is at once and does not queue', () => {
    const t = new LockTries(() => true);
    expect(t.due()).toBe(true);
    expect(t.queueing(5_000_000)).toBeNull();
    expect(t.nextAt()).toBe(1_000_100);
  });

  test("a NOTIFY naming none of the writer's rows holds the next try back until a whole wait has passed", () => {
    const t = new LockTries(() => true);
    t.due();
    vi.advanceTimersByTime(30);
    t.waited(others);
    expect(t.due()).toBe(false);
    // The wait goes on to 100 ms after the last try, then the writer tries (without queueing: a NOTIFY came).
    expect(t.nextAt()).toBe(1_000_100);
    vi.advanceTimersByTime(80);
    t.waited(others);
    expect(t.due()).toBe(true);
    expect(t.queueing(5_000_000)).toBeNull();
  });

  test("a NOTIFY naming the writer's rows lets it try at once", () => {
    const t = new LockTries(() => true);
    t.due();
    vi.advanceTimersByTime(10);
    t.waited(mine);
    expect(t.due()).toBe(true);
    expect(t.queueing(5_000_000)).toBeNull();
  });

  test('a whole wait without any NOTIFY makes the next try queue until the deadline (outsider 10)', () => {
    const t = new LockTries(() => true);
    t.due();
    vi.advanceTimersByTime(100);
    t.waited(nothing);
    expect(t.due()).toBe(true);
    expect(t.queueing(5_000_000)).toBe(5_000_000);
    // A NOTIFY after that: back to tries that do not queue.
    vi.advanceTimersByTime(10);
    t.waited(mine);
    expect(t.queueing(5_000_000)).toBeNull();
  });

  test('a writer that cannot listen waits 25 ms, and a lost listener shortens the wait at once', () => {
    let hearing = false;
    const t = new LockTries(() => hearing);
    t.due();
    expect(t.nextAt()).toBe(1_000_025);
    hearing = true;
    expect(t.nextAt()).toBe(1_000_100);
  });
});
