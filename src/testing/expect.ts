/**
 * Framework-agnostic assertions over runs: they throw a plain Error subclass, which vitest, jest, node:test
 * and mocha all report as a failure with its message, so nothing here imports a test framework.
 */
import { diff, type DiffOptions, type DiffReport } from '../diff/diff.js';
import type { RunInput } from '../diff/run.js';
import { formatDiff, summarize, type SummaryOptions } from '../diff/summary.js';

/** Thrown by expectSameRun: the message is the one-line summary; the report and the full listing ride along. */
export class RunMismatchError extends Error {
  readonly report: DiffReport;
  /** formatDiff(report): every divergence, one per block. */
  readonly details: string;

  constructor(report: DiffReport, options: SummaryOptions = {}) {
    super(summarize(report, options));
    this.name = 'RunMismatchError';
    this.report = report;
    this.details = formatDiff(report, options);
  }
}

/**
 * Resolves with the report when run b matches run a under `options`; rejects with a RunMismatchError whose
 * message is the divergence summary otherwise. Await it: `await expectSameRun(recorded, replayed)`.
 */
export async function expectSameRun(
  a: RunInput,
  b: RunInput,
  options: DiffOptions & SummaryOptions = {},
): Promise<DiffReport> {
  const { maxValueLength, ...diffOptions } = options;
  const report = await diff(a, b, diffOptions);
  if (!report.same) throw new RunMismatchError(report, maxValueLength === undefined ? {} : { maxValueLength });
  return report;
}
