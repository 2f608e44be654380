// When an intake waiter tries the journal's lock (spec/POSTGRES.md §6.6 step 3): the rule alone, on a clock
// the test moves. The processes that depend on it are in postgres-processes.test.ts.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { readNotice, whatNoticeSays } from '../../src/store/postgres/intake-hub.js';
import { LockTries } from '../../src/store/postgres/intake-tries.js';

const nothing = { notified: false, covered: false, called: false };
const others = { notified: true, covered: false, called: false };
const mine = { notified: true, covered: true, called: false };
const called = { notified: true, covered: false, called: true };

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

  test('a NOTIFY that calls the writer (its rows left pending, none in hand) lets it try at once, without queueing', () => {
    const t = new LockTries(() => true);
    t.due();
    vi.advanceTimersByTime(10);
    t.waited(called);
    expect(t.due()).toBe(true);
    expect(t.queueing(5_000_000)).toBeNull();
  });
});

describe('what a sequencer’s NOTIFY says to a waiter (§6.6 steps 2 and 3)', () => {
  const says = (payload: string, ids: number[]) => whatNoticeSays(readNotice(payload), new Set(ids));

  test('rows it chained are covered; the least row it left pending is called, and so is any row below it', () => {
    expect(says('5 1,2,-7', [2])).toEqual({ covered: true, called: false });
    expect(says('5 1,2,-7', [7])).toEqual({ covered: false, called: true });
    expect(says('5 1,2,-7', [6, 9])).toEqual({ covered: false, called: true });
    // Above the least one: its writer chains them, or names or calls them in turn.
    expect(says('5 1,2,-7', [8, 9])).toEqual({ covered: false, called: false });
  });

  test('"-0": nothing was left pending, so a waiter’s rows came after the look and it is called', () => {
    expect(says('5 1,2,-0', [40])).toEqual({ covered: false, called: true });
    expect(readNotice('5 1,2,-0')).toEqual({ key: 5, chained: new Set([1, 2]), leftFrom: 0 });
  });

  test('an older sequencer’s NOTIFY (no "-" element) and "*" keep the waiter’s old rule', () => {
    expect(says('5 1,2', [9])).toEqual({ covered: false, called: false });
    expect(says('5 *', [9])).toEqual({ covered: true, called: false });
    expect(readNotice('5 *')).toEqual({ key: 5, chained: null, leftFrom: null });
  });

  test('a forged or garbled marker calls no one (anyone may NOTIFY the channel: it costs a waiter a try at most)', () => {
    for (const payload of ['5 1,-x', '5 1,--3', '5 1,-1e400', '5 1,-0.5', '5 1,-', '5 1,-00', '5 1,-99999999999999999'])
      expect(says(payload, [1_000_000]).called).toBe(false);
  });
});
