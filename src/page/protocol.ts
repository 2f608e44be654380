/**
 * Messages between the verification page and its Web Worker. The worker holds the Session (engine.ts);
 * the page asks it to verify, for rows of the step list, and for one step. Files travel as File objects,
 * which the browser passes by reference: the receipt's bytes are never copied into a message.
 */
import type { Outcome, Progress, StepDetail, VerifyRequest } from './engine.js';
import type { StepRow } from './summary.js';

export type Request =
  | { id: number; op: 'verify'; request: VerifyRequest }
  | { id: number; op: 'rows'; from: number; count: number; only: 'all' | 'flagged' }
  | { id: number; op: 'step'; index: number }
  | { id: number; op: 'find'; where: { seq?: number; file?: string; line?: number } }
  /** The page's thread hands the verifying worker one end of a channel to the hashing worker (entry-hasher.ts)… */
  | { op: 'hash-on'; port: MessagePort }
  /** …and the hashing worker the other end. */
  | { op: 'serve-digests'; port: MessagePort };

export type Reply =
  | { ready: true }
  | { id: number; progress: Progress }
  | { id: number; ok: true; value: Outcome | StepRow[] | StepDetail | number }
  | { id: number; ok: false; message: string };
