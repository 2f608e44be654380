/**
 * The page's handle on the verifier: a dedicated Web Worker started from the page's own script (a blob:
 * URL, the only worker source the CSP allows), or — only when no worker can start — a Session on the
 * page's thread that yields between slices of the file so the page keeps responding. Which one runs, and
 * why, is shown on the page.
 */
import { Session, type Outcome, type Progress, type StepDetail, type VerifyRequest } from './engine.js';
import type { Reply, Request } from './protocol.js';
import type { StepRow } from './summary.js';

export interface Verifier {
  readonly mode: 'worker' | 'main-thread';
  /** Why the worker could not start (main-thread mode only). */
  readonly why: string | null;
  verify(request: VerifyRequest, onProgress: (p: Progress) => void): Promise<Outcome>;
  rows(from: number, count: number, only: 'all' | 'flagged'): Promise<StepRow[]>;
  step(index: number, onProgress: (p: Progress) => void): Promise<StepDetail>;
  find(where: { seq?: number; file?: string; line?: number }): Promise<number>;
}

/** How long a worker may take to say it is ready before the page verifies on its own thread. */
const WORKER_START_MS = 15_000;
/** Main-thread mode: the longest the verifier works before letting the page paint and handle input. */
const SLICE_MS = 20;

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;

export async function startVerifier(scriptSource: string | null): Promise<Verifier> {
  let why: string;
  if (scriptSource === null) why = 'the page could not read its own script to start a worker';
  else if (typeof Worker !== 'function') why = 'this browser has no Web Workers';
  else {
    try {
      return await startWorker(scriptSource);
    } catch (e) {
      why = e instanceof Error ? e.message : String(e);
    }
  }
  return mainThread(why);
}

/** The requests sent to the verifying worker and not yet answered, by id. */
type Pending = Map<
  number,
  { resolve: (v: unknown) => void; reject: (e: Error) => void; onProgress?: (p: Progress) => void }
>;

/** One reply from the verifying worker to the request it answers: progress, a value or an error. */
function answer(pending: Pending, reply: Exclude<Reply, { ready: true }>): void {
  const p = pending.get(reply.id);
  if (!p) return;
  if ('progress' in reply) p.onProgress?.(reply.progress);
  else {
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(new Error(reply.message));
  }
}

function startWorker(source: string): Promise<Verifier> {
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  return new Promise<Verifier>((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(url);
    } catch (e) {
      URL.revokeObjectURL(url);
      reject(new Error(`the browser refused to start a worker (${e instanceof Error ? e.message : String(e)})`));
      return;
    }
    let started = false;
    let stopped: string | null = null;
    let next = 1;
    const pending: Pending = new Map();
    const timer = setTimeout(
      () => fail(`the worker did not start within ${WORKER_START_MS / 1000} s`),
      WORKER_START_MS,
    );
    let hasher: Worker | null = null;
    let refused = false;
    const fail = (message: string): void => {
      clearTimeout(timer);
      if (!started) {
        refused = true;
        worker.terminate();
        hasher?.terminate();
        URL.revokeObjectURL(url);
        reject(new Error(message));
        return;
      }
      if (stopped !== null) return;
      stopped = message;
      // The other worker may wait on the one that stopped for ever: both go, and every request fails with the reason.
      worker.terminate();
      hasher?.terminate();
      for (const p of pending.values()) p.reject(new Error(`the verification worker stopped: ${message}`));
      pending.clear();
    };
    worker.onerror = (event) => {
      event.preventDefault();
      fail(event.message || 'the worker could not run (blocked, or it failed to load)');
    };
    worker.onmessageerror = () => fail('a message from the worker could not be read');
    worker.onmessage = (event: MessageEvent<Reply>) => {
      const reply = event.data;
      if ('ready' in reply) {
        clearTimeout(timer);
        // A second worker hashes the chain entries (entry-hasher.ts); without one the first hashes them itself.
        void pairHasher(url, worker, fail).then((second) => {
          URL.revokeObjectURL(url);
          hasher = second;
          if (refused) second?.terminate();
          else {
            started = true;
            resolve(verifier);
          }
        });
        return;
      }
      answer(pending, reply);
    };
    const ask = <T>(request: Distribute<Request>, onProgress?: (p: Progress) => void): Promise<T> => {
      if (stopped !== null) return Promise.reject(new Error(`the verification worker stopped: ${stopped}`));
      const id = next++;
      return new Promise<T>((res, rej) => {
        pending.set(id, { resolve: res as (v: unknown) => void, reject: rej, ...(onProgress ? { onProgress } : {}) });
        worker.postMessage({ ...request, id });
      });
    };
    const verifier: Verifier = {
      mode: 'worker',
      why: null,
      verify: (request, onProgress) => ask<Outcome>({ op: 'verify', request }, onProgress),
      rows: (from, count, only) => ask<StepRow[]>({ op: 'rows', from, count, only }),
      step: (index, onProgress) => ask<StepDetail>({ op: 'step', index }, onProgress),
      find: (where) => ask<number>({ op: 'find', where }),
    };
  });
}

/**
 * Starts the hashing worker and hands it and the verifying worker the two ends of one channel; null when it
 * cannot start. Its death (an `error` event, seen here on the page's thread: a port never says its peer died)
 * goes to `stop` with the reason, which ends the verification loudly instead of leaving it waiting.
 */
async function pairHasher(url: string, verifying: Worker, stop: (message: string) => void): Promise<Worker | null> {
  const second = await startHasher(url);
  if (second === null) return null;
  second.onerror = (event) => {
    event.preventDefault();
    stop(`the hashing worker stopped (${event.message || 'it failed'}); reload the page and verify again`);
  };
  const channel = new MessageChannel();
  second.postMessage({ op: 'serve-digests', port: channel.port2 } satisfies Request, [channel.port2]);
  verifying.postMessage({ op: 'hash-on', port: channel.port1 } satisfies Request, [channel.port1]);
  return second;
}

/** A second worker from the page's script for the entry digests, once it says it is ready; null if it cannot start. */
function startHasher(url: string): Promise<Worker | null> {
  return new Promise((resolve) => {
    let second: Worker;
    try {
      second = new Worker(url);
    } catch {
      resolve(null);
      return;
    }
    const give = (w: Worker | null): void => {
      clearTimeout(timer);
      second.onmessage = null;
      second.onerror = null;
      if (w === null) second.terminate();
      resolve(w);
    };
    const timer = setTimeout(() => give(null), WORKER_START_MS);
    second.onerror = (event) => {
      event.preventDefault();
      give(null);
    };
    second.onmessage = (event: MessageEvent<Reply>) => {
      if ('ready' in event.data) give(second);
    };
  });
}

function mainThread(why: string): Verifier {
  let last = performance.now();
  const pace = async (): Promise<void> => {
    if (performance.now() - last < SLICE_MS) return;
    await new Promise((resolve) => setTimeout(resolve, 0));
    last = performance.now();
  };
  const session = new Session(undefined, pace);
  return {
    mode: 'main-thread',
    why,
    verify: (request, onProgress) => {
      last = performance.now();
      return session.verify(request, onProgress);
    },
    rows: async (from, count, only) => session.rows(from, count, only),
    step: (index, onProgress) => session.step(index, onProgress),
    find: async (where) => session.find(where),
  };
}
