/**
 * A member named "__proto__" — legal JSON, kept by JSON.parse as an own member — at several depths of a v3
 * step round-trips: append, verify, publish without withholding it and with it (and a unit inside it)
 * withheld, verify the publication against the original head, open a withheld unit (disclose), and an
 * approval request whose arguments hold one is granted, run and verified. Its canonical bytes never change.
 * A plain `o[k] = v` sets the object's prototype instead and drops the member: publish failed with
 * NOT_PLAIN_OBJECT, and approve's comparison of the call read the request as malformed.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { openUnitV3, verifyUnitOpening } from '../../src/redact/v3-opening.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { alice, tempDir, v3Run } from '../approval/helpers.js';
import { published, v3Journal } from './v3-helpers.js';

const STEP_TEXT =
  '{"input":{"__proto__":{"a":1},"q":"x"},"result":{"__proto__":[1,2],"x":{"__proto__":{"n":[{"__proto__":{"deep":true}}],"secret":"s3cr3t-value-1234"}}}}';
const step = (): Record<string, unknown> => JSON.parse(STEP_TEXT) as Record<string, unknown>;
const own = (v: unknown, k: string): boolean => Object.prototype.hasOwnProperty.call(v, k);
type Rec = { input: Record<string, unknown>; result: Record<string, unknown> };

async function line0(j: Awaited<ReturnType<typeof v3Journal>>): Promise<Rec> {
  for await (const l of j.lines({ from: 0, to: 0 })) return JSON.parse(l.text) as Rec;
  throw new Error('no line 0');
}

describe('members named "__proto__" in a v3 journal', () => {
  it('append and verify keep them: the stored values are canonically the input', async () => {
    const j = await v3Journal([step()]);
    const r = await line0(j);
    expect(canonicalJson(r.input)).toBe(canonicalJson(step().input));
    expect(canonicalJson(r.result)).toBe(canonicalJson(step().result));
    const report = await j.verify({ deep: true } as never);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('publish shows them unchanged when nothing selects them; the receipt verifies against the original head', async () => {
    const j = await v3Journal([step()]);
    const { pub, bytes, head } = await published(j, compilePolicy({ rules: [{ id: 'none', paths: ['/result/y'] }] }));
    const report = await verifyPublishedReceipt(bytes, { expectHead: head });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    const r = JSON.parse(pub.lines[0]!) as Rec;
    expect(canonicalJson(r.input)).toBe(canonicalJson(step().input));
    expect(canonicalJson(r.result)).toBe(canonicalJson(step().result));
  });

  it('publish withholds one and a unit inside another; the receipt verifies; each opens (disclose) to its value', async () => {
    const j = await v3Journal([step()]);
    const policy = compilePolicy({ rules: [{ id: 'p', paths: ['/input/__proto__', '/result/x/__proto__/secret'] }] });
    const { pub, bytes, head } = await published(j, policy);
    const report = await verifyPublishedReceipt(bytes, { expectHead: head });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(pub.lines[0]).not.toContain('s3cr3t-value-1234');
    const r = JSON.parse(pub.lines[0]!) as Rec;
    expect(own(r.input, '__proto__')).toBe(false);
    expect(r.input['$stepchain:withheld']).toHaveLength(1);
    const x = r.result.x as Record<string, Record<string, unknown>>;
    expect(own(x, '__proto__')).toBe(true);
    expect(canonicalJson(x.__proto__!.n)).toBe('[{"__proto__":{"deep":true}}]');
    expect(x.__proto__!['$stepchain:withheld']).toHaveLength(1);
    expect(canonicalJson(r.result.__proto__)).toBe('[1,2]');

    const md = pub.plan.manifestDigest;
    const secret = await verifyUnitOpening(bytes, await openUnitV3(j, 0, '/result/x/__proto__/secret', md));
    expect(secret).toMatchObject({ ok: true, value: 's3cr3t-value-1234' });
    const member = await verifyUnitOpening(bytes, await openUnitV3(j, 0, '/input/__proto__', md));
    expect(member.problems).toEqual([]);
    expect(canonicalJson(member.value)).toBe('{"a":1}');
  });

  it('approve: a request whose arguments hold them is granted, the call runs, and the journal verifies', async () => {
    const { store, run } = await v3Run(tempDir());
    const args = (): unknown => JSON.parse('{"__proto__":{"to":"bob"},"n":[{"__proto__":1}]}');
    const req = await run.requestApproval({ name: 'pay', args: args() as never });
    expect((await run.approvals()).find((a) => a.id === req.id)).toMatchObject({ status: 'pending' });
    expect(await run.decideApproval(req, 'granted', { key: alice.privateKey })).toMatchObject({ status: 'granted' });
    const effect = await run.beginTool({ name: 'pay', args: args() as never, approval: req });
    await effect.complete({ paid: true });
    await run.close?.();
    const report = await store.verify('r1');
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
  it('approve: a call changed only inside a "__proto__" member after the grant is APPROVAL_MISMATCH', async () => {
    const { store, run } = await v3Run(tempDir());
    const args = (to: string): unknown => JSON.parse(`{"__proto__":{"to":"${to}"},"n":[{"__proto__":1}]}`);
    const req = await run.requestApproval({ name: 'pay', args: args('bob') as never });
    await run.decideApproval(req, 'granted', { key: alice.privateKey });
    await run.close?.();
    const j = await store.open('r1');
    let requestHash = '';
    for await (const l of j.lines())
      if (l.text.includes(`"step_id":"${req.id}"`))
        requestHash = (JSON.parse(l.text) as { step_hash: string }).step_hash;
    // An effect written behind the runtime's back, naming the grant, with what the approver never saw.
    await j.append({
      kind: 'tool.started',
      tool_call: { name: 'pay', arguments: args('mallory') },
      meta: { approval: { request: req.id, request_hash: requestHash } },
    } as never);
    await j.close();
    const report = await store.verify('r1');
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code)).toEqual(['APPROVAL_MISMATCH']);
  });
});
