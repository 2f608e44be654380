/**
 * The part of a stepchain run (the agent runtime, spec/RUNS.md) the AI SDK adapter writes through,
 * and which tool names each run records, so a model step lists as awaited exactly the calls that will get
 * an effect (the runtime's continuation point waits on each listed call).
 */
import type { Run } from '../../index.js';

export type AdapterRun = Pick<Run, 'beginModel' | 'beginTool' | 'endModel'>;

const recordedTools = new WeakMap<AdapterRun, Set<string>>();

export function noteRecordedTools(run: AdapterRun, names: Iterable<string>): void {
  const set = recordedTools.get(run) ?? new Set<string>();
  for (const name of names) set.add(name);
  recordedTools.set(run, set);
}

export function recordedToolNames(run: AdapterRun): ReadonlySet<string> {
  return recordedTools.get(run) ?? new Set<string>();
}
