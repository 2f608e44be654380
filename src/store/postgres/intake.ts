/**
 * Group commit across processes (spec/POSTGRES.md §6.6). A writer puts each append call into the intake
 * table in a short transaction of its own that waits for no WAL flush, then tries the journal's head row
 * lock without queueing for it (FOR UPDATE SKIP LOCKED). Whoever gets it is the sequencer for one
 * transaction: it sequences and seals every pending intake row of the journal, its own and other
 * processes', in intake order, writes their lines, marks each row with its outcome, and COMMITs — one WAL
 * flush for all of them, which also covers the intake rows (the WAL is flushed in order). A writer that
 * did not get the lock waits for the sequencer's NOTIFY (or a short poll) and takes its rows' outcomes. So
 * an append still resolves only after the COMMIT that chained it, and only that COMMIT makes it visible.
 */
import { StepchainError } from '../../errors.js';
import type { RecordProfile } from '../../record/profile.js';
import { StoreError } from '../errors.js';
import type { Group, GroupOutcome } from '../sequencer.js';
import type { DbClient, DbPool } from './driver.js';
import { isConnectionLoss, translate } from './errors.js';
import { IntakeHub } from './intake-hub.js';
import { newStepId } from '../../record/fields.js';
import { confirmOutcomes } from './intake-confirm.js';
import { LockTries } from './intake-tries.js';
import { CHAINABLE_PREDICATE, decodeGroup, decodeOutcome, encodeGroup, encodeOutcome } from './intake-rows.js';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import type { Tables } from './schema.js';
import { beginAndLockHead, type LockedHead, type NewLine } from './sql.js';
import type { StoreContext } from './store.js';

export { IntakeHub } from './intake-hub.js';

/** Rows one sequencing transaction takes at most (each row is one append call). */
const MAX_ROWS = 1024;
/** Marked rows nobody took and pending rows of writers gone are deleted this long after they expired. */
const SWEEP_AFTER = "interval '10 minutes'";
/**
 * The latest expiry a row can claim: an honest writer sets now plus its contention timeout, at most an hour
 * (store.ts bounds lockTimeoutMs to 3 600 000). A row claiming more is never chained and is swept at once.
 */
const MAX_CLAIM = "interval '1 hour'";
/**
 * The largest payload a sequencer reads (spec/POSTGRES.md §6.6): 4 lines of the longest a verifier accepts.
 * A larger row is refused by its octet_length without its payload being fetched: the driver cannot decode a
 * value past its string limit (about 512 MiB) and throws where nothing catches it. An honest writer never
 * enqueues a group that could be this large (intakeTakes): it takes the direct path instead.
 */
export const MAX_PAYLOAD_BYTES = 4 * MAX_LINE_BYTES;

/**
 * The sequencer's selection (§6.6 step 2): only rows it can chain — its version's, pending, not expired,
 * claiming no more than an honest writer can — in id order. Its version's prefix and `result IS NULL` are
 * written as the partial index `intake_chainable` states them (intake-hub.ts), so the planner reads that index
 * and rows of another version, however many, cost a pass nothing (outsider 9's second finding: a million of
 * them made an append 65× slower when the selection walked the journal's every row). A payload over the bound
 * is not fetched (octet_length reads a stored value's size, not the value). $1: the journal's key.
 */
export function chainableRowsSql(table: string): string {
  return `SELECT id, CASE WHEN octet_length(payload) <= ${MAX_PAYLOAD_BYTES} THEN payload END AS payload FROM ${table} WHERE ${chainable('$1')} ORDER BY id LIMIT ${MAX_ROWS} FOR UPDATE SKIP LOCKED`;
}

/** The rows of the journal keyed by `journal` (a parameter) that a sequencer can chain: the selection's predicate. */
function chainable(journal: string): string {
  return `journal = ${journal} AND result IS NULL AND ${CHAINABLE_PREDICATE} AND expires_at > now() AND expires_at <= clock_timestamp() + ${MAX_CLAIM}`;
}

