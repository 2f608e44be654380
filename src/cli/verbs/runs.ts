/**
 * `stepchain runs <store>`: the runs in a store, oldest first, each with its status, end time and pending
 * effects (spec/FORMAT.md §11), filtered by conversation, parent run, agent, label or status.
 */
import { RUN_STATUSES, type RunFilter, type RunProgress, type RunStatus } from '../../store/runs.js';
import type { Store } from '../../index.js';
import { openStore } from '../../location.js';
import { pendingOf, Run } from '../../runtime/index.js';
import { EXIT_OK, UsageError, type Verb } from '../cli.js';
import { describeIdentity, labelsOf } from '../identity.js';
import { inline } from '../safe-text.js';

/** A run's status as `runs` shows it: its end record's, or interrupted while effects wait for an outcome. */
const STATUSES = RUN_STATUSES;

/** A run's status, end time and pending count folded from its records (a store that keeps no run state: file, memory). Read-only: journals stay byte-identical. */
async function statusOf(store: Store, id: string): Promise<RunProgress> {
  const journal = await store.open(id, { readOnly: true });
  try {
    const state = await Run.of(journal).refresh();
    const pending = pendingOf(state).length;
    return {
      status: state.status === 'running' && pending > 0 ? 'interrupted' : state.status,
      pending,
      ended_at: state.endedAt,
    };
  } finally {
    await journal.close();
  }
}

export const runsVerb: Verb = {
  name: 'runs',
  summary:
    'list the runs in a store (a directory, or a sqlite: or postgres:// location without ?journal=), oldest first, by conversation, parent run, agent or label',
  usage: '<store-dir> [--conversation C] [--parent R] [--agent A] [--label k=v]… [--status S]',
  description: [
    'Each run with its status: running, completed, failed, or interrupted — not ended, with N effects started and no',
    'outcome recorded (its process died mid-tool, or a tool is running right now) — its end time and its pending count',
    '(--json: members status, ended_at and pending). A SQLite or Postgres store answers in one query from the run state it',
    'keeps with each append; a directory store reads each run from the state it saved and the records after it.',
  ].join('\n'),
  options: {
    status: {
      type: 'string',
      arg: 'S',
      description: 'only runs with this status: running, completed, failed or interrupted',
    },
    conversation: { type: 'string', arg: 'C', description: 'only runs of this conversation' },
    parent: { type: 'string', arg: 'R', description: 'only runs delegated by this run' },
    agent: { type: 'string', arg: 'A', description: 'only runs of this agent' },
    label: { type: 'string', arg: 'k=v', multiple: true, description: 'only runs with this label (repeatable)' },
    removed: {
      type: 'boolean',
      description: 'list the runs `prune` removed instead: their tombstones, each checked (spec/RETENTION.md)',
    },
  },
  args: { min: 1, max: 1, names: ['store-dir'] },
  examples: [
    ['stepchain runs runs --conversation conv-42', 'the runs of one conversation, in order'],
    ['stepchain runs runs --parent run-orchestrator-1 --json', 'the sub-agent runs an orchestrator delegated'],
    ['stepchain runs runs --status interrupted', 'runs that died with effects of unknown outcome'],
  ],
  async run({ out, values, positionals }) {
    if (values.removed === true) return (await import('./retention.js')).listRemoved(out, positionals[0]!);
    const filter: RunFilter = {};
    if (values.conversation !== undefined) filter.conversationId = values.conversation as string;
    if (values.parent !== undefined) filter.parentRunId = values.parent as string;
    if (values.agent !== undefined) filter.agent = values.agent as string;
    const labels = labelsOf(values.label, 'runs');
    if (labels !== undefined) filter.labels = labels;
    const wanted = values.status as RunStatus | undefined;
    if (wanted !== undefined && !STATUSES.includes(wanted))
      throw new UsageError(`--status ${JSON.stringify(wanted)}: one of ${STATUSES.join(', ')}`, 'runs');
    // A store: a directory of journals, or a store location (sqlite:, postgres://) without ?journal=.
    const at = await openStore(positionals[0]!);
    const runs = [];
    try {
      // A database store lists each run's progress in its one query (SQLITE.md §4.2, POSTGRES.md §4.2); a
      // directory store lists it from each run's saved state where that is current (FILE-STORE.md §19), without
      // opening the journal; a run without it is opened here, one at a time, and read from its saved state and
      // the records after it. --status is applied here, to all.
      for (const { progress, ...r } of await at.store.runs(filter)) {
        const status = progress ?? (await statusOf(at.store, r.id));
        if (wanted === undefined || status.status === wanted) runs.push({ ...r, ...status });
      }
    } finally {
      await at.close();
    }
    if (out.json) {
      out.document('runs', { ok: true, store: at.display, runs });
      return EXIT_OK;
    }
    if (runs.length === 0) out.say('no matching runs');
    for (const r of runs) {
      const status =
        r.status === 'interrupted'
          ? out.style(['yellow', 'bold'], `interrupted, ${r.pending} pending`)
          : r.status === 'failed'
            ? out.style('red', 'failed')
            : r.status === 'completed'
              ? out.style('green', r.pending > 0 ? `completed, ${r.pending} left pending` : 'completed')
              : 'running';
      const identity = describeIdentity(r);
      out.print(
        `${inline(r.created_at)}  ${inline(r.id)}${r.fork_of ? ` (fork of ${inline(r.fork_of)})` : ''}  ${status}${r.ended_at ? ` at ${inline(r.ended_at)}` : ''}${identity ? `  ${identity}` : ''}`,
      );
    }
    return EXIT_OK;
  },
};
