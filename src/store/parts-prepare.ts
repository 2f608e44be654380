/**
 * Parts at append (spec/PARTS.md §2): after prepareStep has validated a step of a `stepchain/v3` journal
 * (so no caller value holds a `$stepchain:` name, and every reference below is the writer's), its content
 * slots' large values are moved into parts and the slots' canonical texts and idempotency key are made
 * again from the values with references in place. `meta` and the envelope members (kind, ref) never move.
 * The parts go to the store before any line that references them, as blobs do. Pure but for the writer's
 * lookups in the part store.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json } from '../canonical/json.js';
import type { PartPayload, PartWriter } from '../record/v3/parts.js';
import type { PreparedStep } from './prepare.js';

/** The slots whose values may become parts: every v3 slot but `meta` (design §8.1). */
export const PART_SLOTS: readonly string[] = ['error', 'input', 'model', 'prompt', 'result', 'tool_call'];

/** A prepared step with its parts substituted, and the new parts it needs stored first. */
export interface PartedStep {
  step: PreparedStep;
  parts: PartPayload[];
}

export async function substituteParts(step: PreparedStep, writer: PartWriter): Promise<PartedStep> {
  const slots: Record<string, Json> = {};
  for (const name of PART_SLOTS) {
    const text = step.texts[name];
    // A slot whose text is shorter than the threshold holds nothing that could become a part (every part
    // is at least the threshold, and base64 media of 1 KiB is longer than the smallest threshold).
    if (text === undefined || text.length < writer.threshold / 3) continue;
    slots[name] = step.content[name]!;
  }
  if (Object.keys(slots).length === 0) return { step, parts: [] };
  const { slots: substituted, parts } = await writer.extract(slots);
  if (parts.length === 0 && Object.keys(substituted).every((k) => substituted[k] === slots[k])) return { step, parts };
  const content = { ...step.content };
  const texts: Record<string, string> = { ...step.texts };
  for (const name of Object.keys(substituted)) {
    content[name] = substituted[name]!;
    texts[name] = canonicalJsonTrusted(substituted[name]);
  }
  return { step: { ...step, content, texts, key: step.profile.key(texts) }, parts };
}
