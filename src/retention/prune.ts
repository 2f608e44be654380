/**
 * Retention (spec/RETENTION.md §2, §5): removing the runs of a store that a policy says have expired, each
 * whole, each leaving a tombstone in the store's tombstone journal first. Works on any store behind the
 * Store contract (a directory, SQLite, Postgres, memory): the tombstone journal is an ordinary journal of
 * that store, so it is hash-chained and verified like any other, and a prune killed at any point is
 * finished by running it again — the tombstone is written before the removal, and a run whose tombstone
 * already names its head is removed without a second one.
 */
import { StoreError } from '../store/errors.js';
import type { Journal, JournalReport, Store } from '../store/types.js';
import type { JsonObject } from '../canonical/json.js';
import { MemoryTree, stepLeafHash, proveConsistency, proveInclusion, treeRoot } from '../proofs/index.js';
import { genesisHash } from '../record/formats.js';
import { isValidId } from '../record/fields.js';
import { hexUtf8 } from '../canonical/sha256.js';
import { TOMBSTONE_FORMAT, checkpointOfNote, rootDigest, type RetentionBasis, type Tombstone } from './tombstone.js';

/** The journal of a store that holds its tombstones (RETENTION.md §3). Not a run: `runs` never lists it. */
export const TOMBSTONE_JOURNAL = '_tombstones';

const DAY_MS = 86_400_000;

export interface RetentionPolicy {
  /** Keep a run this many whole days after its basis time; older runs are removed. */
  keepDays: number;
  /** What a run's age is counted from (default 'last-step': its last step, or its creation when it has none). */
  basis?: RetentionBasis;
}

export interface PruneOptions extends RetentionPolicy {
  /** Why (recorded in each tombstone; default "retention: older than N days"). */
  reason?: string;
  /** The current time (default now). */
  now?: Date;
  /** Only report what would be removed; nothing is written. */
  dryRun?: boolean;
  /**
   * Which journals the policy covers: by default the store's run journals (`runs()`); given a predicate,
   * every journal whose id it accepts (the LangGraph saver's thread journals, for example). `_tombstones`
   * is never covered.
   */
  journals?: (id: string) => boolean;
  /** Called as each run is removed (or would be, in a dry run). */
  onRun?: (tombstone: Tombstone) => void;
}

export interface PruneResult {
  /** Runs that were kept (not expired). */
  kept: number;
  /** Tombstones of the runs removed by this call (or that a dry run would remove), in the order removed. */
  removed: Tombstone[];
  /** Runs whose removal an earlier, interrupted prune had begun (their tombstone existed): finished now. */
  resumed: number;
  /**
   * Removals an earlier prune was killed in the middle of, after the run was gone from the store's listing and
   * before its files were deleted (the file store, FILE-STORE.md §15): deleted now. 0 in a dry run.
   */
  finished: number;
  /**
   * Runs appended to while this prune was removing them (their head moved after the tombstone was written):
   * kept, and their tombstone is superseded (RETENTION.md §5 step 5).
   */
  raced: string[];
  /**
   * Runs that could not be summarized (a damaged line, an unreadable journal): kept, never removed — a damaged
   * history is evidence — with the error that stopped it.
   */
  skipped: { journal: string; code: string; message: string }[];
}

/** Every tombstone the store holds, oldest first; an empty list when it never pruned. */
export async function readTombstones(store: Store): Promise<Tombstone[]> {
  const ids = await store.list();
  if (!ids.includes(TOMBSTONE_JOURNAL)) return [];
  const journal = await store.open(TOMBSTONE_JOURNAL, { readOnly: true });
  try {
    const out: Tombstone[] = [];
    for await (const record of journal.read()) out.push(record.result as unknown as Tombstone);
    return out;
  } finally {
    await journal.close();
  }
}

/**
 * The store's tombstones with the verification of the journal that holds them (its chain, as `verify` checks
 * it): a tombstone read from a journal that does not verify is not evidence of anything.
 */
export async function verifiedTombstones(
  store: Store,
): Promise<{ report: JournalReport | null; tombstones: Tombstone[] }> {
  if (!(await store.list()).includes(TOMBSTONE_JOURNAL)) return { report: null, tombstones: [] };
  const journal = await store.open(TOMBSTONE_JOURNAL, { readOnly: true });
  try {
    const report = await journal.verify();
    const tombstones: Tombstone[] = [];
    for await (const record of journal.read()) tombstones.push(record.result as unknown as Tombstone);
    return { report, tombstones };
  } finally {
    await journal.close();
  }
}

