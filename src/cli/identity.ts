/** How the CLI names a run's identity (spec/FORMAT.md §11.2): `--label k=v` options, and one line for people. */
import { capabilitiesOf } from '../record/formats.js';
import type { GenesisV2, RunEntry } from '../index.js';
import { UsageError } from './cli.js';
import { inline } from './safe-text.js';

/** `--label k=v` options as an object. */
export function labelsOf(values: unknown, verb: string): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  const labels: Record<string, string> = {};
  for (const pair of values as string[]) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--label takes name=value (got "${pair}")`, verb);
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return labels;
}

/** A run's identity for people, every value from the genesis shown through `inline` (safe-text.ts). */
export function describeIdentity(e: Pick<RunEntry, 'run'>): string {
  const parts: string[] = [];
  if (e.run.agent !== undefined) parts.push(`agent ${inline(e.run.agent)}`);
  if (e.run.conversation_id !== undefined) parts.push(`conversation ${inline(e.run.conversation_id)}`);
  if (e.run.parent_run_id !== undefined) parts.push(`parent ${inline(e.run.parent_run_id)}`);
  if (e.run.labels !== undefined)
    parts.push(
      Object.entries(e.run.labels)
        .map(([k, v]) => `${inline(k)}=${inline(v)}`)
        .join(' '),
    );
  return parts.join(', ');
}

/** One line naming a run journal's identity (for log and verify), or null for a v1 journal. */
export function identityLine(genesis: { format: string }): string | null {
  if (!capabilitiesOf(genesis).runRecords) return null;
  const g = genesis as GenesisV2;
  const rest = describeIdentity(g);
  return `run ${inline(g.journal_id)}${rest ? ` (${rest})` : ''}, created ${inline(g.created_at)}`;
}
