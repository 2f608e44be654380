// Assembles the 4-lane WebAssembly SIMD SHA-256 kernel (FIPS 180-4) of src/canonical/ by hand, byte by byte (no
// WebAssembly toolchain is needed or trusted), and writes src/canonical/sha256x4-module.ts: the module's bytes as
// base64. `node scripts/gen-sha256-wasm.mjs --check` exits 1 when the committed file differs from what this
// script emits (test/canonical/sha256-batch.test.ts runs it), so the bytes are never edited by hand.
//
// The module exports `memory` and `hashGroups(table, n)`. A table entry (48 bytes, little-endian i32) holds
// four lanes' message addresses p0–p3 (each a padded message, 64-byte blocks), the lanes' common block count
// nb at +16, and four output addresses o0–o3 at +20; the call hashes n entries, keeping the four states in
// v128 registers (lane l of each i32x4 holds message l's word) across a message's blocks, and stores each
// digest, big-endian, at its lane's output address. Rounds are fully unrolled with the eight working
// variables renamed at emit time instead of moved; Ch and Maj are one v128.bitselect each; the first sixteen
// schedule words are gathered lane by lane (v128.load32_lane) and byte-swapped by one i8x16.swizzle.
// Measured (bench/lib/sha256x4-wasm.mjs, design §12.3): 0.084 µs per lane-compression on one-block messages.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
];
export const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Unsigned and signed LEB128 (the binary format's integers). */
export const uleb = (n) => {
  const out = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return out;
};
export const sleb = (n) => {
  const out = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
    out.push(b | 0x80);
  }
};

// Opcodes (WebAssembly core 2.0 and the fixed-width SIMD proposal).
const I32_CONST = 0x41,
  LOCAL_GET = 0x20,
  LOCAL_SET = 0x21,
  LOCAL_TEE = 0x22,
  I32_LOAD = 0x28;
const I32_ADD = 0x6a,
  I32_SUB = 0x6b,
  I32_GE_U = 0x4f,
  BLOCK = 0x02,
  LOOP = 0x03,
  BR = 0x0c,
  BR_IF = 0x0d,
  END = 0x0b,
  VOID = 0x40;
const V = {
  const: 0x0c,
  swizzle: 0x0e,
  xor: 0x51,
  or: 0x50,
  bitselect: 0x52,
  load32_lane: 0x56,
  store32_lane: 0x5a,
  shl: 0xab,
  shr_u: 0xad,
  add: 0xae,
};
const BSWAP = [3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12];

