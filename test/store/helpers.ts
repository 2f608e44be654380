/** Child-process helpers for the store suite: real processes running the built store (dist/). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface Child {
  proc: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a stdout line satisfies `pred`. */
  waitFor: (pred: (line: string) => boolean, timeoutMs?: number) => Promise<string>;
}

export function runChild(script: string, args: string[]): Child {
  const proc = spawn(process.execPath, [FIXTURES + script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let err = '';
  const waiters: Array<{ pred: (l: string) => boolean; resolve: (l: string) => void }> = [];
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (chunk: string) => {
    partial += chunk;
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      lines.push(line);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.pred(line)) waiters.splice(i, 1)[0]!.resolve(line);
      }
    }
  });
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    proc,
    lines,
    stderr: () => err,
    exited,
    waitFor: (pred, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const found = lines.find(pred);
        if (found !== undefined) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`child ${script} printed no matching line in ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
        waiters.push({ pred, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`child ${script} exited before printing a matching line; stderr: ${err}`));
        });
      }),
  };
}

export async function runToEnd(script: string, args: string[]): Promise<Child> {
  const c = runChild(script, args);
  const { code, signal } = await c.exited;
  if (code !== 0) throw new Error(`child ${script} ${args.join(' ')} exited with ${code ?? signal}: ${c.stderr()}`);
  return c;
}
