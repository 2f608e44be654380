// Variants of the 4-lane multi-buffer SHA-256 (FIPS 180-4) in WebAssembly SIMD, for the stepchain/v3 design's
// measurements (docs/design/format-v3.md §12.3): four independent messages advance together, each lane of an
// i32x4 holding one message's word. The batch kernel measured by `wasmBatch` is the one src/canonical ships,
// assembled by scripts/gen-sha256-wasm.mjs (imported, not repeated here); this file adds two variants built
// from the same constants and round: `compress4` (one compression of four lanes per call, for the per-call
// cost) and `q` 4-lane groups interleaved round by round. Rounds are fully unrolled with the eight working
// variables renamed at emit time instead of moved, Ch and Maj as one v128.bitselect each.
import { IV, K, moduleBytes as hashGroupsModuleBytes, sleb, uleb as leb } from '../../scripts/gen-sha256-wasm.mjs';

const simd = (op) => [0xfd, ...leb(op)];
const OP = {
  load: 0x00,
  store: 0x0b,
  const: 0x0c,
  swizzle: 0x0e,
  not: 0x4d,
  and: 0x4e,
  or: 0x50,
  xor: 0x51,
  bitselect: 0x52,
  load32_lane: 0x56,
  store32_lane: 0x5a,
  shl: 0xab,
  shr_u: 0xad,
  add: 0xae,
};
const BSWAP = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

/**
 * What both variants emit into the code array `c`: local access, constants, and `round(t, group)`, SHA-256
 * round t of one 4-lane group — the schedule word (rounds 0–15 gather it lane by lane from `group.lane(l)`,
 * which pushes lane l's block address, and byte-swap it by one swizzle), then the compression step. The
 * group names its 16 schedule locals from `w0`, its working variables `v` (a–h) and two scratch locals
 * `t1`, `t2`; the call returns the working variables renamed for the next round.
 */
function emitter(c) {
  const get = (l) => c.push(0x20, ...leb(l));
  const set = (l) => c.push(0x21, ...leb(l));
  const op = (o) => c.push(...simd(o));
  const i32 = (n) => c.push(0x41, ...sleb(n));
  const splat = (k) => {
    c.push(...simd(OP.const));
    for (let i = 0; i < 4; i++) c.push(k & 0xff, (k >>> 8) & 0xff, (k >>> 16) & 0xff, (k >>> 24) & 0xff);
  };
  const rotr = (l, n) => {
    get(l);
    i32(n);
    op(OP.shr_u);
    get(l);
    i32(32 - n);
    op(OP.shl);
    op(OP.or);
  };
  const bigSigma = (l, r1, r2, r3) => {
    rotr(l, r1);
    rotr(l, r2);
    op(OP.xor);
    rotr(l, r3);
    op(OP.xor);
  };
  const smallSigma = (l, r1, r2, s) => {
    rotr(l, r1);
    rotr(l, r2);
    op(OP.xor);
    get(l);
    i32(s);
    op(OP.shr_u);
    op(OP.xor);
  };
  const round = (t, { lane, w0, v, t1, t2 }) => {
    const w = w0 + (t % 16);
    if (t < 16) {
      c.push(...simd(OP.const), ...new Array(16).fill(0));
      set(w);
      for (let l = 0; l < 4; l++) {
        lane(l);
        get(w);
        c.push(...simd(OP.load32_lane), 2, ...leb(4 * t), l);
        set(w);
      }
      get(w);
      c.push(...simd(OP.const), ...BSWAP);
      c.push(...simd(OP.swizzle));
      set(w);
    } else {
      smallSigma(w0 + ((t - 2) % 16), 17, 19, 10);
      get(w0 + ((t - 7) % 16));
      op(OP.add);
      smallSigma(w0 + ((t - 15) % 16), 7, 18, 3);
      op(OP.add);
      get(w);
      op(OP.add);
      set(w);
    }
    const [a, b, cc, d, e, f, g, h] = v;
    get(h);
    bigSigma(e, 6, 11, 25);
    op(OP.add);
    get(f);
    get(g);
    get(e);
    op(OP.bitselect);
    op(OP.add); // Ch = bitselect(f, g, e)
    splat(K[t]);
    op(OP.add);
    get(w);
    op(OP.add);
    set(t1);
    bigSigma(a, 2, 13, 22);
    get(cc);
    get(a);
    get(a);
    get(b);
    op(OP.xor);
    op(OP.bitselect); // Maj = bitselect(c, a, a ^ b)
    op(OP.add);
    set(t2);
    get(d);
    get(t1);
    op(OP.add);
    set(d);
    get(t1);
    get(t2);
    op(OP.add);
    set(h);
    return [h, a, b, cc, d, e, f, g];
  };
  return { get, set, op, i32, splat, round };
}

