/** Retention verbs (spec/RETENTION.md): `prune` removes expired runs whole; `runs --removed` lists their tombstones. */
import { openStore } from '../../location.js';
import { checkTombstone, prune, verifiedTombstones, type Tombstone } from '../../retention.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import type { Output } from '../output.js';
import { inline } from '../safe-text.js';

export const pruneVerb: Verb = {
  name: 'prune',
  summary: 'remove the runs of a store older than a retention period, each whole, each leaving a tombstone',
  usage: '<store> --keep-days N [--basis last-step|created] [--reason TEXT] [--dry-run]',
  description: [
    'A run whose last step (--basis created: whose creation) is more than N days old is removed whole. Before it goes, a',
    'tombstone — its run id, steps, head, tree root, last signed checkpoint and a consistency proof from it — is appended',
    "to the store's journal `_tombstones`, so `runs --removed` says what is gone and a kept checkpoint can still be checked",
    'against it. A prune that is killed is finished by running it again. --dry-run lists what would go and writes nothing.',
  ].join('\n'),
  options: {
    'keep-days': { type: 'string', arg: 'N', description: 'keep runs this many days (required)' },
    basis: {
      type: 'string',
      arg: 'B',
      description: 'count age from the last step (last-step, default) or the creation (created)',
    },
    reason: {
      type: 'string',
      arg: 'TEXT',
      description: 'why, recorded in every tombstone (default "retention: older than N days")',
    },
    'dry-run': { type: 'boolean', description: 'list the runs that would be removed; write nothing' },
  },
  args: { min: 1, max: 1, names: ['store'] },
  examples: [
    ['stepchain prune runs --keep-days 180', "keep six months of runs (the AI Act's minimum for deployers' logs)"],
    ['stepchain prune sqlite:agents.db --keep-days 30 --dry-run', 'what a 30-day policy would remove'],
  ],
  async run({ out, values, positionals }) {
    const days = values['keep-days'] as string | undefined;
    if (days === undefined) throw new UsageError('--keep-days N is required', 'prune');
    if (!/^(0|[1-9][0-9]{0,5})$/.test(days))
      throw new UsageError(`--keep-days ${JSON.stringify(days)}: a whole number of days from 0 to 999999`, 'prune');
    const basis = (values.basis as string | undefined) ?? 'last-step';
    if (basis !== 'last-step' && basis !== 'created')
      throw new UsageError(`--basis ${JSON.stringify(basis)}: last-step or created`, 'prune');
    const dryRun = values['dry-run'] === true;
    const at = await openStore(positionals[0]!);
    let result;
    try {
      result = await prune(at.store, {
        keepDays: Number(days),
        basis,
        dryRun,
        ...(values.reason !== undefined ? { reason: values.reason as string } : {}),
        onRun: (t) => {
          if (!out.json)
            out.say(
              `${dryRun ? 'would remove' : 'removed'} ${inline(t.journal)}: ${t.steps} step${t.steps === 1 ? '' : 's'}, last ${inline(t.last_ts ?? t.created_at)}`,
            );
        },
      });
    } finally {
      await at.close();
    }
    if (out.json) {
      out.document('prune', {
        ok: true,
        store: at.display,
        dry_run: dryRun,
        kept: result.kept,
        resumed: result.resumed,
        finished: result.finished,
        raced: result.raced,
        skipped: result.skipped,
        removed: result.removed,
      });
      return result.skipped.length === 0 ? EXIT_OK : EXIT_FAILED;
    }
    const n = result.removed.length;
    out.say(
      `${dryRun ? 'would remove' : 'removed'} ${n} run${n === 1 ? '' : 's'}, kept ${result.kept}${result.resumed > 0 ? ` (${result.resumed} finished for an interrupted prune)` : ''}${result.finished > 0 ? `; deleted the files of ${result.finished} run${result.finished === 1 ? '' : 's'} an interrupted prune had removed` : ''}`,
    );
    for (const id of result.raced)
      out.say(
        out.style('yellow', `  kept ${inline(id)}: it was appended to while being pruned; its tombstone is superseded`),
      );
    for (const s of result.skipped)
      out.say(
        out.style(
          ['red', 'bold'],
          `  kept ${inline(s.journal)}: ${inline(s.code)}: ${inline(s.message)} — a damaged run is never pruned; run stepchain verify on it`,
        ),
      );
    return result.skipped.length === 0 ? EXIT_OK : EXIT_FAILED;
  },
};

/** `runs <store> --removed`: the tombstones, each checked on its own (RETENTION.md §4); exit 1 if any fails. */
export async function listRemoved(out: Output, location: string): Promise<number> {
  const at = await openStore(location);
  let tombstones: Tombstone[];
  let present: Set<string>;
  let chain: Awaited<ReturnType<typeof verifiedTombstones>>['report'];
  try {
    ({ tombstones, report: chain } = await verifiedTombstones(at.store));
    present = new Set(await at.store.list());
  } finally {
    await at.close();
  }
  // A tombstone whose journal is still there was written by a prune that then lost a race with a writer.
  const rows = tombstones.map((t) => ({
    tombstone: t,
    check: checkTombstone(t),
    superseded: typeof t.journal === 'string' && present.has(t.journal),
  }));
  const chainOk = chain === null || chain.ok;
  const failed = rows.filter((r) => !r.check.ok).length + (chainOk ? 0 : 1);
  if (out.json) {
    out.document('runs', {
      ok: failed === 0,
      store: at.display,
      tombstones_chain:
        chain === null ? null : { ok: chain.ok, steps: chain.steps, head: chain.head, problems: chain.problems },
      removed: rows.map(({ tombstone, check, superseded }) => ({
        ...tombstone,
        superseded,
        check: check.ok ? { ok: true, checkpoint_size: check.checkpointSize } : { ok: false, ...check.problem },
      })),
    });
    return failed === 0 ? EXIT_OK : EXIT_FAILED;
  }
  if (!chainOk) {
    // The journal that holds the tombstones was altered: none of them is evidence of anything.
    out.say(
      out.style(
        ['red', 'bold'],
        `✘ the tombstone journal _tombstones does NOT verify: ${chain!.problems.length} problem${chain!.problems.length === 1 ? '' : 's'}`,
      ),
    );
    for (const p of chain!.problems.slice(0, 5))
      out.say(
        `  ${inline(p.code)}${p.location.seq !== undefined ? ` at seq ${p.location.seq}` : ''}: ${inline(p.message)}`,
      );
  }
  if (rows.length === 0) out.say('no removed runs');
  const text = (v: unknown): string => inline(typeof v === 'string' ? v : String(JSON.stringify(v)));
  for (const { tombstone: t, check, superseded } of rows) {
    const verdict = !chainOk
      ? out.style(['red', 'bold'], 'not evidence: the tombstone journal does not verify')
      : superseded
        ? out.style('yellow', 'superseded: the run is still in the store (it was written to while being pruned)')
        : !check.ok
          ? out.style(['red', 'bold'], `${check.problem.code}: ${check.problem.message}`)
          : check.checkpointSize === null
            ? 'no checkpoint was signed'
            : out.style('green', `extends its checkpoint of size ${check.checkpointSize}`);
    out.print(
      `${text(t.removed_at)}  ${text(t.journal)}  ${text(t.steps)} step${t.steps === 1 ? '' : 's'}  head ${text(t.head ?? '(none)')}  ${text(t.reason)}  ${verdict}`,
    );
  }
  return failed === 0 ? EXIT_OK : EXIT_FAILED;
}
