/**
 * Human approval of a tool call through LangGraph's interrupt flow, on the approval records of
 * spec/APPROVALS.md (spec/LANGGRAPH.md §9). A node records the call it wants to make as approval.requested
 * in a stepchain/v3 run and hands the graph's `interrupt()` the request (what the approver is shown); the
 * approver signs a decision over exactly that request with their own key, wherever they are; the graph is
 * resumed with `new Command({ resume: signed })`, and the node, run again from its start as LangGraph
 * does, records the signed decision and runs the tool only on a grant, its effect naming the request.
 * Nothing here imports LangGraph: `interrupt` and `Command` are the caller's, from `@langchain/langgraph`.
 */
import {
  approvalStatement,
  signApproval,
  type ApprovalOutcome,
  type ApprovalRequest,
  type ApprovalStatement,
  type DecisionMeta,
  type JournalInput,
  type KeyInput,
  type Run,
} from '../../runtime.js';
import { LangGraphError } from './errors.js';

/** What a node hands `interrupt()`: the recorded request, all an approver needs to see and to sign. */
export interface ApprovalPrompt {
  type: 'stepchain.approval-request';
  run_id: string;
  /** The approval.requested record's step_id, seq and step hash, and the run journal's genesis hash. */
  request: string;
  request_seq: number;
  request_hash: string;
  genesis_hash: string;
  /**
   * The presented call (APPROVALS.md §2): what the approver approves, exactly. The statement binds it through
   * `request_hash`, the record's step hash, which commits to it with salted digests (no unsalted digest is shown).
   */
  presented: { name: string; arguments: unknown };
  expires_at: string | null;
}

/** What the approver sends back through `Command({ resume })`: the signed statement and its signature. */
export interface SignedApproval {
  type: 'stepchain.approval-decision';
  input: ApprovalStatement;
  meta: DecisionMeta;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Records the call as approval.requested in `run` (a stepchain/v3 run) and returns the prompt for
 * `interrupt()`. `id` names the request: LangGraph runs the node again from its start when the graph is
 * resumed, so the same id returns the request already recorded (it must present the same call).
 */
export async function requestToolApproval(
  run: Run,
  call: { name: string; args?: JournalInput },
  options: { id: string; expiresAt?: Date | string },
): Promise<ApprovalPrompt> {
  if (!isObject(options) || typeof options.id !== 'string' || options.id === '') {
    throw new LangGraphError(
      'LANGGRAPH_APPROVAL_INVALID',
      'requestToolApproval needs { id }: a name for the request that stays the same when LangGraph runs the node again on resume',
    );
  }
  await run.refresh();
  const known = (await run.approvals()).find((a) => a.id === options.id);
  const request: ApprovalRequest =
    known ??
    (await run.requestApproval(call, {
      id: options.id,
      ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
    }));
  if (known !== undefined && (known.call.name !== call.name || !sameJson(known.call.arguments, call.args ?? null))) {
    throw new LangGraphError(
      'LANGGRAPH_APPROVAL_INVALID',
      `approval request ${JSON.stringify(options.id)} (seq ${known.seq}) presented another call (${JSON.stringify(known.call.name)}): give this call an id of its own`,
    );
  }
  return promptOf(run, request);
}

function promptOf(run: Run, request: ApprovalRequest): ApprovalPrompt {
  return {
    type: 'stepchain.approval-request',
    run_id: run.runId,
    request: request.id,
    request_seq: request.seq,
    request_hash: request.stepHash,
    genesis_hash: request.genesisHash,
    presented: { name: request.call.name, arguments: request.call.arguments },
    expires_at: request.expiresAt,
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (isObject(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical(v[k])]),
    );
  return v;
}

/**
 * The approver's side: signs `decision` over the request the prompt shows, with the approver's Ed25519 key
 * (a 32-byte seed or PKCS#8 PEM). The result is what the graph is resumed with. Pure; no journal needed.
 */
export function signToolApproval(
  prompt: ApprovalPrompt,
  decision: 'granted' | 'denied',
  options: { key: KeyInput; name?: string; reason?: string; decidedAt?: Date },
): SignedApproval {
  const input = approvalStatement(
    {
      id: prompt.request,
      seq: prompt.request_seq,
      stepHash: prompt.request_hash,
      genesisHash: prompt.genesis_hash,
    },
    decision,
    {
      ...(options.reason === undefined ? {} : { reason: options.reason }),
      ...(options.decidedAt === undefined ? {} : { decidedAt: options.decidedAt }),
    },
  );
  return { type: 'stepchain.approval-decision', input, meta: signApproval(input, options.key, options.name) };
}

/**
 * The node's side, with what `interrupt()` returned on resume: records the signed decision (checked against
 * its signature and the request it names; APPROVALS.md §3) and returns the outcome. A decision already
 * recorded for the request (the node ran again) is returned as it is. Anything that is not a signed
 * decision over this request is refused (LANGGRAPH_APPROVAL_INVALID) and nothing is recorded; with
 * `approvers` (key ids), so is a decision signed by any other key.
 */
export async function recordToolApproval(
  run: Run,
  prompt: ApprovalPrompt,
  resumed: unknown,
  options: { approvers?: readonly string[] } = {},
): Promise<ApprovalOutcome> {
  if (
    !isObject(resumed) ||
    resumed.type !== 'stepchain.approval-decision' ||
    !isObject(resumed.input) ||
    !isObject(resumed.meta)
  ) {
    throw new LangGraphError(
      'LANGGRAPH_APPROVAL_INVALID',
      `the graph was resumed with something that is not a signed approval decision for request ${JSON.stringify(prompt.request)}: resume with new Command({ resume: signToolApproval(prompt, 'granted' | 'denied', { key }) })`,
    );
  }
  if (resumed.input.request !== prompt.request) {
    throw new LangGraphError(
      'LANGGRAPH_APPROVAL_INVALID',
      `the decision the graph was resumed with is for request ${JSON.stringify(resumed.input.request)}, not ${JSON.stringify(prompt.request)}`,
    );
  }
  // Pinned approvers (their key ids, sha256:… as `stepchain keygen` prints them): anyone can sign a statement,
  // so where the resume value could come from someone else, only these keys' decisions are recorded.
  const keyid = isObject(resumed.meta.approver) ? resumed.meta.approver.keyid : undefined;
  if (options.approvers !== undefined && (typeof keyid !== 'string' || !options.approvers.includes(keyid))) {
    throw new LangGraphError(
      'LANGGRAPH_APPROVAL_INVALID',
      `the decision on request ${JSON.stringify(prompt.request)} is signed by key ${typeof keyid === 'string' ? keyid : '(none)'}, which is not one of the approvers given: nothing is recorded`,
    );
  }
  return run.recordApprovalDecision(prompt.request, {
    input: resumed.input as unknown as ApprovalStatement,
    meta: resumed.meta as unknown as DecisionMeta,
  });
}
