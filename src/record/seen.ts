/**
 * What a reader of a whole chain keeps per record, held compactly: verify keeps a step_id per record (the run
 * notes' STEP_ID_REPEATED) and a digest and a locator per distinct call (the approval check), for the whole
 * chain, so these are its memory's growth. As Maps of strings they held about 360 B a record (a 300 000-step
 * v3 verify needed 90 MB of live heap and 250 MB of RSS, and failed in 70 MB of heap where v1 needs none);
 * here a text is its Latin-1 bytes in one arena and a digest its 32 bytes, in typed arrays (the digests in an
 * open-addressed table). Each draws a random key for its hashes, so that a hostile chain cannot choose step_ids
 * or calls that crowd one slot or one hash (a Map's hash is seeded by the engine for the same reason). Pure: no
 * Node-only import.
 */

/**
 * A random 32-bit value, as a table's key. It need only be unknown to whoever wrote the chain, not secret from
 * one who watches this process: Math.random (seeded per process by the engine) spares the CLI's quick verbs
 * loading WebCrypto at start-up (test/cli/start-up.test.ts).
 */
function randomKey(): number {
  return (Math.random() * 0x1_0000_0000) >>> 0;
}

/** A copy of `a` twice as long (or `atLeast` long), its contents kept. */
export function grown<T extends Uint8Array | Int32Array | Float64Array>(a: T, atLeast = 0): T {
  const next = new (a.constructor as new (n: number) => T)(Math.max(2 * a.length, atLeast));
  next.set(a);
  return next;
}

/**
 * Texts in the order added, each as its Latin-1 bytes in one arena (step_ids are ASCII: about 40 bytes each
 * instead of a string's 56 and a slice's 32 that keeps its source alive). A text with a character above U+00FF
 * is kept as a string on the side.
 */
export class TextArena {
  private bytes = new Uint8Array(4096);
  /** Text i is bytes[ends[i - 1] ?? 0, ends[i]) (nothing, for a wide one). */
  private ends = new Int32Array(256);
  private wide: Map<number, string> | null = null;
  size = 0;

  /** Adds `text`; returns its index. */
  add(text: string): number {
    const i = this.size++;
    if (i === this.ends.length) this.ends = grown(this.ends);
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    if (start + text.length > this.bytes.length) this.bytes = grown(this.bytes, start + text.length);
    const bytes = this.bytes;
    let end = start;
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c > 0xff) {
        (this.wide ??= new Map()).set(i, text);
        end = start;
        break;
      }
      bytes[end++] = c;
    }
    this.ends[i] = end;
    return i;
  }

  /** Text i, as added. */
  get(i: number): string {
    const wide = this.wide?.get(i);
    if (wide !== undefined) return wide;
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    let out = '';
    // In pieces: fromCharCode takes its arguments on the stack.
    for (let at = start; at < this.ends[i]!; at += 4096)
      out += String.fromCharCode.apply(
        null,
        this.bytes.subarray(at, Math.min(at + 4096, this.ends[i]!)) as unknown as number[],
      );
    return out;
  }

  /** Whether text i is `text`. */
  is(i: number, text: string): boolean {
    const wide = this.wide?.get(i);
    if (wide !== undefined) return wide === text;
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    if (this.ends[i]! - start !== text.length) return false;
    const bytes = this.bytes;
    for (let k = 0; k < text.length; k++) if (bytes[start + k] !== text.charCodeAt(k)) return false;
    return true;
  }
}

/** Slots per entry at most: a table is grown when it is half full. */
const LOAD = 2;

/**
 * Texts in the order added, each with a seq (a chain's step_ids), and at the end the texts added more than once.
 * Nothing is looked up while texts come: each is appended (its bytes, its seq, its hash), and `repeats` sorts
 * the hashes once, so the thread that links a chain pays no probe of a table as large as the chain per record.
 */
export class RepeatedTexts {
  private readonly texts = new TextArena();
  private seqs = new Float64Array(256);
  private hashes = new Int32Array(256);
  private readonly key = randomKey();

  add(text: string, seq: number): void {
    const i = this.texts.add(text);
    if (i === this.seqs.length) {
      this.seqs = grown(this.seqs);
      this.hashes = grown(this.hashes);
    }
    this.seqs[i] = seq;
    this.hashes[i] = textHash(text, this.key);
  }

  /**
   * Every add of a text added before, in the order of the adds: its seq, the text, and the seq of that text's
   * first add. Texts that share a hash are told apart exactly (by a Map of their texts), so a chain whose
   * step_ids were made to share one costs a Map's time, never a comparison of each with each.
   */
  repeats(): { seq: number; text: string; first: number }[] {
    const n = this.texts.size;
    const hashes = this.hashes;
    const order = orderByHash(hashes, n);
    const found: { index: number; first: number }[] = [];
    for (let a = 0; a < n;) {
      const h = hashes[order[a]!]!;
      let b = a + 1;
      while (b < n && hashes[order[b]!] === h) b++;
      if (b - a > 1) {
        const firsts = new Map<string, number>();
        // The sort is stable: within a hash, indices come in the order added.
        for (let k = a; k < b; k++) {
          const i = order[k]!;
          const text = this.texts.get(i);
          const first = firsts.get(text);
          if (first === undefined) firsts.set(text, i);
          else found.push({ index: i, first });
        }
      }
      a = b;
    }
    found.sort((x, y) => x.index - y.index);
    return found.map(({ index, first }) => ({
      seq: this.seqs[index]!,
      text: this.texts.get(index),
      first: this.seqs[first]!,
    }));
  }
}