/**
 * The least id of the journal's chainable rows that a sequencer's marks leave pending (§6.6 step 2), in its
 * NOTIFY: its writer tries the lock at once, and chains every row pending then. Without it, rows that reached
 * the intake after the sequencer's selection waited out a whole wait when no other writer appended again (two
 * writers appending at the same moment: 25–66 appends of 600 at 90 ms or more, outsider 11). Read in the
 * marking statement's snapshot, where the rows it marks are still pending: so they are left out by id. $1: those
 * ids, $3: the journal's key.
 */
function leftPendingSql(table: string): string {
  return `SELECT min(id) FROM ${table} WHERE ${chainable('$3')} AND id <> ALL($1::bigint[])`;
}

/** What the intake needs of its journal and store. */
export interface IntakeJournal {
  readonly key: number;
  readonly id: string;
  readonly where: string;
  readonly display: string;
  readonly profile: RecordProfile;
  readonly pool: DbPool;
  readonly tables: Tables;
  readonly hub: IntakeHub;
  readonly lockTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Sequences and writes `groups` inside the transaction that holds the head row (journal.ts commitOn). */
  commitOn(
    client: DbClient,
    head: LockedHead,
    groups: readonly Group[],
  ): Promise<{ outcomes: GroupOutcome[]; last: NewLine | null }>;
  gone(): StoreError;
}

/** The journal as the intake sees it. */
export function intakeOf(
  ctx: StoreContext,
  hub: IntakeHub,
  journal: { key: number; id: string; where: string; profile: RecordProfile; gone(): StoreError },
  commitOn: IntakeJournal['commitOn'],
): IntakeJournal {
  const { pool, tables, display, lockTimeoutMs, idleTimeoutMs } = ctx;
  const { key, id, where, profile } = journal;
  return {
    key,
    id,
    where,
    display,
    profile,
    pool,
    tables,
    hub,
    lockTimeoutMs,
    idleTimeoutMs,
    commitOn,
    gone: () => journal.gone(),
  };
}

/**
 * Whether a batch goes through the intake: steps sealed by the journal's profile, without blobs (blob rows commit
 * with their lines, §4), and no group that reads the lines since its `after` (sequencer.ts unlessAfter), which
 * another process's sequencer could not.
 */
export function intakeTakes(groups: readonly Group[], profile: RecordProfile): boolean {
  for (const g of groups) {
    if (g.unlessAfter !== undefined) return false;
    let bound = 64;
    for (const s of g.steps) {
      if (s.profile !== profile || s.blobs.length > 0 || s.marked === true) return false;
      bound += payloadBound(s);
    }
    if (bound > MAX_PAYLOAD_BYTES) return false;
  }
  return true;
}

/**
 * An upper bound on the bytes a step adds to its row's payload (encodeGroup): JSON.stringify writes a UTF-16
 * unit of these strings as at most 3 UTF-8 bytes (canonical texts hold no raw control character or lone
 * surrogate; a quote or backslash becomes 2 bytes), plus the members' names and punctuation.
 */
function payloadBound(s: Group['steps'][number]): number {
  let n = 128 + s.key.length + (s.step_id?.length ?? 0) + (s.ts?.length ?? 0);
  n += (s.salt?.length ?? 0) + (s.seed?.length ?? 0);
  for (const [name, t] of Object.entries(s.texts)) n += 8 + name.length + t.length;
  return 3 * n;
}

