// Prototype of the stepchain/v3 record commitments proposed in docs/design/format-v3.md, measured.
// Not the implementation: a self-contained model (node:crypto, @noble/hashes, the bench's steps) that
// produces the numbers the design argues with:
//   1. committed units of the bench's ~1.2 KB step (bench/lib/steps.mjs): count, bytes, SHA-256 compressions;
//   2. the cost of one record's hashing, CPU µs: v1 (one hash of the line), v2 (twelve one-shot hashes),
//      v3 fast tier (body binding + step hash: two one-shot hashes), v3 deep tier (salts + every unit +
//      root) with four SHA-256 back ends — node:crypto one-shot per unit, @noble/hashes per unit, a
//      batched JavaScript kernel (preallocated state, no allocation per message), and a 4-lane WebAssembly
//      SIMD kernel (bench/lib/sha256x4-wasm.mjs, 256 records per call, SHA-256 counter-mode salts as the
//      design specifies) — and salt derivation alternatives (ChaCha20 in JavaScript, node:crypto's chacha20);
//   3. the storage of the 40-turn × 100 KB conversation of issue 33, today (whole-field blobs) and under
//      the design (parts stored once, message lists stored as base + tail);
//   4. what a withheld secret costs a reader in lost context, and how a publication grows.
// Run: node bench/v3-prototype.mjs [--quick] [--json]. The machine is shared: figures are CPU time
// (process.cpuUsage), medians of rounds, and the load average is printed with them. The JavaScript deep
// tiers derive salts with ChaCha20 (an alternative the design measured and rejected); chunk bodies here are
// raw UTF-8, equal to the design's escaped text for the bench's ASCII strings.
import { hash as nodeHash, randomBytes, createCipheriv } from 'node:crypto';
import { loadavg, cpus } from 'node:os';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { makeStep } from './lib/steps.mjs';
import * as wasm from './lib/sha256x4-wasm.mjs';
import { IV, K as SHA256_K } from '../scripts/gen-sha256-wasm.mjs';

const QUICK = process.argv.includes('--quick');
const JSON_OUT = process.argv.includes('--json');
const enc = new TextEncoder();

// ---------------------------------------------------------------------------------------------------
// JCS (RFC 8785) for the plain values the bench generates: keys in UTF-16 order, ECMAScript numbers,
// JSON.stringify strings (identical to JCS for well-formed strings).
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return (
    '{' +
    Object.keys(v)
      .sort()
      .map((k) => JSON.stringify(k) + ':' + jcs(v[k]))
      .join(',') +
    '}'
  );
}

