import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test, vi } from 'vitest';
import { newSha256Batch, sha256Many } from '../../src/canonical/sha256-batch.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const digestsOf = (messages: readonly Uint8Array[]): string[] =>
  messages.map((m) => createHash('sha256').update(m).digest('hex'));
const split = (d: Uint8Array): string[] =>
  Array.from({ length: d.length / 32 }, (_, i) => hex(d.subarray(32 * i, 32 * i + 32)));

/** Lengths at and around the padding's edges: 55 is the longest one-block message, 119 the longest of two. */
const EDGES = [0, 1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 183, 184, 300];
const message = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.constantFrom(...EDGES).chain((n) => fc.uint8Array({ minLength: n, maxLength: n })),
);

describe('batched SHA-256 (canonical/sha256-batch.ts)', () => {
  test('runs the WebAssembly kernel in Node (the fallback is tested on its own below)', () => {
    expect(newSha256Batch().name).toBe('wasm-simd-4');
    expect(newSha256Batch({ portable: true }).name).not.toBe('wasm-simd-4');
  });

  test('equals node:crypto on random message sets of mixed lengths, both backends', () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), (messages) => {
        const want = digestsOf(messages);
        expect(split(sha256Many(messages))).toEqual(want);
        expect(split(sha256Many(messages, { portable: true }))).toEqual(want);
      }),
      { numRuns: 300 },
    );
  });

  test('one batch reused: messages written piece by piece, reset between runs, long messages among short ones', () => {
    const batch = newSha256Batch();
    fc.assert(
      fc.property(
        fc.array(fc.array(message, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
        fc.nat(2),
        (pieces, long) => {
          batch.reset();
          const whole = pieces.map((p) => Uint8Array.from(p.flatMap((x) => [...x])));
          // A few multi-kilobyte messages make the memory grow mid-batch and give block counts past the direct table.
          if (long > 0) whole.push(new Uint8Array(70 * 64 * long).fill(long));
          for (const m of whole) {
            batch.begin();
            let at = 0;
            for (const p of pieces[whole.indexOf(m)] ?? [m]) {
              if (p.length === 1) batch.byte(p[0]!);
              else batch.copy(m, at, at + p.length);
              at += p.length;
            }
            expect(batch.end()).toBe(whole.indexOf(m));
          }
          expect(split(batch.run())).toEqual(digestsOf(whole));
        },
      ),
      { numRuns: 100 },
    );
  });

  test('the FIPS 180-4 examples, and an empty batch', () => {
    const abc = new TextEncoder().encode('abc');
    const two = new TextEncoder().encode('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq');
    expect(split(sha256Many([abc, two]))).toEqual([
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    ]);
    expect(sha256Many([]).length).toBe(0);
  });

  // A platform without WebAssembly, and a page whose policy refuses to compile it (no 'wasm-unsafe-eval').
  const host = globalThis as unknown as Record<string, unknown>;
  test.each([
    ['no WebAssembly', undefined],
    [
      'a refused compile',
      {
        ...(host.WebAssembly as object),
        Module: function refused() {
          throw new Error('CompileError: refused by the page policy');
        },
      },
    ],
  ])('falls back to the portable batch where there is %s', async (_case, stand) => {
    const saved = host.WebAssembly;
    vi.resetModules();
    host.WebAssembly = stand;
    try {
      const fresh = await import('../../src/canonical/sha256-batch.js');
      expect(fresh.newSha256Batch().name).not.toBe('wasm-simd-4');
      const messages = EDGES.map((n) => new Uint8Array(n).fill(n & 0xff));
      expect(split(fresh.sha256Many(messages))).toEqual(digestsOf(messages));
    } finally {
      host.WebAssembly = saved;
    }
  });

  test('the committed kernel is what scripts/gen-sha256-wasm.mjs assembles', () => {
    const script = fileURLToPath(new URL('../../scripts/gen-sha256-wasm.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
