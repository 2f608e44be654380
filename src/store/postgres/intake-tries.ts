/**
 * When a writer waiting on the intake tries the journal's lock, and how (spec/POSTGRES.md §6.6 step 3). The
 * waiter (intake.ts) asks before each try and says what ended each wait; nothing here touches the server.
 */

/**
 * How long a waiter waits for a NOTIFY before it looks for its outcomes and tries the lock anyway: POLL_MS
 * where it hears no NOTIFY (a caller's pool, a LISTEN connection lost), NOTIFY_WAIT_MS where it does. A
 * NOTIFY comes with every sequencer's COMMIT, so the longer wait is paid only where the lock's holder sends
 * none: a writer of the direct path (§6), a sequencer killed, one of another version. Polling every 25 ms
 * while NOTIFYs were heard cost 16 writers on 2 cores more CPU than the chaining did once a sequencer's
 * transaction took longer than the poll (bench/RESULTS.md, "The intake's waiters").
 */
const POLL_MS = 25;
const NOTIFY_WAIT_MS = 100;

/**
 * When a waiting writer tries the lock, and how (§6.6 step 3). At once, without queueing for it (SKIP LOCKED,
 * step 2); then after each wait that no NOTIFY ended. A NOTIFY that names none of the writer's rows says a
 * sequencer is at work and has just let the lock go; the writers whose rows it named append again at once, and
 * the first of them to get the lock chains these rows too. Every waiter trying the lock at that moment (15 of
 * 16 writers, one of whom gets it) cost the writers more CPU than the chaining. So after such a NOTIFY a waiter
 * waits for the next one, and tries the lock only once a whole wait has passed since its last try: whoever
 * sequences next, and whatever it can chain (another version's sequencer leaves these rows pending), the writer
 * tries the lock at least that often. A whole wait without any NOTIFY says the lock's holder sends none — a
 * writer of the direct path (§6), a sequencer killed — and direct-path writers queue for the lock (FOR UPDATE)
 * while a try without queueing finds it taken whenever they keep it busy: an intake writer beside three of them
 * waited seconds, then LOCK_TIMEOUT (outsider 10). So the try after such a wait queues, as theirs do, until the
 * writer's deadline. A NOTIFY that names none of the writer's rows but calls it (intake-hub.ts, whatNoticeSays:
 * its rows are the least its sequencer left pending, or reached the intake after it looked) lets it try at once:
 * no one else has those rows in hand, and with no other writer appending again they waited out the whole wait
 * (two writers appending at the same moment: 4–11% of appends at 90 ms or more, outsider 11).
 */
export class LockTries {
  private last = 0;
  private skip = false;
  private queue = false;

  /** `hearing`: whether the store's LISTEN connection is up (NOTIFYs reach this process). */
  constructor(private readonly hearing: () => boolean) {}

  /** How long a wait lasts from the last try. */
  private get waitMs(): number {
    return this.hearing() ? NOTIFY_WAIT_MS : POLL_MS;
  }

  /** Whether to try the lock now (and take the time of the try). */
  due(): boolean {
    if (this.skip) return false;
    this.last = Date.now();
    return true;
  }

  /** The deadline of a try that queues for the lock, or null for one that does not. */
  queueing(deadline: number): number | null {
    return this.queue ? deadline : null;
  }

  /** When the current wait ends. */
  nextAt(): number {
    return this.last + this.waitMs;
  }

  /** After a wait: what ended it decides the next try. */
  waited(w: { notified: boolean; covered: boolean; called: boolean }): void {
    this.skip = w.notified && !w.covered && !w.called && Date.now() - this.last < this.waitMs;
    this.queue = !w.notified;
  }
}
