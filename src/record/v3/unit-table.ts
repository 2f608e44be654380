/**
 * The unit table of `stepchain/v3` records scanned from their slots' canonical texts (design §4.1), for the
 * batched hashing of commit-texts.ts: every member, element and chunk of a slot is a unit whose body is a
 * slice of the text; a unit's place, name, value, children and height are typed-array columns (no object per
 * unit). Records are scanned one after the other into one table (a batch of an appendMany); a record the
 * scan does not expect (a part reference to check) is taken out again and left to commit.ts's walk. Pure.
 */
import { CHUNK_THRESHOLD, chunkEnds } from './chunks.js';
import { TAG, V3_SLOTS, type V3Slot } from './commit.js';

/** The kinds of a unit's repr (design §4.1). */
export const SCALAR = 0; // repr = its canonical text
export const CHUNK = 1; // a chunk unit: tag ‖ salt ‖ escaped text
export const OBJECT = 2; // `{` ‖ child digests in ascending byte order
export const ARRAY = 3; // `[` ‖ element digests in order
export const CHUNKED = 4; // `~` ‖ chunk digests in order
export const ABSENT = 5; // an absent slot: tag ‖ salt ‖ name

/** Unit names: none, a slice of the text, or the slot's own name. */
export const NO_NAME = 0,
  TEXT_NAME = 1,
  SLOT_NAME = 2;

const encoder = new TextEncoder();
export const SLOT_NAME_BYTES = V3_SLOTS.map((s) => encoder.encode(JSON.stringify(s)));
export const SLOTS = V3_SLOTS.length;
/** `"$stepchain:part"`: an object whose only member has this name is a part reference, for the walk to check. */
const PART_NAME = encoder.encode('"$stepchain:part"');

/** Thrown (and caught) where the scan meets something it leaves to the walk. */
const UNEXPECTED = new Error('left to the walk');

