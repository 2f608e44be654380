/**
 * The receipt writer's second pass (spec/RECEIPT.md §3): the archive's bytes from a plan (plan.ts), an
 * uncompressed ustar stream in bounded chunks, re-hashing every entry so a source that changed between the
 * passes is an error, not a receipt that fails verification later. Same plan, same bytes. Node-only
 * (tar-stream, node:crypto); the verifier never imports it.
 */
import { pack as tarPack, type Header as TarHeader } from 'tar-stream';
import { createHash, type Hash } from 'node:crypto';
import { ReceiptError } from './errors.js';
import { MANIFEST_NAME, SIGNATURE_NAME, blobEntryName, type ChainEntry } from './manifest.js';
import { fetchBlob, planReceipt, type ReceiptPlan, type ReceiptWriterInput } from './plan.js';
import { partEntryName, partListOf } from './parts.js';
import { digestBytes } from '../canonical/sha256.js';

export { planReceipt, type ReceiptPlan, type ReceiptWriterInput } from './plan.js';

/** How many characters of lines pass 2 gathers before writing them to the archive (a line is never split). */
const FLUSH_CHARS = 64 * 1024;

function header(name: string, size: number): TarHeader {
  // Every field explicit: tar-stream's defaults would put the current time into mtime.
  return {
    name,
    size,
    mode: 0o644,
    uid: 0,
    gid: 0,
    mtime: new Date(0),
    type: 'file',
    linkname: '',
    uname: '',
    gname: '',
    devmajor: 0,
    devminor: 0,
  };
}

type Pack = ReturnType<typeof tarPack>;

/** Pass 2: the archive's bytes (an uncompressed ustar stream), in bounded chunks. */
export async function* writeReceipt(plan: ReceiptPlan): AsyncGenerator<Uint8Array> {
  const pack = tarPack();
  const producer = new ArchiveProducer(pack, plan);
  const producing = producer.produce().catch((err: unknown) => {
    pack.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  try {
    for await (const chunk of pack as AsyncIterable<Uint8Array>)
      yield new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
  } finally {
    producer.stopped = true;
    if (!pack.destroyed) (pack as unknown as { destroy(): void }).destroy();
    // Not awaited: a producer blocked on a destroyed entry never resumes; it checks `stopped` if it does,
    // and its errors were already routed to the pack.
    void producing;
  }
}

/** Feeds the tar stream the plan's entries in the archive's fixed order (§3.3), checking each against the plan. */
class ArchiveProducer {
  /** Set when the consumer stopped reading: the producer stops at its next step. */
  stopped = false;

  constructor(
    private readonly pack: Pack,
    private readonly plan: ReceiptPlan,
  ) {}

  private whole(name: string, bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      // Entry errors reach us through the callback (and the pack); the listener keeps a destroyed entry quiet.
      this.pack
        .entry(header(name, bytes.length), Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), (err) =>
          err ? reject(err) : resolve(),
        )
        .on('error', () => {});
    });
  }

  async produce(): Promise<void> {
    const { input, manifest } = this.plan;
    await this.whole(MANIFEST_NAME, this.plan.manifestBytes);
    if (this.plan.signatureBytes) await this.whole(SIGNATURE_NAME, this.plan.signatureBytes);
    if (!(await this.chainEntries())) return;
    for (const b of manifest.blobs) {
      if (this.stopped) return;
      await this.whole(
        blobEntryName(b.digest),
        await fetchBlob(input, b).catch((e: unknown) => {
          throw e instanceof ReceiptError && e.code !== 'LIMIT_EXCEEDED'
            ? new ReceiptError('SOURCE_CHANGED', `${e.message} (it was present in the first pass)`)
            : e;
        }),
      );
    }
    for (const p of partListOf(manifest)) {
      if (this.stopped) return;
      const got = input.parts ? await input.parts(p.address, p.size) : null;
      if (!(got instanceof Uint8Array) || got.length !== p.size || digestBytes(got) !== p.digest) {
        throw new ReceiptError('SOURCE_CHANGED', `part ${p.address} is no longer the one the first pass read`);
      }
      await this.whole(partEntryName(p.address), got);
    }
    this.pack.finalize();
  }

  /** The range's lines into the chain entries the plan measured; false when the consumer stopped first. */
  private async chainEntries(): Promise<boolean> {
    const { input, manifest } = this.plan;
    let index = 0;
    let current: ChainEntryStream | null = null;
    for await (const line of input.lines()) {
      if (this.stopped) return false;
      if (line.seq < input.from) continue;
      if (line.seq > input.to) break;
      if (current === null) {
        const e = manifest.chain[index];
        if (!e) throw new ReceiptError('SOURCE_CHANGED', 'the source yields more steps than it did in the first pass');
        current = new ChainEntryStream(this.pack, e);
      }
      if (await current.add(line.text)) {
        current = null;
        index++;
      }
    }
    if (current !== null || index !== manifest.chain.length)
      throw new ReceiptError('SOURCE_CHANGED', 'the source yields fewer steps than it did in the first pass');
    return true;
  }
}

