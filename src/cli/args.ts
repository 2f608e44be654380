/** Argument helpers shared by the verbs. */
import { UsageError } from './cli.js';

/** A non-negative integer option or positional, or a UsageError naming it. */
export function intArg(value: unknown, name: string, verb: string): number {
  const s = String(value);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(Number(s)))
    throw new UsageError(`${name} must be a non-negative integer (got "${s}")`, verb);
  return Number(s);
}

/**
 * `--threads N`: 1 to MOST_THREADS. Each thread past the first is a worker with a heap of its own: 64 of them on 2
 * cores took 8 s and 1 GB to verify what 2 threads do in 1 s and 150 MB, so a count past any machine's use is refused.
 */
export function threadsArg(value: unknown): number {
  const s = String(value);
  const n = /^\d{1,4}$/.test(s) ? Number(s) : NaN;
  if (!(n >= 1 && n <= MOST_THREADS))
    throw new UsageError(
      `--threads takes a whole number from 1 to ${MOST_THREADS} (got ${JSON.stringify(s)})`,
      'verify',
    );
  return n;
}

const MOST_THREADS = 64;
