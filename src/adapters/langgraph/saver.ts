/**
 * `StepchainSaver`: a LangGraph checkpointer (`BaseCheckpointSaver`) on a stepchain store (spec/LANGGRAPH.md).
 * One journal per thread and checkpoint namespace; every `put` and every `putWrites` is one appended record,
 * so a thread's history is a hash chain an auditor can verify offline. Nothing is rewritten: a later record
 * supersedes an earlier one by the rules of LANGGRAPH §5, a fork (time travel) is a checkpoint whose parent
 * points back at an older record (§4), and `deleteThread` removes the thread's journals whole.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { StoreError, type CreateOptions, type Journal, type Store } from '../../journal.js';
import { prune, type PruneResult } from '../../retention.js';
import { LangGraphError } from './errors.js';
import {
  checkpointStep,
  journalIdOf,
  loadValue,
  storeValue,
  threadPrefix,
  writesStep,
  type CheckpointRecord,
  type StoredValue,
  type WritesRecord,
} from './records.js';
import { ThreadLog, type CheckpointEntry } from './thread.js';

export interface StepchainSaverOptions {
  /** Where the threads' journals live: a FileStore, a MemoryStore, any store of the journal contract. */
  store: Store;
  /** LangGraph's serializer protocol; default its JsonPlusSerializer. */
  serde?: SerializerProtocol;
  /** What every journal id of this saver starts with (letters, digits, `_` and `-`); default `langgraph`. */
  prefix?: string;
  /** Options for the journals this saver creates (blob threshold, segment size). */
  journalOptions?: Omit<CreateOptions, 'journalId' | 'createdAt'>;
}

/** Where a checkpoint sits in its journal: what a receipt of the thread proves existed (LANGGRAPH §6). */
export interface CheckpointHead {
  journal: string;
  seq: number;
  step_hash: string;
}

const PREFIX_RE = /^[A-Za-z0-9_-]{1,40}$/;

export class StepchainSaver extends BaseCheckpointSaver {
  readonly store: Store;
  readonly prefix: string;
  private readonly journalOptions: CreateOptions;
  private readonly threads = new Map<string, Promise<ThreadLog>>();

  constructor(options: StepchainSaverOptions) {
    super(options.serde);
    this.store = options.store;
    this.prefix = options.prefix ?? 'langgraph';
    if (!PREFIX_RE.test(this.prefix))
      throw new LangGraphError(
        'CONFIG_INVALID',
        `prefix ${JSON.stringify(this.prefix)} is not 1–40 characters from [A-Za-z0-9_-]`,
      );
    this.journalOptions = { ...options.journalOptions };
  }

  /** The journal id of a thread's namespace (its receipt is `exportReceipt(saver.store, id)`-able). */
  journalId(threadId: string, checkpointNs = ''): string {
    return journalIdOf(this.prefix, threadId, checkpointNs);
  }

  /** The thread namespace's journal, or null when nothing was ever put there. */
  async journal(threadId: string, checkpointNs = ''): Promise<Journal | null> {
    return (await this.thread(this.journalId(threadId, checkpointNs), false))?.journal ?? null;
  }

  /** Where a checkpoint's record is: its journal, seq and step hash; undefined when there is no such checkpoint. */
  async head(config: RunnableConfig): Promise<CheckpointHead | undefined> {
    const { threadId, ns } = addressOf(config, 'head');
    const log = await this.thread(this.journalId(threadId, ns), false);
    if (log === null) return undefined;
    await log.refresh();
    const id = getCheckpointId(config);
    const entry = id ? log.checkpoints.get(id) : log.latest();
    return entry && { journal: log.journal.id, seq: entry.seq, step_hash: entry.step_hash };
  }

