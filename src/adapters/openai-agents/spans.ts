/**
 * The shape of an Agents SDK trace, kept as its spans start, so a model or tool call can be placed in the
 * run of the agent making it (docs/openai-agents.md). An agent span whose parent already
 * holds an earlier agent span is the target of a handoff: its run is a child of that agent's run. An agent
 * span below a function span is an agent used as a tool: its run is a child of the run of the agent that
 * called the tool. Any other agent span is the root agent of a workflow and writes to the recorder's run.
 */
export interface SpanFacts {
  type: string;
  parentId: string | null;
  /** The agent's name, for agent spans. */
  name?: string;
}

/** Where an agent span's records go: the root run, or a child of another agent span's run. */
export type AgentPlace = { kind: 'root' } | { kind: 'child'; parentAgentSpan: string; agent: string };

export class SpanTree {
  private readonly spans = new Map<string, SpanFacts>();
  /** Agent spans under each parent span, in the order they started. */
  private readonly agentsUnder = new Map<string, string[]>();

  started(spanId: string, facts: SpanFacts): void {
    this.spans.set(spanId, facts);
    if (facts.type === 'agent' && facts.parentId !== null) {
      const list = this.agentsUnder.get(facts.parentId) ?? [];
      list.push(spanId);
      this.agentsUnder.set(facts.parentId, list);
    }
  }

  /** Forget a whole trace's spans once it ends; their runs stay cached by the recorder. */
  forget(spanIds: Iterable<string>): void {
    for (const id of spanIds) {
      const facts = this.spans.get(id);
      this.spans.delete(id);
      if (facts?.parentId != null) this.agentsUnder.delete(facts.parentId);
    }
  }

  facts(spanId: string): SpanFacts | undefined {
    return this.spans.get(spanId);
  }

  /** The nearest agent span at or above `spanId`, or undefined when the span is not known (tracing off). */
  agentOf(spanId: string | null | undefined): string | undefined {
    let id = spanId ?? null;
    for (let hops = 0; id !== null && hops < 10_000; hops++) {
      const facts = this.spans.get(id);
      if (facts === undefined) return undefined;
      if (facts.type === 'agent') return id;
      id = facts.parentId;
    }
    return undefined;
  }

  place(agentSpan: string): AgentPlace {
    const facts = this.spans.get(agentSpan);
    if (facts?.parentId == null) return { kind: 'root' };
    const agent = facts.name ?? 'agent';
    const siblings = this.agentsUnder.get(facts.parentId) ?? [];
    const index = siblings.indexOf(agentSpan);
    if (index > 0) return { kind: 'child', parentAgentSpan: siblings[index - 1]!, agent };
    // An agent used as a tool: its task hangs below the calling agent's function span.
    let id: string | null = facts.parentId;
    let underFunction = false;
    for (let hops = 0; id !== null && hops < 10_000; hops++) {
      const above = this.spans.get(id);
      if (above === undefined) break;
      if (above.type === 'function') underFunction = true;
      if (above.type === 'agent')
        return underFunction ? { kind: 'child', parentAgentSpan: id, agent } : { kind: 'root' };
      id = above.parentId;
    }
    return { kind: 'root' };
  }
}
