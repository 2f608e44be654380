/** Child-process helpers for the store suite: real processes running the built store (dist/). */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Journal } from '../../src/store/index.js';

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
        const timer = setTimeout(
          () => reject(new Error(`child ${script} printed no matching line in ${timeoutMs} ms; stderr: ${err}`)),
          timeoutMs,
        );
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

/**
 * The kill-and-retry rounds the multi-process suites run on every database store: a child appends forever
 * (fixtures/append-forever.mjs) until SIGKILLed at a random moment; after each kill the journal verifies,
 * every acknowledged step is present, and the agent's retry of what it never saw acknowledged duplicates
 * nothing. Returns every acknowledged step (seq → step_id) and how many committed-but-unacknowledged steps
 * came back to their retry.
 */
export async function killAndRetryRounds(
  rounds: number,
  start: (round: number) => Child,
  open: (readOnly: boolean) => Promise<Journal>,
): Promise<{ acked: Map<number, string>; recovered: number }> {
  const acked = new Map<number, string>();
  let recovered = 0;
  for (let round = 0; round < rounds; round++) {
    const child = start(round);
    await child.waitFor((l) => l.startsWith('ack '), 60_000);
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 120));
    child.proc.kill('SIGKILL');
    const { signal } = await child.exited;
    expect(signal, child.stderr()).toBe('SIGKILL');
    const ackedHere = new Set<string>();
    for (const l of child.lines) {
      if (!l.startsWith('ack ')) continue;
      const [, seq, stepId] = l.split(' ');
      acked.set(Number(seq), stepId!);
      ackedHere.add(stepId!);
    }
    const ro = await open(true);
    const report = await ro.verify();
    expect(report.problems, `round ${round}`).toEqual([]);
    expect(report.warnings).toEqual([]);
    const present = new Map<number, string>();
    for await (const r of ro.read()) present.set(r.seq, r.step_id);
    for (const [seq, stepId] of acked)
      expect(present.get(seq), `acknowledged seq ${seq} after round ${round}`).toBe(stepId);
    // The agent restarts and retries what it never saw acknowledged: a step that committed anyway comes
    // back as it is, nothing is written twice. At most 4 calls (6 steps) were in flight at the kill.
    const maxI = Math.max(-1, ...[...ackedHere].map((id) => Number(id.split('-')[1])));
    const headBefore = (await ro.head())?.seq ?? -1;
    const writer = await open(false);
    for (let i = 0; i <= maxI + 12; i++) {
      if (ackedHere.has(`r${round}-${i}`)) continue;
      const r = await writer.append({
        step_id: `r${round}-${i}`,
        input: { round, i },
        result: i % 9 === 4 ? { big: `${round}:${i}:`.padEnd(5000, 'z') } : 'ok',
      });
      if (r.seq <= headBefore) recovered++;
      acked.set(r.seq, r.step_id);
    }
    await writer.close();
  }
  return { acked, recovered };
}