  /** Opens (and caches) a journal's view; creates the journal when `create`, else null when it does not exist. */
  private async thread(id: string, create: boolean): Promise<ThreadLog | null> {
    const cached = this.threads.get(id);
    if (cached !== undefined) return cached;
    let journal: Journal;
    try {
      journal = await this.store.open(id);
    } catch (e) {
      if (!(e instanceof StoreError && e.code === 'JOURNAL_NOT_FOUND')) throw e;
      if (!create) return null;
      try {
        journal = await this.store.create(id, this.journalOptions);
      } catch (e2) {
        if (!(e2 instanceof StoreError && e2.code === 'JOURNAL_EXISTS')) throw e2;
        journal = await this.store.open(id);
      }
    }
    // Two callers may have opened it at once: the first one cached wins, the other handle is closed.
    const again = this.threads.get(id);
    if (again !== undefined) {
      await journal.close();
      return again;
    }
    const log = Promise.resolve(new ThreadLog(journal));
    this.threads.set(id, log);
    return log;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    // No thread, no checkpoint: LangGraph's savers answer undefined here rather than throw.
    if (config?.configurable?.thread_id === undefined) return undefined;
    const { threadId, ns } = addressOf(config, 'getTuple');
    const log = await this.thread(this.journalId(threadId, ns), false);
    if (log === null) return undefined;
    await log.refresh();
    const id = getCheckpointId(config);
    const entry = id ? log.checkpoints.get(id) : log.latest();
    return entry && this.tuple(log, entry);
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    const conf = config.configurable ?? {};
    const threadId = optionalString(conf.thread_id, 'thread_id');
    const ns = optionalString(conf.checkpoint_ns, 'checkpoint_ns');
    const onlyId = optionalString(conf.checkpoint_id, 'checkpoint_id');
    const beforeId = optionalString(before?.configurable?.checkpoint_id, 'before.checkpoint_id');
    let left = limit ?? Infinity;
    for (const id of await this.journalIds(threadId, ns)) {
      const log = await this.thread(id, false);
      if (log === null) continue;
      await log.refresh();
      if ((threadId !== undefined && log.threadId !== threadId) || (ns !== undefined && log.namespace !== ns)) continue;
      const entries = [...log.checkpoints.values()].sort((a, b) =>
        a.record.checkpoint_id < b.record.checkpoint_id ? 1 : -1,
      );
      for (const entry of entries) {
        const cid = entry.record.checkpoint_id;
        if ((onlyId && cid !== onlyId) || (beforeId && cid >= beforeId)) continue;
        const metadata = (await this.load(entry.record.metadata)) as CheckpointMetadata;
        if (filter && !Object.entries(filter).every(([k, v]) => (metadata as Record<string, unknown>)[k] === v))
          continue;
        if (left <= 0) return;
        left -= 1;
        yield await this.tuple(log, entry, metadata);
      }
    }
  }

  /** The journals to look in: one namespace's, a thread's, or every thread's, in id order. */
  private async journalIds(threadId: string | undefined, ns: string | undefined): Promise<string[]> {
    if (threadId !== undefined && ns !== undefined) return [this.journalId(threadId, ns)];
    const start = threadId !== undefined ? threadPrefix(this.prefix, threadId) : `${this.prefix}.`;
    return (await this.store.list()).filter((id) => id.startsWith(start));
  }

