import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { deepCheckLine, deepCheckRecord } from '../../src/record/v3/deep.js';
import { chunkEnds, commitRecord, escapedText, slotKey, stringChunks, toHexForTest, unitSalt } from './v3-helpers.js';

// The worked example of docs/design/format-v3.md §1 (bench/v3-example.mjs): fixed seed, known root.
const seed = new Uint8Array(
  createHash('sha256').update('stepchain/v3 example seed (fixed for the example only)').digest(),
);
const values = {
  error: null,
  input: { note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.' },
  model: 'gpt-4o-2024-08-06',
  prompt: 'Call the API.',
  result: { status: 200 },
  tool_call: { arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' }, name: 'http' },
};

describe('v3 commitments (design §1 example)', () => {
  it('gives the design example root, keys, salts and units', () => {
    const c = commitRecord(values, seed, { units: true });
    expect(c.root).toBe('sha256:d60b05441d834967e1d281ae17a53c19e79f74402cf0f8890921d463b86494b6');
    expect(toHexForTest(slotKey(seed, 1)).slice(0, 16)).toBe('ecfd98a22eee3889');
    expect(toHexForTest(unitSalt(slotKey(seed, 1), 0))).toBe('d3e8a7c50172662f15a8fdf65b9b3bcb');
    const input = c.units.filter((u) => u.slot === 'input');
    expect(input.map((u) => [u.index, u.kind, u.path])).toEqual([
      [0, 'member', '/input'],
      [1, 'member', '/input/note'],
      [2, 'chunk', '/input/note#0'],
      [3, 'chunk', '/input/note#1'],
    ]);
    expect(toHexForTest(input[3]!.salt)).toBe('1fe9093bbb59563b238da93a106d9b81');
    const api = c.units.find((u) => u.path === '/tool_call/arguments/api_key')!;
    expect(toHexForTest(api.digest).slice(0, 16)).toBe('918b581c0716a85d');
  });

  it('chunks after the last space in the second half of the window', () => {
    const chunks = stringChunks(values.input.note)!.map((c) => new TextDecoder().decode(c));
    expect(chunks).toEqual([
      'Please contact alice.liddell+test@example.org about the overdue ',
      'invoice INV-9 before Friday.',
    ]);
    expect(stringChunks('x'.repeat(64))).toBeNull();
    expect(stringChunks('x'.repeat(65))!.map((c) => c.length)).toEqual([64, 1]);
  });

  it('never cuts inside an escape or a UTF-8 sequence, and uses 256-byte chunks above 4096 bytes', () => {
    const s = 'a'.repeat(63) + '\n' + 'b'.repeat(10); // the escape \n is bytes 63–64: a cut at 64 moves back to 63
    expect(chunkEnds(escapedText(s))![0]).toBe(63);
    const u = 'a'.repeat(63) + '😀' + 'b'; // the 4-byte sequence spans bytes 63–66: the cut moves back to 63
    expect(chunkEnds(escapedText(u))![0]).toBe(63);
    const long = 'y'.repeat(4097);
    expect(stringChunks(long)!.map((c) => c.length)).toEqual([
      256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 1,
    ]);
  });
});

describe('v3 deep tier (fast-check)', () => {
  const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
  const slotName = fc.constantFrom('error', 'input', 'model', 'prompt', 'result', 'tool_call');

  it('a root that does not match the values is reported (ROOT_MISMATCH at root); the true root passes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), json, json, slotName, (seedBytes, a, b, slot) => {
        const values: Record<string, unknown> = {
          error: null,
          input: null,
          model: 'm',
          prompt: null,
          result: null,
          tool_call: null,
          [slot]: a,
        };
        const record = { ...values, seed: toHexForTest(seedBytes), root: commitRecord(values, seedBytes).root };
        expect(deepCheckRecord(record)).toBeNull();
        if (canonicalJson(a as never) === canonicalJson(b as never)) return;
        const changed = { ...record, [slot]: b };
        expect(deepCheckRecord(changed)).toMatchObject({ code: 'ROOT_MISMATCH', field: 'root' });
      }),
      { numRuns: 150 },
    );
  });

  it('never throws on hostile records', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 })), (r) => {
        expect(() => deepCheckRecord({ ...r, seed: 'ab'.repeat(32), root: 'sha256:' + '0'.repeat(64) })).not.toThrow();
        expect(() => deepCheckLine(JSON.stringify(r))).not.toThrow();
      }),
      { numRuns: 150 },
    );
  });
});
