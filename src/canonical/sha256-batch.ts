/**
 * SHA-256 (FIPS 180-4) of many short messages in one call, for the unit trees of `stepchain/v3` records
 * (spec/FORMAT.md §14; docs/design/format-v3.md §12.3): a record commits some sixty units, each a message of
 * one or two 64-byte blocks, and one native call per unit costs more than its bytes (≈ 0.6–1 µs a call against
 * ≈ 0.1 µs a compression). A batch is written message by message (`begin`, `byte`/`copy`, `end`) and hashed by
 * `run`, which returns digest i at [32i, 32i + 32).
 *
 * Where WebAssembly SIMD is available (Node; a browser's worker), the messages are written padded straight
 * into the memory of a 4-lane kernel (scripts/gen-sha256-wasm.mjs) and hashed four at a time, grouped by
 * block count, in one call. Anywhere else — no WebAssembly, no SIMD, or a page's main thread where a
 * synchronous compile is refused — the portable batch hashes each message with the platform's SHA-256
 * (canonical/sha256.ts). Both give the same digests (test/canonical/sha256-batch.test.ts). Pure.
 */
import { sha256Backend } from './sha256.js';
import { SHA256X4_WASM_BASE64 } from './sha256x4-module.js';

export interface Sha256Batch {
  /** 'wasm-simd-4' or the portable backend's name. */
  readonly name: string;
  /** Messages since the last reset. */
  readonly count: number;
  /** Forgets every message: the next one is message 0. */
  reset(): void;
  /** Opens the next message (the previous one must be closed). */
  begin(): void;
  /** Appends one byte to the open message. */
  byte(b: number): void;
  /** Appends src[start, end) to the open message. */
  copy(src: Uint8Array, start: number, end: number): void;
  /** Closes the open message; returns its index. */
  end(): number;
  /**
   * Opens the next message to be written in place, for callers that assemble many small pieces: room for
   * `max` bytes in `bytes` from the returned offset (the view is valid until the next reserve or begin).
   * Write exactly the message's bytes, none past its length; `close(length)` closes it and returns its index.
   */
  reserve(max: number): number;
  readonly bytes: Uint8Array;
  close(length: number): number;
  /** The digests of every message since the reset, 32 bytes each in order: a view valid until the next reset. */
  run(): Uint8Array;
}

