/**
 * Markers, blobs, sealing and a caller's step at their edges (spec/FORMAT.md §3.2, §3.5, §5.1, §5.2, §7,
 * §12.2): what is a marker and what is not, a blob reference's body, every reason blob bytes are not the
 * blob their reference names, a sealed record ignoring members left undefined, a digest-length text that
 * is no digest, and the caller's ts as a Date and the copied record salt. Written from the surviving
 * mutants of src/record (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { digestBytes } from '../../src/canonical/sha256.js';
import { blobDefect, fetchBlob } from '../../src/record/blobs.js';
import { checkStepInput } from '../../src/record/input.js';
import { BLOB_MARKER, REDACTED_MARKER, blobRefOf, isBlobBody, isMarker } from '../../src/record/markers.js';
import { RESERVED_PREFIX } from '../../src/canonical/limits.js';
import { STEP_V1 } from '../../src/record/v1.js';
import { STEP_V2 } from '../../src/record/v2.js';

const D = 'sha256:' + 'a'.repeat(64);
const enc = new TextEncoder();

describe('markers (§3.5): exactly one member, whose name carries the reserved prefix', () => {
  test.each<[string, unknown, boolean]>([
    ['a blob marker', { [BLOB_MARKER]: { digest: D, size: 1 } }, true],
    ['any reserved name', { [`${RESERVED_PREFIX}other`]: 1 }, true],
    ['no member', {}, false],
    ['one ordinary member', { blob: 1 }, false],
    ['a reserved member and another', { [BLOB_MARKER]: { digest: D, size: 1 }, x: 1 }, false],
    ['two reserved members', { [BLOB_MARKER]: 1, [REDACTED_MARKER]: 1 }, false],
    ['an ordinary member first, then a reserved one', { a: 1, [BLOB_MARKER]: 1 }, false],
    ['an array holding a marker', [{ [BLOB_MARKER]: 1 }], false],
    ['a string', BLOB_MARKER, false],
    ['null', null, false],
  ])('%s: %s', (_name, value, expected) => {
    expect(isMarker(value)).toBe(expected);
  });

  test.each<[string, unknown, boolean]>([
    ['digest and size', { digest: D, size: 0 }, true],
    ['a digest in upper case', { digest: D.toUpperCase(), size: 1 }, false],
    ['no digest', { size: 1, other: D }, false],
    ['an extra member', { digest: D, size: 1, x: 1 }, false],
    ['size negative', { digest: D, size: -1 }, false],
    ['size fractional', { digest: D, size: 1.5 }, false],
    ['size a string', { digest: D, size: '1' }, false],
  ])('blob body, %s', (_name, body, expected) => {
    expect(isBlobBody(body)).toBe(expected);
    expect(blobRefOf({ [BLOB_MARKER]: body })).toEqual(expected ? body : null);
  });
});

describe('blob bytes against their reference (§7)', () => {
  const bytes = enc.encode('{"a":[1,2]}');
  const ref = { digest: digestBytes(bytes), size: bytes.length };

  test('the blob it names: no defect, and fetchBlob hands the bytes over', async () => {
    expect(blobDefect(bytes, ref)).toBeNull();
    expect(await fetchBlob(async () => bytes, ref)).toEqual({ ok: true, bytes });
    expect(await fetchBlob(async () => null, ref)).toEqual({ ok: false, missing: true });
  });

  test.each<[string, Uint8Array, RegExp]>([
    ['another size', enc.encode('{"a":[1,2,3]}'), /holds 13 bytes, the reference says 11/],
    ['the same size, other bytes', enc.encode('{"a":[1,3]}'), /^hashes to sha256:/],
    ['not UTF-8', Uint8Array.from([0x22, 0xff, 0x22]), /not valid UTF-8/],
    ['not canonical', enc.encode('{"a": 1}'), /not the canonical JSON of a value \(/],
    [
      'a marker at the root',
      enc.encode('{"$stepchain:blob":1}'),
      /reserved member name "\$stepchain:blob" at its root/,
    ],
    [
      'a marker inside',
      enc.encode('{"a":{"$stepchain:redacted":1}}'),
      /reserved member name "\$stepchain:redacted" at \/a/,
    ],
    [
      'a reserved name among others',
      enc.encode('{"$stepchain:x":1,"b":2}'),
      /reserved member name "\$stepchain:x" at its root/,
    ],
    [
      'a reserved name after an ordinary one',
      enc.encode('{"#a":1,"$stepchain:x":2}'),
      /reserved member name "\$stepchain:x" at its root/,
    ],
  ])('%s: a defect saying why', async (_name, b, why) => {
    // Each case's reference matches its bytes' size and digest, so only the named defect can be found
    // (the first two cases keep the original reference).
    const r = /size|other bytes/.test(_name) ? ref : { digest: digestBytes(b), size: b.length };
    expect(blobDefect(b, r)).toMatch(why);
    expect(await fetchBlob(async () => b, r)).toEqual({
      ok: false,
      missing: false,
      defect: expect.stringMatching(why),
    });
  });
});

describe('sealing (§5.2)', () => {
  test('a digest member of 73 characters that is not a digest is FIELD_INVALID (v1)', () => {
    const rule = STEP_V1.members.find((m) => m.name === 'prev_hash')!.check!;
    const text = `{"prev_hash":"sha256:${'A'.repeat(64)}"}`;
    expect(rule(text, 13, text.length - 1)).not.toBeNull();
    const good = `{"prev_hash":"${D}"}`;
    expect(rule(good, 13, good.length - 1)).toBeNull();
  });
});

describe("a caller's step (§3.2, §5.1, §12.2)", () => {
  test('ts as a Date is recorded as its ISO string; an invalid Date or one outside years 0000–9999 is FIELD_INVALID at /ts', () => {
    expect(checkStepInput({ ts: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)) }).ts).toBe('2026-01-02T03:04:05.006Z');
    expect(checkStepInput({ ts: new Date(Date.UTC(0, 0, 1) - 1900 * 0) }).ts).toMatch(/Z$/);
    const y0 = new Date(0);
    y0.setUTCFullYear(0, 0, 1);
    const y9999 = new Date(0);
    y9999.setUTCFullYear(9999, 11, 31);
    expect(checkStepInput({ ts: y0 }).ts).toBe('0000-01-01T00:00:00.000Z');
    expect(checkStepInput({ ts: y9999 }).ts).toBe('9999-12-31T00:00:00.000Z');
    const before = new Date(0);
    before.setUTCFullYear(-1, 11, 31);
    const after = new Date(0);
    after.setUTCFullYear(10000, 0, 1);
    for (const ts of [new Date(NaN), before, after]) {
      expect(() => checkStepInput({ ts })).toThrow(
        expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/ts' } }),
      );
    }
  });

  test('a record salt is accepted by v2 only, as 32 lowercase hex digits; v1 has no such member', () => {
    const salt = '0123456789abcdef'.repeat(2);
    expect(checkStepInput({ input: 1, salt }, STEP_V2).salt).toBe(salt);
    expect(checkStepInput({ input: 1 }, STEP_V2).salt).toBeUndefined();
    for (const bad of ['0123456789ABCDEF'.repeat(2), salt.slice(1), salt + '0', 1, null]) {
      expect(() => checkStepInput({ input: 1, salt: bad }, STEP_V2)).toThrow(
        expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/salt' } }),
      );
    }
    expect(() => checkStepInput({ input: 1, salt })).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/salt' } }),
    );
  });

  test('v2: an unknown member is FIELD_INVALID and a computed one FIELD_NOT_ALLOWED, as in v1 (the salt is the one exception)', () => {
    expect(() => checkStepInput({ input: 1, bogus: 1 } as never, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_INVALID', location: { path: '/bogus' } }),
    );
    expect(() => checkStepInput({ input: 1, step_hash: 'x' } as never, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_NOT_ALLOWED', location: { path: '/step_hash' } }),
    );
    expect(() => checkStepInput({ input: 1, seq: 0 } as never, STEP_V2)).toThrow(
      expect.objectContaining({ code: 'FIELD_NOT_ALLOWED', location: { path: '/seq' } }),
    );
  });

  test('a content member given as undefined is refused (no default to fill it), not recorded as null', () => {
    for (const profile of [STEP_V1, STEP_V2]) {
      expect(() => checkStepInput({ input: undefined }, profile)).toThrow(
        expect.objectContaining({ code: 'UNSUPPORTED_TYPE', location: expect.objectContaining({ path: '/input' }) }),
      );
    }
  });

  test('a step that is not an object names the content fields to give', () => {
    expect(() => checkStepInput(null as never)).toThrow(
      'a step must be a plain object with input, model, prompt, tool_call and result',
    );
    expect(() => checkStepInput([] as never, STEP_V2)).toThrow(
      'a step must be a plain object with kind, ref, input, model, prompt, tool_call, result and error',
    );
  });
});
