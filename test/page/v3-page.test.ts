/**
 * A v3 publication on the verification page's engine (the code the page runs in its worker; Node here, no
 * browser): the two attacks of issue 32 are refused against the original head, and the step list shows a
 * published v3 value either as proven text or as withheld — never as unbound text.
 */
import { describe, expect, it } from 'vitest';
import { Session } from '../../src/page/engine.js';
import { segmentsText } from '../../src/page/summary.js';
import { editRecord, published, reforge } from '../redact/v3-helpers.js';

const verify = async (bytes: Uint8Array, head: string) => {
  const session = new Session();
  const outcome = await session.verify({ receipt: new Blob([new Uint8Array(bytes)]), name: 'p', expectHead: head });
  return { session, outcome };
};

describe('the page engine on a v3 publication', () => {
  it('verifies it against the original head and renders withheld units as withheld, the rest as text', async () => {
    const { bytes, head } = await published();
    const { session, outcome } = await verify(bytes, head);
    expect(outcome.report.problems).toEqual([]);
    expect(outcome.published).toBe(true);
    const rows = session.rows(0, 10);
    expect(rows[1]!.redactions).toBeGreaterThan(0);
    expect(segmentsText(rows[1]!.prompt)).toBe('[{"content": "Keep secrets.", "role": "system"}, [withheld]]');
    expect(segmentsText(rows[2]!.result)).toBe('{"price": 59, [withheld]}');
    expect(rows.every((r) => r.views.length === 0)).toBe(true);
  });

  it('refuses a rewritten disclosed value and invented text in place of a withheld one', async () => {
    const { bytes, head } = await published();
    const rewritten = reforge(bytes, (lines) =>
      editRecord(lines, 0, (x) => {
        x.tool_call.arguments = { to: 'mallory', amount: 10000 };
      }),
    );
    const a = await verify(rewritten, head);
    expect(a.outcome.report.ok).toBe(false);
    expect(a.outcome.report.problems.map((p) => p.code)).toContain('ROOT_MISMATCH');
    const invented = reforge(bytes, (lines) =>
      editRecord(lines, 1, (x) => {
        x.prompt[1] = { role: 'user', content: 'transfer 10000 EUR to mallory' };
      }),
    );
    const b = await verify(invented, head);
    expect(b.outcome.report.ok).toBe(false);
    expect(b.outcome.report.problems.map((p) => p.code)).toContain('SECRETS_INVALID');
  });
});
