/**
 * Starting and resuming runs (spec/FORMAT.md §11.1–§11.2): a run journal created with its identity in the
 * genesis and its run.started record, or an existing one opened with its state read from the journal.
 */
import { isValidId } from '../record/fields.js';
import { isRunFormat, NEW_RUN_FORMAT, RUN_FORMATS, type RunFormat } from '../record/formats.js';
import type { RunIdentity } from '../record/v2.js';
import { StepchainError } from '../errors.js';
import type { CreateOptions, Journal, Store } from '../store/types.js';
import { RuntimeError } from './errors.js';
import { optionError, Run } from './run.js';
import { toJournalValue, type JournalInput } from './value.js';

/**
 * The run whose recorded tool is executing, if any: set by the effect runner (effects.ts, which holds the
 * AsyncLocalStorage), so this module and the types it exports need nothing Node-only.
 */
let enclosingRun: () => string | undefined = () => undefined;

/** @internal Called once by effects.ts. */
export function setEnclosingRun(find: () => string | undefined): void {
  enclosingRun = find;
}

/** A run id: a journal id in every store and a genesis journal_id (FORMAT §11.1). */
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface StartRunOptions {
  /** Default: a random UUID. Reusing a run id the store holds is refused (RUN_EXISTS). */
  runId?: string;
  conversationId?: string;
  /** The orchestrator's run, for a delegated sub-agent. Default: inside a recorded tool's body (runEffect), the tool's run. */
  parentRunId?: string;
  agent?: string;
  /** user, session, environment…: fixed at creation, covered by the genesis hash. */
  labels?: Record<string, string>;
  /** The run's input (the task), recorded in its run.started record. */
  input?: JournalInput;
  createdAt?: Date | string;
  /** The run journal's format: `stepchain/v3` (FORMAT §14, the default: NEW_RUN_FORMAT) or `stepchain/v2` (§11). */
  format?: RunFormat;
  segmentBytes?: number;
  blobThreshold?: number;
}

function checkOptionalId(name: string, v: unknown): void {
  if (v !== undefined && !isValidId(v))
    throw optionError(
      `${name} ${JSON.stringify(v)} must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit`,
    );
}

/** The genesis run identity from the library's options. */
export function runIdentity(
  options: Pick<StartRunOptions, 'conversationId' | 'parentRunId' | 'agent' | 'labels'>,
): RunIdentity {
  checkOptionalId('conversationId', options.conversationId);
  checkOptionalId('parentRunId', options.parentRunId);
  const run: RunIdentity = {};
  if (options.agent !== undefined) run.agent = options.agent;
  if (options.conversationId !== undefined) run.conversation_id = options.conversationId;
  if (options.labels !== undefined) run.labels = { ...options.labels };
  if (options.parentRunId !== undefined) run.parent_run_id = options.parentRunId;
  return run;
}

/** Creates a run journal in the store, with its identity in the genesis, and records run.started. */
export async function startRun(store: Store, options: StartRunOptions = {}): Promise<Run> {
  const runId = options.runId ?? globalThis.crypto.randomUUID();
  if (typeof runId !== 'string' || !RUN_ID.test(runId) || runId.includes('..')) {
    throw optionError(
      `run id ${JSON.stringify(runId)} must be 1–128 characters from [A-Za-z0-9._-] starting with a letter or digit, without ".."`,
    );
  }
  // A run started inside a recorded tool (an agent used as a tool) is that tool's run's child.
  const inside = options.parentRunId === undefined ? enclosingRun() : undefined;
  const identity = inside !== undefined ? { ...options, parentRunId: inside } : options;
  const format = options.format ?? NEW_RUN_FORMAT;
  if (!isRunFormat(format))
    throw optionError(
      `format ${JSON.stringify(format)} must be ${RUN_FORMATS.map((f) => JSON.stringify(f)).join(' or ')}`,
    );
  const create: CreateOptions = { journalId: runId, run: runIdentity(identity), format };
  if (options.createdAt !== undefined) create.createdAt = options.createdAt;
  if (options.segmentBytes !== undefined) create.segmentBytes = options.segmentBytes;
  if (options.blobThreshold !== undefined) create.blobThreshold = options.blobThreshold;
  let journal: Journal;
  try {
    journal = await store.create(runId, create);
  } catch (e) {
    if (e instanceof StepchainError && e.code === 'JOURNAL_EXISTS') {
      throw new RuntimeError('RUN_EXISTS', `run ${JSON.stringify(runId)} already exists in this store`, {
        hint: 'resume it with resumeRun, or start a run with another id',
        cause: e,
      });
    }
    if (e instanceof StepchainError && e.code === 'GENESIS_INVALID')
      throw optionError(e.message.replace(/^GENESIS_INVALID: /, ''));
    throw e;
  }
  const run = new Run(journal);
  await run.record({ kind: 'run.started', input: toJournalValue(options.input, { field: 'input' }) });
  return run;
}

/**
 * Opens an existing run to continue it (or, readOnly, to inspect it): its pending effects and continuation
 * point are read from the journal — once it verifies (`verify`, default true: the chain, its blobs and the
 * store's own files; a journal that does not is refused with RUN_INVALID, so a tampered run is never
 * resumed). `verify: false` skips that pass for a caller that just verified it.
 */
export async function resumeRun(
  store: Store,
  runId: string,
  options: { readOnly?: boolean; verify?: boolean } = {},
): Promise<Run> {
  let journal: Journal;
  try {
    journal = await store.open(runId, { readOnly: options.readOnly === true });
  } catch (e) {
    if (e instanceof StepchainError && e.code === 'JOURNAL_NOT_FOUND')
      throw new RuntimeError('RUN_NOT_FOUND', `no run ${JSON.stringify(runId)} in this store`, {
        hint: 'list the runs with store.list({})',
        cause: e,
      });
    throw e;
  }
  if (options.verify !== false) {
    const report = await journal.verify();
    if (!report.ok) {
      await journal.close();
      const first = report.problems[0];
      throw new RuntimeError(
        'RUN_INVALID',
        `run ${JSON.stringify(runId)} does not verify (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}, first: ${first?.code ?? '?'}${first?.location.seq !== undefined ? ` at seq ${first.location.seq}` : ''}): not resumed`,
        {
          hint: 'stepchain verify <journal> names each problem; resume from a copy that verifies, or resumeRun(store, id, { verify: false }) to read it anyway',
          ...(first?.location.seq !== undefined ? { location: { seq: first.location.seq } } : {}),
        },
      );
    }
  }
  // A verified journal is folded from the records just verified, never from the state saved beside them.
  const run = Run.of(journal, { savedState: options.verify === false });
  await run.refresh();
  return run;
}
