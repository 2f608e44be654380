/** Argument helpers shared by the verbs. */
import { UsageError } from './cli.js';

/** A non-negative integer option or positional, or a UsageError naming it. */
export function intArg(value: unknown, name: string, verb: string): number {
  const s = String(value);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(Number(s)))
    throw new UsageError(`${name} must be a non-negative integer (got "${s}")`, verb);
  return Number(s);
}