/**
 * The part of the WebAssembly JS API used here (this module's types name no platform library: it runs in
 * Node and in a page alike).
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

/** Message i's start and block count grow with the batch. */
function grown(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const b = new Int32Array(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** Memory layout of the kernel: a dummy output for idle lanes at 0, the padded messages from 64. */
const DUMMY_OUT = 0;
const MESSAGES = 64;
/** A table entry: p0–p3, nb, o0–o3 (little-endian i32), padded to 48 bytes. */
const ENTRY = 48;
/** Block counts with an open-entry slot in an array; longer messages (rare) go through a map. */
const OPEN_DIRECT = 64;

class WasmBatch implements Sha256Batch {
  readonly name = 'wasm-simd-4';
  count = 0;
  private mem: Uint8Array;
  private at = MESSAGES;
  private start = 0;
  private starts = new Int32Array(256);
  private blocks = new Int32Array(256);

  constructor(
    private readonly hashGroups: (table: number, n: number) => void,
    private readonly memory: WasmMemory,
  ) {
    this.mem = new Uint8Array(memory.buffer);
  }

  /** Room for `n` more bytes at `at` (a grow detaches the old view). */
  private room(n: number): void {
    if (this.at + n <= this.mem.length) return;
    const pages = Math.ceil((this.at + n - this.mem.length) / 65536);
    this.memory.grow(Math.max(pages, this.mem.length >>> 16));
    this.mem = new Uint8Array(this.memory.buffer);
  }

  /**
   * Everything from MESSAGES to here has been written since the memory was last zeroed. Past it the memory is
   * zero, so a message's padding needs only its 0x80 and its length written: one fill per batch instead of one
   * per message.
   */
  private dirty = MESSAGES;

  reset(): void {
    if (this.dirty > MESSAGES) this.mem.fill(0, MESSAGES, this.dirty);
    this.dirty = MESSAGES;
    this.count = 0;
    this.at = MESSAGES;
  }

  begin(): void {
    this.start = this.at;
  }

  get bytes(): Uint8Array {
    return this.mem;
  }

  reserve(max: number): number {
    // The padding (at most 72 bytes) is written in place too.
    if (this.at + max + 72 > this.mem.length) this.room(max + 72);
    return (this.start = this.at);
  }

  close(length: number): number {
    this.at = this.start + length;
    return this.end();
  }

  byte(b: number): void {
    if (this.at + 1 > this.mem.length) this.room(1);
    this.mem[this.at++] = b;
  }

  copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.at + n > this.mem.length) this.room(n);
    const mem = this.mem;
    // Short pieces (tags, salts, names, digests) copy faster by hand than through a subarray view.
    if (n <= 48) {
      let at = this.at;
      for (let i = start; i < end; i++) mem[at++] = src[i]!;
    } else mem.set(src.subarray(start, end), this.at);
    this.at += n;
  }

  end(): number {
    const n = this.at - this.start;
    const size = (((n + 8) >>> 6) + 1) << 6;
    this.room(size - n);
    const mem = this.mem;
    const pad = this.start + size;
    // Past the message the memory is zero (see dirty); a run's table, written where messages now go, is not.
    if (this.at < this.dirty) mem.fill(0, this.at, Math.min(pad, this.dirty));
    if (pad > this.dirty) this.dirty = pad;
    mem[this.at] = 0x80;
    // The message length in bits, 64-bit big-endian (messages here are far below 2^53 bits).
    const bits = n * 8;
    mem[pad - 5] = Math.floor(bits / 0x100000000) & 0xff;
    mem[pad - 4] = bits >>> 24;
    mem[pad - 3] = (bits >>> 16) & 0xff;
    mem[pad - 2] = (bits >>> 8) & 0xff;
    mem[pad - 1] = bits & 0xff;
    const i = this.count++;
    if (i >= this.starts.length) {
      this.starts = grown(this.starts, this.count);
      this.blocks = grown(this.blocks, this.count);
    }
    this.starts[i] = this.start;
    this.blocks[i] = size >>> 6;
    this.at = pad;
    return i;
  }

  /** The open entry per block count (−1: none), for block counts below OPEN_DIRECT; longer messages use a map. */
  private open = new Int32Array(OPEN_DIRECT).fill(-1);
  private view32 = new Int32Array(0);

  run(): Uint8Array {
    const count = this.count;
    const out = this.at;
    // Entries: at most one per message (an entry holds one to four messages).
    const table = out + 32 * count;
    this.at = table;
    this.room(ENTRY * count + 64);
    // Messages written after this run (before a reset) go past the table: every message since the reset stays.
    this.at = table + ENTRY * count;
    if (this.at > this.dirty) this.dirty = this.at;
    if (this.view32.buffer !== this.memory.buffer) this.view32 = new Int32Array(this.memory.buffer);
    const view = this.view32;
    // Messages of equal block count share an entry, four lanes each; the open entry of a block count is being filled.
    const open = this.open;
    let long: Map<number, number> | null = null;
    let entries = 0;
    for (let i = 0; i < count; i++) {
      const nb = this.blocks[i]!;
      let e = nb < OPEN_DIRECT ? open[nb]! : ((long ??= new Map<number, number>()).get(nb) ?? -1);
      let lane: number;
      let w: number;
      if (e < 0) {
        e = entries++;
        w = (table + ENTRY * e) >> 2;
        view[w + 4] = nb;
        lane = 0;
        // Idle lanes read lane 0's message (same block count) and write to the dummy output.
        view[w] = view[w + 1] = view[w + 2] = view[w + 3] = this.starts[i]!;
        view[w + 5] = view[w + 6] = view[w + 7] = view[w + 8] = DUMMY_OUT;
      } else {
        w = (table + ENTRY * e) >> 2;
        lane = view[w + 9]!;
      }
      view[w + lane] = this.starts[i]!;
      view[w + 5 + lane] = out + 32 * i;
      view[w + 9] = lane + 1;
      const next = lane === 3 ? -1 : e;
      if (nb < OPEN_DIRECT) open[nb] = next;
      else long!.set(nb, next);
    }
    open.fill(-1);
    this.hashGroups(table, entries);
    return new Uint8Array(this.memory.buffer, out, 32 * count);
  }
}