/** Removes every expired run of `store` (RETENTION.md §5), each after its tombstone is durable. */
export async function prune(store: Store, options: PruneOptions): Promise<PruneResult> {
  const keepDays = options.keepDays;
  if (!Number.isSafeInteger(keepDays) || keepDays < 0)
    throw new StoreError('OPTION_INVALID', `keepDays must be a non-negative integer (got ${String(keepDays)})`);
  const basis: RetentionBasis = options.basis ?? 'last-step';
  if (basis !== 'last-step' && basis !== 'created')
    throw new StoreError('OPTION_INVALID', `basis must be "last-step" or "created" (got ${JSON.stringify(basis)})`);
  const now = options.now ?? new Date();
  const cutoff = now.getTime() - keepDays * DAY_MS;
  const reason = options.reason ?? `retention: older than ${keepDays} day${keepDays === 1 ? '' : 's'}`;
  // Step 0: a removal a killed prune began may have left the run's values on disk, unlisted (FILE-STORE.md §15).
  const finished = options.dryRun === true ? 0 : ((await store.finishRemovals?.()) ?? 0);
  const already = new Map<string, Tombstone>();
  for (const t of await readTombstones(store)) already.set(`${t.journal}\n${t.head ?? ''}`, t);
  const result: PruneResult = { kept: 0, removed: [], resumed: 0, finished, raced: [], skipped: [] };
  let graveyard: Journal | null = null;
  // Expired runs wait here until a batch of tombstones is appended as one unit (one durable commit), then
  // each run of the batch is removed: a tombstone still always precedes its run's removal.
  let batch: { tombstone: Tombstone; earlier: boolean }[] = [];
  const flush = async (): Promise<void> => {
    const fresh = batch.filter((b) => !b.earlier).map((b) => b.tombstone);
    if (fresh.length > 0) {
      graveyard ??= await openGraveyard(store);
      // The step id names the run and its head: a repeat of the same removal is the same step.
      await graveyard.appendMany(
        fresh.map((t) => ({
          step_id: tombstoneStepId(t.journal, t.head),
          input: { journal: t.journal },
          result: t as unknown as JsonObject,
        })),
      );
    }
    for (const { tombstone } of batch) {
      if ((await headOf(store, tombstone.journal)) !== tombstone.head) {
        result.raced.push(tombstone.journal);
        result.kept++;
        continue;
      }
      await store.remove!(tombstone.journal);
      result.removed.push(tombstone);
      options.onRun?.(tombstone);
    }
    batch = [];
  };
  try {
    const covered = options.journals ?? (() => true);
    const ids = (options.journals === undefined ? (await store.runs({})).map((r) => r.id) : await store.list()).filter(
      (id) => id !== TOMBSTONE_JOURNAL && covered(id),
    );
    for (const id of ids) {
      const assessed = await assess(store, id, {
        cutoff,
        now: now.getTime(),
        basis,
        removedAt: now.toISOString(),
        reason,
        keepDays,
      });
      if ('skipped' in assessed) result.skipped.push(assessed.skipped);
      if (!('tombstone' in assessed)) {
        result.kept++;
        continue;
      }
      const tombstone = assessed.tombstone;
      if (options.dryRun) {
        result.removed.push(tombstone);
        options.onRun?.(tombstone);
        continue;
      }
      const earlier = already.get(`${tombstone.journal}\n${tombstone.head ?? ''}`);
      if (earlier !== undefined) result.resumed++;
      batch.push({ tombstone: earlier ?? tombstone, earlier: earlier !== undefined });
      if (batch.length >= TOMBSTONE_BATCH) await flush();
    }
    await flush();
  } finally {
    await (graveyard as Journal | null)?.close();
  }
  return result;
}

/** How many tombstones one commit of `_tombstones` holds at most (RETENTION.md §5 step 4). */
const TOMBSTONE_BATCH = 64;

/**
 * One journal against the policy (RETENTION.md §5 step 2): kept (not expired), skipped (damaged or
 * unreadable: kept too), or expired with the tombstone its removal would leave.
 */
async function assess(
  store: Store,
  id: string,
  how: { cutoff: number; now: number; basis: RetentionBasis; removedAt: string; reason: string; keepDays: number },
): Promise<{ kept: true } | { skipped: PruneResult['skipped'][number] } | { tombstone: Tombstone }> {
  let journal: Journal | null = null;
  try {
    journal = await store.open(id, { readOnly: true });
    const entry = entryOf(journal);
    const summary = await summarize(journal, how.now);
    const since =
      how.basis === 'created' ||
      summary.latestTs === null ||
      Date.parse(summary.latestTs) < Date.parse(entry.created_at)
        ? entry.created_at
        : summary.latestTs;
    if (!(Date.parse(since) < how.cutoff)) return { kept: true };
    // Only an intact history is removed under a policy: a damaged one is evidence.
    const report = await journal.verify();
    if (!report.ok) {
      const first = report.problems[0]!;
      throw new StoreError(
        'JOURNAL_INVALID',
        `${first.code}${first.location.seq !== undefined ? ` at seq ${first.location.seq}` : ''}: ${first.message}`,
      );
    }
    return { tombstone: await tombstoneOf(entry, summary, how) };
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    return {
      skipped: {
        journal: id,
        code: typeof err.code === 'string' ? err.code : 'UNREADABLE',
        message: String(err.message ?? e),
      },
    };
  } finally {
    await journal?.close();
  }
}

async function headOf(store: Store, id: string): Promise<string | null> {
  const journal = await store.open(id, { readOnly: true });
  try {
    return (await journal.head())?.step_hash ?? null;
  } finally {
    await journal.close();
  }
}