// ---------------------------------------------------------------------------------------------------
// A batched SHA-256 (FIPS 180-4) for many short messages: one preallocated state, message schedule and
// padding block, so hashing a 50-byte unit costs its one compression and nothing else — what a WASM
// kernel would do without crossing into WASM per message.
const K = Int32Array.from(SHA256_K);
const W = new Int32Array(64);
const Hs = new Int32Array(8);
const pad = new Uint8Array(128);
let compressions = 0;
function compress(src, p) {
  compressions++;
  for (let t = 0; t < 16; t++, p += 4) W[t] = (src[p] << 24) | (src[p + 1] << 16) | (src[p + 2] << 8) | src[p + 3];
  for (let t = 16; t < 64; t++) {
    const a = W[t - 15],
      b = W[t - 2];
    W[t] =
      (W[t - 16] +
        (((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3)) +
        W[t - 7] +
        (((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10))) |
      0;
  }
  let a = Hs[0],
    b = Hs[1],
    c = Hs[2],
    d = Hs[3],
    e = Hs[4],
    f = Hs[5],
    g = Hs[6],
    h = Hs[7];
  for (let t = 0; t < 64; t++) {
    const t1 =
      (h +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) +
        K[t] +
        W[t]) |
      0;
    const t2 =
      ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) |
      0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  Hs[0] = (Hs[0] + a) | 0;
  Hs[1] = (Hs[1] + b) | 0;
  Hs[2] = (Hs[2] + c) | 0;
  Hs[3] = (Hs[3] + d) | 0;
  Hs[4] = (Hs[4] + e) | 0;
  Hs[5] = (Hs[5] + f) | 0;
  Hs[6] = (Hs[6] + g) | 0;
  Hs[7] = (Hs[7] + h) | 0;
}
/** SHA-256 of buf[0, n) into out[o, o+32). */
function kernelHash(buf, n, out, o) {
  for (let k = 0; k < 8; k++) Hs[k] = IV[k];
  let p = 0;
  while (n - p >= 64) {
    compress(buf, p);
    p += 64;
  }
  const rest = n - p;
  pad.fill(0);
  for (let k = 0; k < rest; k++) pad[k] = buf[p + k];
  pad[rest] = 0x80;
  const two = rest >= 56,
    lp = two ? 120 : 56,
    bits = n * 8;
  pad[lp + 3] = Math.floor(bits / 2 ** 32) & 0xff;
  pad[lp + 2] = Math.floor(bits / 2 ** 40) & 0xff;
  pad[lp + 4] = bits >>> 24;
  pad[lp + 5] = (bits >>> 16) & 0xff;
  pad[lp + 6] = (bits >>> 8) & 0xff;
  pad[lp + 7] = bits & 0xff;
  compress(pad, 0);
  if (two) compress(pad, 64);
  for (let k = 0; k < 8; k++) {
    const v = Hs[k];
    out[o + 4 * k] = v >>> 24;
    out[o + 4 * k + 1] = (v >>> 16) & 0xff;
    out[o + 4 * k + 2] = (v >>> 8) & 0xff;
    out[o + 4 * k + 3] = v & 0xff;
  }
}

// ---------------------------------------------------------------------------------------------------
// ChaCha20 block function (RFC 8439 §2.3) in JavaScript: the salt PRF of the design. One block = 64 bytes
// = four 128-bit salts. Cross-checked against node:crypto's chacha20 below.
function rd(b, i) {
  return b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24);
}
function wr(out, i, v) {
  out[i] = v & 0xff;
  out[i + 1] = (v >>> 8) & 0xff;
  out[i + 2] = (v >>> 16) & 0xff;
  out[i + 3] = (v >>> 24) & 0xff;
}
function chachaBlock(k, counter, n, out, o) {
  const j0 = 0x61707865,
    j1 = 0x3320646e,
    j2 = 0x79622d32,
    j3 = 0x6b206574;
  const j4 = rd(k, 0),
    j5 = rd(k, 4),
    j6 = rd(k, 8),
    j7 = rd(k, 12),
    j8 = rd(k, 16),
    j9 = rd(k, 20),
    j10 = rd(k, 24),
    j11 = rd(k, 28);
  const j12 = counter | 0,
    j13 = rd(n, 0),
    j14 = rd(n, 4),
    j15 = rd(n, 8);
  let x0 = j0,
    x1 = j1,
    x2 = j2,
    x3 = j3,
    x4 = j4,
    x5 = j5,
    x6 = j6,
    x7 = j7,
    x8 = j8,
    x9 = j9,
    x10 = j10,
    x11 = j11,
    x12 = j12,
    x13 = j13,
    x14 = j14,
    x15 = j15;
  for (let r = 0; r < 10; r++) {
    x0 = (x0 + x4) | 0;
    x12 ^= x0;
    x12 = (x12 << 16) | (x12 >>> 16);
    x8 = (x8 + x12) | 0;
    x4 ^= x8;
    x4 = (x4 << 12) | (x4 >>> 20);
    x0 = (x0 + x4) | 0;
    x12 ^= x0;
    x12 = (x12 << 8) | (x12 >>> 24);
    x8 = (x8 + x12) | 0;
    x4 ^= x8;
    x4 = (x4 << 7) | (x4 >>> 25);
    x1 = (x1 + x5) | 0;
    x13 ^= x1;
    x13 = (x13 << 16) | (x13 >>> 16);
    x9 = (x9 + x13) | 0;
    x5 ^= x9;
    x5 = (x5 << 12) | (x5 >>> 20);
    x1 = (x1 + x5) | 0;
    x13 ^= x1;
    x13 = (x13 << 8) | (x13 >>> 24);
    x9 = (x9 + x13) | 0;
    x5 ^= x9;
    x5 = (x5 << 7) | (x5 >>> 25);
    x2 = (x2 + x6) | 0;
    x14 ^= x2;
    x14 = (x14 << 16) | (x14 >>> 16);
    x10 = (x10 + x14) | 0;
    x6 ^= x10;
    x6 = (x6 << 12) | (x6 >>> 20);
    x2 = (x2 + x6) | 0;
    x14 ^= x2;
    x14 = (x14 << 8) | (x14 >>> 24);
    x10 = (x10 + x14) | 0;
    x6 ^= x10;
    x6 = (x6 << 7) | (x6 >>> 25);
    x3 = (x3 + x7) | 0;
    x15 ^= x3;
    x15 = (x15 << 16) | (x15 >>> 16);
    x11 = (x11 + x15) | 0;
    x7 ^= x11;
    x7 = (x7 << 12) | (x7 >>> 20);
    x3 = (x3 + x7) | 0;
    x15 ^= x3;
    x15 = (x15 << 8) | (x15 >>> 24);
    x11 = (x11 + x15) | 0;
    x7 ^= x11;
    x7 = (x7 << 7) | (x7 >>> 25);
    x0 = (x0 + x5) | 0;
    x15 ^= x0;
    x15 = (x15 << 16) | (x15 >>> 16);
    x10 = (x10 + x15) | 0;
    x5 ^= x10;
    x5 = (x5 << 12) | (x5 >>> 20);
    x0 = (x0 + x5) | 0;
    x15 ^= x0;
    x15 = (x15 << 8) | (x15 >>> 24);
    x10 = (x10 + x15) | 0;
    x5 ^= x10;
    x5 = (x5 << 7) | (x5 >>> 25);
    x1 = (x1 + x6) | 0;
    x12 ^= x1;
    x12 = (x12 << 16) | (x12 >>> 16);
    x11 = (x11 + x12) | 0;
    x6 ^= x11;
    x6 = (x6 << 12) | (x6 >>> 20);
    x1 = (x1 + x6) | 0;
    x12 ^= x1;
    x12 = (x12 << 8) | (x12 >>> 24);
    x11 = (x11 + x12) | 0;
    x6 ^= x11;
    x6 = (x6 << 7) | (x6 >>> 25);
    x2 = (x2 + x7) | 0;
    x13 ^= x2;
    x13 = (x13 << 16) | (x13 >>> 16);
    x8 = (x8 + x13) | 0;
    x7 ^= x8;
    x7 = (x7 << 12) | (x7 >>> 20);
    x2 = (x2 + x7) | 0;
    x13 ^= x2;
    x13 = (x13 << 8) | (x13 >>> 24);
    x8 = (x8 + x13) | 0;
    x7 ^= x8;
    x7 = (x7 << 7) | (x7 >>> 25);
    x3 = (x3 + x4) | 0;
    x14 ^= x3;
    x14 = (x14 << 16) | (x14 >>> 16);
    x9 = (x9 + x14) | 0;
    x4 ^= x9;
    x4 = (x4 << 12) | (x4 >>> 20);
    x3 = (x3 + x4) | 0;
    x14 ^= x3;
    x14 = (x14 << 8) | (x14 >>> 24);
    x9 = (x9 + x14) | 0;
    x4 ^= x9;
    x4 = (x4 << 7) | (x4 >>> 25);
  }
  wr(out, o, x0 + j0);
  wr(out, o + 4, x1 + j1);
  wr(out, o + 8, x2 + j2);
  wr(out, o + 12, x3 + j3);
  wr(out, o + 16, x4 + j4);
  wr(out, o + 20, x5 + j5);
  wr(out, o + 24, x6 + j6);
  wr(out, o + 28, x7 + j7);
  wr(out, o + 32, x8 + j8);
  wr(out, o + 36, x9 + j9);
  wr(out, o + 40, x10 + j10);
  wr(out, o + 44, x11 + j11);
  wr(out, o + 48, x12 + j12);
  wr(out, o + 52, x13 + j13);
  wr(out, o + 56, x14 + j14);
  wr(out, o + 60, x15 + j15);
}
const NONCE_SLOT = enc.encode('v3 slot keys'); // 12 bytes
const NONCE_SALT = enc.encode('v3 unit salt'); // 12 bytes