// `compress4(p0, p1, p2, p3)`: one compression of each lane's 64-byte block at p0–p3, the state in memory
// (8 × v128 at 0: word k of lanes 0–3 at 16k), updated in place.
function body() {
  const c = [];
  const { get, set, op, i32, round } = emitter(c);
  const load = (offset) => {
    i32(0);
    c.push(...simd(OP.load), 4, ...leb(offset));
  };
  const store = (offset, pushValue) => {
    i32(0);
    pushValue();
    c.push(...simd(OP.store), 4, ...leb(offset));
  };
  // Params (i32): 0–3 the address of each lane's current 64-byte block. Locals (v128): 4–11 the working
  // variables, 12–27 the schedule window, 28 T1, 29 T2.
  let v = [4, 5, 6, 7, 8, 9, 10, 11];
  for (let k = 0; k < 8; k++) {
    load(16 * k);
    set(v[k]);
  }
  for (let t = 0; t < 64; t++) v = round(t, { lane: get, w0: 12, v, t1: 28, t2: 29 });
  for (let k = 0; k < 8; k++)
    store(16 * k, () => {
      load(16 * k);
      get(v[k]);
      op(OP.add);
    });
  c.push(0x0b);
  const locals = [0x01, ...leb(26), 0x7b]; // 26 v128 locals after the 4 params
  const fn = [...locals, ...c];
  return [...leb(fn.length), ...fn];
}

function moduleBytes() {
  const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
  const str = (s) => [...leb(s.length), ...[...s].map((ch) => ch.charCodeAt(0))];
  const type = section(1, [1, 0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 0]); // (func (param i32 i32 i32 i32))
  const func = section(3, [1, 0]);
  const mem = section(5, [1, 0x00, 1]); // 1 page
  const exp = section(7, [2, ...str('compress4'), 0, 0, ...str('memory'), 2, 0]);
  const code = section(10, [1, ...body()]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...func, ...mem, ...exp, ...code]);
}

let instance = null;
export function sha256x4Available() {
  try {
    instance ??= new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
    return true;
  } catch {
    return false;
  }
}

/**
 * SHA-256 of each message in `msgs` (Uint8Arrays) into out[32i, 32i+32). The padded messages are laid out
 * once in the module's memory; four lanes each take the next message when their current one ends, and a
 * call compresses one block of each lane in place (an idle lane hashes a dummy block).
 */
