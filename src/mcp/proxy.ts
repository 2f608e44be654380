/**
 * The stdio proxy (spec/MCP.md): launches the server, forwards every line both ways as the bytes that
 * arrived, and records each `tools/call`. Each direction is one queue, so messages leave in the order they
 * came: a `tools/call` is forwarded only once its intent is durable (or answered with a JSON-RPC error when
 * it cannot be recorded or the policy refuses it); a response to a call is forwarded once its outcome is
 * recorded (or, when that fails, anyway: recording never holds back an answer). A call waiting for approval
 * is held alone, off the queue, so pings, other calls and cancellations pass while it waits.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { errorLine, idKey, peek, readLines, type JsonRpcId, type Peeked } from './lines.js';
import { listVerdict, type ToolPolicy } from './policy.js';
import { message, SessionRecorder, type SessionOptions } from './session.js';

/** JSON-RPC error codes the proxy answers with (implementation-defined server errors, -32000 to -32099). */
export const MCP_PROXY_ERRORS = {
  /** The call's intent could not be made durable, so it was not forwarded. */
  RECORDING_FAILED: -32010,
  /** The allow/deny lists or the approver refused the call. */
  POLICY_DENIED: -32011,
} as const;

export interface ProxyOptions extends Omit<SessionOptions, 'command'> {
  command: string;
  args: readonly string[];
  policy?: ToolPolicy;
  /** The client's side: what it writes (our input) and what it reads (our output). */
  input: Readable;
  output: Writable;
  /** How long the server has to exit after its input is closed before SIGTERM (MCP's stdio shutdown), in ms. */
  graceMs?: number;
}

export interface ProxyExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the server could not be started. */
  error?: Error;
}

/** A handle on a running proxy: its end, and a way to pass a signal to the server. */
export interface RunningProxy {
  done: Promise<ProxyExit>;
  kill(signal: NodeJS.Signals): void;
}

function textOf(result: unknown): string {
  const content = (result as { content?: unknown } | null)?.content;
  if (!Array.isArray(content)) return '';
  return content.filter((c): c is { type: 'text'; text: string } => c?.type === 'text' && typeof c.text === 'string').map((c) => c.text).join('\n').slice(0, 1000);
}