// ---------------------------------------------------------------------------------------------------
// The v3 commitment tree (docs/design/format-v3.md §4). Tags: 'm' member, 'e' element, 'c' chunk,
// 'r' record root; value-repr: JCS for a scalar, '{' + sorted member digests, '[' + element digests,
// '~' + chunk digests for a string longer than CHUNK_MIN bytes.
const SLOTS = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'];
const TAG = { m: 0x6d, e: 0x65, c: 0x63, r: 0x72, b: 0x62 };
let CHUNK_MIN = 64; // strings of more UTF-8 bytes than this are chunked (varied below)
const CHUNK_MAX = 64; // a chunk holds at most this many bytes (256 above 4 KiB)
const CHUNK_LONG = 4096;

/** Chunk boundaries of a string's UTF-8 bytes: at most `max` bytes, ending after the last space in the
 * second half of the window when there is one (words stay whole), never inside a code point. */
export function chunkBounds(bytes) {
  const max = bytes.length > CHUNK_LONG ? 256 : CHUNK_MAX;
  const out = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + max, bytes.length);
    if (end < bytes.length) {
      let cut = -1;
      for (let k = end; k > start + (max >> 1); k--)
        if (bytes[k - 1] === 0x20) {
          cut = k;
          break;
        }
      if (cut > 0) end = cut;
      else while (end > start && (bytes[end] & 0xc0) === 0x80) end--;
    }
    out.push([start, end]);
    start = end;
  }
  return out;
}

/** Hashing back ends: each hashes msg[0, n) to 32 bytes at out[o]. */
const backends = {
  node: (msg, n, out, o) => {
    const d = nodeHash('sha256', msg.subarray(0, n), 'buffer');
    out.set(d, o);
  },
  noble: (msg, n, out, o) => {
    out.set(nobleSha256(msg.subarray(0, n)), o);
  },
  kernel: kernelHash,
};

/**
 * Commit a record's slots: returns the root digest and the unit count. `salts(slotIndex, unitIndex)` gives
 * a unit's 16-byte salt (a view). Units are numbered in preorder within their slot (the slot member is 0).
 */