export function sha256Many(msgs, out) {
  instance ??= new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
  const { compress4, memory } = instance.exports;
  const BASE = 4096,
    DUMMY = 2048;
  let total = 0;
  for (const m of msgs) total += (((m.length + 8) >>> 6) + 1) << 6;
  const need = BASE + total;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  const bytes = new Uint8Array(memory.buffer),
    mem32 = new Uint32Array(memory.buffer, 0, 32);
  const start = new Int32Array(msgs.length),
    nblocks = new Int32Array(msgs.length);
  let at = BASE;
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i],
      n = m.length,
      size = (((n + 8) >>> 6) + 1) << 6;
    bytes.set(m, at);
    bytes.fill(0, at + n, at + size);
    bytes[at + n] = 0x80;
    const bits = n * 8;
    bytes[at + size - 5] = Math.floor(bits / 2 ** 32) & 0xff;
    bytes[at + size - 4] = bits >>> 24;
    bytes[at + size - 3] = (bits >>> 16) & 0xff;
    bytes[at + size - 2] = (bits >>> 8) & 0xff;
    bytes[at + size - 1] = bits & 0xff;
    start[i] = at;
    nblocks[i] = size >>> 6;
    at += size;
  }
  const lane = [-1, -1, -1, -1],
    ptr = [DUMMY, DUMMY, DUMMY, DUMMY],
    left = [0, 0, 0, 0];
  let next = 0,
    busy = 0;
  const take = (l) => {
    if (next >= msgs.length) {
      lane[l] = -1;
      ptr[l] = DUMMY;
      return;
    }
    lane[l] = next;
    ptr[l] = start[next];
    left[l] = nblocks[next];
    next++;
    busy++;
    for (let k = 0; k < 8; k++) mem32[4 * k + l] = IV[k];
  };
  for (let l = 0; l < 4; l++) take(l);
  while (busy > 0) {
    compress4(ptr[0], ptr[1], ptr[2], ptr[3]);
    for (let l = 0; l < 4; l++) {
      if (lane[l] < 0) continue;
      ptr[l] += 64;
      if (--left[l] === 0) {
        const o = 32 * lane[l];
        for (let k = 0; k < 8; k++) {
          const v = mem32[4 * k + l];
          out[o + 4 * k] = v >>> 24;
          out[o + 4 * k + 1] = (v >>> 16) & 0xff;
          out[o + 4 * k + 2] = (v >>> 8) & 0xff;
          out[o + 4 * k + 3] = v & 0xff;
        }
        busy--;
        take(l);
      }
    }
  }
}

/** The module's compression alone: CPU µs per call of compress4 (four lane-compressions), for the design's table. */
export function compress4Cost(calls = 200000) {
  instance ??= new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
  const { compress4 } = instance.exports;
  for (let i = 0; i < 10000; i++) compress4(2048, 2048, 2048, 2048);
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) compress4(2048, 2048, 2048, 2048);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / calls;
}

// ---------------------------------------------------------------------------------------------------
// The whole batch inside the module: src/canonical's kernel `hashGroups(table, n)` walks n table entries of
// four messages of equal block count (48 bytes each: lane addresses p0–p3, the block count, the four lanes'
// output addresses), keeps the four states in registers across a message's blocks, and stores each digest
// big-endian at its lane's output address. One call per batch: no JavaScript between compressions.
let groups = null;
/** CPU µs of the last run's single hashGroups call (the module's own time, no JavaScript around it). */
export let lastCallMicros = 0;
/**
 * A prepared batch: call `add(bytes)` for each message (written padded straight into the module's memory,
 * as an implementation would write unit preimages), then `run(out)` hashes them all in one call and copies
 * each digest to out[32i]. Messages are grouped four at a time by block count.
 */
