/**
 * The intake's table and wake-ups (spec/POSTGRES.md §6.6), one per store: the table is made on first use
 * outside the schema's version (as the part tables, §4.3), and one LISTEN connection per store hears the
 * sequencers' NOTIFYs and wakes the appends waiting on the rows they chained.
 */
import { digestUtf8 } from '../../canonical/sha256.js';
import { loadDriver, type ConnectionConfig, type DbListener, type DbPool } from './driver.js';
import { underMigrationLock, type Tables } from './schema.js';
import { CHAINABLE_PREDICATE } from './intake-rows.js';

export interface Watch {
  key: number;
  ids: ReadonlySet<number>;
  notified: boolean;
  covered: boolean;
  /**
   * A NOTIFY that named none of these rows said that no sequencer has them in hand: they are the least of the
   * rows it left pending, or reached the intake after it looked (§6.6 step 2's mark). The writer tries at once.
   */
  called: boolean;
  wake: (() => void) | null;
}

/** What a sequencer's NOTIFY says: its journal, the rows it chained (null: "*", all), the least it left pending. */
export interface Notice {
  key: number;
  chained: ReadonlySet<number> | null;
  /** The least id of the rows left pending, 0 for none; null where the sequencer does not say (an older one). */
  leftFrom: number | null;
}

/**
 * Reads "<journal key> <id>,<id>…" (or "*" for all) — the rows the COMMIT chained — with, last, "-<id>": the
 * least id of the rows it left pending, "-0" for none (§6.6 step 2). An older sequencer sends no "-" element,
 * and an older waiter reads it as an id no row has.
 */
export function readNotice(payload: string): Notice {
  const space = payload.indexOf(' ');
  const key = Number(payload.slice(0, space));
  const rest = payload.slice(space + 1);
  if (rest === '*') return { key, chained: null, leftFrom: null };
  const chained = new Set<number>();
  let leftFrom: number | null = null;
  for (const item of rest.split(','))
    if (item.startsWith('-')) {
      const n = Number(item.slice(1));
      leftFrom = /^-(?:0|[1-9][0-9]*)$/.test(item) && Number.isSafeInteger(n) ? n : null;
    } else chained.add(Number(item));
  return { key, chained, leftFrom };
}

/**
 * Whether a NOTIFY chained some of a waiter's rows (`covered`), or else says that no sequencer has them in hand
 * (`called`, §6.6 step 3): rows at or below the least one left pending were not in that sequencer's selection,
 * and with "-0" (none left) every row of the waiter reached the intake after the sequencer looked. A waiter whose
 * rows are all above the least one leaves them to that row's writer, who is called, chains every row pending
 * then, and names or calls the rest in its own NOTIFY.
 */
export function whatNoticeSays(notice: Notice, ids: ReadonlySet<number>): { covered: boolean; called: boolean } {
  const chained = notice.chained;
  if (chained === null || [...ids].some((id) => chained.has(id))) return { covered: true, called: false };
  const from = notice.leftFrom;
  return { covered: false, called: from !== null && (from === 0 || [...ids].some((id) => id <= from)) };
}

/** One per store: the intake table, made on first use, and the LISTEN connection that wakes waiters. */
export class IntakeHub {
  readonly table: string;
  /** The NOTIFY channel of the store's schema (at most 63 bytes whatever the schema's name). */
  readonly channel: string;
  /** Rows this process sequenced for its own appends, their outcomes taken: deleted with its next insert. */
  readonly taken: number[] = [];
  private ready: Promise<void> | null = null;
  private listener: Promise<DbListener | null> | null = null;
  private readonly watches = new Set<Watch>();
  private closed = false;
  /** Whether the LISTEN connection is up and listening: sequencers' NOTIFYs reach this process's waiters. */
  hearing = false;

  constructor(
    private readonly pool: DbPool,
    private readonly tables: Tables,
    /** The store's own connection settings; null for a caller's pool (then waiters poll). */
    private readonly config: ConnectionConfig | null,
  ) {
    this.table = `"${tables.schema}".intake`;
    this.channel = `stepchain_intake_${digestUtf8(tables.schema).slice(7, 23)}`;
  }

