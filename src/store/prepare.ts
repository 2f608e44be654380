/**
 * Turns a caller's step into what the sequencer seals (spec/FORMAT.md §7, spec/FILE-STORE.md): validation first, on the
 * caller's own value, then blob substitution, by the record profile the journal writes. User data may never
 * hold `$stepchain:` names, so the check runs before markers are added, never after. Every store prepares
 * its steps here, so their stored lines are byte-identical. Pure: runs anywhere.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { digestBytes } from '../canonical/sha256.js';
import { utcInstant } from '../record/fields.js';
import { checkStepInput, type StepInput } from '../record/input.js';
import { blobMarker } from '../record/markers.js';
import type { RecordProfile, StepTexts } from '../record/profile.js';
import { StoreError } from './errors.js';
import { SEALED_LINE, preparedSealed, type SealedLine } from './sealed-copy.js';

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
  /** A record salt carried over by a copy (v2 only); undefined: the seal draws one. */
  salt: string | undefined;
  /** A record seed carried over by a copy (v3 only); undefined: the seal draws one. */
  seed: string | undefined;
  blobs: BlobPayload[];
  /** The idempotency key (FILE-STORE.md §10): what an idempotent retry must match. */
  key: string;
  /**
   * Prepared under a writer's mark (erase, a copy, a legacy approval's vector): what a caller's step may not be.
   * Never carried by the Postgres intake, whose sequencer checks a row as a caller's step (POSTGRES.md §6.6).
   */
  marked?: true;
}

const encoder = new TextEncoder();

/**
 * Makes the engine store `text` as one flat string, in place. The serializing walk builds each text by
 * concatenation, a tree of hundreds of small strings; the idempotency key, the seal's hash and the bucket
 * write each read the text whole, and each read of such a tree walks every node again. Converting a
 * string to a number flattens it first (V8), and a JSON text is never a number, so the conversion stops at
 * its first character. Measured on bench/'s 1.2 KB steps: the key and the seal's hash take a third of their
 * time on flat texts. The result is unused; only the side effect on the representation matters.
 */
function flatten(text: string): void {
  void Number(text);
}

/**
 * Marks the one step an erase appends (an own member under this symbol, which no parsed or public input can
 * carry): in a stepchain/v3 journal the kind "erasure" and the step_ids starting `erasure:` are the erase
 * writer's alone (spec/ERASURE.md §3.1); any other append of them is refused, ERASURE_RESERVED.
 */
export const ERASURE_WRITER: unique symbol = Symbol('stepchain erasure writer');

function refuseReserved(step: StepInput, profile: RecordProfile): void {
  if (profile.id !== 'step/v3' || (step as { [ERASURE_WRITER]?: true })[ERASURE_WRITER] === true) return;
  const { kind, step_id: id } = step as { kind?: unknown; step_id?: unknown };
  if (kind !== 'erasure' && !(typeof id === 'string' && id.startsWith('erasure:'))) return;
  const what = kind === 'erasure' ? 'kind "erasure"' : `step_id ${JSON.stringify(id)}`;
  throw new StoreError(
    'ERASURE_RESERVED',
    `${what} is reserved to stepchain erase in a stepchain/v3 journal (spec/ERASURE.md §3.1): an erasure is recorded by erasing (stepchain erase, eraseValue), never appended; choose another kind or step_id`,
  );
}

/**
 * Marks a step that re-creates an approval record of the shape written before statement v2 (a copy carries
 * ERASURE_WRITER instead; tests and vector builders set this one): no parsed or public input can carry it.
 */
export const LEGACY_APPROVAL_WRITER: unique symbol = Symbol('stepchain legacy approval writer');

/**
 * The approval records a v3 writer refuses. A request whose `expires_at` names no instant, or whose tool name
 * could be stored as a part (APPROVALS.md §2): APPROVAL_INVALID. A request with an unsalted `digest` of its
 * presented call, or a v1 statement naming one (§2.1, §3.1): published or erased, such a digest gives
 * low-entropy arguments back to whoever tries candidates; APPROVAL_LEGACY. Copies of older journals keep theirs.
 */