function commitRecord(slots, saltOf, h, stats) {
  const scratch = new Uint8Array(1 << 16);
  let slotIndex = 0,
    unitIndex = 0;
  const digestOut = new Uint8Array(32);
  // Hash tag ‖ salt ‖ body parts into a fresh 32-byte digest.
  function unit(tag, parts) {
    const salt = saltOf(slotIndex, unitIndex++);
    let n = 0;
    scratch[n++] = tag;
    scratch.set(salt, n);
    n += 16;
    for (const p of parts) {
      scratch.set(p, n);
      n += p.length;
    }
    const d = new Uint8Array(32);
    h(scratch, n, d, 0);
    if (stats) {
      stats.units++;
      stats.bytes += n;
      stats.compressions += Math.floor((n + 8) / 64) + 1;
    }
    return d;
  }
  function valueRepr(v) {
    if (v === null || typeof v !== 'object') {
      if (typeof v === 'string') {
        const b = enc.encode(v);
        if (b.length > CHUNK_MIN) {
          const ds = chunkBounds(b).map(([s, e]) => unit(TAG.c, [b.subarray(s, e)]));
          return [Uint8Array.of(0x7e), ...ds];
        }
      }
      return [enc.encode(jcs(v))];
    }
    if (Array.isArray(v)) {
      const ds = v.map((x) => {
        const here = unitIndex++;
        return elementAt(x, here);
      });
      return [Uint8Array.of(0x5b), ...ds];
    }
    const ds = Object.keys(v)
      .sort()
      .map((k) => {
        const here = unitIndex++;
        return memberAt(k, v[k], here);
      });
    ds.sort(cmpBytes);
    return [Uint8Array.of(0x7b), ...ds];
  }
  // A unit's salt index is taken before its children's (preorder); its hash is taken after them.
  function memberAt(name, v, idx) {
    const repr = valueRepr(v);
    return unitWithIndex(TAG.m, [enc.encode(JSON.stringify(name)), ...repr], idx);
  }
  function elementAt(v, idx) {
    const repr = valueRepr(v);
    return unitWithIndex(TAG.e, repr, idx);
  }
  function unitWithIndex(tag, parts, idx) {
    const saved = unitIndex;
    unitIndex = idx;
    const d = unit(tag, parts);
    unitIndex = saved;
    if (stats) stats.units += 0;
    return d;
  }
  const slotDigests = [];
  for (let s = 0; s < SLOTS.length; s++) {
    slotIndex = s;
    unitIndex = 1;
    const name = SLOTS[s];
    const parts = [enc.encode(JSON.stringify(name))];
    if (Object.prototype.hasOwnProperty.call(slots, name)) parts.push(...valueRepr(slots[name]));
    unitIndex = 0;
    slotDigests.push(unit(TAG.m, parts));
  }
  // The root: tag ‖ the slot digests in slot order (no salt: every input is a salted digest).
  let n = 0;
  scratch[n++] = TAG.r;
  for (const d of slotDigests) {
    scratch.set(d, n);
    n += 32;
  }
  h(scratch, n, digestOut, 0);
  if (stats) stats.compressions += Math.floor((n + 8) / 64) + 1;
  return digestOut;
}
function cmpBytes(a, b) {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** Salt derivations: slot key j = ChaCha20(seed, counter j, "v3 slot keys")[0,32); salt i of slot j =
 * ChaCha20(slot key j, counter ⌊i/4⌋, "v3 unit salt")[16(i mod 4), +16). */
function chachaSalts(seed32) {
  const slotKeys = new Uint8Array(64 * SLOTS.length);
  for (let j = 0; j < SLOTS.length; j++) chachaBlock(seed32, j, NONCE_SLOT, slotKeys, 64 * j);
  const blocks = SLOTS.map(() => []);
  return (slot, i) => {
    const c = i >>> 2,
      mine = blocks[slot];
    let block = mine[c];
    if (block === undefined) {
      block = mine[c] = new Uint8Array(64);
      chachaBlock(slotKeys.subarray(64 * slot, 64 * slot + 32), c, NONCE_SALT, block, 0);
    }
    return block.subarray(16 * (i & 3), 16 * (i & 3) + 16);
  };
}
/** For comparison: salts by SHA-256 counter mode (two salts per compression), one-shot node:crypto. */
function shaSalts(seed32) {
  const cache = new Map();
  return (slot, i) => {
    const key = slot * 4096 + (i >>> 1);
    let block = cache.get(key);
    if (!block) {
      block = nodeHash('sha256', Buffer.concat([seed32, Buffer.from([slot, i >>> 9, (i >>> 1) & 0xff])]), 'buffer');
      cache.set(key, block);
    }
    return block.subarray(16 * (i & 1), 16 * (i & 1) + 16);
  };
}

// ---------------------------------------------------------------------------------------------------
// Measurement helpers.
function cpuPer(fn, count) {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / count;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x, d = 2) => Number(x.toFixed(d));

const STEPS = QUICK ? 500 : 2000;
const ROUNDS = QUICK ? 3 : 7;
const steps = Array.from({ length: STEPS }, (_, i) => makeStep(i, { seed: 33 }));
const slotValues = steps.map((s) => ({
  error: null,
  input: s.input,
  meta: s.meta,
  model: s.model,
  prompt: s.prompt,
  result: s.result,
  tool_call: s.tool_call,
}));
const seeds = steps.map(() => randomBytes(32));
const ENVELOPE = (i) => ({
  kind: 'step',
  prev_hash: 'sha256:' + '0'.repeat(64),
  ref: null,
  seq: i,
  step_id: `s-${i}`,
  ts: '2026-11-27T10:00:00.000Z',
  v: 3,
});
const v1Lines = steps.map((s, i) =>
  enc.encode(
    jcs({
      ...s,
      prev_hash: 'sha256:' + '0'.repeat(64),
      seq: i,
      step_id: `s-${i}`,
      ts: '2026-11-27T10:00:00.000Z',
      v: 1,
    }),
  ),
);
const contentTexts = slotValues.map((v) => enc.encode(jcs(v)));
/** The step hash's preimage (design §4.5): the envelope, the root R and the binding B, about 330 bytes. */
const [PRE_A, PRE_B, PRE_C] = jcs({ ...ENVELOPE(0), bind: 'sha256:@', root: 'sha256:@' }).split('@');
const publicPreimage = (i, b) => jcs({ ...ENVELOPE(i), bind: 'sha256:' + b, root: 'sha256:' + b });

// Correctness: the three back ends and both ChaCha20 implementations agree.
{
  const a = commitRecord(slotValues[0], chachaSalts(seeds[0]), backends.node);
  const b = commitRecord(slotValues[0], chachaSalts(seeds[0]), backends.noble);
  const c = commitRecord(slotValues[0], chachaSalts(seeds[0]), backends.kernel);
  if (Buffer.compare(Buffer.from(a), Buffer.from(b)) || Buffer.compare(Buffer.from(a), Buffer.from(c)))
    throw new Error('back ends disagree');
  const key = randomBytes(32),
    nonce = randomBytes(12),
    mine = new Uint8Array(64);
  chachaBlock(key, 7, nonce, mine, 0);
  const iv = Buffer.concat([Buffer.from([7, 0, 0, 0]), nonce]);
  const theirs = createCipheriv('chacha20', key, iv).update(Buffer.alloc(64));
  if (Buffer.compare(Buffer.from(mine), theirs)) throw new Error('ChaCha20 disagrees with node:crypto');
}

// 1. Units of the bench step.
const unitStats = slotValues.map((v, i) => {
  const st = { units: 0, bytes: 0, compressions: 0 };
  commitRecord(v, chachaSalts(seeds[i]), backends.kernel, st);
  return st;
});
const unitsPerStep = median(unitStats.map((s) => s.units));
const compressionsPerStep = median(unitStats.map((s) => s.compressions));
const unitBytesPerStep = median(unitStats.map((s) => s.bytes));
const v1LineBytes = median(v1Lines.map((l) => l.length + 1));

// Each record's unit preimages, captured once, laid out in one buffer: the hashing alone, with the tree
// walk (which a writer does anyway to canonicalize) left out. Bytes of child digests inside a parent are
// whatever the capture saw; the cost of hashing does not depend on them.
const captured = slotValues.map((v, i) => {
  const msgs = [];
  commitRecord(v, chachaSalts(seeds[i]), (m, n, out, o) => {
    msgs.push(m.slice(0, n));
    kernelHash(m, n, out, o);
  });
  const buf = Buffer.concat(msgs),
    off = new Int32Array(msgs.length),
    len = new Int32Array(msgs.length);
  let at = 0;
  msgs.forEach((m, k) => {
    off[k] = at;
    len[k] = m.length;
    at += m.length;
  });
  return { msgs, buf, off, len };
});
const batchOut = new Uint8Array(32 * 4096);
function kernelBatch(buf, off, len, count, out) {
  for (let k = 0; k < count; k++) kernelHash(buf.subarray(off[k], off[k] + len[k]), len[k], out, 32 * k);
}
const saltBlocksPerStep = SLOTS.length + Math.ceil(unitsOfStep() / 4) + SLOTS.length;
function unitsOfStep() {
  return 62;
}

// The WASM SIMD kernel over batches of 256 records, as appendMany would hand them over: every unit
// preimage of the batch plus, per record, 38 one-block salt-derivation messages (§5.1: 7 slot keys and one
// SHA-256 per two salts), written into the module's memory and hashed in one call. Two figures: the whole
// (layout + grouping + call + copying digests out) and the module's call alone.
const BATCH = 256;
const saltMsg = new Uint8Array(1 + 32 + 4);
const wasmRuns = { whole: [], call: [] };
const wb = wasm.wasmBatch(BATCH * 8192);
const wasmOut = new Uint8Array(32 * BATCH * 160);
function wasmDeep() {
  let call = 0;
  for (let r0 = 0; r0 < STEPS; r0 += BATCH) {
    wb.reset();
    for (let r = r0; r < Math.min(STEPS, r0 + BATCH); r++) {
      for (const m of captured[r].msgs) wb.add(m);
      for (let k = 0; k < 38; k++) wb.add(saltMsg);
    }
    wb.run(wasmOut);
    call += wasm.lastCallMicros;
  }
  return call;
}

// What the writer's walk pays to hand the kernel ranges instead of bytes (§4.1, §12.3): a canonical
// serializer writing UTF-8 straight into one buffer, with and without recording one descriptor per unit
// (tag, parent, name range, value range; chunk ranges for long strings). The difference is the JavaScript
// cost of the assembly path, before any preimage is built or hashed.
const walkBuf = new Uint8Array(1 << 20);
const desc = new Int32Array(6 * 65536);
let wAt = 0,
  dAt = 0;
function wStr(str) {
  wAt += enc.encodeInto(JSON.stringify(str), walkBuf.subarray(wAt)).written;
}
function walk(v, record, parent) {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'string') {
      const start = wAt;
      wStr(v);
      if (record && wAt - start - 2 > CHUNK_MIN) {
        // chunks over the escaped text, cut after the last space in the window's second half
        let s0 = start + 1;
        const end = wAt - 1;
        while (s0 < end) {
          let e0 = Math.min(s0 + CHUNK_MAX, end);
          if (e0 < end) {
            for (let k = e0; k > s0 + (CHUNK_MAX >> 1); k--)
              if (walkBuf[k - 1] === 0x20) {
                e0 = k;
                break;
              }
          }
          desc[dAt++] = TAG.c;
          desc[dAt++] = parent;
          desc[dAt++] = s0;
          desc[dAt++] = e0 - s0;
          desc[dAt++] = 0;
          desc[dAt++] = 0;
          s0 = e0;
        }
      }
      return;
    }
    const t = jcsScalar(v);
    wAt += enc.encodeInto(t, walkBuf.subarray(wAt)).written;
    return;
  }
  if (Array.isArray(v)) {
    walkBuf[wAt++] = 0x5b;
    for (let i = 0; i < v.length; i++) {
      if (i) walkBuf[wAt++] = 0x2c;
      const me = dAt / 6,
        vs = wAt;
      if (record) {
        desc[dAt++] = TAG.e;
        desc[dAt++] = parent;
        desc[dAt++] = 0;
        desc[dAt++] = 0;
        dAt += 2;
      }
      walk(v[i], record, me);
      if (record) {
        desc[6 * me + 4] = vs;
        desc[6 * me + 5] = wAt - vs;
      }
    }
    walkBuf[wAt++] = 0x5d;
    return;
  }
  walkBuf[wAt++] = 0x7b;
  const keys = Object.keys(v).sort();
  for (let i = 0; i < keys.length; i++) {
    if (i) walkBuf[wAt++] = 0x2c;
    const ns = wAt;
    wStr(keys[i]);
    const nl = wAt - ns;
    walkBuf[wAt++] = 0x3a;
    const me = dAt / 6,
      vs = wAt;
    if (record) {
      desc[dAt++] = TAG.m;
      desc[dAt++] = parent;
      desc[dAt++] = ns;
      desc[dAt++] = nl;
      dAt += 2;
    }
    walk(v[keys[i]], record, me);
    if (record) {
      desc[6 * me + 4] = vs;
      desc[6 * me + 5] = wAt - vs;
    }
  }
  walkBuf[wAt++] = 0x7d;
}
function jcsScalar(v) {
  return JSON.stringify(v);
}
function walkAll(record) {
  for (let i = 0; i < STEPS; i++) {
    wAt = 0;
    dAt = 0;
    walk(slotValues[i], record, -1);
  }
}

