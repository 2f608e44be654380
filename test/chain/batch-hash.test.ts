/**
 * The batch's deferred step hashes (chain/batch.ts, issue 45): where the platform's SHA-256 is the portable one
 * (a browser; here @noble/hashes put in effect as bench/ does), checkBatch computes the v1 lines' step hashes
 * together through the batched kernel and settles each comparison afterwards. Its facts must equal, line for
 * line and problem for problem, those of the per-line check with node:crypto — on intact lines of any content
 * (UTF-8 of every width, one to many blocks) and with a stored step_hash or a covered character changed.
 */
import fc from 'fast-check';
import { afterEach, expect, test } from 'vitest';
import { checkBatch, lineHashEngine, type LineBatch } from '../../src/chain/batch.js';
import { nobleBackend, nodeBackend, setSha256Backend, sha256IsPortable } from '../../src/canonical/sha256.js';
import { FORMAT_V1 } from '../../src/record/v1.js';
import { buildChain, lineBatch } from '../helpers/chains.js';

const enc = new TextEncoder();

const batchOf = (lines: Uint8Array[]): LineBatch => lineBatch(FORMAT_V1, lines);

afterEach(() => setSha256Backend(nodeBackend!));

test("deferred, batched step hashes give the per-line check's facts, intact or tampered", () => {
  expect(nodeBackend).not.toBeNull();
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { minLength: 1, maxLength: 40 }),
      fc.nat(),
      fc.nat(),
      fc.constantFrom('none', 'stored', 'content'),
      (prompts, pick, hexAt, tamper) => {
        const chain = buildChain(prompts.map((p) => ({ prompt: p + 'Q' })));
        const lines = chain.lines.map((l) => l.slice(0, -1));
        const i = pick % lines.length;
        if (tamper === 'stored') {
          const at = lines[i]!.indexOf('"step_hash":"sha256:') + 20 + (hexAt % 64);
          lines[i] = lines[i]!.slice(0, at) + (lines[i]![at] === '0' ? '1' : '0') + lines[i]!.slice(at + 1);
        } else if (tamper === 'content') lines[i] = lines[i]!.replace('Q"', 'R"');
        const batch = batchOf(lines.map((l) => enc.encode(l)));
        setSha256Backend(nodeBackend!);
        expect(sha256IsPortable()).toBe(false);
        const expected = checkBatch(batch);
        setSha256Backend(nobleBackend);
        expect(sha256IsPortable()).toBe(true);
        const actual = checkBatch(batch);
        setSha256Backend(nodeBackend!);
        expect(actual).toEqual(expected);
        const mismatches = expected!.others
          .flatMap((f) => f.problems.map((p) => p.code))
          .filter((c) => c === 'HASH_MISMATCH');
        expect(mismatches).toHaveLength(tamper === 'none' ? 0 : 1);
      },
    ),
    { numRuns: 150 },
  );
  // Node has WebAssembly SIMD: with the portable hash in effect (a browser's case), the kernel does the work,
  // not the portable batch; with node:crypto, node:crypto does.
  setSha256Backend(nobleBackend);
  expect(lineHashEngine()).toBe('wasm-simd-4');
  setSha256Backend(nodeBackend!);
  expect(lineHashEngine()).toBe('node:crypto');
});
