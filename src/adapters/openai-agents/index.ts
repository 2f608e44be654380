/**
 * `stepchain/openai-agents`: record OpenAI Agents SDK (`@openai/agents` 0.20) runs into a stepchain run —
 * model requests and responses, tool calls, handoffs and guardrail results, with handoff targets and
 * agents used as tools in child runs (docs/openai-agents.md; the records: spec/FORMAT.md
 * §11). Imports only the public stepchain API; `@openai/agents` is an optional peer dependency, needed only
 * by whoever imports this entry.
 */
import type { Store } from '../../index.js';
import { startRun, type EffectClass, type Run } from '../../runtime.js';
import { AgentsRecorder } from './recorder.js';
import type { AdapterRun } from './run.js';

export { AgentsRecorder } from './recorder.js';
export { resumeInput } from './resume.js';
export type { AdapterRun } from './run.js';

export interface AgentsRecorderOptions {
  /** Where child runs are created (the store that holds `run`). */
  store: Store;
  /**
   * What kind of effect each tool has (by name), deciding what happens to its effect when a crash left its
   * outcome unknown (RUNS.md §5): read-only and idempotent ones are retried, compensatable ones
   * compensated first; undeclared tools are irreversible: the call is refused until the effect is resolved.
   */
  effects?: Record<string, EffectClass>;
}

/**
 * A recorder writing into `run`. Give agents `recorder.model(model)` (or the runner
 * `recorder.provider(provider)`), define tools with `recorder.tool({...})`, wrap existing ones with
 * `recorder.wrapTool(tool)`, and register it with `setTraceProcessors([recorder])` so handoffs, guardrails
 * and sub-agents are placed. Child runs inherit the conversation id and labels and name the agent.
 */
export function agentsRecorder(run: AdapterRun, options: AgentsRecorderOptions): AgentsRecorder {
  return new AgentsRecorder(
    run,
    async (parent, agent): Promise<Run> => {
      const { conversation_id: conversationId, labels } = parent.identity;
      return startRun(options.store, {
        parentRunId: parent.runId,
        agent,
        ...(conversationId === undefined ? {} : { conversationId }),
        ...(labels === undefined ? {} : { labels }),
      });
    },
    options.effects ?? {},
  );
}
