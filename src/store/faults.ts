/**
 * Fault points of the writers, for the fault battery (test/faults; issue 34): a test process sets the
 * environment variable STEPCHAIN_TEST_FAULT to `<point>:<action>[@<n>]`, and the n-th time (default the
 * first) the writer reaches that point it announces `stepchain-fault <point> <action>` on standard error and
 * then stops itself (`stop`: SIGSTOP, until a SIGCONT), kills itself (`kill`: SIGKILL), or blocks its event
 * loop (`block`: as a large synchronous parse or a garbage-collection pause would) until the file named by
 * STEPCHAIN_TEST_FAULT_RELEASE exists. So a test can stop a lock holder exactly inside its commit, and let
 * it go when it chooses, rather than hope a signal lands there.
 *
 * Inert unless set: with the variable absent (every production process) a point is one comparison with null.
 * The variable is read once, when this module loads.
 */
import { existsSync, writeSync } from 'node:fs';

/**
 * after-confirm: the lock confirmed, the lines not yet written; mid-write: half a segment's bytes written;
 * after-write: written, not yet acknowledged (the file writer); after-chunk: a chunk of a streamed batch
 * written inside its open transaction, not committed (the SQLite and Postgres writers).
 */
export type FaultPoint = 'after-confirm' | 'mid-write' | 'after-write' | 'after-chunk';

interface FaultPlan {
  point: FaultPoint;
  action: string;
  nth: number;
}

const PLAN: FaultPlan | null = parsePlan(process.env.STEPCHAIN_TEST_FAULT);
let reached = 0;

function parsePlan(text: string | undefined): FaultPlan | null {
  const m = /^(after-confirm|mid-write|after-write|after-chunk):(stop|kill|block)(?:@(\d{1,6}))?$/.exec(text ?? '');
  return m === null ? null : { point: m[1] as FaultPoint, action: m[2]!, nth: Number(m[3] ?? 1) };
}

/** Whether a fault is planned at `point` (the writer splits its write in two only for mid-write). */
export function faultPlanned(point: FaultPoint): boolean {
  return PLAN !== null && PLAN.point === point;
}

/** Acts out the planned fault if this is its point and its turn; otherwise nothing. */
export function faultPoint(point: FaultPoint): void {
  if (PLAN?.point !== point || ++reached !== PLAN.nth) return;
  writeSync(2, `stepchain-fault ${point} ${PLAN.action}\n`);
  if (PLAN.action === 'stop') process.kill(process.pid, 'SIGSTOP');
  else if (PLAN.action === 'kill') process.kill(process.pid, 'SIGKILL');
  else {
    const release = process.env.STEPCHAIN_TEST_FAULT_RELEASE ?? '';
    const cell = new Int32Array(new SharedArrayBuffer(4));
    while (release !== '' && !existsSync(release)) Atomics.wait(cell, 0, 0, 5); // the event loop stands still
  }
}
