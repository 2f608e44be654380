/**
 * The order of the spans inside one run (spec/OTEL.md §5.1). The SDKs stamp times from clocks that tie and
 * even invert within a millisecond across spans, so time alone cannot order an agent's loop; the tool call
 * ids can: a model call that asks for call X comes before the tool execution of X, which comes before a model
 * call whose input holds X's result. Those are the edges; among the spans they leave free, the earlier end,
 * then the earlier start, then the smaller span id goes first. A cycle (hostile input) is broken the same way.
 */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Ordered {
  /** Time of the end, of the start, and the span id: the tie-break. */
  end: bigint;
  start: bigint;
  id: string;
  /** Tool call ids this span asks for (a model call's output). */
  asks: string[];
  /** The tool call id this span executes (a tool execution). */
  executes: string | undefined;
  /** Tool call ids whose results this span's input holds (a model call's prompt). */
  consumes: string[];
}

const before = (a: Ordered, b: Ordered): boolean =>
  a.end !== b.end ? a.end < b.end : a.start !== b.start ? a.start < b.start : a.id < b.id;

/** The ids of tool results in a prompt: GenAI `tool_call_response` parts, the AI SDK's `tool-result` parts. */
export function consumedIds(prompt: Json | undefined): string[] {
  const out: string[] = [];
  const stack: Json[] = prompt === undefined ? [] : [prompt];
  let budget = 100_000;
  while (stack.length > 0 && budget-- > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) stack.push(...v);
    else if (v !== null && typeof v === 'object') {
      if (v.type === 'tool_call_response' && typeof v.id === 'string') out.push(v.id);
      if (v.type === 'tool-result' && typeof v.toolCallId === 'string') out.push(v.toolCallId);
      for (const x of Object.values(v)) if (x !== null && typeof x === 'object') stack.push(x);
    }
  }
  return out;
}

export function causalOrder<T extends Ordered>(items: readonly T[]): T[] {
  const n = items.length;
  const after: number[][] = items.map(() => []);
  const indegree = new Array<number>(n).fill(0);
  const askedBy = new Map<string, number[]>();
  const executedBy = new Map<string, number[]>();
  items.forEach((it, i) => {
    for (const x of it.asks) (askedBy.get(x) ?? askedBy.set(x, []).get(x)!).push(i);
    if (it.executes !== undefined)
      (executedBy.get(it.executes) ?? executedBy.set(it.executes, []).get(it.executes)!).push(i);
  });
  const edge = (from: number, to: number): void => {
    if (from === to) return;
    after[from]!.push(to);
    indegree[to]!++;
  };
  items.forEach((it, i) => {
    if (it.executes !== undefined) for (const m of askedBy.get(it.executes) ?? []) edge(m, i);
    for (const x of it.consumes) {
      const tools = executedBy.get(x) ?? [];
      for (const t of tools) edge(t, i);
      if (tools.length === 0) for (const m of askedBy.get(x) ?? []) edge(m, i);
    }
  });
  const done = new Array<boolean>(n).fill(false);
  const out: T[] = [];
  for (let k = 0; k < n; k++) {
    let pick = -1;
    let fallback = -1;
    for (let i = 0; i < n; i++) {
      if (done[i]) continue;
      if (fallback < 0 || before(items[i]!, items[fallback]!)) fallback = i;
      if (indegree[i] === 0 && (pick < 0 || before(items[i]!, items[pick]!))) pick = i;
    }
    const chosen = pick >= 0 ? pick : fallback;
    done[chosen] = true;
    out.push(items[chosen]!);
    for (const j of after[chosen]!) indegree[j]!--;
  }
  return out;
}