class PortableBatch implements Sha256Batch {
  readonly name: string;
  count = 0;
  private buf = new Uint8Array(4096);
  private at = 0;
  private start = 0;
  private starts = new Int32Array(256);
  private ends = new Int32Array(256);

  constructor() {
    this.name = sha256Backend().name;
  }

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.at + n, 2 * this.buf.length));
    b.set(this.buf.subarray(0, this.at));
    this.buf = b;
  }

  reset(): void {
    this.count = 0;
    this.at = 0;
  }

  begin(): void {
    this.start = this.at;
  }

  get bytes(): Uint8Array {
    return this.buf;
  }

  reserve(max: number): number {
    this.room(max);
    return (this.start = this.at);
  }

  close(length: number): number {
    this.at = this.start + length;
    return this.end();
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  copy(src: Uint8Array, start: number, end: number): void {
    this.room(end - start);
    this.buf.set(src.subarray(start, end), this.at);
    this.at += end - start;
  }

  end(): number {
    const i = this.count++;
    this.starts = grown(this.starts, this.count);
    this.ends = grown(this.ends, this.count);
    this.starts[i] = this.start;
    this.ends[i] = this.at;
    return i;
  }

  run(): Uint8Array {
    const hash = sha256Backend();
    const out = new Uint8Array(32 * this.count);
    for (let i = 0; i < this.count; i++) out.set(hash.bytes(this.buf.subarray(this.starts[i], this.ends[i])), 32 * i);
    return out;
  }
}

interface Kernel {
  hashGroups: (table: number, n: number) => void;
  memory: WasmMemory;
}

let compiled: { wasm: WasmApi; module: object } | null | undefined;

/** The kernel's module, compiled once; null where WebAssembly SIMD is missing or a synchronous compile is refused. */
function kernelModule(): { wasm: WasmApi; module: object } | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (wasm === undefined) return null;
    const text = atob(SHA256X4_WASM_BASE64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    // Module() refuses bytes it cannot validate (no SIMD) with a CompileError: caught below.
    compiled = { wasm, module: new wasm.Module(bytes) };
  } catch {
    compiled = null;
  }
  return compiled;
}

/**
 * A new batch: the WebAssembly kernel where it runs, else the portable one (`portable: true` asks for the
 * portable one, for tests and bench/). Each batch owns its memory; a batch is used by one caller at a time.
 */
export function newSha256Batch(options: { portable?: boolean } = {}): Sha256Batch {
  const kernel = options.portable ? null : kernelModule();
  if (kernel !== null) {
    try {
      const k = new kernel.wasm.Instance(kernel.module).exports as unknown as Kernel;
      return new WasmBatch(k.hashGroups, k.memory);
    } catch {
      // An instance refused (memory) falls back like a missing kernel.
    }
  }
  return new PortableBatch();
}

/** SHA-256 of each message, digest i at [32i, 32i + 32) of a fresh array. */
export function sha256Many(messages: readonly Uint8Array[], options: { portable?: boolean } = {}): Uint8Array {
  const batch = newSha256Batch(options);
  for (const m of messages) {
    batch.begin();
    batch.copy(m, 0, m.length);
    batch.end();
  }
  return batch.run().slice();
}
