/**
 * Human approval of a tool call through LangGraph's own interrupt flow (spec/LANGGRAPH.md §9), with the
 * real @langchain/langgraph on StepchainSaver: a node records the call as approval.requested and
 * interrupts; the approver signs a decision in another process with their own key (the graph process never
 * holds it); the graph is resumed with Command({ resume }) carrying it; the node records the decision and
 * runs the tool only on a grant, its effect naming the request. A denied call is never run, a forged or
 * mismatched decision is refused and nothing is recorded, and both journals verify.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotation, Command, END, START, StateGraph, interrupt, isInterrupted } from '@langchain/langgraph';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../../src/index.js';
import { startRun, type Run } from '../../../src/runtime/index.js';
import {
  StepchainSaver,
  recordToolApproval,
  requestToolApproval,
  signToolApproval,
  type ApprovalPrompt,
} from '../../../src/adapters/langgraph/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { CLI, runNode } from '../../hardening/support.js';

const root = tempDir('stepchain-langgraph-approval-');
const T = 180_000;
const DIST_LANGGRAPH = fileURLToPath(new URL('../../../dist/adapters/langgraph/index.js', import.meta.url));

/** The approver, a process of its own: reads the prompt, signs the decision with its key file, prints it. */
function approverSigns(
  prompt: ApprovalPrompt,
  decision: 'granted' | 'denied',
  keyFile: string,
  reason: string,
): unknown {
  const script = `import { readFileSync } from 'node:fs';
import { signToolApproval } from ${JSON.stringify(DIST_LANGGRAPH)};
const prompt = JSON.parse(readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(signToolApproval(prompt, ${JSON.stringify(decision)}, { key: { pem: readFileSync(${JSON.stringify(keyFile)}, 'utf8') }, name: 'carol', reason: ${JSON.stringify(reason)} })));`;
  return JSON.parse(
    execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      input: JSON.stringify(prompt),
      encoding: 'utf8',
    }),
  );
}

/** A graph whose `refund` node asks for approval before it pays, recording into `run`; `paid` lists what it paid. */
function refundGraph(saver: StepchainSaver, run: Run, paid: unknown[], approvers?: string[]) {
  const State = Annotation.Root({
    order: Annotation<number>(),
    amount: Annotation<number>(),
    outcome: Annotation<string>(),
  });
  return new StateGraph(State)
    .addNode('refund', async (s) => {
      const call = { name: 'refund', args: { order: s.order, amount: s.amount } };
      // Run again from its start when the graph is resumed: the same id finds the request already recorded.
      const prompt = await requestToolApproval(run, call, { id: `refund-${s.order}` });
      const decision = await recordToolApproval(
        run,
        prompt,
        interrupt(prompt),
        approvers === undefined ? {} : { approvers },
      );
      if (decision.status !== 'granted')
        return { outcome: `not refunded: ${decision.status} by ${decision.approver?.name} (${decision.reason})` };
      const effect = await run.beginTool({ ...call, approval: prompt.request });
      paid.push(call.args);
      await effect.complete({ refunded: s.amount });
      return { outcome: `refunded ${s.amount}` };
    })
    .addEdge(START, 'refund')
    .addEdge('refund', END)
    .compile({ checkpointer: saver });
}