function refuseUnwritableApproval(step: StepInput, profile: RecordProfile): void {
  const marks = step as { [ERASURE_WRITER]?: true; [LEGACY_APPROVAL_WRITER]?: true };
  if (profile.id !== 'step/v3' || marks[ERASURE_WRITER] === true || marks[LEGACY_APPROVAL_WRITER] === true) return;
  const { kind, input } = step as { kind?: unknown; input?: unknown };
  if (typeof kind !== 'string' || !kind.startsWith('approval.') || input === null || typeof input !== 'object') return;
  const expiresAt = (input as { expires_at?: unknown }).expires_at;
  if (kind === 'approval.requested' && typeof expiresAt === 'string' && utcInstant(expiresAt) === null)
    throw new StoreError(
      'APPROVAL_INVALID',
      `approval.requested refused in a stepchain/v3 journal (spec/APPROVALS.md §2): input.expires_at ${JSON.stringify(expiresAt)} names no real instant; write a UTC timestamp such as 2026-11-27T10:05:00.000Z`,
    );
  const presented = (input as { presented?: unknown }).presented;
  const name = presented !== null && typeof presented === 'object' ? (presented as { name?: unknown }).name : null;
  // A name that long could be stored as a part (PARTS.md §3), and a request's name stands in its line (§2).
  const nameBytes = typeof name === 'string' ? encoder.encode(JSON.stringify(name)).length : 0;
  if (kind === 'approval.requested' && nameBytes >= 256)
    throw new StoreError(
      'APPROVAL_INVALID',
      `approval.requested refused in a stepchain/v3 journal (spec/APPROVALS.md §2): input.presented.name is ${nameBytes} bytes as JSON text; a tool's name presented for approval is under 256 (the least part threshold, so it always stands in the line)`,
    );
  if (!Object.prototype.hasOwnProperty.call(input, 'digest')) return;
  const what =
    kind === 'approval.requested'
      ? 'a request with input.digest (an unsalted SHA-256 of the presented call) is the shape written before statement v2; write input {presented, expires_at} only (requestApproval does)'
      : 'a statement with a digest is of type stepchain-approval/v1, written before statement v2; record a v2 statement (approvalStatement, stepchain approve)';
  throw new StoreError(
    'APPROVAL_LEGACY',
    `${kind} refused in a stepchain/v3 journal (spec/APPROVALS.md §2.1, §3.1): ${what}`,
  );
}

/**
 * An approval request's seed is the writer's to draw (spec/APPROVALS.md §8, *Copies and forks*): with a seed of
 * the caller's choosing, the request of another journal sharing this one's prefix — a fork's parent — could be
 * appended byte for byte, with the same step hash, so that journal's decisions on it would authorise here too.
 * Only a copy (ERASURE_WRITER) carries a record's seed over.
 */
function refuseChosenRequestSeed(step: StepInput, profile: RecordProfile): void {
  const marks = step as { [ERASURE_WRITER]?: true; [LEGACY_APPROVAL_WRITER]?: true; kind?: unknown };
  if (profile.id !== 'step/v3' || marks[ERASURE_WRITER] === true || marks[LEGACY_APPROVAL_WRITER] === true) return;
  if (marks.kind !== 'approval.requested' || !Object.prototype.hasOwnProperty.call(step, 'seed')) return;
  throw new StoreError(
    'APPROVAL_INVALID',
    'approval.requested refused in a stepchain/v3 journal (spec/APPROVALS.md §8): its seed is drawn by the writer; a chosen seed would reproduce another journal\'s request byte for byte, and make that journal\'s decisions on it count here; remove "seed"',
  );
}

export function prepareStep(step: StepInput, blobThreshold: number, profile: RecordProfile): PreparedStep {
  // A copy's record in sealed form (ERASURE.md §6.4): written as the source stores it, never sealed again.
  const sealed = (step as { [SEALED_LINE]?: SealedLine })[SEALED_LINE];
  if (sealed !== undefined) return preparedSealed(sealed, profile);
  refuseReserved(step, profile);
  refuseUnwritableApproval(step, profile);
  refuseChosenRequestSeed(step, profile);
  // The walk that validates each field also serializes it, once: the seal joins these texts into the
  // line, and the idempotency key is made from them too.
  const checked = checkStepInput(step, profile);
  let content = checked.content;
  let texts: Record<string, string> = checked.texts;
  for (const name in texts) flatten(texts[name]!);
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
  const prepared: PreparedStep = {
    profile,
    content,
    meta: checked.meta,
    texts,
    step_id: checked.step_id,
    ts: checked.ts,
    salt: checked.salt,
    seed: checked.seed,
    blobs,
    key: profile.key(texts),
  };
  const marks = step as { [ERASURE_WRITER]?: true; [LEGACY_APPROVAL_WRITER]?: true };
  if (marks[ERASURE_WRITER] === true || marks[LEGACY_APPROVAL_WRITER] === true) prepared.marked = true;
  return prepared;
}

/** prepareStep over one append() or appendMany() call; with several steps, an error names the step's index. */
export function prepareSteps(
  steps: readonly StepInput[],
  blobThreshold: number,
  profile: RecordProfile,
): PreparedStep[] {
  return steps.map((step, i) => {
    try {
      return prepareStep(step, blobThreshold, profile);
    } catch (e) {
      if (steps.length > 1 && e instanceof Error) e.message = `step ${i} of the batch: ${e.message}`;
      throw e;
    }
  });
}
