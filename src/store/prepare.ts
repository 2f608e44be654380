/**
 * Turns a caller's step into what the sequencer seals (spec/FORMAT.md §7, §8): validation first, on the
 * caller's own value, then blob substitution, by the record profile the journal writes. User data may never
 * hold `$stepchain:` names, so the check runs before markers are added, never after. Every store prepares
 * its steps here, so their stored lines are byte-identical. Pure: runs anywhere.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { digestBytes } from '../canonical/sha256.js';
import { checkStepInput, type StepInput } from '../record/input.js';
import { blobMarker } from '../record/markers.js';
import type { RecordProfile, StepTexts } from '../record/profile.js';

export interface BlobPayload {
  digest: string;
  bytes: Uint8Array;
}

export interface PreparedStep {
  /** The profile the step is sealed by. */
  profile: RecordProfile;
  /** Content with every large field replaced by its blob reference. */
  content: Record<string, Json>;
  meta: JsonObject | undefined;
  /** The JCS text of each (substituted) content field and of meta when present: what the seal joins. */
  texts: StepTexts;
  step_id: string | undefined;
  ts: string | undefined;
  blobs: BlobPayload[];
  /** The idempotency key (FORMAT §8.10): what an idempotent retry must match. */
  key: string;
}

const encoder = new TextEncoder();

export function prepareStep(step: StepInput, blobThreshold: number, profile: RecordProfile): PreparedStep {
  // The walk that validates each field also serializes it, once: the seal joins these texts into the
  // line, and the idempotency key is made from them too.
  const checked = checkStepInput(step, profile);
  let content = checked.content;
  let texts: Record<string, string> = checked.texts;
  const blobs: BlobPayload[] = [];
  for (const field of profile.blobFields) {
    const text = texts[field]!;
    // A UTF-16 unit encodes to at most 3 bytes, so a short text cannot reach the threshold.
    if (text.length * 3 < blobThreshold) continue;
    const bytes = encoder.encode(text);
    if (bytes.length < blobThreshold) continue;
    const digest = digestBytes(bytes);
    blobs.push({ digest, bytes });
    const marker = blobMarker({ digest, size: bytes.length });
    if (content === checked.content) {
      content = { ...content };
      texts = { ...texts };
    }
    content[field] = marker as unknown as Json;
    texts[field] = canonicalJsonTrusted(marker);
  }
  return { profile, content, meta: checked.meta, texts, step_id: checked.step_id, ts: checked.ts, blobs, key: profile.key(texts) };
}

/** prepareStep over one append() or appendMany() call; with several steps, an error names the step's index. */
export function prepareSteps(steps: readonly StepInput[], blobThreshold: number, profile: RecordProfile): PreparedStep[] {
  return steps.map((step, i) => {
    try {
      return prepareStep(step, blobThreshold, profile);
    } catch (e) {
      if (steps.length > 1 && e instanceof Error) e.message = `step ${i} of the batch: ${e.message}`;
      throw e;
    }
  });
}
