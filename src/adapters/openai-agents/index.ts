/**
 * `stepchain/openai-agents`: record OpenAI Agents SDK (`@openai/agents` 0.20) runs into a stepchain run —
 * model requests and responses, tool calls, handoffs and guardrail results, with handoff targets and
 * agents used as tools in child runs (docs/openai-agents.md; the records: spec/FORMAT.md
 * §11). Imports only the public stepchain API; `@openai/agents` is an optional peer dependency, needed only
 * by whoever imports this entry.
 */
import { startRun, type Run, type Store } from '../../index.js';
import { AgentsRecorder } from './recorder.js';
import type { AdapterRun } from './run.js';

export { AgentsRecorder } from './recorder.js';
export type { AdapterRun } from './run.js';

export interface AgentsRecorderOptions {
  /** Where child runs are created (the store that holds `run`). */
  store: Store;
}

/**
 * A recorder writing into `run`. Give agents `recorder.model(model)` (or the runner
 * `recorder.provider(provider)`), define tools with `recorder.tool({...})`, wrap existing ones with
 * `recorder.wrapTool(tool)`, and register it with `setTraceProcessors([recorder])` so handoffs, guardrails
 * and sub-agents are placed. Child runs inherit the conversation id and labels and name the agent.
 */
export function agentsRecorder(run: AdapterRun, options: AgentsRecorderOptions): AgentsRecorder {
  return new AgentsRecorder(run, async (parent, agent): Promise<Run> => {
    const { conversation_id: conversationId, labels } = parent.identity;
    return startRun(options.store, {
      parentRunId: parent.runId,
      agent,
      ...(conversationId === undefined ? {} : { conversationId }),
      ...(labels === undefined ? {} : { labels }),
    });
  });
}
