/**
 * The steps a copy appends to its target (copy.ts): a record in private form re-appended from its content,
 * checked to seal to the source's very line; a record in sealed form carried as it stands (ERASURE.md §6.4);
 * the batches they are appended in, and the check of a target's prefix against the source.
 */
import type { Json } from '../canonical/json.js';
import { ChainVerifier } from '../chain/verifier.js';
import { formatOf, writerProfile } from '../record/formats.js';
import type { CopiedStepInput } from '../record/input.js';
import type { JournalFormat } from '../record/profile.js';
import type { StepRecord } from '../record/seal.js';
import { StoreError } from './errors.js';
import { ERASURE_WRITER, prepareStep } from './prepare.js';
import { restoreRecord } from './restore.js';
import { SEALED_LINE, sealedLineOf, type SealedLine } from './sealed-copy.js';
import { PartCopier } from './parts-copy.js';
import type { Journal, StoredLine } from './types.js';

/** A record in sealed form (ERASURE.md §6.4): carried as it stands, with the parts it still references. */
export async function sealedStep(
  source: Journal,
  dest: Journal,
  sealed: SealedLine,
  l: StoredLine,
): Promise<CopiedStepInput> {
  if (l.text.includes('"$stepchain:part"')) await PartCopier.of(source, dest).copy(sealed.record, l.seq);
  const step: CopiedStepInput = { step_id: sealed.record.step_id as string, ts: sealed.record.ts as string };
  Object.defineProperty(step, SEALED_LINE, { value: sealed });
  return step;
}

/**
 * A record in private form as the step to re-append, after checking that what the target will seal from it
 * (the same prepare and seal) is the source's line, predicted before anything is written.
 */
export async function reappendable(
  source: Journal,
  dest: Journal,
  l: StoredLine,
  prev: string,
): Promise<CopiedStepInput> {
  // Restoring checks every blob against its reference (BLOB_MISSING, BLOB_CORRUPT); a v3 record's parts go to the target first (parts-copy.ts).
  const rec = await restoreRecord(source.genesis, l.text, l.seq, `source journal ${source.id}`, (ref) =>
    source.blob(ref.digest, ref.size),
  );
  const stored = l.text.includes('"$stepchain:part"')
    ? await PartCopier.of(source, dest).carry(rec as unknown as Record<string, Json>, l.seq)
    : null;
  const step = stepInputOf(rec, source);
  const profile = writerProfile(dest.genesis);
  const texts = { ...prepareStep(step, dest.config.blobThreshold, profile).texts, ...stored };
  const sealed = profile.seal(texts, {
    seq: l.seq,
    stepId: rec.step_id,
    ts: rec.ts,
    prevHash: prev,
    ...(typeof step.salt === 'string' ? { salt: step.salt } : {}),
    ...(typeof step.seed === 'string' ? { seed: step.seed } : {}),
  }).line;
  if (sealed.slice(0, -1) !== l.text) {
    throw new StoreError(
      'JOURNAL_INVALID',
      `the source's step ${l.seq} is not what a writer of this version seals from its content (blob substitution or encoding differ), so it cannot be copied byte for byte; the copy stopped, and the target holds an identical prefix of the source`,
      { location: { seq: l.seq } },
    );
  }
  return step;
}

/**
 * The step a caller appended to make `rec`: its content fields and meta (by the record's own profile),
 * step_id and ts. A record that `append` does not write (another profile) cannot be re-appended.
 */
function stepInputOf(rec: StepRecord, source: Journal): CopiedStepInput {
  const fields = rec as unknown as Record<string, Json>;
  const profile = formatOf(source.genesis).select((name) => fields[name]);
  if (profile !== writerProfile(source.genesis)) {
    throw new StoreError(
      'JOURNAL_INVALID',
      `the source's step ${rec.seq} is a ${profile.id} record, which append does not write, so it cannot be copied step by step`,
      { location: { seq: rec.seq } },
    );
  }
  const step: Record<string, Json> = { step_id: rec.step_id, ts: rec.ts };
  for (const f of profile.contentFields) step[f] = fields[f]!;
  if (rec.meta !== undefined) step.meta = rec.meta;
  // A v2 record's salt (FORMAT §12.2) goes with it, so the copy's commitments and step hash are the source's.
  if (typeof fields.salt === 'string') step.salt = fields.salt;
  // A v3 record's seed (FORMAT §14.4) likewise: the copy's root, B and step hash are the source's.
  if (typeof fields.seed === 'string') step.seed = fields.seed;
  // A copy reproduces a verified chain's records, its erasure records too (ERASURE.md §3.1 reserves them to erase).
  Object.defineProperty(step, ERASURE_WRITER, { value: true });
  return step;
}

/** Steps per appendMany, and the most bytes of lines one such batch may hold (plus one step). */
const BATCH_STEPS = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

/**
 * Whether the target's line `mine` is the source's step `theirs`: the same bytes, or — the source's line
 * sealed by an erase since the target copied it (a copy continued after an erasure was recorded) — the
 * target's private line, verified on its own after `prev`, gives the same step hash (ERASURE.md §2: sealing
 * keeps it). The erasure record then comes with the rest of the copy, and is carried out in the target.
 */
export function samePrefixLine(
  mine: string,
  theirs: string,
  seq: number,
  prev: string,
  stepHash: string,
  format: JournalFormat,
): boolean {
  if (mine === theirs) return true;
  if (sealedLineOf(theirs, format) === null || sealedLineOf(mine, format) !== null) return false;
  let hash: string | null = null;
  const verifier = new ChainVerifier({
    start: { seq, prev_hash: prev },
    format,
    maxProblems: 1,
    onLine: (v) => void (hash = v.clean ? v.step_hash : null),
  });
  verifier.line(mine, true);
  return hash === stepHash;
}

/** Steps appended in batches (appendMany), each checked to land at its own seq with the source's step hash. */
export class Batch {
  private steps: { step: CopiedStepInput; seq: number; hash: string }[] = [];
  private bytes = 0;

  constructor(
    private readonly dest: Journal,
    private readonly id: string,
  ) {}

  async add(step: CopiedStepInput, seq: number, hash: string, bytes: number): Promise<void> {
    this.steps.push({ step, seq, hash });
    this.bytes += bytes;
    if (this.steps.length >= BATCH_STEPS || this.bytes >= BATCH_BYTES) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.steps.length === 0) return;
    const results = await this.dest.appendMany(this.steps.map((b) => b.step));
    results.forEach((r, i) => {
      const expected = this.steps[i]!;
      if (r.seq !== expected.seq || r.step_hash !== expected.hash) {
        throw new StoreError(
          'JOURNAL_CORRUPT',
          `copying into ${this.id}: the target committed seq ${r.seq} (${r.step_hash}) where the source has seq ${expected.seq} (${expected.hash}); another writer appended to the target meanwhile`,
          {
            location: { seq: expected.seq },
            hint: 'copy into a journal nobody else writes',
          },
        );
      }
    });
    this.steps = [];
    this.bytes = 0;
  }
}
