/**
 * Helpers of the fault battery (issue 34): real child processes running the built library (dist/, which
 * `npm test` builds), driven over stdin and read line by line, and stopped, resumed or killed by signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, expect } from 'vitest';
import type { Store } from '../../src/index.js';

export const FAULT_FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface Driven {
  proc: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The first stdout line (from `from` on) satisfying `pred`, once printed; rejects if the child exits first. */
  waitFor: (pred: (line: string) => boolean, from?: number) => Promise<string>;
  /** Sends one command line and resolves with the next line the child prints. */
  ask: (command: string) => Promise<string>;
}

const driven = new Set<ChildProcess>();
// A test that timed out leaves no child behind, stopped or not.
afterAll(() => {
  for (const p of driven) {
    p.kill('SIGCONT');
    p.kill('SIGKILL');
  }
});

export function drive(script: string, args: string[], env: Record<string, string> = {}, nice?: number): Driven {
  const argv = [script.startsWith('/') ? script : FAULT_FIXTURES + script, ...args];
  const proc =
    nice === undefined
      ? spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } })
      : spawn('nice', ['-n', String(nice), process.execPath, ...argv], {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: { ...process.env, ...env },
        });
  driven.add(proc);
  proc.once('close', () => driven.delete(proc));
  const lines: string[] = [];
  let partial = '';
  let err = '';
  const waiters: Array<() => void> = [];
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  proc.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('close', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters.splice(0)) w();
    });
  });
  let closed = false;
  void exited.then(() => (closed = true));
  const waitFor = (pred: (line: string) => boolean, from = 0): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = lines.slice(from).find(pred);
        if (found !== undefined) resolve(found);
        else if (closed)
          reject(new Error(`${script} ${args.join(' ')} exited without the line awaited; stderr: ${err}`));
        else waiters.push(check);
      };
      check();
    });
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitFor,
    ask: (command) => {
      const from = lines.length;
      proc.stdin!.write(command + '\n');
      return waitFor(() => true, from);
    },
  };
}

/** `count` processes spinning on the CPU (to starve the writers beside them); call the result to kill them. */
const spinning = new Set<ChildProcess>();
// Whatever happens to a test (a timeout included), no busy process outlives the file.
afterAll(() => {
  for (const p of spinning) p.kill('SIGKILL');
});

export function busyLoops(count: number): () => Promise<void> {
  const procs = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  );
  for (const p of procs) {
    spinning.add(p);
    p.once('close', () => spinning.delete(p));
  }
  return async () => {
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('close', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
  };
}

/** Linux: the process's state letter (T when stopped), from /proc; null when it cannot be read. */
export function processState(pid: number): string | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Resolves once `pred()` holds, polling every 10 ms (no time limit of its own: the test's timeout is the bound). */
export async function until(pred: () => boolean): Promise<void> {
  while (!pred()) await new Promise((r) => setTimeout(r, 10));
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The appends a writer.mjs child was told succeeded: step_id → seq. */
export function acksOf(child: Driven): Map<string, number> {
  const acks = new Map<string, number>();
  for (const l of child.lines) {
    const m = /^ack (\S+) (\d+)$/.exec(l);
    if (m) acks.set(m[1]!, Number(m[2]));
  }
  return acks;
}

/** The failed tries a writer.mjs child reported: "<step_id> <code>". */
export function failsOf(child: Driven): string[] {
  return child.lines.filter((l) => l.startsWith('fail ')).map((l) => l.split(' ').slice(1, 3).join(' '));
}

/**
 * What every fault must leave: the chain verifies; no step_id twice; every acknowledged append in the journal
 * exactly once, at the seq it was acknowledged with. Returns the step_ids in seq order.
 */
export async function expectAcknowledgedOnce(
  store: Store,
  id: string,
  acks: ReadonlyMap<string, number>,
): Promise<string[]> {
  const j = await store.open(id, { readOnly: true });
  const report = await j.verify();
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  const ids: string[] = [];
  for await (const r of j.read()) {
    expect(r.seq).toBe(ids.length);
    ids.push(r.step_id);
  }
  await j.close();
  expect(new Set(ids).size).toBe(ids.length);
  for (const [stepId, seq] of acks) expect(ids[seq], `acknowledged ${stepId} at seq ${seq}`).toBe(stepId);
  return ids;
}