/** The queue's sink through the intake: each group one row; resolves once every row is chained (or refused). */
export async function commitThroughIntake(j: IntakeJournal, groups: readonly Group[]): Promise<GroupOutcome[]> {
  const doing = `appending to journal ${j.id}`;
  await j.hub.init().catch((e: unknown) => {
    throw translate(e, j.display, doing);
  });
  // Every step goes named (a fresh step_id where the caller gave none), so that the line a sequencer reports
  // can be told from any other line with the same content (intake-confirm.ts).
  groups = groups.map((g) =>
    g.steps.every((s) => s.step_id !== undefined)
      ? g
      : { ...g, steps: g.steps.map((s) => (s.step_id === undefined ? { ...s, step_id: newStepId() } : s)) },
  );
  let ids: number[];
  // Whether the insert found the head row free: when it did not, the first try at the lock is already made.
  let headFree: boolean | null;
  try {
    ({ ids, headFree } = await insertRows(j, groups.map(encodeGroup)));
  } catch (e) {
    throw translate(e, j.display, doing);
  }
  const mine = new Map<number, Group>(ids.map((id, i) => [id, groups[i]!]));
  const outcomes = new Map<number, GroupOutcome>();
  const deadline = Date.now() + j.lockTimeoutMs;
  const pending = new Set(ids);
  // Watched from before the first try at the lock to the end, so that no NOTIFY goes unheard.
  const w = j.hub.watch(j.key, pending);
  const tries = new LockTries(() => j.hub.hearing);
  try {
    for (;;) {
      w.notified = w.covered = w.called = false;
      let got = tries.due() && headFree !== false ? await lead(j, mine, pending, tries.queueing(deadline)) : null;
      headFree = null;
      if (got === null) {
        await j.hub.wait(w, Math.max(1, Math.min(tries.nextAt(), deadline) - Date.now()));
        if (!w.notified && !(await exists(j))) throw j.gone();
        // A NOTIFY that names none of these rows chained others': no need to look for outcomes.
        if (!w.notified || w.covered) got = await takeOutcomes(j, mine, pending, false);
        tries.waited(w);
      } else if (got.size < pending.size) {
        // Rows this sequencer did not find pending were chained by another, whose NOTIFY may have come first.
        const more = await takeOutcomes(j, mine, new Set([...pending].filter((id) => !got!.has(id))), false);
        for (const [id, o] of more) got.set(id, o);
      }
      for (const [id, o] of got ?? []) {
        outcomes.set(id, o);
        pending.delete(id);
      }
      if (pending.size === 0) return ids.map((id) => outcomes.get(id)!);
      if (Date.now() >= deadline) throw timedOut(j);
    }
  } catch (e) {
    // Take the rows back (or their outcomes, if a COMMIT chained them after all): an append reported as
    // failed must never be chained later by another process's sequencer.
    let back: Map<number, GroupOutcome>;
    try {
      back = await takeOutcomes(j, mine, pending, true);
    } catch (lost) {
      throw new StoreError(
        'SERVER_UNREACHABLE',
        `${j.display}: appending to journal ${j.id} failed (${e instanceof Error ? e.message : String(e)}), and taking its intake rows back failed too, so whether another writer chains them cannot be learnt now`,
        {
          hint: 'retry with the same step_ids: a step that did commit is returned as it is (FILE-STORE.md §10)',
          cause: lost,
        },
      );
    }
    const failure = e instanceof StepchainError ? e : translate(e, j.display, doing);
    return ids.map((id) => outcomes.get(id) ?? back.get(id) ?? { ok: false, error: failure });
  } finally {
    j.hub.unwatch(w);
  }
}

/** A row whose payload is larger than any honest writer enqueues: refused unread. */
function oversized(id: number): { ok: false; error: StoreError } {
  return {
    ok: false,
    error: new StoreError(
      'JOURNAL_CORRUPT',
      `intake row ${id} cannot be read (its payload is over ${MAX_PAYLOAD_BYTES} bytes, more than a writer enqueues); nothing of it was written`,
      { hint: 'something wrote the intake table around the store; append the step again' },
    ),
  };
}

function timedOut(j: IntakeJournal): StoreError {
  return new StoreError(
    'LOCK_TIMEOUT',
    `${j.where}: the append waited ${j.lockTimeoutMs} ms for the journal's lock and no writer chained it`,
    { hint: 'another writer holds the journal (a long batch, a checkpoint); retry, or raise lockTimeoutMs' },
  );
}

