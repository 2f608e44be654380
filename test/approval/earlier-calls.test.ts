/**
 * The calls a chain ran before the requests that present them (src/approval/earlier-calls.ts; APPROVALS.md §5
 * step 4). Calls read from stored lines are only noted, and entered into the table when it is next read or
 * entered: for any sequence of stored and parsed calls, the first record of each call and of each tool is what
 * a table entering every call at once would say, across the point where the noted calls are entered unasked.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { storedKey } from '../../src/approval/calls.js';
import { EarlierCalls } from '../../src/approval/earlier-calls.js';

const formOf = (tool: number, arg: number): string => `{"arguments":{"a":${arg}},"name":"t${tool}"}`;

interface First {
  id: string;
  seq: number;
  kind: string;
}

const call = fc.record({
  parsed: fc.boolean(),
  tool: fc.nat({ max: 2 }),
  arg: fc.nat({ max: 4 }),
  ask: fc.boolean(),
});

describe('the calls run before their requests', () => {
  test('each call and each tool is found at its first record, however stored and parsed calls interleave', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 60 }), (ops) => {
        const calls = new EarlierCalls();
        const byForm = new Map<string, First>();
        const byTool = new Map<string, First>();
        ops.forEach((op, seq) => {
          const form = formOf(op.tool, op.arg);
          const id = `s${seq}`;
          const first: First = { id, seq, kind: op.parsed ? 'tool.started' : 'record' };
          if (op.parsed) calls.rememberForm(form, id, seq, 'tool.started');
          else {
            const key = storedKey(form);
            // As a batch's digests arrive: this call's 32 characters inside a longer string, at its place.
            const before = '\u00ff'.repeat(32 * (seq % 3));
            calls.stored(JSON.stringify(id), seq, before + key.digest + '\u0000'.repeat(32), before.length, key.name);
          }
          if (!byForm.has(form)) byForm.set(form, first);
          if (!byTool.has(`t${op.tool}`)) byTool.set(`t${op.tool}`, first);
          // A question in the middle enters what was noted so far; later calls are noted again.
          if (op.ask) expect(calls.find(form)).toEqual(byForm.get(form));
        });
        for (let tool = 0; tool <= 2; tool++)
          for (let arg = 0; arg <= 4; arg++) {
            expect(calls.find(formOf(tool, arg))).toEqual(byForm.get(formOf(tool, arg)));
            expect(calls.findTool(formOf(tool, arg))).toEqual(byTool.get(`t${tool}`));
          }
      }),
    );
  });

  test('past the most it notes, it enters them unasked: a call repeated there is still found at its first record', () => {
    const calls = new EarlierCalls();
    const repeated = storedKey(formOf(0, 0));
    const n = (1 << 18) + 10;
    for (let seq = 0; seq < n; seq++) {
      // Every other record repeats one call; the rest are distinct.
      const key = seq % 2 === 0 ? repeated : storedKey(formOf(1, seq));
      calls.stored(JSON.stringify(`s${seq}`), seq, key.digest, key.digestAt, key.name);
    }
    expect(calls.find(formOf(0, 0))).toEqual({ id: 's0', seq: 0, kind: 'record' });
    expect(calls.find(formOf(1, 1))).toEqual({ id: 's1', seq: 1, kind: 'record' });
    expect(calls.find(formOf(1, n - 1))).toEqual({ id: `s${n - 1}`, seq: n - 1, kind: 'record' });
    expect(calls.find(formOf(1, 2))).toBeUndefined();
    expect(calls.findTool(formOf(1, 7))).toEqual({ id: 's1', seq: 1, kind: 'record' });
  });
});