// 2. CPU per record, paired rounds (each figure's rounds interleaved with the others).
const figures = {
  'v1: one SHA-256 of the line (node:crypto one-shot)': () => {
    for (const l of v1Lines) nodeHash('sha256', l, 'buffer');
  },
  'v2: twelve one-shot SHA-256 (4 salt blocks, 7 slots, step hash)': () => {
    for (let i = 0; i < STEPS; i++) {
      const line = v1Lines[i];
      for (let j = 0; j < 4; j++) nodeHash('sha256', line.subarray(0, 40), 'buffer');
      for (let j = 0; j < 7; j++) nodeHash('sha256', line.subarray(j * 180, j * 180 + 200), 'buffer');
      nodeHash('sha256', line.subarray(0, 560), 'buffer');
    }
  },
  'v3 fast tier: B = SHA-256 of the private line (as v1), then the step hash over envelope + root + B': () => {
    for (let i = 0; i < STEPS; i++) {
      const b = nodeHash('sha256', v1Lines[i], 'hex');
      nodeHash('sha256', PRE_A + b + PRE_B + b + PRE_C, 'buffer');
    }
  },
  'v3 salts: node:crypto chacha20, one call per record (flat keystream)': () => {
    const z = Buffer.alloc(16 * 64);
    for (let i = 0; i < STEPS; i++) createCipheriv('chacha20', seeds[i], Buffer.alloc(16)).update(z);
  },
  'v3 deep hashing only: every unit by node:crypto one-shot (62 calls)': () => {
    for (const c of captured) for (const m of c.msgs) nodeHash('sha256', m, 'buffer');
  },
  'v3 deep hashing only: every unit by @noble/hashes': () => {
    for (const c of captured) for (const m of c.msgs) nobleSha256(m);
  },
  'v3 deep hashing only: the batched JavaScript kernel, one call per record': () => {
    for (const c of captured) kernelBatch(c.buf, c.off, c.len, c.msgs.length, batchOut);
  },
  'v3 deep hashing + SHA-256 salts: WASM SIMD 4-lane kernel, one call per 256 records (layout and copies included)':
    () => {
      wasmCall.push(wasmDeep());
    },
  'v3 salts only: ChaCha20 blocks in JavaScript (7 slot keys + 1 block per 4 units, ~23 blocks)': () => {
    const o = new Uint8Array(64);
    for (let i = 0; i < STEPS; i++)
      for (let b = 0; b < saltBlocksPerStep; b++) chachaBlock(seeds[i], b, NONCE_SALT, o, 0);
  },
  'v3 deep tier, units by node:crypto one-shot per unit': () => {
    for (let i = 0; i < STEPS; i++) commitRecord(slotValues[i], chachaSalts(seeds[i]), backends.node);
  },
  'v3 deep tier, units by @noble/hashes per unit': () => {
    for (let i = 0; i < STEPS; i++) commitRecord(slotValues[i], chachaSalts(seeds[i]), backends.noble);
  },
  'v3 deep tier, units by the batched JavaScript kernel': () => {
    for (let i = 0; i < STEPS; i++) commitRecord(slotValues[i], chachaSalts(seeds[i]), backends.kernel);
  },
  'v3 deep tier, kernel, SHA-256 counter-mode salts instead of ChaCha20': () => {
    for (let i = 0; i < STEPS; i++) commitRecord(slotValues[i], shaSalts(seeds[i]), backends.kernel);
  },
  'canonical walk into one buffer (as v1 serializes)': () => walkAll(false),
  'the same walk recording one descriptor per unit (ranges for the module)': () => walkAll(true),
  'kernel alone: one 1-block message (per compression)': () => {
    const m = randomBytes(50),
      o = new Uint8Array(32);
    for (let i = 0; i < STEPS * 50; i++) kernelHash(m, 50, o, 0);
  },
  'node:crypto one-shot alone: one 50-byte message (per call)': () => {
    const m = randomBytes(50);
    for (let i = 0; i < STEPS * 50; i++) nodeHash('sha256', m, 'buffer');
  },
};
const perCount = {
  'kernel alone: one 1-block message (per compression)': STEPS * 50,
  'node:crypto one-shot alone: one 50-byte message (per call)': STEPS * 50,
};
const wasmCall = [];
const load0 = loadavg();
for (const fn of Object.values(figures)) fn(); // warm-up
const samples = Object.fromEntries(Object.keys(figures).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++)
  for (const [k, fn] of Object.entries(figures)) samples[k].push(cpuPer(fn, perCount[k] ?? STEPS));