describe('LangGraph interrupt flow on approval records', () => {
  test(
    'a grant signed in another process runs the tool once, its effect naming the request; a denial never runs it',
    async () => {
      const store = new FileStore(join(root, 'journals'), { fsync: 'none' });
      const saver = new StepchainSaver({ store });
      const run = await startRun(store, { runId: 'refund-agent', format: 'stepchain/v3' });
      const key = join(root, 'carol.key');
      const made = spawnSync(process.execPath, [CLI, 'keygen', '-o', key], { encoding: 'utf8' });
      const carol = /key id (sha256:[0-9a-f]{64})/.exec(made.stdout + made.stderr)![1]!;
      const paid: unknown[] = [];
      const app = refundGraph(saver, run, paid, [carol]); // only carol's decisions are recorded

      const granted = { configurable: { thread_id: 'order-1042' } };
      const first = await app.invoke({ order: 1042, amount: 30 }, granted);
      expect(isInterrupted(first)).toBe(true);
      const prompt = (first as unknown as { __interrupt__: Array<{ value: ApprovalPrompt }> }).__interrupt__[0]!.value;
      expect(prompt).toMatchObject({
        type: 'stepchain.approval-request',
        request: 'refund-1042',
        presented: { name: 'refund', arguments: { order: 1042, amount: 30 } },
      });
      expect(paid).toEqual([]);
      const done = await app.invoke(
        new Command({ resume: approverSigns(prompt, 'granted', key, 'within policy') }),
        granted,
      );
      expect(done.outcome).toBe('refunded 30');
      expect(paid).toEqual([{ order: 1042, amount: 30 }]);

      const denied = { configurable: { thread_id: 'order-1043' } };
      const asked = await app.invoke({ order: 1043, amount: 9000 }, denied);
      const prompt2 = (asked as unknown as { __interrupt__: Array<{ value: ApprovalPrompt }> }).__interrupt__[0]!.value;
      const after = await app.invoke(
        new Command({ resume: approverSigns(prompt2, 'denied', key, 'too much') }),
        denied,
      );
      expect(after.outcome).toBe('not refunded: denied by carol (too much)');
      expect(paid).toHaveLength(1); // the denied call never ran

      const approvals = await run.approvals();
      // One request per call, though the node ran twice for each (interrupt, then resume).
      expect(approvals.map((a) => [a.id, a.status, a.approver?.name, a.reason])).toEqual([
        ['refund-1042', 'granted', 'carol', 'within policy'],
        ['refund-1043', 'denied', 'carol', 'too much'],
      ]);
      const effects = await run.effects();
      expect(effects.map((e) => [e.tool, e.status])).toEqual([['refund', 'completed']]);
      expect(approvals[0]!.effect).toBe(effects[0]!.id);
      expect(approvals[1]!.effect).toBeNull();
      await run.complete();
      await run.close();
      // The run's approvals and effects verify (the thread journals are the saver's, tested on their own).
      const report = await runNode([CLI, 'verify', join(root, 'journals', 'refund-agent')], { timeoutMs: 120_000 });
      expect(report.code, `${report.stdout}${report.stderr}`).toBe(0);
      await saver.close();
      expect(readFileSync(key, 'utf8')).toContain('PRIVATE KEY'); // the key stayed in the approver's file
    },
    T,
  );

  test(
    'a resume that is not a signed decision over this request, or is signed by a key not pinned, is refused, and nothing is recorded for it',
    async () => {
      const store = new FileStore(join(root, 'hostile'), { fsync: 'none' });
      const saver = new StepchainSaver({ store });
      const run = await startRun(store, { runId: 'agent', format: 'stepchain/v3' });
      const paid: unknown[] = [];
      const seed = new Uint8Array(32).fill(7);
      // The key id of `seed` (any signature names it): the one approver this graph trusts.
      const trusted = signToolApproval(
        {
          type: 'stepchain.approval-request',
          run_id: '',
          request: '',
          request_seq: 0,
          request_hash: '',
          genesis_hash: '',
          presented: { name: '', arguments: null },
          expires_at: null,
        },
        'granted',
        { key: seed },
      ).meta.approver.keyid;
      const app = refundGraph(saver, run, paid, [trusted]);
      // Each on a thread of its own (LangGraph keeps a resume value it was given, even when the node then failed):
      // a plain "yes", a grant signed over another request record (its step hash), a grant whose statement was edited after signing.
      const cases: Array<[number, (p: ApprovalPrompt) => unknown, RegExp]> = [
        [7, () => 'yes', /not a signed approval decision/],
        [
          8,
          (p) => signToolApproval({ ...p, request_hash: `sha256:${'0'.repeat(64)}` }, 'granted', { key: seed }),
          /names request seq/,
        ],
        [
          9,
          (p) => {
            const d = signToolApproval(p, 'denied', { key: seed });
            d.input.decision = 'granted';
            return d;
          },
          /does not verify/,
        ],
        [
          10,
          (p) => signToolApproval(p, 'granted', { key: new Uint8Array(32).fill(8), name: 'carol' }),
          /not one of the approvers given/,
        ],
      ];
      for (const [order, resume, why] of cases) {
        const cfg = { configurable: { thread_id: `order-${order}` } };
        const asked = await app.invoke({ order, amount: 5 }, cfg);
        const prompt = (asked as unknown as { __interrupt__: Array<{ value: ApprovalPrompt }> }).__interrupt__[0]!
          .value;
        await expect(app.invoke(new Command({ resume: resume(prompt) }), cfg)).rejects.toThrow(why);
      }
      expect(paid).toEqual([]);
      expect((await run.approvals()).map((a) => [a.id, a.status])).toEqual([
        ['refund-7', 'pending'],
        ['refund-8', 'pending'],
        ['refund-9', 'pending'],
        ['refund-10', 'pending'],
      ]);
      expect(await run.effects()).toEqual([]);
      await run.close();
      await saver.close();
    },
    T,
  );
});
