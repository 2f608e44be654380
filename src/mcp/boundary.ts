/**
 * The decisions the proxy takes on each message, whatever carries it (stdio lines, HTTP bodies, SSE
 * events; spec/MCP.md §3, §5): a client's `tools/call` is recorded and admitted, refused or held for
 * approval; a server's response ends the effect it answers; `initialize` creates the run. The transport
 * forwards the bytes it read; this decides only whether, and records.
 */
import { idKey, type JsonRpcId, type Peeked } from './lines.js';
import { listVerdict, needsApproval, type ToolPolicy } from './policy.js';
import { message, type SessionRecorder } from './session.js';
import type { ApprovalOutcome, ApprovalRequest } from '../runtime/index.js';

/** JSON-RPC error codes the proxy answers with (implementation-defined server errors, -32000 to -32099). */
export const MCP_PROXY_ERRORS = {
  /** The call's intent could not be made durable, so it was not forwarded. */
  RECORDING_FAILED: -32010,
  /** The allow/deny lists or the approver refused the call. */
  POLICY_DENIED: -32011,
} as const;

/** An error answer the proxy gives in the server's place. */
export interface Refusal {
  id: JsonRpcId;
  code: number;
  message: string;
}

/** What to do with what the client sent: forward it now, drop it (its refusals answer it), or wait for an approval. */
export type Admission = { kind: 'forward' } | { kind: 'drop' } | { kind: 'held'; approved: Promise<boolean> };

function textOf(result: unknown): string {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (c: { type?: unknown; text?: unknown } | null): c is { type: 'text'; text: string } =>
        c?.type === 'text' && typeof c.text === 'string',
    )
    .map((c) => c.text)
    .join('\n')
    .slice(0, 1000);
}