const load1 = loadavg();
const cpu = Object.fromEntries(
  Object.entries(samples).map(([k, xs]) => [
    k,
    { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) },
  ]),
);
{
  const xs = wasmCall.slice(1).map((t) => t / STEPS); // the first is the warm-up (tier-up of the module)
  cpu['v3 deep hashing + SHA-256 salts: the WASM module call alone (per record)'] = {
    median: round(median(xs)),
    min: round(Math.min(...xs)),
    max: round(Math.max(...xs)),
  };
  const per = compressionsPerStep + 38;
  // Interleaving two 4-lane groups (8 messages per step) for instruction-level parallelism, measured warm.
  for (let w = 0; w < 10; w++) for (const q of [1, 2]) wasm.interleavedCost(q, 8192, 3);
  for (const q of [1, 2]) {
    const ys = [];
    for (let r = 0; r < 5; r++) ys.push(wasm.interleavedCost(q, 8192, 10));
    cpu[`WASM SIMD kernel, ${q} group(s) of 4 lanes interleaved: per lane-compression (one-block messages)`] = {
      median: round(median(ys), 3),
      min: round(Math.min(...ys), 3),
      max: round(Math.max(...ys), 3),
    };
  }
  cpu['WASM SIMD kernel alone: per lane-compression'] = {
    median: round(median(xs) / per, 3),
    min: round(Math.min(...xs) / per, 3),
    max: round(Math.max(...xs) / per, 3),
  };
}

