/**
 * src/approval/wire-calls.ts (APPROVALS.md §5 step 4): every object at any depth of a tool_call's lists is a call,
 * in document order, read without recursion; the wire shapes read as {name, arguments}.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_CALLS, callsIn, wireCall } from '../../src/approval/wire-calls.js';

/** The reference reading: a plain recursive walk. */
function flat(v: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(v)) for (const x of v) flat(x, out);
  else if (v !== null && typeof v === 'object') out.push(v);
  return out;
}

const call = fc.record({ name: fc.string(), arguments: fc.dictionary(fc.string(), fc.integer()) });
const tree = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    call,
    fc.integer(),
    fc.constant(null),
    fc.array(tie('node'), { maxLength: 4 }),
  ),
})).node;

describe('callsIn', () => {
  it('finds every object at any depth of lists, in document order (as a recursive walk does)', () => {
    fc.assert(
      fc.property(fc.array(tree, { maxLength: 6 }), (tc) => {
        expect(callsIn(tc)).toEqual(flat(tc));
      }),
    );
  });

  it('walks lists nested past any stack without recursion, and stands one call not in hand for values past the bound', () => {
    const nested = (levels: number): unknown => {
      let v: unknown = [{ name: 'unlock', arguments: { pin: '4821' } }];
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    expect(callsIn(nested(9_000))).toEqual([{ name: 'unlock', arguments: { pin: '4821' } }]);
    // Past the bound (each list counts as a value read): one call not in hand, never a throw.
    expect(Object.keys(callsIn(nested(100_000))[0]!)[0]).toMatch(/^\$stepchain:/);
    const many = Array.from({ length: MAX_CALLS + 5 }, () => ({ name: 'x', arguments: {} }));
    const read = callsIn(many);
    expect(read).toHaveLength(MAX_CALLS + 1);
    expect(Object.keys(read[MAX_CALLS]!)[0]).toMatch(/^\$stepchain:/);
  });
});

describe('wireCall', () => {
  it('reads the shapes the frameworks write as {name, arguments}', () => {
    const args = { pin: '4821' };
    expect(wireCall({ name: 'unlock', arguments: args })).toEqual({ name: 'unlock', arguments: args });
    expect(wireCall({ type: 'function', function: { name: 'unlock', arguments: '{}' } })).toEqual({
      name: 'unlock',
      arguments: '{}',
    });
    expect(wireCall({ toolCallId: 't', toolName: 'unlock', input: args })).toEqual({ name: 'unlock', arguments: args });
    expect(wireCall({ name: 'unlock', args })).toEqual({ name: 'unlock', arguments: args });
    // No arguments in any shape: the call as it is (it compares as none; a same-tool call is then a notice).
    expect(wireCall({ name: 'unlock' })).toEqual({ name: 'unlock' });
    // A marker as a member: the call as it is (not in hand).
    const erased = { '$stepchain:erased': 'x', function: { name: 'unlock', arguments: args } };
    expect(wireCall(erased)).toBe(erased);
  });
});