/** A response's outcome as the journal records it (spec/MCP.md §3). */
export function outcomeOf(m: Peeked): { result: unknown } | { error: unknown } {
  if (m.hasError) {
    const e = (m.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
    return {
      error: {
        name: 'McpError',
        message: typeof e.message === 'string' ? e.message : 'JSON-RPC error',
        code: typeof e.code === 'number' ? e.code : null,
        ...(e.data === undefined ? {} : { data: e.data }),
      },
    };
  }
  if ((m.result as { isError?: unknown } | null)?.isError === true) {
    return {
      error: {
        name: 'McpToolError',
        message: textOf(m.result) || 'the tool reported an error (isError)',
        result: m.result,
      },
    };
  }
  return { result: m.result };
}

/** The client requests recorded as effects. */
const RECORDED = new Set(['tools/call', 'resources/read', 'prompts/get']);

const hasId = (m: Peeked): m is Peeked & { id: JsonRpcId } => m.id !== undefined && m.id !== null;

export class Boundary {
  private readonly initializing = new Set<string>();

  constructor(
    readonly session: SessionRecorder,
    private readonly policy: ToolPolicy,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Refuses a call that could not be recorded as sent (lines.ts Peeked.unrecordable): recorded (and put to an
   * approver) as parsed, it would not be the call forwarded, since the server reads the bytes (…993 where a parse
   * read …992). Before anything is recorded.
   */
  private refusedUnrecordable(m: Peeked & { id: JsonRpcId }, refuse: (r: Refusal) => void): boolean {
    const unrecordable = m.unrecordable();
    if (unrecordable === null) return false;
    this.log(
      `could not record the ${m.method} request ${JSON.stringify(m.id)} as sent (${unrecordable}): refused, not forwarded`,
    );
    refuse({
      id: m.id,
      code: MCP_PROXY_ERRORS.RECORDING_FAILED,
      message: `the ${m.method} request was not forwarded: ${unrecordable}, so it cannot be recorded as sent`,
    });
    return true;
  }

  /** Records a call's intent and applies the lists; the approver's verdict, when there is one, comes later. */
  private async admitCall(m: Peeked & { id: JsonRpcId }, refuse: (r: Refusal) => void): Promise<Admission> {
    const { session, policy } = this;
    if (this.refusedUnrecordable(m, refuse)) return { kind: 'drop' };
    const key = idKey(m.id);
    const params = (m.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: unknown };
    const meta: Record<string, unknown> = { request_id: m.id };
    if (params._meta !== undefined) meta._meta = params._meta;
    // resources/read and prompts/get are recorded as effects named by their method, their params as the
    // arguments (spec/MCP.md §3); the policy governs tools only.
    const isTool = m.method === 'tools/call';
    const tool = !isTool
      ? m.method!
      : typeof params.name === 'string' && params.name !== ''
        ? params.name
        : '(no name)';
    const args = isTool ? params.arguments : m.params;
    // With approval records, a call held for approval is recorded as its request, not yet as an effect:
    // none is begun unless it is granted (spec/MCP.md §5.1).
    if (isTool && session.approvalRecords && needsApproval(policy, tool) && listVerdict(policy, tool) === null)
      return this.holdForApproval(m, tool, params.arguments, meta, refuse);
    const effectId = await session.begin(key, tool, args, meta);
    if (effectId instanceof Error) {
      refuse({
        id: m.id,
        code: MCP_PROXY_ERRORS.RECORDING_FAILED,
        message: `the ${m.method} request was not forwarded: its intent could not be recorded (${effectId.message})`,
      });
      return { kind: 'drop' };
    }
    if (!isTool) return { kind: 'forward' };
    const denied = listVerdict(policy, tool);
    if (denied !== null) {
      await session.end(key, { error: { name: 'McpPolicyDenied', message: denied, tool } });
      refuse({ id: m.id, code: MCP_PROXY_ERRORS.POLICY_DENIED, message: denied });
      return { kind: 'drop' };
    }
    const approve = policy.approve;
    if (approve === undefined) return { kind: 'forward' };
    const approved = (async () => {
      const runId = await session.start().then(
        (r) => r.runId,
        () => null,
      );
      const decision = await approve({
        tool,
        arguments: params.arguments ?? null,
        run_id: runId,
        effect_id: effectId,
        request_id: m.id,
      }).catch((e: unknown) => ({ approved: false, reason: `the approver failed: ${message(e)}` }));
      if (!session.has(key)) return false; // cancelled while it waited
      if (decision.approved) {
        await session.note(key, `approved: ${decision.reason}`);
        return true;
      }
      await session.end(key, { error: { name: 'McpApprovalDenied', message: decision.reason, tool } });
      refuse({
        id: m.id,
        code: MCP_PROXY_ERRORS.POLICY_DENIED,
        message: `the call was not approved: ${decision.reason}`,
      });
      return false;
    })().catch((e: unknown) => {
      this.log(`internal error while a call waited for approval: ${message(e)}; it is not forwarded`);
      return false;
    });
    return { kind: 'held', approved };
  }

  /**
   * A call that needs an approval, on a run with approval records (spec/MCP.md §5.1): approval.requested
   * with the call as presented, then the decision — an approver's, written by `stepchain approve` from any
   * process, or the approval command's (which may sign itself, else the proxy's approver key signs its
   * verdict) — and only on a grant the call's tool.started, naming the request, before it is forwarded.
   */
  private async holdForApproval(
    m: Peeked & { id: JsonRpcId },
    tool: string,
    args: unknown,
    meta: Record<string, unknown>,
    refuse: (r: Refusal) => void,
  ): Promise<Admission> {
    const { session, policy } = this;
    const key = idKey(m.id);
    const timeout = policy.approvalTimeoutMs ?? 300_000;
    const request = await session.requestApproval(key, tool, args, meta, new Date(Date.now() + timeout));
    if (request instanceof Error) {
      refuse({
        id: m.id,
        code: MCP_PROXY_ERRORS.RECORDING_FAILED,
        message: `the tools/call request was not forwarded: its approval request could not be recorded (${request.message})`,
      });
      return { kind: 'drop' };
    }
    const approved = (async (): Promise<boolean> => {
      const journal = await session.location().catch(() => null);
      let outcome: ApprovalOutcome | Error | null;
      let ownDecision = false; // signed here with --approver-key, from the approval command's verdict
      if (policy.approve !== undefined) {
        const run = await session.start();
        const verdict = await policy
          .approve({
            tool,
            arguments: args ?? null,
            run_id: run.runId,
            effect_id: null,
            request_id: m.id,
            approval: { request: request.id, request_hash: request.stepHash, journal, expires_at: request.expiresAt },
          })
          .catch((e: unknown) => ({ approved: false, reason: `the approver failed: ${message(e)}` }));
        // The command may have signed its decision itself (stepchain approve); else the proxy's key signs its verdict.
        outcome = await session
          .decisionOn(request)
          .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
        if (outcome === null && policy.approverKey !== undefined && !session.wasStopped(key)) {
          ownDecision = true;
          outcome = await session.decide(
            request,
            verdict.approved ? 'granted' : 'denied',
            policy.approverKey.key,
            policy.approverKey.name,
            verdict.reason,
          );
        }
        if (outcome === null) {
          outcome = new Error(
            `the approval command ${verdict.approved ? 'approved' : 'denied'} the call (${verdict.reason}) but no approver signed a decision: sign one with stepchain approve, or give the proxy --approver-key`,
          );
        }
      } else {
        this.log(
          `call ${JSON.stringify(tool)} (request id ${JSON.stringify(m.id)}) waits for approval until ${request.expiresAt ?? 'it is decided'}: stepchain approve ${journal ?? '<journal>'} ${request.id} --key FILE (--approve | --deny) [--reason TEXT]`,
        );
        outcome = await session.awaitApproval(key, request);
      }
      return this.settle({ id: m.id, key, tool, args, meta, refuse }, request, outcome, ownDecision);
    })().catch((e: unknown) => {
      session.doneWaiting(key);
      this.log(`internal error while a call waited for approval: ${message(e)}; it is not forwarded`);
      refuse({ id: m.id, code: MCP_PROXY_ERRORS.POLICY_DENIED, message: `the call was not approved: ${message(e)}` });
      return false;
    });
    return { kind: 'held', approved };
  }

  /**
   * A held call's decision settled: not forwarded when the client stopped waiting, refused when denied,
   * expired or granted by a key that is not one of the proxy's approvers; else its tool.started recorded,
   * naming the request, and true (forward it).
   */
  private async settle(
    call: {
      id: JsonRpcId;
      key: string;
      tool: string;
      args: unknown;
      meta: Record<string, unknown>;
      refuse: (r: Refusal) => void;
    },
    request: ApprovalRequest,
    outcome: ApprovalOutcome | Error,
    ownDecision: boolean,
  ): Promise<boolean> {
    // A call the client cancelled (or left, closing the session) while it waited: neither forwarded nor answered.
    const stopped = this.session.wasStopped(call.key);
    this.session.doneWaiting(call.key);
    if (stopped) return false;
    const no = (why: string): false => {
      call.refuse({ id: call.id, code: MCP_PROXY_ERRORS.POLICY_DENIED, message: `the call was not approved: ${why}` });
      return false;
    };
    if (outcome instanceof Error) return no(outcome.message);
    const who = outcome.approver === null ? '' : ` by ${outcome.approver.name ?? 'key'} ${outcome.approver.keyid}`;
    const why = outcome.reason === null ? '' : `: ${outcome.reason}`;
    if (outcome.status === 'denied') return no(`denied${who}${why} (approval ${request.id})`);
    if (outcome.status === 'expired')
      return no(`no decision before the request expired at ${request.expiresAt} (approval ${request.id})`);
    if (
      !ownDecision &&
      this.policy.approvers !== undefined &&
      !this.policy.approvers.has(outcome.approver?.keyid ?? '')
    ) {
      return no(
        `granted by key ${outcome.approver?.keyid ?? '(none)'}${outcome.approver?.name == null ? '' : ` (calling itself ${outcome.approver.name})`}, which is not one of the proxy's approvers (--approver) (approval ${request.id})`,
      );
    }
    const begun = await this.session.beginApproved(call.key, call.tool, call.args, call.meta, request);
    if (begun instanceof Error) {
      call.refuse({
        id: call.id,
        code: MCP_PROXY_ERRORS.RECORDING_FAILED,
        message: `the approved call was not forwarded: its intent could not be recorded (${begun.message})`,
      });
      return false;
    }
    this.log(`call ${JSON.stringify(call.tool)} approved${who}${why}; forwarded as effect ${begun}`);
    return true;
  }

  /** Stops every call waiting for a decision: the client closed the session. */
  closing(): void {
    this.session.stopAllWaiting('the client closed the session');
  }

  /** What the client sent (one message, or a batch's): noted, recorded, and admitted or not. */
  async fromClient(messages: readonly Peeked[], refuse: (r: Refusal) => void): Promise<Admission> {
    const { session } = this;
    for (const m of messages) {
      // The client's answer to the server's sampling request ends its model request.
      if (m.method === undefined && hasId(m) && (m.hasResult || m.hasError) && session.hasModel(idKey(m.id))) {
        await session.endModel(idKey(m.id), outcomeOf(m));
      }
      if (m.method === 'initialize' && hasId(m)) {
        session.noteInitialize(m.params);
        this.initializing.add(idKey(m.id));
      }
      if (m.method === 'notifications/cancelled') {
        const p = (m.params ?? {}) as { requestId?: unknown; reason?: unknown };
        if (
          (typeof p.requestId === 'string' || typeof p.requestId === 'number') &&
          session.isWaiting(idKey(p.requestId))
        ) {
          // Waiting for its approval: it is not forwarded; its request stays undecided (and expires).
          session.stopWaiting(idKey(p.requestId), 'the client cancelled the call');
        } else if (
          (typeof p.requestId === 'string' || typeof p.requestId === 'number') &&
          session.has(idKey(p.requestId))
        ) {
          const reason = typeof p.reason === 'string' ? p.reason : null;
          await session.end(idKey(p.requestId), {
            error: {
              name: 'McpCancelled',
              message: `the client cancelled the call${reason === null ? '' : `: ${reason}`}`,
              reason,
            },
          });
        }
      }
    }
    const calls = messages.filter((m): m is Peeked & { id: JsonRpcId } => RECORDED.has(m.method ?? '') && hasId(m));
    if (calls.length === 0) return { kind: 'forward' };
    if (calls.length === 1 && messages.length === 1) return this.admitCall(calls[0]!, refuse);
    // A JSON-RPC batch holding calls: forwarded whole only if every call in it may go, since forwarding a
    // part would mean re-encoding it. Otherwise each request in it is answered with an error.
    let all = true;
    for (const c of calls) {
      const a = await this.admitCall(c, refuse);
      if (a.kind === 'drop' || (a.kind === 'held' && !(await a.approved))) all = false;
    }
    if (all) return { kind: 'forward' };
    const why = 'the batch holding this request was refused, since a call in it was';
    for (const c of calls) {
      if (!session.has(idKey(c.id))) continue; // refused on its own, and answered
      await session.end(idKey(c.id), { error: { name: 'McpPolicyDenied', message: why, tool: null } });
      refuse({ id: c.id, code: MCP_PROXY_ERRORS.POLICY_DENIED, message: why });
    }
    for (const m of messages)
      if (m.method !== undefined && !RECORDED.has(m.method) && hasId(m))
        refuse({ id: m.id, code: MCP_PROXY_ERRORS.POLICY_DENIED, message: why });
    return { kind: 'drop' };
  }

  /** What the server sent: a response to initialize creates the run, a response to a recorded call ends its effect. */
  async fromServer(messages: readonly Peeked[]): Promise<void> {
    for (const m of messages) {
      if (m.method === 'sampling/createMessage' && hasId(m)) await this.session.beginModel(idKey(m.id), m.params, m.id);
      if (m.method !== undefined || !hasId(m) || !(m.hasResult || m.hasError)) continue;
      const key = idKey(m.id);
      if (this.initializing.delete(key)) {
        if (m.hasResult) await this.session.start(m.result).catch(() => undefined);
      } else if (this.session.has(key)) {
        const why = m.unrecordable();
        await this.session.end(key, why === null ? outcomeOf(m) : { unrecordable: why });
      }
    }
  }
}