// ---------------------------------------------------------------------------------------------------
// 3. Storage of the 40-turn × 100 KB conversation (issue 33), by construction of the records' sizes.
function text(n, seed) {
  let s = '';
  let x = seed;
  while (s.length < n) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += x.toString(36) + ' ';
  }
  return s.slice(0, n);
}
function conversation(turns, resultBytes) {
  const system = { role: 'system', content: text(600, 1) };
  const user = { role: 'user', content: [{ type: 'text', text: text(200, 2) }] };
  const msgs = [system, user];
  const rec = []; // per turn: the prompt (messages so far), the assistant message, the tool message
  for (let t = 0; t < turns; t++) {
    const prompt = msgs.slice();
    const assistant = {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: `call_${t}`,
          toolName: 'fetch_page',
          input: { url: `https://example.org/page/${t}` },
        },
      ],
    };
    const tool = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: `call_${t}`,
          toolName: 'fetch_page',
          output: { type: 'text', value: text(resultBytes, 100 + t) },
        },
      ],
    };
    rec.push({ prompt, assistant, tool });
    msgs.push(assistant, tool);
  }
  return rec;
}
const LINE_OVERHEAD_V2 = 520; // envelope, kind, ref, error, salt, hashes of a v2 line without content (measured on runs.json lines)
const LINE_OVERHEAD_V3 = 600; // the same plus seed (43 chars) and the body binding (71 chars)
const BLOB_THRESHOLD = 65536;
const PART_THRESHOLD = 1024;
const REF_BYTES = '{"$stepchain:part":"p3:'.length + 43 + 1 + 43 + 2; // address and body binding, base64url
function storageToday(turns, resultBytes) {
  const conv = conversation(turns, resultBytes);
  const blobs = new Map();
  let lines = 0;
  const field = (v) => {
    const t = jcs(v);
    if (t.length >= BLOB_THRESHOLD) {
      blobs.set(t.length + ':' + t.slice(0, 64) + t.slice(-64), t.length);
      return 90;
    }
    return t.length;
  };
  for (const { prompt, assistant, tool } of conv) {
    const p = field(prompt);
    lines += LINE_OVERHEAD_V2 + p; // model.started
    lines += LINE_OVERHEAD_V2 + p + field(assistant.content) + 60; // model.completed (result + tool_call)
    lines += LINE_OVERHEAD_V2 + field(assistant.content[0]); // tool.started
    lines += LINE_OVERHEAD_V2 + field(assistant.content[0]) + field(tool.content[0].output); // tool.completed
  }
  let blobBytes = 0;
  for (const n of blobs.values()) blobBytes += n;
  return { lines, blobs: blobBytes, total: lines + blobBytes, blobCount: blobs.size };
}
function storageV3(turns, resultBytes) {
  const conv = conversation(turns, resultBytes);
  const parts = new Map();
  let lines = 0;
  let prevList = 0;
  // A member value or array element of at least PART_THRESHOLD canonical bytes is stored once as a part:
  // its seed and its value, in which nested parts are references; the record holds a reference. A message
  // list that extends the previous stored list is stored as a list part {base, seed, tail}: it costs what
  // it adds. stored(v) is the size v takes where it stands.
  const SEED = '"seed":"",'.length + 43;
  const inner = (v) => {
    if (v === null || typeof v !== 'object') return jcs(v).length;
    if (Array.isArray(v)) return 2 + v.reduce((a, x) => a + stored(x) + 1, 0) - (v.length ? 1 : 0);
    const ks = Object.keys(v);
    return 2 + ks.reduce((a, k) => a + JSON.stringify(k).length + 1 + stored(v[k]) + 1, 0) - (ks.length ? 1 : 0);
  };
  const stored = (v) => {
    const full = jcs(v);
    if (full.length < PART_THRESHOLD) return full.length;
    if (!parts.has(full)) parts.set(full, inner(v) + SEED + '{"value":}'.length);
    return REF_BYTES;
  };
  const list = (prompt) => {
    const tail = prompt.slice(prevList);
    const size =
      (prevList ? '"base":,'.length + REF_BYTES : 0) +
      SEED +
      '{"tail":[]}'.length +
      tail.reduce((a, m) => a + stored(m) + 1, 0);
    parts.set('list:' + prompt.length, size);
    prevList = prompt.length;
    return REF_BYTES;
  };
  for (const { prompt, assistant, tool } of conv) {
    const p = list(prompt);
    lines += LINE_OVERHEAD_V3 + p; // model.started
    lines += LINE_OVERHEAD_V3 + p + stored(assistant.content) + 60; // model.completed
    lines += LINE_OVERHEAD_V3 + stored(assistant.content[0]); // tool.started
    lines += LINE_OVERHEAD_V3 + stored(assistant.content[0]) + stored(tool.content[0].output); // tool.completed
  }
  let partBytes = 0;
  for (const n of parts.values()) partBytes += n;
  return { lines, parts: partBytes, total: lines + partBytes, partCount: parts.size };
}
function distinctContent(turns, resultBytes) {
  const conv = conversation(turns, resultBytes);
  let n = jcs(conv[0].prompt[0]).length + jcs(conv[0].prompt[1]).length;
  for (const { assistant, tool } of conv) n += jcs(assistant).length + jcs(tool).length;
  return n;
}
const storage = [];
for (const turns of [20, 40]) {
  const today = storageToday(turns, 100_000),
    v3 = storageV3(turns, 100_000),
    distinct = distinctContent(turns, 100_000);
  const perTurn = storageV3(turns, 100_000).total - storageV3(turns - 1, 100_000).total;
  const perTurnToday = storageToday(turns, 100_000).total - storageToday(turns - 1, 100_000).total;
  storage.push({
    turns,
    distinct,
    today: today.total,
    todayRatio: round(today.total / distinct),
    v3: v3.total,
    v3Ratio: round(v3.total / distinct, 3),
    v3Parts: v3.partCount,
    lastTurnToday: perTurnToday,
    lastTurnV3: perTurn,
  });
}
// Receipt: the same bytes plus a manifest entry per part (~150 B) and a tar header per entry (512 B).
const receiptV3 = (() => {
  const r = storageV3(40, 100_000);
  return r.total + r.partCount * (150 + 512 + 256);
})();

// ---------------------------------------------------------------------------------------------------
// 4. Lost context: the bytes a reader loses besides the secret when the smallest committed unit holding
// it is withheld.
function lostInString(str, secret) {
  const b = enc.encode(str),
    sb = enc.encode(secret);
  const at = Buffer.from(b).indexOf(Buffer.from(sb));
  const bounds = b.length > CHUNK_MIN ? chunkBounds(b) : [[0, b.length]];
  const covered = bounds.filter(([s, e]) => e > at && s < at + sb.length);
  const lost = covered.reduce((a, [s, e]) => a + (e - s), 0) - sb.length;
  return { stringBytes: b.length, chunks: bounds.length, withheldChunks: covered.length, lostBytes: lost };
}
const emailPrompt =
  'You are the billing assistant of Example Ltd. The customer asked us to send the quarterly statement to alice.liddell+billing@example.org before Friday, and to copy the finance team. Use the tools to find the open invoices, summarise them in a table, and never quote card numbers in full.';
const cardText =
  'Charge accepted: 120.00 EUR on card 4242424242424242 (exp 12/29), authorisation A-77812, settlement expected on 2026-12-01.';