export function grownI32(a: Int32Array<ArrayBuffer>, need: number): Int32Array<ArrayBuffer> {
  if (need <= a.length) return a;
  const b = new Int32Array(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** The unit table's columns: a unit's place and name, then its value, children and height. */
const PLACE_COLUMNS = ['kind', 'tag', 'slot', 'index', 'nameKind', 'nameStart', 'nameEnd'] as const;
const UNIT_COLUMNS = [...PLACE_COLUMNS, 'valStart', 'valEnd', 'childStart', 'childCount', 'height'] as const;

/** The unit table of a batch of records and the scan that fills it; the hashing extends it (commit-texts.ts). */
export class UnitTable {
  protected src = new Uint8Array(16384);
  protected srcView = new DataView(this.src.buffer);
  protected units = 0;
  // Per unit: repr kind, tag, slot, preorder index, name kind and slice, value slice, children, height.
  protected kind = new Int32Array(256);
  protected tag = new Int32Array(256);
  protected slot = new Int32Array(256);
  protected index = new Int32Array(256);
  protected nameKind = new Int32Array(256);
  protected nameStart = new Int32Array(256);
  protected nameEnd = new Int32Array(256);
  protected valStart = new Int32Array(256);
  protected valEnd = new Int32Array(256);
  protected childStart = new Int32Array(256);
  protected childCount = new Int32Array(256);
  protected height = new Int32Array(256);
  // The children lists of every container, and the scan's stack of children met so far.
  protected children = new Int32Array(256);
  protected childrenUsed = 0;
  protected stack = new Int32Array(256);
  protected stackTop = 0;
  /** Per slot of every record in the batch (record r's slot j at r × 7 + j): its units, then its first salt block. */
  protected slotUnits = new Int32Array(SLOTS * 16);
  protected tops = new Int32Array(SLOTS * 16);
  // The scan's current slot and its next preorder index.
  protected curSlot = 0;
  protected nextIndex = 0;

  protected newUnit(tag: number, nameKind: number, nameStart: number, nameEnd: number): number {
    const u = this.units++;
    if (u >= this.kind.length) this.growUnits(2 * this.kind.length);
    this.tag[u] = tag;
    this.slot[u] = this.curSlot;
    this.index[u] = this.nextIndex++;
    this.nameKind[u] = nameKind;
    this.nameStart[u] = nameStart;
    this.nameEnd[u] = nameEnd;
    this.childCount[u] = 0;
    this.height[u] = 0;
    return u;
  }

  /** Grows every column of the unit table (each a typed array of its own: no objects per unit). */
  protected growUnits(n: number): void {
    for (const c of UNIT_COLUMNS) this[c] = grownI32(this[c], n);
  }

  protected push(u: number): void {
    if (this.stackTop >= this.stack.length) this.stack = grownI32(this.stack, this.stackTop + 1);
    this.stack[this.stackTop++] = u;
  }

  /** Moves the children pushed since `base` into the table as u's children; u's height is one above theirs. */
  protected adopt(u: number, base: number): void {
    const n = this.stackTop - base;
    this.children = grownI32(this.children, this.childrenUsed + n);
    let h = -1;
    for (let k = 0; k < n; k++) {
      const c = this.stack[base + k]!;
      this.children[this.childrenUsed + k] = c;
      if (this.height[c]! > h) h = this.height[c]!;
    }
    this.childStart[u] = this.childrenUsed;
    this.childCount[u] = n;
    this.childrenUsed += n;
    this.height[u] = h + 1;
    this.stackTop = base;
  }

  /** The end (after the closing quote) of the string literal opening at p. */
  protected stringEnd(p: number, end: number): number {
    const b = this.src;
    let q = p;
    for (;;) {
      // A plain loop, not indexOf: the strings are short, and the builtin's call cost more than the scan.
      q++;
      while (q < end && b[q] !== 0x22) q++;
      if (q >= end) throw UNEXPECTED;
      let k = q - 1;
      while (b[k] === 0x5c) k--;
      if (((q - 1 - k) & 1) === 0) return q + 1;
    }
  }

  /** Scans the value at p (its text ends by `end`) as unit u's repr; returns where the value ends. */
  protected value(u: number, p: number, end: number): number {
    const b = this.src;
    const c = b[p];
    if (c === 0x7b) {
      if (this.isPartName(p + 1, end)) throw UNEXPECTED;
      return this.container(u, OBJECT, p + 1, end, 0x7d);
    }
    if (c === 0x5b) return this.container(u, ARRAY, p + 1, end, 0x5d);
    if (c === 0x22) {
      const e = this.stringEnd(p, end);
      if (e - p - 2 <= CHUNK_THRESHOLD) return this.slice(u, SCALAR, p, e);
      // Chunks (§4.2) of the escaped text between the quotes, each a unit numbered after the string's.
      this.kind[u] = CHUNKED;
      const base = this.stackTop;
      let start = p + 1;
      for (const ce of chunkEnds(b, p + 1, e - 1)!) {
        const chunk = this.newUnit(TAG.chunk, NO_NAME, 0, 0);
        start = this.slice(chunk, CHUNK, start, p + 1 + ce);
        this.push(chunk);
      }
      this.adopt(u, base);
      return e;
    }
    // A number, true, false or null: up to the next structural byte.
    let q = p;
    while (q < end) {
      const x = b[q];
      if (x === 0x2c || x === 0x7d || x === 0x5d) break;
      q++;
    }
    if (q === p) throw UNEXPECTED;
    return this.slice(u, SCALAR, p, q);
  }

  /** Unit u's repr is the text's bytes [start, end) (a scalar's literal, a chunk's escaped text); returns end. */
  protected slice(u: number, kind: number, start: number, end: number): number {
    this.kind[u] = kind;
    this.valStart[u] = start;
    this.valEnd[u] = end;
    return end;
  }

  /** The members (`{`) or elements (`[`) from p to the closing byte, each a unit, as u's children. */
  protected container(u: number, kind: number, p: number, end: number, close: number): number {
    const b = this.src;
    this.kind[u] = kind;
    const base = this.stackTop;
    if (b[p] !== close) {
      for (;;) {
        let child: number;
        if (kind === OBJECT) {
          const ke = this.stringEnd(p, end);
          child = this.newUnit(TAG.member, TEXT_NAME, p, ke);
          p = ke + 1;
        } else child = this.newUnit(TAG.element, NO_NAME, 0, 0);
        this.push(child);
        p = this.value(child, p, end);
        if (b[p] === 0x2c) p++;
        else if (b[p] === close) break;
        else throw UNEXPECTED;
      }
    }
    this.adopt(u, base);
    return p + 1;
  }

  protected isPartName(p: number, end: number): boolean {
    if (p + PART_NAME.length > end) return false;
    // A loop, not every(): no closure made for each object scanned.
    const b = this.src;
    for (let k = 0; k < PART_NAME.length; k++) if (b[p + k] !== PART_NAME[k]) return false;
    return true;
  }

  /**
   * The records' slot texts, encoded one after the other, and their unit table: record by record, slot by
   * slot, preorder within; each slot's top unit in `tops`. A record the scan does not expect is taken out of
   * the table again (its slots hold no unit) and marked for the walk.
   */
  protected scan(list: readonly Readonly<Partial<Record<V3Slot, string>>>[]): boolean[] {
    this.units = 0;
    this.childrenUsed = 0;
    this.stackTop = 0;
    const walk: boolean[] = [];
    if (SLOTS * list.length > this.tops.length) {
      this.tops = new Int32Array(SLOTS * list.length);
      this.slotUnits = new Int32Array(SLOTS * list.length);
    }
    let at = 0;
    for (let r = 0; r < list.length; r++) {
      const units = this.units;
      const used = this.childrenUsed;
      const recordAt = at;
      try {
        at = this.scanRecord(list[r]!, r, at);
        walk.push(false);
        continue;
      } catch (e) {
        if (e !== UNEXPECTED) throw e;
      }
      this.units = units;
      this.childrenUsed = used;
      this.stackTop = 0;
      at = recordAt;
      this.slotUnits.fill(0, SLOTS * r, SLOTS * r + SLOTS);
      walk.push(true);
    }
    return walk;
  }

  /** Scans record r's slot texts from `at` in src; returns where they end. Throws UNEXPECTED for the walk. */
  protected scanRecord(texts: Readonly<Partial<Record<V3Slot, string>>>, r: number, at: number): number {
    for (let j = 0; j < SLOTS; j++) {
      const g = SLOTS * r + j;
      this.curSlot = g;
      this.nextIndex = 0;
      const top = this.newUnit(TAG.member, SLOT_NAME, 0, 0);
      this.tops[g] = top;
      const text = texts[V3_SLOTS[j]!];
      if (text === undefined) {
        this.kind[top] = ABSENT;
      } else {
        if (at + 3 * text.length > this.src.length) {
          const grown = new Uint8Array(Math.max(2 * this.src.length, at + 3 * text.length));
          grown.set(this.src.subarray(0, at));
          this.src = grown;
          this.srcView = new DataView(grown.buffer);
        }
        const end = at + encoder.encodeInto(text, this.src.subarray(at)).written;
        if (this.value(top, at, end) !== end) throw UNEXPECTED;
        at = end;
      }
      this.slotUnits[g] = this.nextIndex;
    }
    return at;
  }
}