  private async tuple(log: ThreadLog, entry: CheckpointEntry, metadata?: CheckpointMetadata): Promise<CheckpointTuple> {
    const r = entry.record;
    const checkpoint = (await this.load(r.checkpoint)) as Checkpoint;
    checkpoint.channel_values = {};
    for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
      const stored = log.value(channel, version);
      if (stored !== undefined) checkpoint.channel_values[channel] = await this.load(stored);
    }
    if (checkpoint.v < 4 && r.parent !== null) await this.migratePendingSends(log, checkpoint, r.parent.checkpoint_id);
    const address = (checkpoint_id: string) => ({
      configurable: { thread_id: r.thread_id, checkpoint_ns: r.checkpoint_ns, checkpoint_id },
    });
    const tuple: CheckpointTuple = {
      config: address(r.checkpoint_id),
      checkpoint,
      metadata: metadata ?? ((await this.load(r.metadata)) as CheckpointMetadata),
      pendingWrites: await this.pendingWrites(log, r.checkpoint_id),
    };
    if (r.parent !== null) tuple.parentConfig = address(r.parent.checkpoint_id);
    return tuple;
  }

  /** Writes in LangGraph's order: by task path, task id, then index. */
  private async pendingWrites(log: ThreadLog, checkpointId: string): Promise<CheckpointPendingWrite[]> {
    const held = log.writesOf(checkpointId).map((w) => ({ w, key: writesSortKey(w.taskPath, w.taskId, w.idx) }));
    held.sort((a, b) => compareWritesSortKeys(a.key, b.key));
    return Promise.all(
      held.map(async ({ w }): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.load(w.value)]),
    );
  }

  /** Checkpoints before format 4 kept pending sends in the parent's writes; LangGraph reads them as a channel. */
  private async migratePendingSends(log: ThreadLog, checkpoint: Checkpoint, parentId: string): Promise<void> {
    const sends = (await this.pendingWrites(log, parentId))
      .filter(([, channel]) => channel === TASKS)
      .map(([, , value]) => value);
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const { threadId, ns } = addressOf(config, 'put');
    const parentId = optionalString(config.configurable?.checkpoint_id, 'checkpoint_id');
    const log = (await this.thread(this.journalId(threadId, ns), true))!;
    await log.refresh();
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint);
    const channelValues: CheckpointRecord['channel_values'] = {};
    for (const [channel, version] of Object.entries(newVersions ?? {})) {
      if (channel in values) channelValues[channel] = { version, value: await this.dump(values[channel]) };
    }
    const parent = parentId === undefined ? null : parentRef(parentId, log.checkpoints.get(parentId));
    const record: CheckpointRecord = {
      kind: 'langgraph.checkpoint',
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint_id: checkpoint.id,
      parent,
      checkpoint: await this.dump({ ...rest, channel_values: {} }),
      metadata: await this.dump(metadata),
      channel_values: channelValues,
    };
    const done = await log.append(record, checkpointStep(record));
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: ns,
        checkpoint_id: checkpoint.id,
        stepchain_journal: log.journal.id,
        stepchain_seq: done.seq,
        stepchain_head: done.step_hash,
      },
    };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const { threadId, ns } = addressOf(config, 'putWrites');
    const checkpointId = optionalString(config.configurable?.checkpoint_id, 'checkpoint_id');
    if (checkpointId === undefined)
      throw new LangGraphError(
        'CONFIG_INVALID',
        'putWrites needs configurable.checkpoint_id: the checkpoint the writes belong to',
      );
    const log = (await this.thread(this.journalId(threadId, ns), true))!;
    await log.refresh();
    const kept: WritesRecord['writes'] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      const idx = WRITES_IDX_MAP[channel] ?? i;
      if (log.wouldKeep(checkpointId, taskId, idx)) kept.push({ idx, channel, value: await this.dump(value) });
    }
    if (kept.length === 0) return;
    const record: WritesRecord = {
      kind: 'langgraph.writes',
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint_id: checkpointId,
      task_id: taskId,
      task_path: taskPath,
      writes: kept,
    };
    await log.append(record, writesStep(record));
  }

  /** Removes every journal of the thread, whole (FILE-STORE.md §15): a history is deleted entirely or kept entirely. */
  async deleteThread(threadId: string): Promise<void> {
    if (typeof threadId !== 'string')
      throw new LangGraphError('CONFIG_INVALID', 'deleteThread takes a thread id string');
    const remove = this.store.remove?.bind(this.store);
    if (remove === undefined)
      throw new LangGraphError(
        'REMOVE_UNSUPPORTED',
        'this store cannot remove journals, so threads cannot be deleted',
        { hint: 'use a store with remove(), such as FileStore or MemoryStore' },
      );
    for (const id of await this.journalIds(threadId, undefined)) {
      const cached = this.threads.get(id);
      this.threads.delete(id);
      if (cached !== undefined) await (await cached).journal.close();
      try {
        await remove(id);
      } catch (e) {
        if (!(e instanceof StoreError && e.code === 'JOURNAL_NOT_FOUND')) throw e;
      }
    }
  }

  /**
   * A time to live per thread (spec/RETENTION.md): removes, whole, each thread namespace of this saver whose
   * last record is more than `keepDays` days old, each after a tombstone in the store's `_tombstones`
   * journal. A thread written to since its last checkpoint stays. The saver's open handles are closed
   * first and reopened on demand.
   */
  async prune(options: { keepDays: number; now?: Date; reason?: string; dryRun?: boolean }): Promise<PruneResult> {
    if (this.store.remove === undefined)
      throw new LangGraphError('REMOVE_UNSUPPORTED', 'this store cannot remove journals, so threads cannot expire', {
        hint: 'use a store with remove(), such as FileStore or MemoryStore',
      });
    await this.close();
    const mine = `${this.prefix}.`;
    return prune(this.store, {
      ...options,
      reason: options.reason ?? `LangGraph thread TTL: ${options.keepDays} days`,
      journals: (id) => id.startsWith(mine),
    });
  }

  /** Closes every journal this saver opened. */
  async close(): Promise<void> {
    const logs = [...this.threads.values()];
    this.threads.clear();
    for (const log of logs) await (await log).journal.close();
  }

  private async dump(value: unknown): Promise<StoredValue> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return storeValue(type, bytes);
  }

  private load(v: StoredValue): Promise<unknown> {
    const [type, bytes] = loadValue(v);
    return this.serde.loadsTyped(type, bytes);
  }
}

function parentRef(checkpointId: string, entry: CheckpointEntry | undefined): CheckpointRecord['parent'] {
  return { checkpoint_id: checkpointId, seq: entry?.seq ?? null, step_hash: entry?.step_hash ?? null };
}

function optionalString(v: unknown, name: string): string | undefined {
  if (v === undefined || v === null || v === '') return name === 'checkpoint_ns' && v === '' ? '' : undefined;
  if (typeof v !== 'string')
    throw new LangGraphError('CONFIG_INVALID', `configurable.${name} must be a string (got ${typeof v})`);
  return v;
}

function addressOf(config: RunnableConfig, op: string): { threadId: string; ns: string } {
  const threadId = optionalString(config?.configurable?.thread_id, 'thread_id');
  if (threadId === undefined) {
    throw new LangGraphError('CONFIG_INVALID', `${op} needs configurable.thread_id`, {
      hint: 'pass { configurable: { thread_id: "..." } }, as with every LangGraph checkpointer',
    });
  }
  return { threadId, ns: optionalString(config.configurable?.checkpoint_ns, 'checkpoint_ns') ?? '' };
}
