/**
 * Which records carry a call run, for the approval check (spec/APPROVALS.md §5 step 4): every record holding a
 * `tool_call` — an object, or each object at any depth of arrays, in its wire shape (wire-calls.ts) — except the approval kinds and a model's records (what a
 * model asked for runs nothing). An outcome (tool.completed, tool.failed, tool.updated) naming its start carries
 * its start's call; one carrying another call ran that call too. Pure; runs in a browser.
 */
import { callForm, nameTextOf } from './calls.js';
import { callsIn } from './wire-calls.js';

type Rec = Record<string, unknown>;

export const OUTCOME_KINDS: ReadonlySet<string> = new Set(['tool.completed', 'tool.failed', 'tool.updated']);
/** What stands for the call of a start that carries none: not in hand (calls.ts callIsHidden). */
const NO_CALL: Rec = Object.freeze({ '$stepchain:no-call': true });
/** A call naming its tool, or one not in hand (a marker as a member). */
const named = (c: Rec): boolean =>
  typeof c.name === 'string' || Object.keys(c).some((k) => k.startsWith('$stepchain:'));
const NOT_RUN = /^(approval\.(requested|granted|denied)|model\.(started|completed|failed))$/;

/** The calls a record carries as run, and the start it names when it is an outcome; null when it carries none. */
export function carriedCalls(r: Rec): { calls: Rec[]; start: string | null } | null {
  const kind = typeof r.kind === 'string' ? r.kind : '';
  if (NOT_RUN.test(kind)) return null;
  let calls = callsIn(r.tool_call);
  // A start whose tool_call names no tool (null, say) began a call all the same: found where it is (its input),
  // or not in hand (§5 step 5) — never a start that ran nothing.
  if (kind === 'tool.started' && !calls.some(named)) {
    const inInput = callsIn(r.input).filter(named);
    calls = inInput.length > 0 ? inInput : [NO_CALL];
  }
  if (calls.length === 0) return null;
  return { calls, start: OUTCOME_KINDS.has(kind) && typeof r.ref === 'string' ? r.ref : null };
}

/**
 * Whether a call an outcome carries, with no comparable arguments (callForm null: none, or under a member no shape
 * names), is of another tool than its start's compared call `began`: then it is a same-tool look-alike of a
 * presented call (the notice, §5 step 4), never swallowed as the start's own call repeated.
 */
export function otherTool(call: Rec, began: string | null): boolean {
  if (callForm(call.name, call.arguments) !== null) return false; // comparable: APPROVAL_MISMATCH when another call
  return began === null || typeof call.name !== 'string' || nameTextOf(began) !== JSON.stringify(call.name);
}
