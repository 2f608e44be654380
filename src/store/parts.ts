/**
 * The part store contract (spec/PARTS.md §6): where a journal keeps its parts — content stored once,
 * addressed by its keyed unit digest — whatever holds the bytes. The chain never names a place: a record
 * holds a part's address, the SHA-256 and the length of its file, and any store that answers these few
 * calls can hold the files (a directory, a SQLite or Postgres table today; an object store later). A store
 * does not verify what it returns: every reader checks a part on read (src/record/v3/parts.ts,
 * `checkPartFile`), so a store is trusted for availability only. Types only.
 */
import type { FoundPart, PartPayload } from '../record/v3/parts.js';

export type { FoundPart, PartPayload };

export interface PartStore {
  /**
   * A part file's bytes, or null when the store does not hold that address. Given the reference's `size`, a
   * stored file of another size comes back as `{ size }` alone, unread: no more bytes are read than the
   * record says the part has. Where something that cannot be a part's file stands under its name (a FIFO, a
   * device, a directory), `{ unreadable }` with the reason: a verifier reports it where the part is referenced.
   */
  get(address: string, size?: number): Promise<FoundPart>;
  has(address: string): Promise<boolean>;
  /**
   * Stores parts, idempotently: an address already held is left as it is (same address, same file: the
   * address is a digest of the value under the part's own seed, and the writer made the file once). Durable
   * when the promise resolves, as the store promises, so the lines that reference them are written after.
   * Each part's `indexKey` is recorded for `lookup` (an empty key: none, as for a fork's copied parts).
   */
  put(parts: readonly PartPayload[]): Promise<void>;
  /** The address stored under a writer's private index key (HMAC-SHA-256 of content under the journal's part key), or null. */
  lookup(indexKey: string): Promise<string | null>;
  /** Removes a part and its index entries (erasure only, under the journal's lock). Absent: nothing happens. */
  delete(address: string): Promise<void>;
  /** Every address held, in no particular order. */
  list(): AsyncIterable<string>;
  /**
   * The journal's part key (32 bytes), the key of the writer's private index (PARTS.md §6), drawn from the
   * CSPRNG by the first writer that asks and kept by the store beside the parts, never in a record or a
   * receipt. Two writers asking at once get the same key.
   */
  key(): Promise<Uint8Array>;
}

/** 32 bytes from the platform's CSPRNG, as 64 lowercase hex digits. */
export function newKeyHex(): string {
  return [...globalThis.crypto.getRandomValues(new Uint8Array(32))]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

/** The bytes of a stored key, or null when it is not 64 lowercase hex digits. */
export function keyOfHex(hex: string): Uint8Array | null {
  if (!INDEX_KEY_RE.test(hex)) return null;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** An address is `sha256:` and 64 lowercase hex digits; an index key 64 lowercase hex digits. */
export const ADDRESS_RE = /^sha256:[0-9a-f]{64}$/;
export const INDEX_KEY_RE = /^[0-9a-f]{64}$/;

/** Parts kept in memory: tests, benchmarks, the in-memory journal. */
export class MemoryPartStore implements PartStore {
  private readonly files = new Map<string, Uint8Array>();
  private readonly index = new Map<string, string>();
  private readonly partKey = keyOfHex(newKeyHex())!;

  key(): Promise<Uint8Array> {
    return Promise.resolve(this.partKey);
  }

  get(address: string, size?: number): Promise<Uint8Array | { size: number } | null> {
    const bytes = this.files.get(address);
    if (bytes === undefined) return Promise.resolve(null);
    if (size !== undefined && bytes.length !== size) return Promise.resolve({ size: bytes.length });
    return Promise.resolve(bytes.slice());
  }
  has(address: string): Promise<boolean> {
    return Promise.resolve(this.files.has(address));
  }
  put(parts: readonly PartPayload[]): Promise<void> {
    for (const p of parts) {
      if (!this.files.has(p.address)) this.files.set(p.address, p.bytes.slice());
      if (p.indexKey !== '') this.index.set(p.indexKey, p.address);
    }
    return Promise.resolve();
  }
  lookup(indexKey: string): Promise<string | null> {
    return Promise.resolve(this.index.get(indexKey) ?? null);
  }
  delete(address: string): Promise<void> {
    this.files.delete(address);
    for (const [k, a] of this.index) if (a === address) this.index.delete(k);
    return Promise.resolve();
  }
  async *list(): AsyncIterable<string> {
    yield* [...this.files.keys()];
  }
  /** Replaces a stored file's bytes as they are (tests of verify-on-read: a store is not trusted). */
  tamper(address: string, bytes: Uint8Array | null): void {
    if (bytes === null) this.files.delete(address);
    else this.files.set(address, bytes);
  }
}
