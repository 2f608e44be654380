/**
 * The part of a stepchain run (the agent runtime, spec/RUNS.md) the AI SDK adapter writes through,
 * and which tool names each run records, so a model step lists as awaited exactly the calls that will get
 * an effect (the runtime's continuation point waits on each listed call).
 */
import type { Run } from '../../index.js';

export type AdapterRun = Pick<Run, 'beginModel' | 'beginTool' | 'endModel'> &
  Partial<Pick<Run, 'resolveEffect' | 'effects'>>;

const recordedTools = new WeakMap<AdapterRun, Set<string>>();
/**
 * A tool call of this run refused as a repeat of an effect of unknown outcome (EFFECT_PENDING). The SDK
 * turns a tool's error into text for the model and goes on; the next model call of the run throws the
 * refusal instead, so generateText/streamText stop with it rather than the model deciding what to do.
 */
const refusals = new WeakMap<AdapterRun, Error>();

export function noteRefusal(run: AdapterRun, error: Error): void {
  if (!refusals.has(run)) refusals.set(run, error);
}

/** Throws the refusal noted for `run`, if any (once). */
export function throwRefusal(run: AdapterRun): void {
  const error = refusals.get(run);
  if (error === undefined) return;
  refusals.delete(run);
  throw error;
}

export function noteRecordedTools(run: AdapterRun, names: Iterable<string>): void {
  const set = recordedTools.get(run) ?? new Set<string>();
  for (const name of names) set.add(name);
  recordedTools.set(run, set);
}

export function recordedToolNames(run: AdapterRun): ReadonlySet<string> {
  return recordedTools.get(run) ?? new Set<string>();
}
