/**
 * A bounded list of problems: every verifier keeps at most so many (FORMAT §6.4 allows a cap and requires
 * saying so), and several lists can share one budget when a report is assembled from parts in a fixed
 * order (a journal directory: entries, chain, buckets, blobs, lineage).
 */
import type { Problem, ProblemLocation } from './report.js';

/** The default cap of a report. */
export const MAX_PROBLEMS = 1000;

export class ProblemBudget {
  /** Set once a problem was dropped for want of room. */
  truncated = false;
  constructor(public left: number = MAX_PROBLEMS) {}
}

export class ProblemList<Code extends string> {
  readonly items: Problem<Code>[] = [];
  private readonly budget: ProblemBudget;

  constructor(budget: ProblemBudget | number = MAX_PROBLEMS) {
    this.budget = typeof budget === 'number' ? new ProblemBudget(budget) : budget;
  }

  /** Whether a problem was dropped from this list's budget. */
  get truncated(): boolean {
    return this.budget.truncated;
  }

  add(code: Code, message: string, location: ProblemLocation = {}): void {
    this.push({ code, message, location });
  }

  push(problem: Problem<Code>): void {
    if (this.budget.left <= 0) {
      this.budget.truncated = true;
      return;
    }
    this.budget.left--;
    this.items.push(problem);
  }
}
