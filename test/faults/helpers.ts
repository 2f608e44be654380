/**
 * Helpers of the fault battery (issue 34): real child processes running the built library (dist/, which
 * `npm test` builds), driven over stdin and read line by line, and stopped, resumed or killed by signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

export function drive(script: string, args: string[], env: Record<string, string> = {}, nice?: number): Driven {
  const argv = [FAULT_FIXTURES + script, ...args];
  const proc = nice === undefined
    ? spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    : spawn('nice', ['-n', String(nice), process.execPath, ...argv], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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
        else if (closed) reject(new Error(`${script} ${args.join(' ')} exited without the line awaited; stderr: ${err}`));
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