function hashGroupsBody() {
  const c = [];
  const get = (l) => c.push(LOCAL_GET, ...uleb(l));
  const set = (l) => c.push(LOCAL_SET, ...uleb(l));
  const i32 = (n) => c.push(I32_CONST, ...sleb(n));
  const v = (op, ...imm) => c.push(0xfd, ...uleb(op), ...imm);
  const splat = (k) =>
    v(V.const, ...[0, 1, 2, 3].flatMap(() => [k & 0xff, (k >>> 8) & 0xff, (k >>> 16) & 0xff, (k >>> 24) & 0xff]));
  const rotr = (l, n) => {
    get(l);
    i32(n);
    v(V.shr_u);
    get(l);
    i32(32 - n);
    v(V.shl);
    v(V.or);
  };
  const bigSigma = (l, r1, r2, r3) => {
    rotr(l, r1);
    rotr(l, r2);
    v(V.xor);
    rotr(l, r3);
    v(V.xor);
  };
  const smallSigma = (l, r1, r2, s) => {
    rotr(l, r1);
    rotr(l, r2);
    v(V.xor);
    get(l);
    i32(s);
    v(V.shr_u);
    v(V.xor);
  };
  // Params: 0 table, 1 n. Locals: i32 2 g, 3–6 p0–p3 (then o0–o3), 7 nb; v128 8–15 the state, 16–23 the
  // working variables, 24–39 the schedule window, 40 T1, 41 T2.
  const TABLE = 0,
    N = 1,
    G = 2,
    P = 3,
    NB = 7,
    S = 8,
    WV = 16,
    W0 = 24,
    T1 = 40,
    T2 = 41;
  c.push(BLOCK, VOID, LOOP, VOID);
  get(G);
  get(N);
  c.push(I32_GE_U, BR_IF, 1);
  for (let l = 0; l < 4; l++) {
    get(TABLE);
    c.push(I32_LOAD, 2, ...uleb(4 * l));
    set(P + l);
  }
  get(TABLE);
  c.push(I32_LOAD, 2, 16);
  set(NB);
  for (let k = 0; k < 8; k++) {
    splat(IV[k]);
    set(S + k);
  }
  c.push(LOOP, VOID);
  let w = [WV, WV + 1, WV + 2, WV + 3, WV + 4, WV + 5, WV + 6, WV + 7];
  for (let k = 0; k < 8; k++) {
    get(S + k);
    set(w[k]);
  }
  for (let t = 0; t < 64; t++) {
    const wt = W0 + (t % 16);
    if (t < 16) {
      v(V.const, ...new Array(16).fill(0));
      set(wt);
      for (let l = 0; l < 4; l++) {
        get(P + l);
        get(wt);
        v(V.load32_lane, 2, ...uleb(4 * t), l);
        set(wt);
      }
      get(wt);
      v(V.const, ...BSWAP);
      v(V.swizzle);
      set(wt);
    } else {
      smallSigma(W0 + ((t - 2) % 16), 17, 19, 10);
      get(W0 + ((t - 7) % 16));
      v(V.add);
      smallSigma(W0 + ((t - 15) % 16), 7, 18, 3);
      v(V.add);
      get(wt);
      v(V.add);
      set(wt);
    }
    const [a, b, cc, d, e, f, g, h] = w;
    get(h);
    bigSigma(e, 6, 11, 25);
    v(V.add);
    get(f);
    get(g);
    get(e);
    v(V.bitselect);
    v(V.add); // Ch(e, f, g) = bitselect(f, g, e)
    splat(K[t]);
    v(V.add);
    get(wt);
    v(V.add);
    set(T1);
    bigSigma(a, 2, 13, 22);
    get(cc);
    get(a);
    get(a);
    get(b);
    v(V.xor);
    v(V.bitselect); // Maj(a, b, c) = bitselect(c, a, a ^ b)
    v(V.add);
    set(T2);
    get(d);
    get(T1);
    v(V.add);
    set(d);
    get(T1);
    get(T2);
    v(V.add);
    set(h);
    w = [h, a, b, cc, d, e, f, g];
  }
  for (let k = 0; k < 8; k++) {
    get(S + k);
    get(w[k]);
    v(V.add);
    set(S + k);
  }
  for (let l = 0; l < 4; l++) {
    get(P + l);
    i32(64);
    c.push(I32_ADD);
    set(P + l);
  }
  get(NB);
  i32(1);
  c.push(I32_SUB, LOCAL_TEE, ...uleb(NB), BR_IF, 0, END);
  // The digests: lane l's word k, byte-swapped, to o_l + 4k.
  for (let l = 0; l < 4; l++) {
    get(TABLE);
    c.push(I32_LOAD, 2, ...uleb(20 + 4 * l));
    set(P + l);
  }
  for (let k = 0; k < 8; k++) {
    get(S + k);
    v(V.const, ...BSWAP);
    v(V.swizzle);
    set(T1);
    for (let l = 0; l < 4; l++) {
      get(P + l);
      get(T1);
      v(V.store32_lane, 2, ...uleb(4 * k), l);
    }
  }
  get(TABLE);
  i32(48);
  c.push(I32_ADD);
  set(TABLE);
  get(G);
  i32(1);
  c.push(I32_ADD);
  set(G);
  c.push(BR, 0, END, END, END);
  const fn = [2, 6, 0x7f, 34, 0x7b, ...c]; // locals: 6 × i32, 34 × v128
  return [...uleb(fn.length), ...fn];
}

export function moduleBytes() {
  const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
  const name = (s) => [...uleb(s.length), ...[...s].map((ch) => ch.charCodeAt(0))];
  const type = section(1, [1, 0x60, 2, 0x7f, 0x7f, 0]); // (func (param i32 i32))
  const func = section(3, [1, 0]);
  const memory = section(5, [1, 0x00, 1]); // one page at first; the caller grows it
  const exports = section(7, [2, ...name('hashGroups'), 0, 0, ...name('memory'), 2, 0]);
  const code = section(10, [1, ...hashGroupsBody()]);
  return Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...type, ...func, ...memory, ...exports, ...code]);
}

function moduleSource() {
  const b64 = Buffer.from(moduleBytes()).toString('base64');
  const lines = b64.match(/.{1,120}/g).map((l) => `  '${l}' +`);
  lines[lines.length - 1] = lines[lines.length - 1].slice(0, -2) + ';';
  return [
    '// Generated by scripts/gen-sha256-wasm.mjs from its hand assembler: do not edit (the test compares).',
    '/** The 4-lane WebAssembly SIMD SHA-256 kernel (`hashGroups`, `memory`), as base64. */',
    'export const SHA256X4_WASM_BASE64 =',
    ...lines,
    '',
  ].join('\n');
}

const target = fileURLToPath(new URL('../src/canonical/sha256x4-module.ts', import.meta.url));
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = moduleSource();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(target, 'utf8');
    } catch {}
    if (committed !== text) {
      process.stderr.write('src/canonical/sha256x4-module.ts is not what scripts/gen-sha256-wasm.mjs emits: run it\n');
      process.exit(1);
    }
  } else {
    writeFileSync(target, text);
  }
}
