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
 * database), and which it is appending to. A second hold of the same journal, or an append to it, waits here
 * without a connection: waiting in the server for the row lock, each kept one while the holder waited for a
 * second (outsider 17: two exports and three erasures of one journal on a pool of three). A hold also waits
 * here for the appends already under way to end: one that had passed the check but not yet locked the row
 * when the hold began waited in the server too, its connection kept (a busy fresh-clone run of that test:
 * POOL_EXHAUSTED, then LOCK_TIMEOUT). A wait past `waitMs` is LOCK_TIMEOUT.
 */
interface Gate {
  /** A hold is running, or its turn is being handed to the next hold. */
  held: boolean;
  /** Holds waiting for the hold to end, in the order they came. */
  holds: (() => void)[];
  /**
   * Appends waiting for the hold to end: all go at its end, before the next hold (which waits for them). In one
   * queue with the holds, an append waited behind every hold queued before it: with holds of one journal always
   * queued (exports, erasures, checkpoints, forks in loops), 3 appends to it in 20 s, the slowest 18.9 s (outsider H).
   */
  appending: (() => void)[];
  /** Appends under way: from before they take a connection until they give it back. */
  appends: number;
  /** The hold waiting for those appends to end. */
  drained: (() => void) | null;
}

const gates = new Map<string, Gate>();

function gateOf(key: string): Gate {
  let gate = gates.get(key);
  if (gate === undefined) gates.set(key, (gate = { held: false, holds: [], appending: [], appends: 0, drained: null }));
  return gate;
}

/** Runs `fn` as this process's only hold of journal `key`, once any other has ended and no append is under way. */
export async function holdingJournal<T>(key: string, what: string, waitMs: number, fn: () => Promise<T>): Promise<T> {
  const gate = gateOf(key);
  if (gate.held) await waitTurn(gate.holds, what, waitMs);
  else gate.held = true;
  try {
    if (gate.appends > 0) await drain(gate, what, waitMs);
    return await fn();
  } finally {
    handOn(key, gate);
  }
}

/**
 * Counts an append to journal `key` as under way once this process holds the journal no longer (at once when
 * it does not); the returned function ends it. Appends go between holds, never during one: those waiting go
 * when the hold running ends, and a hold waits for the ones under way.
 */
export async function appendingTo(key: string, what: string, waitMs: number): Promise<() => void> {
  const gate = gateOf(key);
  if (gate.held)
    await waitTurn(gate.appending, what, waitMs); // counted by the hold that lets it go
  else gate.appends++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    if (--gate.appends > 0) return;
    const drained = gate.drained;
    gate.drained = null;
    if (drained !== null) drained();
    else forgetIdle(key, gate);
  };
}

/** Ends a hold of journal `key`: the appends waiting go, then the next hold has its turn (or none is held). */
function handOn(key: string, gate: Gate): void {
  for (const go of gate.appending.splice(0)) {
    gate.appends++;
    go();
  }
  const next = gate.holds.shift();
  if (next !== undefined) return next();
  gate.held = false;
  forgetIdle(key, gate);
}

function forgetIdle(key: string, gate: Gate): void {
  if (!gate.held && gate.appends === 0 && gates.get(key) === gate) gates.delete(key);
}

function waitTurn(queue: (() => void)[], what: string, waitMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const turn = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      const at = queue.indexOf(turn);
      if (at >= 0) queue.splice(at, 1);
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
    queue.push(turn);
  });
}

/** Waits for the appends under way when the hold began (none starts meanwhile: the hold is held). */
function drain(gate: Gate, what: string, waitMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      gate.drained = null;
      reject(
        new StoreError(
          'LOCK_TIMEOUT',
          `${what} waited ${waitMs} ms for this process's appends to the journal under way to end`,
          { hint: 'retry once they end; a hold cannot wait inside an append of the same journal' },
        ),
      );
    }, waitMs);
    gate.drained = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}
