/**
 * How many operations of one store keep a connection while they need another (spec/POSTGRES.md §12): a
 * fork's transaction reads its parent and writes its parts on other connections; a hold of a journal's
 * appends, an erase and a streamed batch keep their transaction while reads or parts go through the pool.
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
            `${this.display}: ${doing} waited ${waitMs} ms for one of this store's ${this.capacity} concurrent forks, holds, erasures and streamed batches to end, and none did`,
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