export function wasmBatch(capacityBytes) {
  groups ??= new WebAssembly.Instance(new WebAssembly.Module(hashGroupsModuleBytes()));
  const { hashGroups, memory } = groups.exports;
  const need = 65536 + 2 * capacityBytes;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  const bytes = new Uint8Array(memory.buffer);
  const i32 = new Int32Array(memory.buffer);
  const MSG = 65536;
  let at = MSG,
    count = 0;
  const starts = [],
    blocks = [];
  return {
    reset() {
      at = MSG;
      count = 0;
      starts.length = 0;
      blocks.length = 0;
    },
    add(m) {
      const n = m.length,
        size = (((n + 8) >>> 6) + 1) << 6;
      bytes.set(m, at);
      bytes.fill(0, at + n, at + size);
      bytes[at + n] = 0x80;
      const bits = n * 8;
      bytes[at + size - 4] = bits >>> 24;
      bytes[at + size - 3] = (bits >>> 16) & 0xff;
      bytes[at + size - 2] = (bits >>> 8) & 0xff;
      bytes[at + size - 1] = bits & 0xff;
      starts.push(at);
      blocks.push(size >>> 6);
      at += size;
      count++;
    },
    run(out) {
      // Group by block count (a counting pass, no sort); the table and the digests live after the messages,
      // the digests after the most entries the table can hold (a quarter of the messages, plus one partly
      // filled entry per block count). Entry g's lane l writes its digest at outAt + 128g + 32l.
      let maxB = 0;
      for (let i = 0; i < count; i++) if (blocks[i] > maxB) maxB = blocks[i];
      const table = (at + 31) & ~31,
        outAt = table + 48 * ((count >> 2) + maxB),
        lanesOf = new Int32Array(4 * (count + 4 * maxB)).fill(-1);
      let g = 0;
      const close = (t, nb) => {
        i32[t + 4] = nb;
        for (let k = 0; k < 4; k++) i32[t + 5 + k] = outAt + 128 * g + 32 * k;
        g++;
      };
      for (let nb = 1; nb <= maxB; nb++) {
        let l = 0,
          t = (table >> 2) + 12 * g;
        for (let i = 0; i < count; i++) {
          if (blocks[i] !== nb) continue;
          i32[t + l] = starts[i];
          lanesOf[4 * g + l] = i;
          if (++l === 4) {
            close(t, nb);
            l = 0;
            t = (table >> 2) + 12 * g;
          }
        }
        if (l > 0) {
          for (let k = l; k < 4; k++) i32[t + k] = i32[t];
          close(t, nb);
        }
      }
      const c0 = process.cpuUsage();
      hashGroups(table, g);
      const c1 = process.cpuUsage(c0);
      lastCallMicros = c1.user + c1.system;
      for (let k = 0; k < 4 * g; k++) {
        const i = lanesOf[k];
        if (i < 0) continue;
        const src = outAt + 32 * k,
          dst = 32 * i;
        for (let j = 0; j < 32; j++) out[dst + j] = bytes[src + j];
      }
      return g;
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The same kernel with `q` independent 4-lane groups interleaved round by round (q = 2: eight messages per
// step), so the CPU can overlap the groups' dependency chains. Table entries are 64 bytes: 4q lane
// addresses, then the shared block count at byte 48; digests at out + 32·(4q·g + lane).
function groupsBodyInterleaved(q) {
  const c = [];
  const { get, set, op, i32, splat, round } = emitter(c);
  const TABLE = 0,
    N = 1,
    OUT = 2,
    G = 3,
    NB = 4,
    P = 5; // i32 params/locals; P..P+4q−1 addresses
  const nI32 = 2 + 4 * q; // g, nb, addresses
  const V0 = 3 + nI32; // first v128 local
  const per = 8 + 8 + 16 + 2; // state, working, schedule, T1 T2
  const S = (x) => V0 + per * x,
    VW = (x) => V0 + per * x + 8,
    W0 = (x) => V0 + per * x + 16,
    T1 = (x) => V0 + per * x + 32,
    T2 = (x) => V0 + per * x + 33;
  c.push(0x02, 0x40, 0x03, 0x40);
  get(G);
  get(N);
  c.push(0x4f, 0x0d, 1);
  for (let l = 0; l < 4 * q; l++) {
    get(TABLE);
    c.push(0x28, 2, ...leb(4 * l));
    set(P + l);
  }
  get(TABLE);
  c.push(0x28, 2, 48);
  set(NB);
  for (let x = 0; x < q; x++)
    for (let k = 0; k < 8; k++) {
      splat(IV[k]);
      set(S(x) + k);
    }
  c.push(0x03, 0x40);
  const v = [];
  for (let x = 0; x < q; x++) {
    v.push([0, 1, 2, 3, 4, 5, 6, 7].map((k) => VW(x) + k));
    for (let k = 0; k < 8; k++) {
      get(S(x) + k);
      set(v[x][k]);
    }
  }
  for (let t = 0; t < 64; t++)
    for (let x = 0; x < q; x++)
      v[x] = round(t, { lane: (l) => get(P + 4 * x + l), w0: W0(x), v: v[x], t1: T1(x), t2: T2(x) });
  for (let x = 0; x < q; x++)
    for (let k = 0; k < 8; k++) {
      get(S(x) + k);
      get(v[x][k]);
      op(OP.add);
      set(S(x) + k);
    }
  for (let l = 0; l < 4 * q; l++) {
    get(P + l);
    i32(64);
    c.push(0x6a);
    set(P + l);
  }
  get(NB);
  i32(1);
  c.push(0x6b);
  c.push(0x22, ...leb(NB));
  c.push(0x0d, 0);
  c.push(0x0b);
  for (let x = 0; x < q; x++)
    for (let k = 0; k < 8; k++) {
      get(S(x) + k);
      c.push(...simd(OP.const), ...BSWAP);
      c.push(...simd(0x0e));
      set(T1(x));
      for (let l = 0; l < 4; l++) {
        get(OUT);
        get(T1(x));
        c.push(...simd(0x5a), 2, ...leb(32 * (4 * x + l) + 4 * k), l);
      }
    }
  get(TABLE);
  i32(64);
  c.push(0x6a);
  set(TABLE);
  get(OUT);
  i32(128 * q);
  c.push(0x6a);
  set(OUT);
  get(G);
  i32(1);
  c.push(0x6a);
  set(G);
  c.push(0x0c, 0, 0x0b, 0x0b, 0x0b);
  const fn = [2, ...leb(nI32), 0x7f, ...leb(per * q), 0x7b, ...c];
  return [...leb(fn.length), ...fn];
}

function interleavedModuleBytes(q) {
  const section = (id, bytes) => [id, ...leb(bytes.length), ...bytes];
  const str = (s) => [...leb(s.length), ...[...s].map((ch) => ch.charCodeAt(0))];
  const type = section(1, [1, 0x60, 3, 0x7f, 0x7f, 0x7f, 0]);
  const func = section(3, [1, 0]);
  const mem = section(5, [1, 0x00, 1]);
  const exp = section(7, [2, ...str('hashGroups'), 0, 0, ...str('memory'), 2, 0]);
  const code = section(10, [1, ...groupsBodyInterleaved(q)]);
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...func, ...mem, ...exp, ...code]);
}

/**
 * CPU µs per lane-compression of a kernel with q interleaved 4-lane groups, over `count` one-block
 * messages laid out in memory (the module call alone); digests checked against `check` when given.
 */
const interleaved = new Map();
export function interleavedCost(q, count = 8192, rounds = 20, check = null) {
  // One instance per q, reused: a fresh module runs in V8's baseline tier until its optimized code is ready.
  let inst = interleaved.get(q);
  if (!inst) interleaved.set(q, (inst = new WebAssembly.Instance(new WebAssembly.Module(interleavedModuleBytes(q)))));
  const { hashGroups, memory } = inst.exports;
  const lanes = 4 * q,
    groupsN = Math.ceil(count / lanes);
  const MSG = 65536,
    need = MSG + 64 * count + 64 * groupsN + 32 * lanes * groupsN + 65536;
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / 65536));
  const bytes = new Uint8Array(memory.buffer),
    i32v = new Int32Array(memory.buffer);
  for (let i = 0; i < count; i++) {
    const at = MSG + 64 * i;
    const m = check ? check.msgs[i] : null;
    for (let k = 0; k < 50; k++) bytes[at + k] = m ? m[k] : (i * 31 + k) & 0xff;
    bytes.fill(0, at + 50, at + 64);
    bytes[at + 50] = 0x80;
    bytes[at + 62] = 0x01;
    bytes[at + 63] = 0x90; // 400 bits
  }
  const table = MSG + 64 * count;
  for (let g = 0; g < groupsN; g++) {
    for (let l = 0; l < lanes; l++) i32v[(table >> 2) + 16 * g + l] = MSG + 64 * Math.min(count - 1, g * lanes + l);
    i32v[(table >> 2) + 16 * g + 12] = 1;
  }
  const out = table + 64 * groupsN;
  hashGroups(table, groupsN, out);
  if (check)
    for (let i = 0; i < count; i++) {
      const got = Buffer.from(bytes.subarray(out + 32 * i, out + 32 * i + 32)).toString('hex');
      if (got !== check.hex[i]) throw new Error(`interleaved kernel q=${q}: wrong digest at ${i}`);
    }
  for (let r = 0; r < 3; r++) hashGroups(table, groupsN, out);
  const c0 = process.cpuUsage();
  for (let r = 0; r < rounds; r++) hashGroups(table, groupsN, out);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / rounds / (groupsN * lanes);
}
