/**
 * Memory the feeding thread and the line-check workers share (chain/feeder.ts, pool.ts): each batch's lines
 * as a view into a larger SharedArrayBuffer, handed out in order, a new block when one is used up; a block is
 * never reused, so a view stays what it was written as for as long as anything holds it (a line an observer
 * decodes late included), and the block is freed with the last view into it. One SharedArrayBuffer per batch
 * cost about 12 µs to allocate (zeroed, and mapped as shared), 15 ms of `stepchain verify`'s 100 000 steps on
 * its feeding thread; a block of BLOCK_BYTES serves eight batches of the default size.
 *
 * Each view starts at a multiple of ALIGN bytes. Into shared memory the engine copies with relaxed atomics, a
 * word at a time only where source and destination share their alignment, else a byte at a time: a batch
 * copied from the start of the feeder's own buffer to an odd offset took 32–35 µs a 128 KiB batch against
 * 4.6 µs aligned (bench/RESULTS.md). Pure: no Node-only import.
 */

/** The block size: eight default batches (chain/feeder.ts BATCH_BYTES); peak memory grows by at most one block. */
const BLOCK_BYTES = 1024 * 1024;
/** Where a view may start: a word's alignment, as the start of an ArrayBuffer the copies come from. */
const ALIGN = 8;

export class SharedBlocks {
  private block: SharedArrayBuffer | null = null;
  private used = 0;

  /** `bytes` bytes of shared memory no other view was given, starting at a multiple of ALIGN. */
  allocate(bytes: number): Uint8Array {
    if (this.block === null || this.used + bytes > this.block.byteLength) {
      this.block = new SharedArrayBuffer(Math.max(BLOCK_BYTES, bytes));
      this.used = 0;
    }
    const view = new Uint8Array(this.block, this.used, bytes);
    this.used += Math.ceil(bytes / ALIGN) * ALIGN;
    return view;
  }
}
