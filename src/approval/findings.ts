/**
 * The approval check's findings as a chain is read, at most MOST_KEPT notices and MOST_KEPT problems listed and
 * the rest counted (spec/APPROVALS.md §5): some findings are per pair — a call of a presented tool against each
 * request that presented it (§5 step 4) — so a chain of n requests and n such calls, about 1 MB, made n² notices:
 * `stepchain verify` of n = 2 000 wrote 1.25 GB of them, and n = 4 000 ran out of memory (outsider I). The
 * verdict never depends on a finding not listed: past the bound, problems are still problems (at least MOST_KEPT
 * of them are listed). Pure.
 */
import type { ApprovalFinding } from './ledger-types.js';

/** Notices, and problems, listed at most (as a report lists at most chain/problems.ts MAX_PROBLEMS problems). */
export const MOST_KEPT = 1000;

export class Findings {
  readonly kept: ApprovalFinding[] = [];
  private notices = 0;
  private problems = 0;
  /** Findings counted and not listed, notices and problems apart. */
  private droppedNotices = 0;
  private droppedProblems = 0;
  /** The code of the first problem not listed, the summary's. */
  private droppedCode: ApprovalFinding['code'] = 'APPROVAL_MISSING';

  /** Whether another notice would be counted, not listed: a caller skips building its message. */
  get noticesFull(): boolean {
    return this.notices >= MOST_KEPT;
  }

  push(f: ApprovalFinding): void {
    if (f.notice === true) {
      if (this.notices >= MOST_KEPT) this.droppedNotices++;
      else {
        this.notices++;
        this.kept.push(f);
      }
    } else if (this.problems < MOST_KEPT) {
      this.problems++;
      this.kept.push(f);
    } else if (this.droppedProblems++ === 0) this.droppedCode = f.code;
  }

  /** Notices counted without a message (their caller saw `noticesFull`). */
  countNotices(n: number): void {
    this.droppedNotices += n;
  }

  /** The findings listed, then one of each kind saying how many more there were. */
  all(): ApprovalFinding[] {
    const out = [...this.kept];
    const last = out.length === 0 ? 0 : out[out.length - 1]!.seq;
    if (this.droppedProblems > 0)
      out.push({
        code: this.droppedCode,
        message: `${this.droppedProblems} more approval problems like those above are not listed (the first ${MOST_KEPT} are)`,
        seq: last,
        field: 'meta',
      });
    if (this.droppedNotices > 0)
      out.push({
        code: 'APPROVAL_UNCHECKED',
        message: `${this.droppedNotices} more approval notices like those above are not listed (the first ${MOST_KEPT} are)`,
        seq: last,
        field: 'meta',
        notice: true,
      });
    return out;
  }
}