async function insertRows(j: IntakeJournal, payloads: string[]): Promise<{ ids: number[]; headFree: boolean }> {
  // synchronous_commit off for this statement's own transaction only: nothing is acknowledged by it, and
  // the sequencer's COMMIT, flushed after it in the WAL, makes it durable with the lines.
  // The rows this process sequenced itself, outcomes known, go in the same statement.
  // It also looks whether the head row is free (FOR UPDATE SKIP LOCKED, the lock let go with the statement's
  // commit): when it is not, a sequencer holds it, and the writer's first try (§6.6 step 2) has failed without
  // the two round trips of a transaction begun and rolled back; at 16 writers × 1 append that was 0.9 of the
  // 4.3 round trips of every append (bench/RESULTS.md, "The intake's first try").
  // So nothing in it may wait while it holds the head row: the taken rows are deleted only where no one else
  // has them locked (SKIP LOCKED). One that waited for a row locked by a role that can write the intake held
  // the journal from every writer, direct-path ones too, for as long as that role kept its lock (outsider 11);
  // a row skipped is a marked row nobody took, and the sweep deletes it.
  const taken = j.hub.taken.splice(0);
  const r = await j.pool.query<{ id: string; free: boolean }>(
    `WITH taken AS (DELETE FROM ${j.hub.table} WHERE id IN (SELECT id FROM ${j.hub.table} WHERE id = ANY($4::bigint[]) FOR UPDATE SKIP LOCKED)),
     added AS (INSERT INTO ${j.hub.table} (journal, expires_at, payload)
       SELECT $1, clock_timestamp() + $2 * interval '1 millisecond', p FROM unnest($3::text[]) WITH ORDINALITY AS u(p, n)
       WHERE set_config('synchronous_commit', 'off', true) IS NOT NULL ORDER BY n RETURNING id),
     head AS MATERIALIZED (SELECT key FROM ${j.tables.journals} WHERE key = $1 FOR UPDATE SKIP LOCKED)
     SELECT id, EXISTS (SELECT 1 FROM head) AS free FROM added`,
    [j.key, j.lockTimeoutMs, payloads, taken],
  );
  // Identity values are drawn in insertion order, which is the ORDER BY's.
  const ids = r.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
  return { ids, headFree: r.rows[0]?.free === true };
}

async function exists(j: IntakeJournal): Promise<boolean> {
  const r = await j.pool.query(`SELECT 1 FROM ${j.tables.journals} WHERE key = $1`, [j.key]);
  return r.rows.length > 0;
}

/**
 * Deletes the rows of `ids` that carry an outcome, returning the outcomes, each success confirmed from the
 * chain (intake-confirm.ts); `all`: also those that do not (taken back: a sequencer that has them locked is
 * waited for, and one that comes later no longer sees them).
 */
async function takeOutcomes(
  j: IntakeJournal,
  mine: ReadonlyMap<number, Group>,
  ids: ReadonlySet<number>,
  all: boolean,
): Promise<Map<number, GroupOutcome>> {
  const out = new Map<number, GroupOutcome>();
  if (ids.size === 0) return out;
  if (all) {
    // Taking rows back may wait for a sequencer and then see its marks, which are newer than the statement's
    // snapshot: the lines are read by a statement of their own (confirmOutcomes).
    const r = await j.pool.query<{ id: string; result: string | null }>(
      `DELETE FROM ${j.hub.table} WHERE id = ANY($1::bigint[]) RETURNING id, result`,
      [[...ids]],
    );
    for (const row of r.rows)
      if (row.result !== null) out.set(Number(row.id), decodeOutcome(row.result, Number(row.id)));
    if (out.size > 0) await confirmOutcomes(j, mine, out, new Map());
    return out;
  }
  // A marked row is taken only if its mark is in the statement's snapshot, and the COMMIT that marked it wrote
  // the lines it claims: so the lines of the rows' steps, by step_id, are read in the same round trip.
  const names: string[] = [];
  for (const id of ids) for (const s of mine.get(id)?.steps ?? []) if (s.step_id !== undefined) names.push(s.step_id);
  const r = await j.pool.query<{ id: string | null; result: string | null; seq: string | null; line: string | null }>(
    `WITH taken AS (DELETE FROM ${j.hub.table} WHERE id = ANY($1::bigint[]) AND result IS NOT NULL RETURNING id, result)
     SELECT id, result, NULL::bigint AS seq, NULL::text AS line FROM taken
     UNION ALL SELECT NULL, NULL, seq, line FROM ${j.tables.steps} WHERE journal = $2 AND step_id = ANY($3::text[]) AND EXISTS (SELECT 1 FROM taken)`,
    [[...ids], j.key, names],
  );
  const lines = new Map<number, string>();
  for (const row of r.rows)
    if (row.id !== null && row.result !== null) out.set(Number(row.id), decodeOutcome(row.result, Number(row.id)));
    else if (row.seq !== null && row.line !== null) lines.set(Number(row.seq), row.line);
  if (out.size > 0) await confirmOutcomes(j, mine, out, lines);
  return out;
}

