/**
 * Which records carry a call run, for the approval check (spec/APPROVALS.md §5 step 4): every record holding a
 * `tool_call` — an object, or each object at any depth of arrays, in its wire shape (wire-calls.ts) — except the approval kinds and a model's records (what a
 * model asked for runs nothing). An outcome (tool.completed, tool.failed, tool.updated) naming its start carries
 * its start's call; one carrying another call ran that call too. Pure; runs in a browser.
 */
import { callsIn } from './wire-calls.js';

type Rec = Record<string, unknown>;

export const OUTCOME_KINDS: ReadonlySet<string> = new Set(['tool.completed', 'tool.failed', 'tool.updated']);
const NOT_RUN = /^(approval\.(requested|granted|denied)|model\.(started|completed|failed))$/;

/** The calls a record carries as run, and the start it names when it is an outcome; null when it carries none. */
export function carriedCalls(r: Rec): { calls: Rec[]; start: string | null } | null {
  const kind = typeof r.kind === 'string' ? r.kind : '';
  if (NOT_RUN.test(kind)) return null;
  const calls = callsIn(r.tool_call);
  if (calls.length === 0) return null;
  return { calls, start: OUTCOME_KINDS.has(kind) && typeof r.ref === 'string' ? r.ref : null };
}
