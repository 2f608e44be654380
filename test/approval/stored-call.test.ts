/**
 * The verifier reads every call of a v3 chain before its first request from the stored line's tail, without
 * parsing the line (src/approval/calls.ts storedCall, APPROVALS.md §5 step 4). Property: for any sealed line,
 * whatever its call and whatever look-alikes of the tail its other values hold, the reading is either refused
 * (the line is then parsed) or exactly the call's compared form, step_id, seq and ts as a parse gives them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callForm, storedCall } from '../../src/approval/calls.js';
import { sealedV3 as sealed, trickyValue as args } from '../helpers/sealed-lines.js';

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
});