/** A response's outcome as the journal records it (spec/MCP.md §3). */
export function outcomeOf(m: Peeked): { result: unknown } | { error: unknown } {
  if (m.hasError) {
    const e = (m.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
    return { error: { name: 'McpError', message: typeof e.message === 'string' ? e.message : 'JSON-RPC error', code: typeof e.code === 'number' ? e.code : null, ...(e.data === undefined ? {} : { data: e.data }) } };
  }
  if ((m.result as { isError?: unknown } | null)?.isError === true) {
    return { error: { name: 'McpToolError', message: textOf(m.result) || 'the tool reported an error (isError)', result: m.result } };
  }
  return { result: m.result };
}

/**
 * Starts the server and the proxy between it and the client. Longer than 80 lines because the two
 * directions' queues, the calls held for approval and the shutdown share this closure's state; split into
 * functions, each would take all of it as arguments.
 */
export function startProxy(options: ProxyOptions): RunningProxy {
  const log = options.log;
  const session = new SessionRecorder({ ...options, command: [options.command, ...options.args] });
  const policy = options.policy ?? {};
  const child = spawn(options.command, [...options.args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const toServer = (line: Buffer): void => { if (child.stdin.writable) child.stdin.write(line); };
  const toClient = (line: Buffer): void => { options.output.write(line); };
  child.stdin.on('error', (e) => log(`the server's input closed: ${message(e)}`));
  options.output.on('error', (e) => log(`the client's side closed: ${message(e)}`));

  const initializing = new Set<string>();
  const held = new Set<Promise<void>>();
  let fromClient: Promise<void> = Promise.resolve();
  let fromServer: Promise<void> = Promise.resolve();
  const inTurn = (chain: Promise<void>, work: () => Promise<void>): Promise<void> =>
    chain.then(work).catch((e: unknown) => log(`internal error, the message was forwarded: ${message(e)}`));

  const refuse = (id: JsonRpcId, code: number, why: string): void => toClient(errorLine(id, code, `stepchain mcp: ${why}`));

  /** Records a call's intent and applies the policy; true when the line may be forwarded now. */
  async function admit(m: Peeked, line: Buffer, single: boolean): Promise<'forward' | 'refused' | 'held'> {
    const id = m.id as JsonRpcId;
    const key = idKey(id);
    const params = (m.params ?? {}) as { name?: unknown; arguments?: unknown; _meta?: unknown };
    const tool = typeof params.name === 'string' && params.name !== '' ? params.name : '(no name)';
    const meta: Record<string, unknown> = { request_id: id };
    if (params._meta !== undefined) meta._meta = params._meta;
    const effectId = await session.begin(key, tool, params.arguments, meta);
    if (effectId instanceof Error) {
      refuse(id, MCP_PROXY_ERRORS.RECORDING_FAILED, `the call was not forwarded: its intent could not be recorded (${effectId.message})`);
      return 'refused';
    }
    const denied = listVerdict(policy, tool);
    if (denied !== null) {
      await session.end(key, { error: { name: 'McpPolicyDenied', message: denied, tool } });
      refuse(id, MCP_PROXY_ERRORS.POLICY_DENIED, denied);
      return 'refused';
    }
    if (policy.approve === undefined) return 'forward';
    const approve = policy.approve;
    const waiting = (async () => {
      const runId = await session.start().then((r) => r.runId, () => null);
      const decision = await approve({ tool, arguments: params.arguments ?? null, run_id: runId, effect_id: effectId, request_id: id })
        .catch((e: unknown) => ({ approved: false, reason: `the approver failed: ${message(e)}` }));
      if (!session.has(key)) return; // cancelled while it waited
      if (decision.approved) {
        await session.note(key, `approved: ${decision.reason}`);
        if (single) toServer(line);
      } else {
        await session.end(key, { error: { name: 'McpApprovalDenied', message: decision.reason, tool } });
        refuse(id, MCP_PROXY_ERRORS.POLICY_DENIED, `the call was not approved: ${decision.reason}`);
      }
    })().catch((e: unknown) => log(`internal error while a call waited for approval: ${message(e)}`));
    held.add(waiting);
    void waiting.finally(() => held.delete(waiting));
    if (!single) await waiting;
    return 'held';
  }

  async function onClientLine(line: Buffer): Promise<void> {
    const messages = peek(line);
    for (const m of messages) {
      if (m.method === 'initialize' && m.id !== undefined && m.id !== null) {
        session.noteInitialize(m.params);
        initializing.add(idKey(m.id));
      }
      if (m.method === 'notifications/cancelled') {
        const p = (m.params ?? {}) as { requestId?: unknown; reason?: unknown };
        if ((typeof p.requestId === 'string' || typeof p.requestId === 'number') && session.has(idKey(p.requestId))) {
          const reason = typeof p.reason === 'string' ? p.reason : null;
          await session.end(idKey(p.requestId), { error: { name: 'McpCancelled', message: `the client cancelled the call${reason === null ? '' : `: ${reason}`}`, reason } });
        }
      }
    }
    const calls = messages.filter((m) => m.method === 'tools/call' && m.id !== undefined && m.id !== null);
    if (calls.length === 0) return toServer(line);
    if (calls.length === 1 && messages.length === 1) {
      if ((await admit(calls[0]!, line, true)) === 'forward') toServer(line);
      return;
    }
    // A JSON-RPC batch holding calls: forwarded whole only if every call in it may go, since forwarding a
    // part would mean re-encoding it. Otherwise each request in it is answered with an error.
    const verdicts: string[] = [];
    for (const c of calls) verdicts.push(await admit(c, line, false));
    if (verdicts.every((v) => v === 'forward' || v === 'held') && calls.every((c) => session.has(idKey(c.id as JsonRpcId)))) return toServer(line);
    for (const c of calls) {
      const key = idKey(c.id as JsonRpcId);
      if (!session.has(key)) continue; // refused on its own, and answered
      await session.end(key, { error: { name: 'McpPolicyDenied', message: 'the batch holding this call was refused, since another call in it was', tool: null } });
      refuse(c.id as JsonRpcId, MCP_PROXY_ERRORS.POLICY_DENIED, 'the batch holding this call was refused, since another call in it was');
    }
    for (const m of messages) if (m.method !== undefined && m.id !== undefined && m.id !== null && m.method !== 'tools/call') refuse(m.id, MCP_PROXY_ERRORS.POLICY_DENIED, 'the batch holding this request was refused, since one of its calls was');
  }

  async function onServerLine(line: Buffer): Promise<void> {
    for (const m of peek(line)) {
      if (m.method !== undefined || m.id === undefined || m.id === null || !(m.hasResult || m.hasError)) continue;
      const key = idKey(m.id);
      if (initializing.delete(key)) {
        if (m.hasResult) await session.start(m.result).catch(() => undefined);
      } else if (session.has(key)) {
        await session.end(key, outcomeOf(m));
      }
    }
    toClient(line);
  }

  let clientDone = false;
  readLines(options.input, (line) => { fromClient = inTurn(fromClient, () => onClientLine(line)); }, () => {
    clientDone = true;
    // The client closed its side: once every message it sent is forwarded, close the server's input and
    // give it graceMs to exit before SIGTERM (the MCP stdio shutdown), then as long again before SIGKILL.
    void fromClient.then(() => Promise.all([...held])).then(() => {
      child.stdin.end();
      const grace = options.graceMs ?? 2000;
      const term = setTimeout(() => child.kill('SIGTERM'), grace);
      const kill = setTimeout(() => child.kill('SIGKILL'), 2 * grace);
      term.unref();
      kill.unref();
      child.once('exit', () => { clearTimeout(term); clearTimeout(kill); });
    });
  });
  const serverOut = new Promise<void>((resolve) => readLines(child.stdout, (line) => { fromServer = inTurn(fromServer, () => onServerLine(line)); }, resolve));

  const done = new Promise<ProxyExit>((resolve) => {
    let spawnError: Error | undefined;
    child.on('error', (e) => {
      spawnError = e;
      log(`could not start the server ${JSON.stringify(options.command)}: ${e.message}`);
    });
    child.on('close', (code, signal) => {
      void (async () => {
        await serverOut;
        await fromServer;
        if (!clientDone) log(`the server exited (${signal ?? `code ${code}`}); closing the session`);
        await session.finish({ code, signal }, clientDone);
        resolve({ code, signal, ...(spawnError === undefined ? {} : { error: spawnError }) });
      })();
    });
  });
  return { done, kill: (signal) => { child.kill(signal); } };
}
