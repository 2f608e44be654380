/**
 * The matching key of a request (spec/REPLAY.md §3): the request in record shape — a model request's
 * `model`, `prompt` and `input`, a tool call's `tool_call` `{ name, arguments }` — converted by the one
 * value rule (toJournalValue), its volatile and ignored members removed, canonicalized (RFC 8785).
 * Requests with equal keys are told apart by their ordinal: the how-manieth with that key they are.
 */
import { canonicalJson } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { FieldCollector, IgnoreSet, PRUNED, prune, type FieldDiff } from '../diff/index.js';
import { toJournalValue } from '../runtime/index.js';

export type RequestKind = 'model' | 'tool';

/** A model request as an adapter sees it; values may still be Dates, binary, undefined members. */
export interface ModelRequest {
  model?: unknown;
  prompt?: unknown;
  input?: unknown;
}

/** A tool call as an adapter sees it. */
export interface ToolRequest {
  name: string;
  arguments?: unknown;
}

/** The record-shaped projection a key is made from (before ignoring). */
export function modelProjection(request: ModelRequest): JsonObject {
  return {
    input: toJournalValue(request.input ?? null, { field: 'input' }),
    model: toJournalValue(request.model ?? null, { field: 'model' }),
    prompt: toJournalValue(request.prompt ?? null, { field: 'prompt' }),
  };
}

export function toolProjection(call: ToolRequest): JsonObject {
  return {
    tool_call: {
      arguments: toJournalValue(call.arguments ?? null, { field: 'tool_call/arguments' }),
      name: call.name,
    },
  };
}

/** The projection of a stored record (already journal values). */
export function recordProjection(kind: RequestKind, record: Record<string, unknown>): JsonObject {
  if (kind === 'model')
    return {
      input: (record.input ?? null) as Json,
      model: (record.model ?? null) as Json,
      prompt: (record.prompt ?? null) as Json,
    };
  const call = (record.tool_call ?? {}) as { name?: Json; arguments?: Json };
  return { tool_call: { arguments: call.arguments ?? null, name: call.name ?? null } };
}

/** The matching key: the kind, then the canonical projection without the ignored members. */
export function matchKey(kind: RequestKind, projection: JsonObject, ignore: IgnoreSet): string {
  const kept = prune(projection, ignore, ignore.root());
  return `${kind} ${canonicalJson(kept === PRUNED ? {} : kept)}`;
}

/** The field differences between a recorded projection (a) and a live one (b), ignored members left out. */
export function requestDiff(recorded: JsonObject, live: JsonObject, ignore: IgnoreSet, limit = 100): FieldDiff[] {
  const c = new FieldCollector(limit, ignore);
  const root = ignore.root();
  const fields = [...new Set([...Object.keys(recorded), ...Object.keys(live)])].sort();
  for (const f of fields) {
    const state = ignore.step(root, f);
    if (f in recorded && f in live) c.compare(recorded[f]!, live[f]!, `/${f}`, state);
    else if (f in recorded) c.field('a', recorded[f]!, `/${f}`, state);
    else c.field('b', live[f]!, `/${f}`, state);
  }
  return c.fields;
}
