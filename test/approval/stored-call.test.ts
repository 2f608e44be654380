/**
 * The verifier reads every call of a v3 chain before its first request from the stored line's tail, without
 * parsing the line (src/approval/calls.ts storedCall, APPROVALS.md §5 step 4). Property: for any sealed line,
 * whatever its call and whatever look-alikes of the tail its other values hold, the reading is either refused
 * (the line is then parsed) or exactly the call's compared form, step_id, seq and ts as a parse gives them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callForm, storedCall, storedCallIn } from '../../src/approval/calls.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { PREV, sealedV3 as sealed, trickyValue as args } from '../helpers/sealed-lines.js';

describe('a call read from a stored line without parsing it', () => {
  it('is refused or exactly what a parse gives', () => {
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          arguments: args,
          extra: fc.option(fc.record({ call_id: fc.string(), id: fc.string() }), { nil: undefined }),
          input: fc.option(args, { nil: undefined }),
          result: fc.option(args, { nil: undefined }),
          stepId: fc.string({ minLength: 1 }),
          seq: fc.nat({ max: 1_000_000 }),
        }),
        (c) => {
          const call = { ...(c.extra ?? {}), arguments: c.arguments, name: c.name };
          const ts = '2026-11-27T10:00:00.000Z';
          const line = sealed({ kind: 'step', input: c.input, result: c.result, tool_call: call }, c.seq, c.stepId, ts);
          const read = storedCall(line);
          if (read === null) return;
          const r = JSON.parse(line) as {
            step_id: string;
            seq: number;
            ts: string;
            tool_call: Record<string, unknown>;
          };
          expect(JSON.parse(read.id)).toBe(r.step_id);
          expect(read.seq).toBe(r.seq);
          expect(read.ts).toBe(r.ts);
          expect(read.form).toBe(callForm(r.tool_call.name, r.tool_call.arguments));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads the plain case, and leaves lines with markers or approvals to a parse', () => {
    const call = { arguments: { amount: 120 }, name: 'pay' };
    const plain = sealed({ kind: 'step', tool_call: call }, 4, 's4', '2026-11-27T10:00:04.000Z');
    expect(storedCall(plain)).toEqual({
      id: '"s4"',
      seq: 4,
      ts: '2026-11-27T10:00:04.000Z',
      form: callForm('pay', call.arguments),
    });
    const named = sealed(
      { kind: 'tool.started', tool_call: call, meta: { approval: { request: 'r' } } },
      1,
      's1',
      '2026-11-27T10:00:01.000Z',
    );
    expect(storedCall(named)).toBeNull();
  });

  it("is the same read from the scan's member spans (verify's hot path) as from the text, sealed or not", () => {
    // Records as a sealer writes them, and hand-made objects whose tail members are missing, out of place, of
    // another type or first in the object: storedCallIn takes its fast path only where storedCall reads the same.
    const member = fc.oneof(args, fc.constant(PREV), fc.nat(), fc.constant('-1'), fc.constant(1.5));
    // Mostly the type a sealer writes, sometimes another; each member mostly present.
    const mostly = <T>(right: fc.Arbitrary<T>) =>
      fc.option(fc.oneof({ arbitrary: right, weight: 4 }, { arbitrary: member, weight: 1 }), {
        nil: undefined,
        freq: 8,
      });
    const handMade = fc
      .record({
        a: fc.option(member, { nil: undefined }),
        seq: mostly(fc.nat()),
        step_hash: mostly(fc.constant(PREV)),
        step_id: mostly(fc.string()),
        tool_call: mostly(fc.record({ arguments: args, name: fc.string(), id: fc.string() })),
        ts: mostly(fc.constant('2026-11-27T10:00:00.000Z')),
        v: fc.constant(3),
      })
      .map((o) => canonicalJson(JSON.parse(JSON.stringify(o))));
    const sealedLine = fc
      .record({ name: fc.string(), arguments: args, stepId: fc.string({ minLength: 1 }), seq: fc.nat() })
      .map((c) =>
        sealed(
          { kind: 'step', tool_call: { arguments: c.arguments, name: c.name } },
          c.seq,
          c.stepId,
          '2026-11-27T10:00:00.000Z',
        ),
      );
    fc.assert(
      fc.property(fc.oneof(handMade, sealedLine), (line) => {
        const members = scanCanonical(line, {}).members;
        if (members === null) return;
        expect(storedCallIn(line, members)).toEqual(storedCall(line));
      }),
      { numRuns: 400 },
    );
  });

  it("never reads a call nested in a member after ts as the record's own", () => {
    // A hand-made line (verify refuses its member `x`, UNKNOWN_FIELD) whose `x` holds a record-like object:
    // storedCall took its `,"ts":"` for the record's and read the nested call, seq and step_id.
    const line = canonicalJson({
      kind: 'step',
      seq: 7,
      step_hash: PREV,
      step_id: 'real',
      tool_call: { arguments: { a: 1 }, name: 'real' },
      ts: '2026-11-27T10:00:00.000Z',
      v: 3,
      x: { a: 0, seq: 5, step_hash: PREV, step_id: 'fake', tool_call: { arguments: {}, name: 'fake' }, ts: 'z' },
    });
    expect(storedCall(line)).toBeNull();
    expect(storedCallIn(line, scanCanonical(line, {}).members!)).toBeNull();
  });
});
