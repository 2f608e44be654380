/**
 * What erasure in every store shares (spec/ERASURE.md §3, §4, §6): the request and outcome shapes, the
 * erasure record's step_id, the test-only fault points, and the store-wide match of a pointer pattern.
 */
import { writeSync } from 'node:fs';
import { StoreError } from '../store/errors.js';
import { ERASED_MARKER, ErasureError, isSealed } from '../record/v3/erasure.js';

export interface EraseRequest {
  seq: number;
  /** JSON Pointer of a member or element (or a whole slot) of that record: `/result/email`. */
  path: string;
  reason: string;
  by?: string | null;
}

export interface ErasureOutcome {
  journal: string;
  seq: number;
  path: string;
  digest: string;
  /** The erasure record's seq and step_id. */
  erasure: { seq: number; step_id: string };
  /** Part files deleted because no record references them any more. */
  parts_deleted: string[];
  /** True when this call only completed an erasure an earlier, interrupted one had recorded. */
  resumed: boolean;
  /**
   * SQLite only: false when the WAL could not be truncated after the rewrite (another connection was
   * reading), so page images of the old row stay in the -wal file until the next checkpoint completes.
   */
  wal_truncated?: boolean;
}

/**
 * Test-only: STEPCHAIN_TEST_ERASE_FAULT=after-record|in-rewrite|after-rewrite kills the process there (a real
 * SIGKILL); in-rewrite (SQLite, Postgres) is inside the rewrite's transaction, after its UPDATE, before COMMIT.
 */
export function fault(point: 'after-record' | 'in-rewrite' | 'after-rewrite'): void {
  if (process.env.STEPCHAIN_TEST_ERASE_FAULT !== point) return;
  writeSync(2, `stepchain-erase-fault ${point}\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** The erasure record's step_id: one per (target, digest), so a retried erase appends nothing twice. */
export function erasureStepId(seq: number, digest: string): string {
  return `erasure:${seq}:${digest.slice(7, 39)}`;
}

/**
 * An erasure the journal records but that cannot be carried out (its target holds no such unit, another
 * digest, …): a record appended by hand or by an older writer. It stays pending (verify: ERASURE_PENDING)
 * and is reported by `resume`; it does not keep any other erasure from being made.
 */
export interface StuckErasure {
  journal: string;
  seq: number;
  path: string;
  erasure: { seq: number; step_id: string };
  code: string;
  error: string;
}

/** Collects an ErasureError from carrying out a recorded erasure as stuck; rethrows anything else (I/O, a lock). */
export function stuckOrThrow(
  e: unknown,
  journal: string,
  p: { seq: number; step_id: string; input: { target: number; path: string } },
  stuck: StuckErasure[],
): void {
  if (!(e instanceof ErasureError)) throw e;
  stuck.push({
    journal,
    seq: p.input.target,
    path: p.input.path,
    erasure: { seq: p.seq, step_id: p.step_id },
    code: e.code,
    error: e.message,
  });
}

export interface MatchRequest {
  /** A JSON Pointer with `*` for any member name or index: `/result/email`, `/input/messages/*\/content`. */
  matchPath: string;
  /** The value to find (compared as JSON). */
  value: unknown;
  reason: string;
  by?: string | null;
}

export interface StoreErasureReport {
  journals_scanned: number;
  /** v1/v2 journals, which cannot erase one value: listed, never silently skipped. */
  journals_not_v3: string[];
  erased: ErasureOutcome[];
  /** Matches that could not be erased, with why. */
  failed: { journal: string; seq: number; path: string; error: string }[];
}

export function matchPaths(value: unknown, pattern: readonly string[], at: string, want: string, out: string[]): void {
  if (pattern.length === 0) {
    if (JSON.stringify(value) === want) out.push(at);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const [head, ...rest] = pattern;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (k.startsWith('$stepchain:')) continue;
    if (head === '*' || head === k)
      matchPaths(v, rest, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, want, out);
  }
}

/** The tokens of a `--match-path` pattern (`*`: any member name or index), or OPTION_INVALID. */
export function matchPattern(matchPath: string): string[] {
  const tokens = matchPath.split('/');
  if (tokens[0] !== '' || tokens.length < 2)
    throw new StoreError(
      'OPTION_INVALID',
      `--match-path ${JSON.stringify(matchPath)} is not a JSON Pointer (it starts with "/")`,
    );
  return tokens.slice(1).map((t) => (t === '*' ? '*' : t.replace(/~1/g, '/').replace(/~0/g, '~')));
}

/** Whether a record (sealed form) holds a marker naming erasure record `stepId`: that erasure is carried out. */
export function hasMarker(record: Record<string, unknown>, stepId: string): boolean {
  if (!isSealed(record)) return false;
  return (
    JSON.stringify(record).includes(`"erasure":${JSON.stringify(stepId)}`) &&
    JSON.stringify(record).includes(ERASED_MARKER)
  );
}