/** The indices 0..n-1 ordered by hashes[i] as unsigned, stably: a radix sort, 16 bits a pass. */
function orderByHash(hashes: Int32Array, n: number): Uint32Array {
  let from = new Uint32Array(n);
  let to = new Uint32Array(n);
  for (let i = 0; i < n; i++) from[i] = i;
  const counts = new Uint32Array(1 << 16);
  for (const shift of [0, 16]) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(hashes[i]! >>> shift) & 0xffff]!++;
    let sum = 0;
    for (let d = 0; d < counts.length; d++) {
      const c = counts[d]!;
      counts[d] = sum;
      sum += c;
    }
    for (let k = 0; k < n; k++) {
      const i = from[k]!;
      to[counts[(hashes[i]! >>> shift) & 0xffff]!++] = i;
    }
    [from, to] = [to, from];
  }
  return from;
}

/**
 * A text's 32-bit hash under `key`: MurmurHash3's mixing of each UTF-16 unit, then its finaliser, so that every
 * bit of the key and of each unit reaches the low bits a slot is taken from.
 */
function textHash(text: string, key: number): number {
  let h = key;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= text.length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Each lowercase hex digit's value by its character code; -1 for any other code below 128. */
const HEX_VALUE = (() => {
  const v = new Int8Array(128).fill(-1);
  for (let c = 0; c < 16; c++) v['0123456789abcdef'.charCodeAt(c)] = c;
  return v;
})();

/**
 * Digests (`sha256:` and 64 hex digits) in the order added, 32 bytes each, each found again by its bytes: the
 * approval check's distinct calls. A slot is taken from the digest's first word times a random odd key (its
 * high bits): the digests are SHA-256 outputs, but a chain's writer can grind calls whose digests share low
 * bits; not ones that share a slot under a key drawn after the chain was written.
 */
export class DigestTable {
  private bytes = new Uint8Array(32 * 256);
  /** Entry + 1 per slot; 0: empty. */
  private slots = new Int32Array(512);
  private shift = 32 - 9;
  private readonly key = randomKey() | 1;
  private readonly scratch = new Uint8Array(32);
  size = 0;

  /**
   * The entry of the digest `text[at, at + 71)` (`sha256:` and 64 hex digits), or -1 when it is absent (and `add`
   * is false) or not a digest. With `add`, an absent digest becomes entry size - 1.
   */
  indexOf(text: string, at: number, add: boolean): number {
    if (text.length < at + 71 || !text.startsWith('sha256:', at)) return -1;
    const d = this.scratch;
    for (let k = 0, c = at + 7; k < 32; k++, c += 2) {
      const high = text.charCodeAt(c);
      const low = text.charCodeAt(c + 1);
      const h = high < 128 ? HEX_VALUE[high]! : -1;
      const l = low < 128 ? HEX_VALUE[low]! : -1;
      if ((h | l) < 0) return -1;
      d[k] = (h << 4) | l;
    }
    return this.indexOfBytes(d, 0, add);
  }

  /** indexOf for a digest given as its 32 bytes, `digest[at, at + 32)`. */
  indexOfBytes(digest: Uint8Array, at: number, add: boolean): number {
    const d = digest;
    const first = ((d[at]! << 24) | (d[at + 1]! << 16) | (d[at + 2]! << 8) | d[at + 3]!) >>> 0;
    const slots = this.slots;
    const mask = slots.length - 1;
    let slot = Math.imul(first, this.key) >>> this.shift;
    for (let e = slots[slot]!; e !== 0; e = slots[slot]!) {
      if (this.holds(e - 1, d, at)) return e - 1;
      slot = (slot + 1) & mask;
    }
    if (!add) return -1;
    const i = this.size++;
    if (32 * this.size > this.bytes.length) this.bytes = grown(this.bytes);
    this.bytes.set(d.subarray(at, at + 32), 32 * i);
    slots[slot] = i + 1;
    if (this.size * LOAD > slots.length) this.rehash();
    return i;
  }

  private holds(i: number, d: Uint8Array, from: number): boolean {
    const bytes = this.bytes;
    for (let k = from, at = 32 * i; k < from + 32; k++, at++) if (bytes[at] !== d[k]) return false;
    return true;
  }

  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    this.shift--;
    const mask = slots.length - 1;
    const bytes = this.bytes;
    for (let i = 0; i < this.size; i++) {
      const o = 32 * i;
      const first = ((bytes[o]! << 24) | (bytes[o + 1]! << 16) | (bytes[o + 2]! << 8) | bytes[o + 3]!) >>> 0;
      let at = Math.imul(first, this.key) >>> this.shift;
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = i + 1;
    }
    this.slots = slots;
  }
}