const lost = {
  'e-mail inside a prompt string (chunked)': lostInString(emailPrompt, 'alice.liddell+billing@example.org'),
  'card number inside a tool result text (chunked)': lostInString(cardText, '4242424242424242'),
  'API key as a member of tool_call.arguments': {
    lostBytes: 0,
    note: 'the member unit ("api_key": value) is withheld; url, method and every sibling stay proven',
  },
  'card number as a member of a structured tool result': {
    lostBytes: 0,
    note: 'the member unit is withheld; exp, amount stay proven',
  },
  'slot-level v2 for comparison: e-mail in the prompt': {
    lostBytes: enc.encode(emailPrompt).length - 33,
    note: 'v2 withholds the whole prompt slot (or shows an unbound view)',
  },
};
// Lost context over many positions: an e-mail of 25 bytes placed at every offset of a 600-byte text.
{
  const base = text(600, 7);
  const secret = 'bob.t@example.com.invalid';
  const losses = [];
  for (let at = 0; at + secret.length < base.length; at += 3) {
    const s = base.slice(0, at) + ' ' + secret + ' ' + base.slice(at + secret.length + 2);
    losses.push(lostInString(s, secret).lostBytes);
  }
  lost['25-byte secret at every position of a 600-byte text (median, max)'] = {
    lostBytes: median(losses),
    max: Math.max(...losses),
  };
}

// Publication growth per record: secrets disclosed for the bench step (22 base64url characters each).
function secretsFor(withheld) {
  // withheld: list of [slot, unitCountInSlot?]; fully disclosed slots cost one slot key, a partially
  // disclosed slot one salt per disclosed unit, a withheld slot nothing; nothing withheld: the record seed.
  if (withheld.length === 0) return 1;
  let n = 0;
  for (const s of SLOTS) {
    const w = withheld.find((x) => x[0] === s);
    if (!w) n += 1;
    else if (w[1] > 0) n += w[1];
  }
  return n;
}
const inputUnits = 13; // input member + 12 below it (bench step)
const publication = {
  'nothing withheld': secretsFor([]),
  'prompt withheld whole (slot)': secretsFor([['prompt', 0]]),
  'user id withheld (input partly disclosed: 12 salts) and prompt withheld': secretsFor([
    ['prompt', 0],
    ['input', inputUnits - 1],
  ]),
};

// Granularity against cost: chunking only longer strings trades lost context for fewer units.
const granularity = [];
for (const min of [64, 256, 1024]) {
  CHUNK_MIN = min;
  const st = unitStatsOf();
  granularity.push({
    chunkStringsAbove: min,
    units: st.units,
    compressions: st.compressions,
    emailLostBytes: lostInString(emailPrompt, 'alice.liddell+billing@example.org').lostBytes,
  });
}
CHUNK_MIN = 64;
function unitStatsOf() {
  const u = [],
    c = [];
  for (let i = 0; i < Math.min(200, STEPS); i++) {
    const st = { units: 0, bytes: 0, compressions: 0 };
    commitRecord(slotValues[i], chachaSalts(seeds[i]), backends.kernel, st);
    u.push(st.units);
    c.push(st.compressions);
  }
  return { units: median(u), compressions: median(c) };
}

// ---------------------------------------------------------------------------------------------------
const result = {
  machine: `${cpus().length} cores, ${cpus()[0]?.model ?? '?'}, Node ${process.version}`,
  load: { start: load0.map((x) => round(x)), end: load1.map((x) => round(x)) },
  steps: STEPS,
  rounds: ROUNDS,
  benchStep: { v1LineBytes, units: unitsPerStep, unitBytes: unitBytesPerStep, compressions: compressionsPerStep },
  cpuMicrosPerRecord: cpu,
  granularity,
  storage,
  receiptV3Bytes40: receiptV3,
  lostContext: lost,
  publicationSecretsPerRecord: Object.fromEntries(
    Object.entries(publication).map(([k, n]) => [k, { secrets: n, bytes: n * 25 }]),
  ),
};
if (JSON_OUT) console.log(JSON.stringify(result, null, 2));
else {
  console.log(
    `stepchain/v3 prototype — ${result.machine}; load ${load0.map((x) => x.toFixed(2)).join(' / ')} → ${load1.map((x) => x.toFixed(2)).join(' / ')}`,
  );
  console.log(
    `bench step: v1 line ${v1LineBytes} B; ${unitsPerStep} committed units, ${unitBytesPerStep} B of unit preimages, ${compressionsPerStep} SHA-256 compressions (units + root)`,
  );
  console.log('\nCPU µs per record (median of rounds, min–max):');
  for (const [k, v] of Object.entries(cpu))
    console.log(`  ${v.median.toFixed(2).padStart(7)}  (${v.min.toFixed(2)}–${v.max.toFixed(2)})  ${k}`);
  console.log(
    '\nGranularity (bench step): ' +
      granularity
        .map(
          (g) =>
            `strings > ${g.chunkStringsAbove} B chunked: ${g.units} units, ${g.compressions} compressions, e-mail loses ${g.emailLostBytes} B`,
        )
        .join('; '),
  );
  console.log('\nStorage of the agent conversation (100 KB tool result per turn):');
  for (const s of storage)
    console.log(
      `  ${s.turns} turns: distinct content ${(s.distinct / 1e6).toFixed(2)} MB; today ${(s.today / 1e6).toFixed(1)} MB (${s.todayRatio}×, last turn +${(s.lastTurnToday / 1e3).toFixed(0)} KB); v3 ${(s.v3 / 1e6).toFixed(2)} MB (${s.v3Ratio}×, ${s.v3Parts} parts, last turn +${(s.lastTurnV3 / 1e3).toFixed(1)} KB)`,
    );
  console.log(`  v3 receipt of the 40 turns ≈ ${(receiptV3 / 1e6).toFixed(2)} MB`);
  console.log('\nLost context for a withheld secret:');
  for (const [k, v] of Object.entries(lost)) console.log(`  ${k}: ${JSON.stringify(v)}`);
  console.log('\nPublication secrets per record (22 base64url chars + quotes/commas ≈ 25 B each):');
  for (const [k, n] of Object.entries(publication)) console.log(`  ${k}: ${n} (${n * 25} B)`);
}
