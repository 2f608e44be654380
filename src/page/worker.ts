/**
 * The worker side of the verification page: the page's own script, started again as a dedicated worker
 * from a blob: URL (the page's CSP allows `worker-src blob:` and nothing else), answers requests with one
 * Session. Verification never blocks the page's thread this way.
 */
import { Session } from './engine.js';
import { serveDigests } from './entry-hasher.js';
import type { Reply, Request } from './protocol.js';

/** The parts of DedicatedWorkerGlobalScope used here (the page is compiled against the DOM library only). */
interface WorkerScope {
  postMessage(message: Reply): void;
  onmessage: ((event: MessageEvent<Request>) => void) | null;
}

export function runWorker(): void {
  const scope = globalThis as unknown as WorkerScope;
  const session = new Session();
  // Requests are answered one at a time, in order: a step asked for during a verification waits for it.
  let queue: Promise<void> = Promise.resolve();
  scope.onmessage = (event) => {
    const req = event.data;
    // Sent once, before any request: this worker hashes for another, or has another hash for it.
    if (req.op === 'serve-digests') return serveDigests(req.port);
    if (req.op === 'hash-on') return session.hashOn(req.port);
    queue = queue.then(async () => {
      try {
        const value =
          req.op === 'verify'
            ? await session.verify(req.request, (progress) => scope.postMessage({ id: req.id, progress }))
            : req.op === 'rows'
              ? session.rows(req.from, req.count, req.only)
              : req.op === 'find'
                ? session.find(req.where)
                : await session.step(req.index, (progress) => scope.postMessage({ id: req.id, progress }));
        scope.postMessage({ id: req.id, ok: true, value });
      } catch (e) {
        scope.postMessage({ id: req.id, ok: false, message: e instanceof Error ? e.message : String(e) });
      }
    });
  };
  scope.postMessage({ ready: true });
}
