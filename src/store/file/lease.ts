/**
 * The journal lock held across commits (spec/FILE-STORE.md §9): taken when a batch needs it, kept while
 * appends keep coming, handed to a waiting writer after lockHoldMs, and released after lockLingerMs
 * without appends. The lock's own rules (§8) are lock.ts; this is when a writer takes and gives it.
 */
import { StoreError } from '../errors.js';
import { sleep } from './fsutil.js';
import { HANDOFF_MS, acquireLock, readWaitingMark, type HeldLock } from './lock.js';

export interface LeaseOptions {
  lockTimeoutMs: number;
  staleMs: number;
  lockHoldMs: number;
}

export interface LeaseHooks {
  /** Under the fresh lock, before any commit: check the directories and read the true tail. */
  acquired(): Promise<void>;
  /** Before the lock goes: `wrote` says this hold committed lines and still owns the lock (bring head.json up). */
  releasing(wrote: boolean): Promise<void>;
}

interface Held {
  lock: HeldLock;
  since: number;
  /** Whether this hold wrote lines, so head.json must be brought up to date before release. */
  wrote: boolean;
  /** The waiting mark as last read: a different one means another writer has asked for the lock since. */
  waitingMark: string;
}

export class Lease {
  private held: Held | null = null;

  constructor(
    private readonly dir: string,
    private readonly options: LeaseOptions,
    private readonly hooks: LeaseHooks,
  ) {}

  get isHeld(): boolean {
    return this.held !== null;
  }

  /** Takes the lock and runs `acquired`: another writer may have appended since this one last held it. */
  async acquire(): Promise<void> {
    const lock = await acquireLock(this.dir, { timeoutMs: this.options.lockTimeoutMs, staleMs: this.options.staleMs });
    this.held = { lock, since: Date.now(), wrote: false, waitingMark: '' };
    try {
      this.held.waitingMark = await readWaitingMark(this.dir);
      await this.hooks.acquired();
    } catch (e) {
      await this.release();
      throw e;
    }
  }

  /**
   * After lockHoldMs of holding, lets in any writer that has left its waiting mark meanwhile: releases and
   * pauses HANDOFF_MS so that one of the waiters takes it. Alone, a writer keeps the lock for another hold.
   */
  async handOffIfAsked(): Promise<void> {
    const held = this.held;
    if (held === null || Date.now() - held.since < this.options.lockHoldMs) return;
    if ((await readWaitingMark(this.dir)) !== held.waitingMark) {
      await this.release();
      await sleep(HANDOFF_MS);
    } else {
      held.since = Date.now(); // nobody is waiting: keep the lock for another hold
    }
  }

  /**
   * Before writing lines (§8 step 3): the lock must still be this writer's — sequencing a large batch can
   * keep the event loop from refreshing it. Throws LOCK_COMPROMISED, with nothing written, when it is not.
   */
  async confirmBeforeWriting(): Promise<void> {
    const lost = await this.held!.lock.confirm();
    if (lost !== null) {
      throw new StoreError(
        'LOCK_COMPROMISED',
        `the lock on ${this.dir} was lost before writing (${lost.message}); nothing was written`,
        {
          hint: 'retry the append; the journal re-reads its tail under a fresh lock',
        },
      );
    }
    this.held!.wrote = true;
  }

  /** Runs `releasing` (§7: head.json before every release), then releases the lock. */
  async release(): Promise<void> {
    const held = this.held;
    if (held === null) return;
    this.held = null;
    await this.hooks.releasing(held.wrote && held.lock.lost === null);
    await held.lock.release();
  }
}
