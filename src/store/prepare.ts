/**
 * Turns a caller's step into what the sequencer seals (spec/FORMAT.md §8): validation first, on the
 * caller's own value, then blob substitution. User data may never hold `$stepchain:` names, so the check
 * runs before markers are added, never after. Pure: runs anywhere.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import { digestBytes, digestUtf8 } from '../canonical/sha256.js';
import { BLOB_MARKER } from '../chain/verify.js';
import { CONTENT_FIELDS, checkStepInput, type ContentField, type Json, type JsonObject, type StepInput, type StepRecord, type StepTexts } from '../chain/record.js';

export interface BlobPayload {
  digest: string;
  bytes: Uint8Array;
}

export interface PreparedStep {
  /** Content with every large field replaced by its blob reference. */
  content: Record<ContentField, Json>;
  meta: JsonObject | undefined;
  /** The JCS text of each (substituted) content field and of meta when present: what the seal joins. */
  texts: StepTexts;
  step_id: string | undefined;
  ts: string | undefined;
  blobs: BlobPayload[];
  /** Digest of the (substituted) content and meta: what an idempotent retry must match. */
  key: string;
}

const encoder = new TextEncoder();

export function prepareStep(step: StepInput, blobThreshold: number): PreparedStep {
  // The walk that validates each field also serializes it, once: the seal joins these texts into the
  // line, and the idempotency key is their JCS array (JCS of an array is its elements' JCS joined by
  // commas), which contentKey recomputes from parsed records with the same digest.
  const checked = checkStepInput(step);
  let content = checked.content;
  let texts: Record<ContentField, string> & { meta?: string } = checked.texts;
  const blobs: BlobPayload[] = [];
  for (const field of CONTENT_FIELDS) {
    const text = texts[field];
    // A UTF-16 unit encodes to at most 3 bytes, so a short text cannot reach the threshold.
    if (text.length * 3 < blobThreshold) continue;
    const bytes = encoder.encode(text);
    if (bytes.length < blobThreshold) continue;
    const digest = digestBytes(bytes);
    blobs.push({ digest, bytes });
    const marker = { [BLOB_MARKER]: { digest, size: bytes.length } };
    if (content === checked.content) {
      content = { ...content };
      texts = { ...texts };
    }
    content[field] = marker;
    texts[field] = canonicalJsonTrusted(marker);
  }
  const key = digestUtf8(`[${texts.input},${texts.model},${texts.prompt},${texts.tool_call},${texts.result},${texts.meta ?? 'null'}]`);
  return { content, meta: checked.meta, texts, step_id: checked.step_id, ts: checked.ts, blobs, key };
}

/** prepareStep over one append() or appendMany() call; with several steps, an error names the step's index. */
export function prepareSteps(steps: readonly StepInput[], blobThreshold: number): PreparedStep[] {
  return steps.map((step, i) => {
    try {
      return prepareStep(step, blobThreshold);
    } catch (e) {
      if (steps.length > 1 && e instanceof Error) e.message = `step ${i} of the batch: ${e.message}`;
      throw e;
    }
  });
}

/** The idempotency key: the digest of the substituted content fields and meta, in a fixed order. */
export function contentKey(content: Record<ContentField, Json>, meta: JsonObject | undefined): string {
  return digestUtf8(canonicalJsonTrusted([content.input, content.model, content.prompt, content.tool_call, content.result, meta ?? null]));
}

/** The idempotency key of a stored record (as parsed from its canonical line). */
export function recordKey(record: StepRecord): string {
  return contentKey(record, record.meta);
}
