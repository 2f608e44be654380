/**
 * The classification of a replay's divergences (spec/REPLAY.md §7): each divergence of a diff report is a
 * request change (the agent asked something else: your code), a recorded-answer change (the model answered
 * something else: drift, possible only where a step ran live), a tool-result change (a tool returned or
 * failed differently) or a run-record change (a record the agent writes itself — run.started's members
 * other than its input, run.completed, run.failed — differs: your code, never the model's answer). A
 * request change wins when a step differs in both.
 */
import type { Json } from '../canonical/json.js';
import type { ChainSource } from '../chain/source.js';
import type { DiffReport, Divergence, FieldDiff } from '../diff/index.js';

export type DivergenceClass = 'request-change' | 'recorded-answer-change' | 'tool-result-change' | 'run-record-change';

export interface Explanation {
  class: DivergenceClass;
  divergence: Divergence['kind'];
  seq_a: number | null;
  seq_b: number | null;
  /** The record kind (model.started, tool.completed, step…), from run a when it has the step. */
  record: string;
  /** The fields that decide the class (JSON Pointers); empty for a step only one run has. */
  fields: string[];
}

/** A step's record kind by seq: a run's records in memory, or a source read one line at a time. */
type KindLookup = (side: 'a' | 'b', seq: number) => Promise<string>;

const REQUEST_FIELDS = ['/input', '/model', '/prompt'];
const under = (path: string, roots: readonly string[]): boolean =>
  roots.some((r) => path === r || path.startsWith(`${r}/`));

function classOf(record: string, fields: readonly FieldDiff[]): { cls: DivergenceClass; fields: string[] } {
  const paths = fields.map((f) => f.path);
  const isTool = record.startsWith('tool.');
  // A tool record's request is its tool_call (name, arguments); a model record's is its model, prompt and input.
  const requestRoots = isTool ? ['/tool_call', '/kind'] : REQUEST_FIELDS;
  const requestPaths = paths.filter((p) => under(p, requestRoots) && !(isTool && p === '/kind'));
  if (requestPaths.length > 0) return { cls: 'request-change', fields: requestPaths };
  if (isTool) return { cls: 'tool-result-change', fields: paths };
  // The run's own records hold what the agent's code made of the answers, not an answer.
  if (record.startsWith('run.')) return { cls: 'run-record-change', fields: paths };
  return { cls: 'recorded-answer-change', fields: paths };
}

/** The two runs a report compared: journals, receipts, or their records in memory. */
export type ExplainInput = ChainSource | readonly { seq: number; kind?: unknown }[];

/** Classifies every divergence of `report` (run diff with `all: true` to see them all) over the runs it compared. */
export async function explain(report: DiffReport, a: ExplainInput, b: ExplainInput): Promise<Explanation[]> {
  const kindOf =
    Array.isArray(a) || Array.isArray(b)
      ? kindsOf(a as never, b as never)
      : kindsFrom(a as ChainSource, b as ChainSource);
  const out: Explanation[] = [];
  for (const d of report.divergences) {
    if (d.kind === 'changed') {
      const record = await kindOf('a', d.seq_a);
      const kindField = d.fields.find((f) => f.path === '/kind');
      // A completed outcome that became a failure (or back) is an answer change of its kind's side.
      const recordKind = kindField !== undefined && typeof kindField.a === 'string' ? kindField.a : record;
      const { cls, fields } = classOf(recordKind, d.fields);
      out.push({ class: cls, divergence: d.kind, seq_a: d.seq_a, seq_b: d.seq_b, record: recordKind, fields });
    } else {
      // A step only one run has: the agent took another path — it asked (or stopped asking) something.
      const step = d.step as Record<string, Json>;
      const record = typeof step.kind === 'string' ? step.kind : 'step';
      out.push({
        class: 'request-change',
        divergence: d.kind,
        seq_a: d.kind === 'deleted' ? d.seq_a : null,
        seq_b: d.kind === 'inserted' ? d.seq_b : null,
        record,
        fields: [],
      });
    }
  }
  return out;
}

/** A KindLookup over two chain sources (journals or receipts), reading the one line it needs. */
function kindsFrom(a: ChainSource, b: ChainSource): KindLookup {
  return async (side, seq) => {
    for await (const line of (side === 'a' ? a : b).lines({ from: seq, to: seq })) {
      try {
        const kind = (JSON.parse(line.text) as { kind?: unknown }).kind;
        return typeof kind === 'string' ? kind : 'step';
      } catch {
        return 'step';
      }
    }
    return 'step';
  };
}

/** A KindLookup over records in memory. */
function kindsOf(
  a: readonly { seq: number; kind?: unknown }[],
  b: readonly { seq: number; kind?: unknown }[],
): KindLookup {
  return (side, seq) => {
    const r = (side === 'a' ? a : b).find((x) => x.seq === seq);
    return Promise.resolve(typeof r?.kind === 'string' ? r.kind : 'step');
  };
}
