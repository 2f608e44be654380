/**
 * The chain entries' SHA-256 on a second Web Worker (issue 45). The verifying worker splits lines, checks
 * records and hashes them (the WebAssembly kernel), and must also digest every chain entry whole for the
 * manifest (spec/RECEIPT.md §7); in a browser that digest is the portable @noble/hashes, about a quarter of
 * the worker's time on a large receipt. Here the entry's bytes go, copied into 1 MiB buffers that are
 * transferred (never cloned), over a MessageChannel to a second worker that hashes them as they come, so the
 * digest runs on the other core while the lines are checked; the verifier compares the digest it is given
 * with the manifest's exactly as its own.
 *
 * Why not WebCrypto's `crypto.subtle.digest` for whole entries: measured in the page's Chromium it is slower
 * than @noble/hashes (bench/RESULTS.md, "The page against the CLI, fourth round"), and it has no
 * incremental form. Why the page's thread starts this worker: a worker cannot start another from the page's
 * blob: URL when the page is a file (its origin is opaque). A hashing worker that dies is seen by the page's
 * thread (its `error` event), which stops the verification with that reason (client.ts): no timeout.
 */
import { sha256Stream, type Sha256Stream } from '../canonical/sha256.js';
import type { EntryHasher } from '../receipt/verify.js';

/** Bytes per message: few enough messages, little enough held in flight. */
const BUFFER = 1024 * 1024;

/** The part of a MessagePort used here (engine.ts, which imports this, also compiles without the DOM library). */
export interface HashPort {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  // `never`: a handler is only ever assigned here, and a MessagePort's takes a whole MessageEvent.
  onmessage: ((event: never) => void) | null;
  onmessageerror: ((event: never) => void) | null;
}

/** Verifying worker → hashing worker. */
export type HashRequest = { stream: number; bytes: Uint8Array } | { stream: number; end: true };
/** Hashing worker → verifying worker. */
export type HashReply = { stream: number; digest: Uint8Array } | { stream: number; error: string };

/** The verifying worker's side: a factory of entry hashers that hash on the worker at the port's other end. */
export function portHasher(port: HashPort): () => EntryHasher {
  let next = 1;
  const waiting = new Map<number, { resolve: (d: Uint8Array) => void; reject: (e: Error) => void }>();
  let broken: string | null = null;
  const breakAll = (why: string): void => {
    broken = why;
    for (const w of waiting.values()) w.reject(new Error(why));
    waiting.clear();
  };
  port.onmessage = (event: { data: unknown }) => {
    const reply = event.data as HashReply;
    const w = waiting.get(reply.stream);
    if (!w) return;
    waiting.delete(reply.stream);
    if ('digest' in reply) w.resolve(reply.digest);
    else w.reject(new Error(`the hashing worker failed: ${reply.error}`));
  };
  port.onmessageerror = () => breakAll('a message from the hashing worker could not be read');
  return () => {
    const stream = next++;
    let buffer = new Uint8Array(BUFFER);
    let used = 0;
    const send = (): void => {
      if (used === 0) return;
      const bytes = used === BUFFER ? buffer : buffer.slice(0, used);
      port.postMessage({ stream, bytes } satisfies HashRequest, [bytes.buffer]);
      buffer = new Uint8Array(BUFFER);
      used = 0;
    };
    return {
      update(piece) {
        for (let at = 0; at < piece.length;) {
          const n = Math.min(BUFFER - used, piece.length - at);
          buffer.set(piece.subarray(at, at + n), used);
          used += n;
          at += n;
          if (used === BUFFER) send();
        }
      },
      digest() {
        if (broken !== null) return Promise.reject(new Error(broken));
        send();
        return new Promise<Uint8Array>((resolve, reject) => {
          waiting.set(stream, { resolve, reject });
          port.postMessage({ stream, end: true } satisfies HashRequest, []);
        });
      },
    };
  };
}

/** The hashing worker's side: hashes each stream's bytes as they arrive and answers its digest at the end. */
export function serveDigests(port: HashPort): void {
  const streams = new Map<number, Sha256Stream>();
  port.onmessage = (event: { data: unknown }) => {
    const request = event.data as HashRequest;
    try {
      let h = streams.get(request.stream);
      if (h === undefined) streams.set(request.stream, (h = sha256Stream()));
      if ('bytes' in request) h.update(request.bytes);
      else {
        streams.delete(request.stream);
        const digest = h.digest();
        port.postMessage({ stream: request.stream, digest } satisfies HashReply, []);
      }
    } catch (e) {
      streams.delete(request.stream);
      port.postMessage(
        { stream: request.stream, error: e instanceof Error ? e.message : String(e) } satisfies HashReply,
        [],
      );
    }
  };
}

/** The same interface on the verifying worker's own thread (no second worker): the built-in streaming hash. */
export function inThreadHasher(): EntryHasher {
  const h = sha256Stream();
  return { update: (piece) => h.update(piece), digest: () => Promise.resolve(h.digest()) };
}
