/**
 * The unsalted digests of approval records written before statement v2 (spec/APPROVALS.md §2.1, §3.1,
 * §8): a request's `input.digest`, and a v1 statement's, is a plain SHA-256 of the presented
 * call, so whoever sees it can test guessed arguments against it (a 4-digit PIN falls to 10 000 trials). A
 * publication that withholds any unit of a presented call — or shows one already erased — withholds those
 * digests too, under the rule `approval-digest`; the leak sweep then looks for the digest everywhere else.
 * Pure.
 */
import { isObject, type Json, type JsonObject } from '../canonical/json.js';
import type { Problem } from '../chain/report.js';
import type { Redaction } from './redact.js';
import { ERASED } from './v3-units.js';

/** The rule a withheld pre-v2 digest is declared under (a publisher's own rule id, not the policy's). */
export const DIGEST_RULE = 'approval-digest';

const V1_STATEMENT = 'stepchain-approval/v1';

/** Does `path` name the request's presented call, or something inside it or around it? */
function touchesPresented(path: string): boolean {
  return path === '/input' || path === '/input/presented' || path.startsWith('/input/presented/');
}

/**
 * Per publication, in seq order: the requests whose presented call is not shown whole (withheld in part,
 * or erased), so that a v1 statement deciding one of them withholds its digest as well.
 */
export class UnsaltedDigests {
  private readonly hidden = new Set<string>();

  /**
   * The selections to add to one record's (`redactions`, from the policy): `/input/digest` of a request with
   * a digest whose presentation is not shown whole, and of a v1 statement deciding such a request.
   */
  extra(record: JsonObject, redactions: readonly Redaction[]): Redaction[] {
    const input = record.input;
    if (!isObject(input) || typeof input.digest !== 'string') return [];
    const seq = record.seq as number;
    if (record.kind === 'approval.requested') {
      const presented: Json | undefined = input.presented;
      const erased = presented !== undefined && JSON.stringify(presented).includes(JSON.stringify(ERASED));
      if (!erased && !redactions.some((r) => touchesPresented(r.path))) return [];
      if (typeof record.step_id === 'string') this.hidden.add(record.step_id);
    } else if (record.kind === 'approval.granted' || record.kind === 'approval.denied') {
      if (input.type !== V1_STATEMENT || typeof input.request !== 'string' || !this.hidden.has(input.request))
        return [];
    } else return [];
    if (redactions.some((r) => r.path === '/input' || r.path === '/input/digest')) return [];
    return [
      {
        seq,
        path: '/input/digest',
        rule: DIGEST_RULE,
        commitment: '',
        salt: new Uint8Array(0),
        value: input.digest,
        matched: [input.digest],
        detected: true,
      },
    ];
  }
}

/** A record's selections with the digests to withhold beside them (a fresh ledger when none is given: one record alone). */
export function held(d: UnsaltedDigests | undefined, record: JsonObject, selections: Redaction[]): Redaction[] {
  return [...selections, ...(d ?? new UnsaltedDigests()).extra(record, selections)];
}

/** A place where a published receipt shows an unsalted digest of a call it does not show whole (a notice). */
export interface UnsaltedDigestShown {
  seq: number;
  request: string;
}

const MARKER_PREFIX = JSON.stringify('$stepchain:').slice(0, -1);

/**
 * The reader's side: in seq order, every public v3 record that shows a pre-v2 digest (§2.1, §3.1) of a
 * presented call whose units are not all shown — withheld, chunked or erased. A part reference is taken as
 * shown (its file's withheld units are not looked into here). Never throws.
 */
export class ShownDigests {
  private readonly hidden = new Set<string>();
  readonly found: UnsaltedDigestShown[] = [];

  /** Adds the notices (DIGEST_UNSALTED, at most 1000) to a report's warnings before its sentences are written. */
  finish<R extends { warnings: Problem[] }>(report: R): R {
    for (const d of this.found.slice(0, 1000))
      report.warnings.push({
        code: 'DIGEST_UNSALTED',
        message: `step ${d.seq} shows the unsalted digest (written before statement v2) of the call request ${JSON.stringify(d.request)} presented, and that call is not shown whole: a withheld or erased argument of low entropy can be found by trying candidates against the digest; withhold or erase /input/digest too (spec/APPROVALS.md §8)`,
        location: { seq: d.seq, field: 'input', path: '/input/digest' },
      });
    return report;
  }

  line(seq: number | null, text: string): void {
    if (seq === null || !text.includes('"approval.') || !text.includes('"digest":"sha256:')) return;
    let record: unknown;
    try {
      record = JSON.parse(text);
    } catch {
      return;
    }
    if (!isObject(record) || !isObject(record.input) || typeof record.input.digest !== 'string') return;
    const input = record.input;
    if (record.kind === 'approval.requested' && typeof record.step_id === 'string') {
      const presented = input.presented;
      const whole =
        presented !== undefined &&
        !JSON.stringify(presented)
          .split(MARKER_PREFIX)
          .slice(1)
          .some((rest) => !rest.startsWith('part"'));
      if (whole) return;
      this.hidden.add(record.step_id);
      this.found.push({ seq, request: record.step_id });
    } else if (
      (record.kind === 'approval.granted' || record.kind === 'approval.denied') &&
      input.type === V1_STATEMENT &&
      typeof input.request === 'string' &&
      this.hidden.has(input.request)
    )
      this.found.push({ seq, request: input.request });
  }
}