async function openGraveyard(store: Store): Promise<Journal> {
  if (typeof store.remove !== 'function')
    throw new StoreError('OPTION_INVALID', 'this store cannot remove journals, so it cannot prune', {
      hint: 'use a directory, SQLite or Postgres store',
    });
  try {
    return await store.open(TOMBSTONE_JOURNAL);
  } catch (e) {
    if (!(e instanceof StoreError) || e.code !== 'JOURNAL_NOT_FOUND') throw e;
    try {
      return await store.create(TOMBSTONE_JOURNAL);
    } catch (again) {
      // Another pruner created it first.
      if (again instanceof StoreError && again.code === 'JOURNAL_EXISTS') return store.open(TOMBSTONE_JOURNAL);
      throw again;
    }
  }
}

interface Summary {
  format: string;
  steps: number;
  head: string | null;
  lastTs: string | null;
  latestTs: string | null;
  root: Uint8Array;
  tree: MemoryTree;
  checkpoint: string | null;
}

/** One pass over the run's lines: its size, head, last time and tree; and its last signed checkpoint. */
async function summarize(journal: Journal, now: number): Promise<Summary> {
  const tree = new MemoryTree();
  let head: string | null = null;
  let lastTs: string | null = null;
  // The latest step time that is not in the future: a writer's `ts` need not increase (RETENTION.md §2).
  let latestTs: string | null = null;
  for await (const line of journal.lines()) {
    const record = JSON.parse(line.text) as { step_hash?: unknown; ts?: unknown };
    const leaf = typeof record.step_hash === 'string' ? stepLeafHash(record.step_hash) : null;
    if (leaf === null)
      throw new StoreError('JOURNAL_INVALID', `journal ${journal.id}: seq ${line.seq} has no valid step hash`, {
        hint: `run stepchain verify on it; prune removes only journals it can summarize`,
      });
    tree.append(leaf);
    head = record.step_hash as string;
    lastTs = typeof record.ts === 'string' ? record.ts : null;
    if (
      typeof record.ts === 'string' &&
      Date.parse(record.ts) <= now &&
      (latestTs === null || Date.parse(record.ts) > Date.parse(latestTs))
    )
      latestTs = record.ts;
  }
  const root = await treeRoot(tree, tree.size);
  const kept =
    'checkpoints' in journal && typeof journal.checkpoints === 'function'
      ? ((await (journal.checkpoints as () => Promise<string[]>)()) ?? [])
      : [];
  return {
    format: journal.genesis.format,
    steps: tree.size,
    head,
    lastTs,
    latestTs,
    root,
    tree,
    checkpoint: kept.length === 0 ? null : kept[kept.length - 1]!,
  };
}

interface Entry {
  id: string;
  run_id: string;
  genesis_hash: string;
  created_at: string;
  run: Tombstone['run'];
}

function entryOf(journal: Journal): Entry {
  const g = journal.genesis as { journal_id: string; created_at: string; run?: Tombstone['run'] };
  return {
    id: journal.id,
    run_id: g.journal_id,
    genesis_hash: genesisHash(journal.genesis),
    created_at: g.created_at,
    run: g.run ?? null,
  };
}

async function tombstoneOf(
  entry: Entry,
  s: Summary,
  how: { removedAt: string; reason: string; keepDays: number; basis: RetentionBasis },
): Promise<Tombstone> {
  let consistency: string[] | null = null;
  if (s.checkpoint !== null) {
    const parsed = checkpointOfNote(s.checkpoint);
    consistency =
      parsed.ok && parsed.checkpoint.size <= s.steps
        ? (await proveConsistency(s.tree, parsed.checkpoint.size, s.steps)).map(rootDigest)
        : [];
  }
  return {
    tombstone: TOMBSTONE_FORMAT,
    journal: entry.id,
    run_id: entry.run_id,
    genesis_hash: entry.genesis_hash,
    format: s.format,
    created_at: entry.created_at,
    run: entry.run,
    steps: s.steps,
    head: s.head,
    last_ts: s.lastTs,
    tree_root: rootDigest(s.root),
    head_proof: s.steps === 0 ? [] : (await proveInclusion(s.tree, s.steps - 1, s.steps - 1, s.steps)).map(rootDigest),
    checkpoint: s.checkpoint,
    consistency,
    removed_at: how.removedAt,
    reason: how.reason,
    policy: { keep_days: how.keepDays, basis: how.basis },
  };
}

/**
 * The step id of a run's tombstone in `_tombstones` (RETENTION.md §3): `tombstone:<journal>:<head>`, or, where
 * the journal's id would make it no valid step id (longer than 128 characters or characters a step id may
 * not hold; a journal id may have 200), `tombstone:sha256.<first 32 hex of SHA-256 of the id>:<head>`. The id is
 * only the tombstone's idempotency key: the journal is named in full by the step's input.
 */
export function tombstoneStepId(journal: string, head: string | null): string {
  const plain = `tombstone:${journal}:${head ?? 'empty'}`;
  return isValidId(plain) ? plain : `tombstone:sha256.${hexUtf8(journal).slice(0, 32)}:${head ?? 'empty'}`;
}
