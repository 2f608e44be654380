/**
 * The auditor's verdict on a verified journal or receipt (spec/RECEIPT.md §8.1): three answers, never two.
 *
 * - `authenticated`: intact, and tied to someone by something the auditor pinned that held — a signer's
 *   key, a head obtained independently, or a checkpoint signed by a pinned log key (with the witness policy).
 * - `intact`: every hash, link, digest and signature is consistent, but nothing the auditor pinned ties it
 *   to anyone: whoever made it could have made any other. Anyone can re-chain and re-sign with a key of
 *   their own, so intact must never read as trusted.
 * - `invalid`: a problem was found.
 *
 * Each verifier records in `authenticated_by` the pins that held (one sentence each); `settleVerdict`
 * derives the rest, and runs again whenever a later check (a publication's, a proof's) changes `ok`.
 * Pure; runs in a browser.
 */
import type { ChainReport } from './report.js';

export type AuditVerdict = 'authenticated' | 'intact' | 'invalid';

export interface VerdictFields {
  verdict: AuditVerdict;
  /** `verdict === 'authenticated'`: beside `ok` for scripts (`ok && !authenticated` is "intact, not authenticated"). */
  authenticated: boolean;
  /** What tied it to someone: one sentence per pin that held; empty unless authenticated. */
  authenticated_by: string[];
  /** When intact but not authenticated: what to pin to authenticate it; otherwise null. */
  to_pin: string | null;
}

/** What to pin, by what was verified. */
export const TO_PIN = {
  receipt:
    "nothing ties this receipt to anyone: pin the signer's public key, a head obtained independently, or the log key (with the witness policy) that signed its checkpoint",
  journal:
    'nothing ties this journal to anyone: pin a head obtained independently, or an earlier checkpoint with the log key (and witness policy) that signed it',
} as const;

/** Records a pin that held (kept only while the report is ok). */
export function pinHeld(report: ChainReport & Partial<VerdictFields>, sentence: string): void {
  (report.authenticated_by ??= []).push(sentence);
}

/** Sets verdict, authenticated, authenticated_by and to_pin from `ok` and the pins that held. Idempotent. */
export function settleVerdict<R extends ChainReport>(
  report: R & Partial<VerdictFields>,
  subject: keyof typeof TO_PIN,
): R & VerdictFields {
  const r = report as R & VerdictFields;
  const by = r.authenticated_by ?? [];
  r.authenticated_by = r.ok ? by : [];
  r.verdict = !r.ok ? 'invalid' : by.length > 0 ? 'authenticated' : 'intact';
  r.authenticated = r.verdict === 'authenticated';
  r.to_pin = r.verdict === 'intact' ? TO_PIN[subject] : null;
  return r;
}

/** The pins a journal was verified against, as the caller checked them. */
export interface JournalPins {
  /** The head the journal had to end at (a different one is HEAD_MISMATCH in the report). */
  head?: string;
  /** An earlier checkpoint the journal was shown to extend; `signed`: verified against a pinned log key and witness policy. */
  checkpoint?: { origin: string; size: number; signed: boolean; witnesses: number };
}

/**
 * A journal's verdict: authenticated only against a pinned head, or an earlier checkpoint whose log key
 * (and witness policy) the auditor pinned. A checkpoint parsed without a log key ties the journal to no one.
 */
export function settleJournalVerdict<R extends ChainReport>(
  report: R & Partial<VerdictFields>,
  pins: JournalPins,
): R & VerdictFields {
  if (report.ok && pins.head !== undefined) pinHeld(report, `the chain ends at the head you pinned (${pins.head})`);
  const cp = pins.checkpoint;
  if (report.ok && cp?.signed && cp.size > 0) {
    const later =
      report.head_seq !== null && report.head_seq >= cp.size
        ? `; steps ${cp.size}..${report.head_seq} only extend it`
        : '';
    pinHeld(
      report,
      `steps 0..${cp.size - 1} have the root of the earlier checkpoint you pinned (${cp.origin}, size ${cp.size}), signed by the log key you pinned${cp.witnesses > 0 ? ` and cosigned by at least ${cp.witnesses} pinned witnesses` : ''}${later}`,
    );
  }
  return settleVerdict(report, 'journal');
}

/**
 * A problem's message for rendering beside its code: the proofs' messages open with their code (so a log
 * line alone names it, proofs/problems.ts); shown under the code, that prefix would say it twice.
 */
export function messageBesideCode(p: { code: string; message: string }): string {
  return p.message.startsWith(`${p.code}: `) ? p.message.slice(p.code.length + 2) : p.message;
}

/** The first step a problem names, with its field: what an auditor of an invalid report wants to see first. */
export function firstAlteredStep(report: ChainReport): { seq: number; field: string | null; code: string } | null {
  for (const p of report.problems) {
    if (p.location.seq !== undefined)
      return { seq: p.location.seq, field: p.location.field ?? p.location.path ?? null, code: p.code };
  }
  return null;
}
