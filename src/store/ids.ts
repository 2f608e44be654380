/**
 * Journal ids and store options checked at the boundary (spec/FILE-STORE.md). An id may come from
 * untrusted input, so it is the only thing that names a directory under the root, and it can never
 * name anything outside it.
 */
import { StoreError } from './errors.js';

const ID_RE = /^[A-Za-z0-9_.-]{1,200}$/;

/** Throws ID_INVALID unless `id` is 1–200 characters from [A-Za-z0-9_.-], without "..", not starting with ".". */
export function assertJournalId(id: unknown, role = 'journal id'): asserts id is string {
  if (typeof id !== 'string' || !ID_RE.test(id) || id.includes('..') || id.startsWith('.')) {
    const shown = typeof id === 'string' ? JSON.stringify(id.length > 60 ? `${id.slice(0, 60)}…` : id) : typeof id;
    throw new StoreError(
      'ID_INVALID',
      `${role} ${shown} is not 1–200 characters from [A-Za-z0-9_.-] without ".." and without a leading "."`,
      {
        hint: 'derive ids from a fixed alphabet, for example a UUID or a slug',
      },
    );
  }
}

export function isJournalId(id: string): boolean {
  return ID_RE.test(id) && !id.includes('..') && !id.startsWith('.');
}

/** Checks an integer option in [min, max]; undefined gives the default. */
export function intOption(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new StoreError('OPTION_INVALID', `${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
  }
  return value;
}

/** Checks a seq argument: a non-negative safe integer. */
export function assertSeq(name: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new StoreError('RANGE_INVALID', `${name} must be a non-negative integer (got ${String(value)})`);
  }
}

/** Normalizes a read range against nothing but itself; `to` may still lie past the head. */
export function checkRange(range: { from?: number; to?: number } | undefined): {
  from: number;
  to: number | undefined;
} {
  const from = range?.from ?? 0;
  assertSeq('range.from', from);
  const to = range?.to;
  if (to !== undefined) {
    assertSeq('range.to', to);
    if (to < from) throw new StoreError('RANGE_INVALID', `range.from ${from} is after range.to ${to}`);
  }
  return { from, to };
}