/**
 * One try at being the sequencer: null when another holds the head row. Otherwise chains every pending row
 * of the journal in one transaction and returns the outcomes of `pending` among them. With `queueUntil`, the
 * try queues for the lock as a direct-path writer does, until that time at most (then LOCK_TIMEOUT).
 */
async function lead(
  j: IntakeJournal,
  mine: ReadonlyMap<number, Group>,
  pending: ReadonlySet<number>,
  queueUntil: number | null,
): Promise<Map<number, GroupOutcome> | null> {
  const client = await j.pool.connect();
  try {
    const head =
      queueUntil === null
        ? await beginAndLockHead(client, j.tables, j.key, j.lockTimeoutMs, j.idleTimeoutMs, true)
        : await beginAndLockHead(client, j.tables, j.key, Math.max(1, queueUntil - Date.now()), j.idleTimeoutMs);
    if (head === null) {
      await client.query('ROLLBACK');
      client.release();
      if (queueUntil !== null) throw j.gone(); // no head row to wait for: the journal was removed
      return null;
    }
    const rows = await client.query<{ id: string; payload: string | null }>(
      // Only rows it can chain: its version's, pending, not expired, claiming no more than an honest writer can.
      // A payload over the bound is not fetched (octet_length reads a stored value's size, not the value).
      chainableRowsSql(j.hub.table),
      [j.key],
    );
    const taken: number[] = [];
    const groups: Group[] = [];
    const refused = new Map<number, GroupOutcome>();
    for (const row of rows.rows) {
      const id = Number(row.id);
      // This process's own rows as it holds them; any other checked as a caller's steps (intake-rows.ts).
      const group = mine.get(id) ?? (row.payload === null ? oversized(id) : decodeGroup(row.payload, j.profile, id));
      if ('error' in group) refused.set(id, group);
      else {
        taken.push(id);
        groups.push(group);
      }
    }
    const written = taken.length === 0 ? { outcomes: [] } : await j.commitOn(client, head, groups);
    const outcomes = new Map<number, GroupOutcome>(refused);
    taken.forEach((id, i) => outcomes.set(id, written.outcomes[i]!));
    // Every row is marked with its outcome, this writer's too: should the answer to COMMIT be lost, its
    // rows still say what happened (commitThroughIntake takes them back). Its own go with its next insert.
    const own = [...outcomes.keys()].filter((id) => pending.has(id));
    const list = [...outcomes.keys()].join(',');
    await client.query(
      `WITH marked AS (UPDATE ${j.hub.table} i SET payload = '', result = r.result FROM unnest($1::bigint[], $2::text[]) AS r(id, result) WHERE i.id = r.id),
       swept AS (DELETE FROM ${j.hub.table} WHERE journal = $3 AND (expires_at < now() - ${SWEEP_AFTER} OR expires_at > clock_timestamp() + ${MAX_CLAIM}) AND id <> ALL($1::bigint[]))
       SELECT pg_notify($4, $5 || CASE WHEN $6 THEN ',-' || coalesce((${leftPendingSql(j.hub.table)}), 0) ELSE '' END)`,
      [
        [...outcomes.keys()],
        [...outcomes.values()].map(encodeOutcome),
        j.key,
        j.hub.channel,
        `${j.key} ${list.length > 7000 ? '*' : list}`,
        list.length <= 7000,
      ],
    );
    await client.query('COMMIT');
    client.release();
    j.hub.taken.push(...own);
    const mineDone = new Map<number, GroupOutcome>();
    for (const id of own) mineDone.set(id, outcomes.get(id)!);
    return mineDone;
  } catch (e) {
    // An unanswered COMMIT is settled by the caller taking its rows back: marked (committed) or not.
    if (!isConnectionLoss(e)) await client.query('ROLLBACK').catch(() => {});
    client.release(true);
    throw e;
  }
}