/**
 * One chain entry being written. Lines go to the entry in runs of about FLUSH_CHARS, not one by one: each
 * write is a trip through the tar stream and out to the consumer, and per line that cost more than reading
 * the line. Its bytes are hashed as they go, and must come out as the plan measured them.
 */
class ChainEntryStream {
  private readonly w: ReturnType<Pack['entry']>;
  private readonly done: Promise<void>;
  private left: number;
  private readonly hash: Hash = createHash('sha256');
  private size = 0;
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(
    pack: Pack,
    private readonly entry: ChainEntry,
  ) {
    let settle!: (err?: Error | null) => void;
    this.done = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    this.w = pack.entry(header(entry.name, entry.size), (err) => settle(err));
    this.w.on('error', () => {});
    this.done.catch(() => {}); // awaited in finish; when the consumer stops first, nobody will
    this.left = entry.steps;
  }

  /** Adds a line; true once the entry holds all its steps and is finished. */
  async add(text: string): Promise<boolean> {
    this.pending.push(text);
    this.pendingChars += text.length + 1;
    if (--this.left === 0) {
      await this.finish();
      return true;
    }
    if (this.pendingChars >= FLUSH_CHARS) await this.flush();
    return false;
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const bytes = Buffer.from(this.pending.join('\n') + '\n', 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    this.hash.update(bytes);
    this.size += bytes.length;
    if (this.size > this.entry.size)
      throw new ReceiptError('SOURCE_CHANGED', `chain entry ${this.entry.name} grew between the export's passes`);
    if (!this.w.write(bytes)) await drained(this.w);
  }

  private async finish(): Promise<void> {
    await this.flush();
    // Shorter than pass 1 measured: ending it would fail in tar-stream with its own "Size mismatch".
    if (this.size !== this.entry.size)
      throw new ReceiptError('SOURCE_CHANGED', `chain entry ${this.entry.name} changed between the export's passes`);
    (this.w as unknown as { end(): void }).end();
    await this.done;
    if ('sha256:' + this.hash.digest('hex') !== this.entry.digest) {
      throw new ReceiptError('SOURCE_CHANGED', `chain entry ${this.entry.name} changed between the export's passes`);
    }
  }
}

/**
 * Resolves when a backpressured entry drains (or closes). Both listeners are removed whichever fires:
 * with two `once` listeners the unfired `close` one stayed, one more per backpressure event, so a large
 * entry leaked listeners and memory in proportion to its size (MaxListenersExceededWarning in bench/).
 */
function drained(w: {
  on(event: 'drain' | 'close', fn: () => void): unknown;
  off(event: 'drain' | 'close', fn: () => void): unknown;
}): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      w.off('drain', done);
      w.off('close', done);
      resolve();
    };
    w.on('drain', done);
    w.on('close', done);
  });
}

/** Plans and writes in one call. */
export async function* receiptTar(input: ReceiptWriterInput): AsyncGenerator<Uint8Array> {
  yield* writeReceipt(await planReceipt(input));
}
