/**
 * The built CLI called synchronously, without a process start per call: for test files written around
 * spawnSync, whose checks and helpers would all have to become async to use cliServer (cli-batch.ts). Each
 * call runs in one long-lived process of the CLI (cli-serve.mjs, the built entry run afresh per call, stdio
 * captured as from pipes) reached through a worker thread (cli-sync-bridge.mjs); this thread sleeps in
 * Atomics.wait until the worker has the answer, then takes it off the port with receiveMessageOnPort.
 *
 * For files that check what verbs print and decide, not how a process starts or ends (the CLI's own files
 * start it for real). A call that outlives `timeoutMs` fails the test and stops the server; the file's later
 * calls then fail at once rather than wait again.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { asRun, serverEnv, type BatchOut } from './cli-batch.js';

const BRIDGE = fileURLToPath(new URL('./cli-sync-bridge.mjs', import.meta.url));
const SERVE = fileURLToPath(new URL('./cli-serve.mjs', import.meta.url));

export interface SyncCall {
  args: readonly string[];
  /** The call's working directory: this process's own when absent. */
  cwd?: string;
  /** What the call reads on stdin; an ended stream when absent. */
  input?: string;
}

/** As spawnSync's answer, decoded: exit code, stdout and stderr as UTF-8. */
export interface SyncRun {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * One server per file, its environment as cliServer's (`env` over process.env for every call). Made at a
 * file's top level, where its afterAll stops the server when the file's tests end.
 */
export function syncCli(env: Record<string, string> = {}, timeoutMs = 120_000): (call: SyncCall) => SyncRun {
  const signal = new SharedArrayBuffer(4);
  const woken = new Int32Array(signal);
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(BRIDGE, {
    workerData: { port: port2, signal, env: serverEnv(env), serve: SERVE },
    transferList: [port2],
  });
  worker.unref();
  let broken: string | undefined;
  afterAll(async () => {
    port1.postMessage('stop');
    await worker.terminate();
  });
  return (call) => {
    if (broken !== undefined) throw new Error(broken);
    Atomics.store(woken, 0, 0);
    port1.postMessage({
      args: [...call.args],
      cwd: call.cwd ?? process.cwd(),
      ...(call.input === undefined ? {} : { input: call.input }),
    });
    if (Atomics.wait(woken, 0, 0, timeoutMs) === 'timed-out') {
      broken = `stepchain ${call.args.join(' ')}: no answer within ${timeoutMs} ms (the CLI server was stopped)`;
      port1.postMessage('stop');
      throw new Error(broken);
    }
    const answer = receiveMessageOnPort(port1)?.message as { result?: BatchOut; ended?: string } | undefined;
    if (answer?.result === undefined) {
      broken = answer?.ended ?? `stepchain ${call.args.join(' ')}: woken without an answer`;
      throw new Error(broken);
    }
    const { code, stdout, stderr } = asRun(answer.result);
    return { status: code, stdout, stderr };
  };
}
