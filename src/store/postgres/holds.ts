/**
 * How many operations of one store keep a connection while they need another (spec/POSTGRES.md §12): a
 * fork's transaction reads its parent and writes its parts on other connections; a hold of a journal's
 * appends, an erasure and a signed checkpoint keep their transaction while reads go through the pool.
 * With as many of them running as the pool has connections, each waits for a second connection that none
 * gives back, until the pool's own timeout fails them all (outsider 16: twelve forks on a pool of ten).
 * At most max − 1 of them run at once; the others queue here, so one connection is always left for their
 * reads and for the appends of every other journal.
 */
import { StoreError } from '../errors.js';

export class ConnectionHolds {
  private running = 0;
  private readonly queue: (() => void)[] = [];
  /** When a hold last ended or started: a waiter gives up only after `waitMs` with no progress at all. */
  private progressAt = Date.now();

  constructor(
    /** How many may run at once: the pool's connections less one, at least one. */
    readonly capacity: number,
    private readonly display: string,
  ) {}

  /**
   * Runs `fn` once fewer than `capacity` holds are running. A waiter that sees no hold start or end for
   * `waitMs` fails with LOCK_TIMEOUT: the holds ahead of it are stuck (or it was asked for from inside one).
   */
  async run<T>(doing: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
    // In turn: one arriving while others wait queues behind them.
    if (this.running < this.capacity && this.queue.length === 0) this.running++;
    else await this.turn(doing, waitMs); // the slot is handed over, still counted
    this.progressAt = Date.now();
    try {
      return await fn();
    } finally {
      this.progressAt = Date.now();
      const next = this.queue.shift();
      if (next === undefined) this.running--;
      else next();
    }
  }

  private turn(doing: string, waitMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const check = (): void => {
        const idle = Date.now() - this.progressAt;
        if (idle < waitMs) {
          timer = setTimeout(check, waitMs - idle);
          return;
        }
        const at = this.queue.indexOf(wake);
        if (at >= 0) this.queue.splice(at, 1);
        reject(
          new StoreError(
            'LOCK_TIMEOUT',
            `${this.display}: ${doing} waited ${waitMs} ms for one of this store's ${this.capacity} concurrent forks, holds, erasures and checkpoints to end, and none did`,
            {
              location: { file: this.display },
              hint: "retry once they end; to run more at once, raise the pool's max (connection: { max }): each needs a connection of its own and one left over",
            },
          ),
        );
      };
      let timer = setTimeout(check, waitMs);
      this.queue.push(wake);
    });
  }
}

/** The holds a store with `max` connections allows at once. */
export function holdsFor(max: number | undefined, display: string): ConnectionHolds {
  return new ConnectionHolds(Math.max(1, (max ?? DEFAULT_POOL_MAX) - 1), display);
}

/** The pool's size when neither the store's options nor a caller's pool say (createPool's default). */
export const DEFAULT_POOL_MAX = 10;

/**
 * Which journals this process holds (a hold of its appends, an erasure, a checkpoint, a fork's lock on its
 * parent), by server, schema and key, across every store object of the process (the CLI opens two on one
 * database). A second hold of the same journal, or an append to it, waits here without a connection: waiting
 * in the server for the row lock, each kept one while the holder waited for a second (outsider 17: two
 * exports and three erasures of one journal on a pool of three). A wait past `waitMs` is LOCK_TIMEOUT.
 */
const held = new Map<string, { waiters: (() => void)[] }>();

/** Runs `fn` as this process's only hold of journal `gate`, once any other has ended. */
export async function holdingJournal<T>(gate: string, what: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  let entry = held.get(gate);
  if (entry === undefined) held.set(gate, (entry = { waiters: [] }));
  else await waitTurn(entry, what, waitMs);
  try {
    return await fn();
  } finally {
    handOn(gate, entry);
  }
}

/** Resolves once this process holds journal `gate` no longer (at once when it does not). */
export async function journalFree(gate: string, what: string, waitMs: number): Promise<void> {
  const entry = held.get(gate);
  if (entry === undefined) return;
  // Waits as a holder would, and hands the turn straight on: appends go between holds, never during one.
  await waitTurn(entry, what, waitMs);
  handOn(gate, entry);
}

/** Gives journal `gate`'s turn to the next waiter, or forgets the journal when none waits. */
function handOn(gate: string, entry: { waiters: (() => void)[] }): void {
  const next = entry.waiters.shift();
  if (next !== undefined) next();
  else held.delete(gate);
}

function waitTurn(entry: { waiters: (() => void)[] }, what: string, waitMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const turn = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      const at = entry.waiters.indexOf(turn);
      if (at >= 0) entry.waiters.splice(at, 1);
      reject(
        new StoreError(
          'LOCK_TIMEOUT',
          `${what} waited ${waitMs} ms for this process's own hold of the journal to end (an export or publication placing its file, an erasure, a checkpoint or a fork of it running in this process)`,
          {
            hint: 'retry once it ends; a hold cannot wait for the same journal inside itself (an export or append of a journal from inside its own holdingAppends)',
          },
        ),
      );
    }, waitMs);
    entry.waiters.push(turn);
  });
}
