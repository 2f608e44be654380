/**
 * The stdio proxy (spec/MCP.md): launches the server, forwards every line both ways as the bytes that
 * arrived, and records each `tools/call`. Each direction is one queue, so messages leave in the order they
 * came: a `tools/call` is forwarded only once its intent is durable (or answered with a JSON-RPC error when
 * it cannot be recorded or the policy refuses it); a response to a call is forwarded once its outcome is
 * recorded (or, when that fails, anyway: recording never holds back an answer). A call waiting for approval
 * is held alone, off the queue, so pings, other calls and cancellations pass while it waits.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { Boundary, type Refusal } from './boundary.js';
import { errorLine, PARSE_ERROR, peek, readLines, unreadableLine } from './lines.js';
import type { ToolPolicy } from './policy.js';
import { message, SessionRecorder, type SessionOptions } from './session.js';

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

/** Answers a client line the proxy cannot read (lines.ts unreadableLine) with a parse error, not forwarded; true when it did. */
function answeredUnreadable(line: Buffer, log: (note: string) => void, toClient: (line: Buffer) => void): boolean {
  const unreadable = unreadableLine(line);
  if (unreadable === null) return false;
  log(`a line from the client was not forwarded: ${unreadable}`);
  toClient(errorLine(null, PARSE_ERROR, `stepchain mcp: the line was not forwarded: ${unreadable}`));
  return true;
}

/** Starts the server and the proxy between it and the client. */
export function startProxy(options: ProxyOptions): RunningProxy {
  const log = options.log;
  const session = new SessionRecorder({ ...options, command: [options.command, ...options.args] });
  const child = spawn(options.command, [...options.args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const toServer = (line: Buffer): void => {
    if (child.stdin.writable) child.stdin.write(line);
  };
  const toClient = (line: Buffer): void => {
    options.output.write(line);
  };
  child.stdin.on('error', (e) => log(`the server's input closed: ${message(e)}`));
  options.output.on('error', (e) => log(`the client's side closed: ${message(e)}`));

  const boundary = new Boundary(session, options.policy ?? {}, log);
  const held = new Set<Promise<unknown>>();
  let fromClient: Promise<void> = Promise.resolve();
  let fromServer: Promise<void> = Promise.resolve();
  const inTurn = (chain: Promise<void>, work: () => Promise<void>): Promise<void> =>
    chain.then(work).catch((e: unknown) => log(`internal error, the message was forwarded: ${message(e)}`));
  const refuse = (r: Refusal): void => toClient(errorLine(r.id, r.code, `stepchain mcp: ${r.message}`));

  async function onClientLine(line: Buffer): Promise<void> {
    if (answeredUnreadable(line, log, toClient)) return;
    const admission = await boundary.fromClient(peek(line), refuse);
    if (admission.kind === 'forward') toServer(line);
    else if (admission.kind === 'held') {
      // Held alone, off the queue: the client's other messages pass while this call waits.
      const waiting = admission.approved.then((ok) => {
        if (ok) toServer(line);
      });
      held.add(waiting);
      void waiting.finally(() => held.delete(waiting));
    }
  }

  async function onServerLine(line: Buffer): Promise<void> {
    await boundary.fromServer(peek(line));
    toClient(line);
  }

  let clientDone = false;
  readLines(
    options.input,
    (line) => {
      fromClient = inTurn(fromClient, () => onClientLine(line));
    },
    () => {
      clientDone = true;
      // Calls still waiting for an approval decision are not forwarded to a session that is closing.
      void fromClient.then(() => boundary.closing());
      // The client closed its side: once every message it sent is forwarded, close the server's input and
      // give it graceMs to exit before SIGTERM (the MCP stdio shutdown), then as long again before SIGKILL.
      void fromClient.then(() => Promise.all([...held])).then(() => stopServer(child, options.graceMs ?? 2000));
    },
  );
  const serverOut = new Promise<void>((resolve) =>
    readLines(
      child.stdout,
      (line) => {
        fromServer = inTurn(fromServer, () => onServerLine(line));
      },
      resolve,
    ),
  );

  const done = exitOf(child, options.command, log, async (code, signal) => {
    await serverOut;
    await fromServer;
    if (!clientDone) log(`the server exited (${signal ?? `code ${code}`}); closing the session`);
    await session.finish({ code, signal }, clientDone);
  });
  return {
    done,
    kill: (signal) => {
      child.kill(signal);
    },
  };
}

type ServerProcess = ChildProcessByStdio<Writable, Readable, null>;

/** The MCP stdio shutdown: the server's input closed, then SIGTERM after graceMs, then SIGKILL after as long again. */
function stopServer(child: ServerProcess, graceMs: number): void {
  child.stdin.end();
  const term = setTimeout(() => child.kill('SIGTERM'), graceMs);
  const kill = setTimeout(() => child.kill('SIGKILL'), 2 * graceMs);
  term.unref();
  kill.unref();
  child.once('exit', () => {
    clearTimeout(term);
    clearTimeout(kill);
  });
}

/** How the server ended, once `settle` has finished the session; a server that could not start says why. */
function exitOf(
  child: ServerProcess,
  command: string,
  log: (line: string) => void,
  settle: (code: number | null, signal: NodeJS.Signals | null) => Promise<void>,
): Promise<ProxyExit> {
  return new Promise<ProxyExit>((resolve) => {
    let spawnError: Error | undefined;
    child.on('error', (e) => {
      spawnError = e;
      log(`could not start the server ${JSON.stringify(command)}: ${e.message}`);
    });
    child.on('close', (code, signal) => {
      void (async () => {
        await settle(code, signal);
        resolve({ code, signal, ...(spawnError === undefined ? {} : { error: spawnError }) });
      })();
    });
  });
}
