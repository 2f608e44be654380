/**
 * The page's line-check pool (issue 45, the page): Web Workers that run the per-line check of a chain's
 * batches (spec/FORMAT.md §6.3 steps 2–5, chain/batch.ts) beside the verifying worker, as the CLI's worker
 * threads do (src/parallel/), so the page verifies on more than one core. The page's thread starts them
 * (`startLineWorkers`), from the same blob: URL as the verifying worker, under the name LINE_WORKER, which
 * main.ts reads to run `runLineWorker` instead of a Session; a worker cannot start another from that URL when
 * the page is a file (its origin is opaque: "cannot be accessed from origin 'null'"). Each line worker is
 * handed one end of a MessageChannel, the verifying worker the other ends (`linePool`). A line worker holds no
 * state between batches; a batch it cannot check is answered with an error, and the verifying worker checks
 * that batch itself (the feeder does that for a rejected check).
 */
import { checkBatch, type LineBatch, type LineCheckPool, type PackedFacts } from '../chain/batch.js';

export const LINE_WORKER = 'stepchain-lines';

interface Answer {
  id: number;
  facts?: PackedFacts | null;
  error?: string;
}

/** The parts of MessagePort used here (this module is compiled without the DOM library too). */
export interface LinePort {
  postMessage(message: unknown, transfer?: unknown[]): void;
  onmessage: ((event: { data: unknown }) => void) | null;
}

/** The line worker's side: takes its port, then checks each batch that comes through it and posts the facts back. */
export function runLineWorker(): void {
  const scope = globalThis as unknown as { onmessage: ((event: { ports: readonly LinePort[] }) => void) | null };
  scope.onmessage = (event) => {
    const port = event.ports[0];
    if (port === undefined) return;
    port.onmessage = (m) => {
      const batch = m.data as LineBatch & { id: number };
      let facts: PackedFacts | null;
      try {
        facts = checkBatch(batch);
      } catch (e) {
        port.postMessage({ id: batch.id, error: e instanceof Error ? e.message : String(e) } satisfies Answer);
        return;
      }
      port.postMessage({ id: batch.id, facts } satisfies Answer, facts ? [facts.seqs.buffer] : []);
    };
  };
}

/**
 * The page thread's side: line workers from `url`, one fewer than the cores the browser reports (at least
 * one, at most three), each given a port; the ports to hand to the verifying worker. None where a worker
 * cannot start.
 */
export function startLineWorkers(url: string): LinePort[] {
  const g = globalThis as unknown as {
    Worker: new (url: string, options: { name: string }) => { postMessage(m: unknown, t: unknown[]): void };
    MessageChannel: new () => { port1: LinePort; port2: LinePort };
    navigator: { hardwareConcurrency?: number };
  };
  const threads = Math.max(1, Math.min(3, (g.navigator.hardwareConcurrency ?? 2) - 1));
  const ports: LinePort[] = [];
  try {
    for (let k = 0; k < threads; k++) {
      const worker = new g.Worker(url, { name: LINE_WORKER });
      const channel = new g.MessageChannel();
      worker.postMessage(null, [channel.port1]);
      ports.push(channel.port2);
    }
  } catch {
    // No more workers: the verifying worker checks with those that started (or alone).
  }
  return ports;
}

/** The pool, with how many batches its workers have answered (the page shows it: the workers did run). */
export interface LinePool extends LineCheckPool {
  answered: number;
}

/** The verifying worker's side: a LineCheckPool over the ports to the line workers, it checking batches too (callerChecks). */
export function linePool(ports: readonly LinePort[]): LinePool | null {
  if (ports.length === 0) return null;
  const waiting = new Map<number, { resolve: (f: PackedFacts | null) => void; reject: (e: Error) => void }>();
  let next = 0;
  const pool: LinePool = {
    answered: 0,
    threads: ports.length,
    callerChecks: true,
    check(batch) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        ports[id % ports.length]!.postMessage({ format: batch.format, bytes: batch.bytes, ends: batch.ends, id });
      });
    },
  };
  for (const port of ports) {
    port.onmessage = (event) => {
      const answer = event.data as Answer;
      const p = waiting.get(answer.id);
      if (p === undefined) return;
      waiting.delete(answer.id);
      if (answer.error !== undefined) p.reject(new Error(answer.error));
      else {
        pool.answered++;
        p.resolve(answer.facts ?? null);
      }
    };
  }
  return pool;
}