  /**
   * The intake table, created once per schema like the part tables (§4.3): outside the schema's version,
   * under the migration's advisory lock, after a look that finds it in place without it.
   */
  init(): Promise<void> {
    this.ready ??= (async () => {
      // The table and its two later indexes (an intake made before them gains them here, once).
      const found = await this.pool.query<{ t: string | null; c: string | null; e: string | null }>(
        'SELECT to_regclass($1)::text AS t, to_regclass($2)::text AS c, to_regclass($3)::text AS e',
        [this.table, `"${this.tables.schema}".intake_chainable`, `"${this.tables.schema}".intake_expiry`],
      );
      const row = found.rows[0];
      if (row?.t == null || row.c == null || row.e == null) await this.create();
    })().catch((e: unknown) => {
      this.ready = null;
      throw e;
    });
    this.listen();
    return this.ready;
  }

  private create(): Promise<void> {
    return underMigrationLock(this.pool, this.tables.schema, async (client) => {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, journal bigint NOT NULL, expires_at timestamptz NOT NULL, payload text NOT NULL, result text)`,
      );
      await client.query(`CREATE INDEX IF NOT EXISTS intake_journal ON ${this.table} (journal, id)`);
      // What a sequencer selects and what it sweeps, each by an index of its own (§6.6 step 2), so that rows it
      // cannot chain — another version's, or expired ones awaiting the sweep — cost a pass nothing.
      await client.query(
        `CREATE INDEX IF NOT EXISTS intake_chainable ON ${this.table} (journal, id) WHERE result IS NULL AND ${CHAINABLE_PREDICATE}`,
      );
      await client.query(`CREATE INDEX IF NOT EXISTS intake_expiry ON ${this.table} (journal, expires_at)`);
    });
  }

  /** LISTEN on a connection of its own, unreferenced (it never keeps the process alive); null: waiters poll. */
  private listen(): void {
    if (this.config === null || this.closed || this.listener !== null) return;
    const started = (async () => {
      const pg = await loadDriver();
      const c = new pg.Client({ connectionTimeoutMillis: 10_000, ...this.config, keepAlive: true });
      const lost = (): void => {
        this.hearing = false;
        if (this.listener === started) this.listener = null; // the next append listens again
        c.end().catch(() => {});
      };
      c.on('error', lost);
      c.on('end', lost);
      c.on('notification', (n) => this.notified(n.payload ?? ''));
      await c.connect();
      c.unref();
      await c.query(`LISTEN ${this.channel}`);
      if (this.closed) {
        c.ref();
        await c.end();
      } else this.hearing = true;
      return c;
    })().catch(() => {
      if (this.listener === started) this.listener = null;
      return null;
    });
    this.listener = started;
  }

  /** A sequencer's NOTIFY (readNotice): every watch of its journal is woken, and told what it says of its rows. */
  private notified(payload: string): void {
    const notice = readNotice(payload);
    for (const w of this.watches) {
      if (w.key !== notice.key) continue;
      const { covered, called } = whatNoticeSays(notice, w.ids);
      w.notified = true;
      if (covered) w.covered = true;
      else w.called = called;
      w.wake?.();
    }
  }

  /** Starts watching for the NOTIFY of a COMMIT that chains some of `ids`; before trying the lock, so none is missed. */
  watch(key: number, ids: ReadonlySet<number>): Watch {
    const w: Watch = { key, ids, notified: false, covered: false, called: false, wake: null };
    this.watches.add(w);
    return w;
  }

  /** Waits for a NOTIFY on the watch since its flags were last cleared (or `ms`). */
  async wait(w: Watch, ms: number): Promise<void> {
    if (w.notified) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      w.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    w.wake = null;
  }

  unwatch(w: Watch): void {
    this.watches.delete(w);
  }

  /**
   * Deletes the rows this process chained for itself (their outcomes taken), then ends the LISTEN connection
   * without waiting for one still starting (its socket is unreferenced).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.hearing = false;
    const taken = this.taken.splice(0);
    if (taken.length > 0)
      await this.pool.query(`DELETE FROM ${this.table} WHERE id = ANY($1::bigint[])`, [taken]).catch(() => {});
    const l = this.listener;
    this.listener = null;
    void l
      ?.then((c) => {
        c?.ref(); // referenced again, so that ending it is not cut short by the process exiting
        return c?.end();
      })
      .catch(() => {});
  }
}
