/**
 * Policy at the boundary (spec/MCP.md §5): which tools a session may call, and an approval that holds a
 * call until someone says yes. A refused call is recorded (its intent, then its failure naming the policy)
 * and never reaches the server. An approver that cannot be asked, or does not answer yes, refuses: the
 * proxy fails closed.
 */
import { spawn } from 'node:child_process';
import type { KeyInput } from '../runtime/index.js';

export interface ToolCallRequest {
  tool: string;
  arguments: unknown;
  run_id: string | null;
  /** The call's effect (v2: its tool.started precedes the decision); null with approval records, where none is begun before a grant. */
  effect_id: string | null;
  request_id: string | number;
  /** With approval records (a stepchain/v3 run, spec/MCP.md §5.1): the recorded request, for `stepchain approve`. */
  approval?: { request: string; request_hash: string; journal: string | null; expires_at: string | null };
}

export interface Decision {
  approved: boolean;
  /** Who decided and why, as recorded. */
  reason: string;
}

export interface ToolPolicy {
  /** When given, only these tools may be called. */
  allow?: readonly string[];
  /** These tools may never be called (deny wins over allow). */
  deny?: readonly string[];
  /** Asked for each call the lists let through (or, with `approveTools`, for those tools' calls); the call waits for its answer. */
  approve?: (call: ToolCallRequest) => Promise<Decision>;
  /**
   * Tools whose calls need an approval. Default: every call when `approve` is given, none otherwise. With
   * approval records and no `approve`, the decision is an approver's, recorded by `stepchain approve`.
   */
  approveTools?: readonly string[];
  /** With approval records: the key that signs `approve`'s verdict when the approver did not record one itself. */
  approverKey?: { key: KeyInput; name?: string };
  /**
   * With approval records: the key ids (sha256:…) of the approvers whose grants let a call through. Given, a
   * grant signed by any other key (anyone able to write the journal) is refused as a denial would be.
   */
  approvers?: ReadonlySet<string>;
  /** With approval records: how long a call waits for its decision, in ms (the request's expiry). Default 5 minutes. */
  approvalTimeoutMs?: number;
}

/** Whether a call of `tool` must be approved before it is forwarded. */
export function needsApproval(policy: ToolPolicy, tool: string): boolean {
  if (policy.approveTools !== undefined) return policy.approveTools.includes(tool);
  return policy.approve !== undefined;
}

/** The lists' verdict on a tool: null when it may go on (to the approver, if any), else why not. */
export function listVerdict(policy: ToolPolicy, tool: string): string | null {
  if (policy.deny?.includes(tool)) return `tool ${JSON.stringify(tool)} is denied by the proxy's policy (--deny)`;
  if (policy.allow !== undefined && !policy.allow.includes(tool))
    return `tool ${JSON.stringify(tool)} is not in the proxy's allow list (--allow)`;
  return null;
}

/** The first line of text an approver wrote, without control characters, at most 200 characters. */
function firstLine(text: string): string {
  return (text.split('\n')[0] ?? '')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
    .trim()
    .slice(0, 200);
}

/**
 * An approver that runs `command` (through /bin/sh) once per call, with the call as one JSON line on its
 * standard input: exit status 0 approves, any other status (or failing to start) denies. The first line it
 * writes to standard output is recorded as the reason. Its standard error goes to the proxy's.
 */
export function commandApprover(command: string): (call: ToolCallRequest) => Promise<Decision> {
  return (call) =>
    new Promise<Decision>((resolve) => {
      const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        if (out.length < 4096) out += c;
      });
      child.stdin.on('error', () => {});
      child.stdin.end(`${JSON.stringify(call)}\n`);
      child.on('error', (e) => resolve({ approved: false, reason: `the approver could not be started: ${e.message}` }));
      child.on('close', (code, signal) => {
        const said = firstLine(out);
        if (code === 0) resolve({ approved: true, reason: said === '' ? `approved by ${command}` : said });
        else
          resolve({
            approved: false,
            reason: said === '' ? `denied by ${command} (${signal ?? `exit ${code}`})` : said,
          });
      });
    });
}
