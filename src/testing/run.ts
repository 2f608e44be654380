/**
 * Builds sealed runs in memory for tests: the records a journal would store for the given steps, with
 * deterministic ids and timestamps so a test can seal the same content twice and get different envelopes.
 */
import { genesisHash, makeGenesis, writerProfile } from '../record/formats.js';
import { checkStepInput, type StepInput } from '../record/input.js';
import { sealRecord, type StepRecord, type UnsealedRecord } from '../record/seal.js';

export interface SealRunOptions {
  /** The journal id (default "run-a"); also the prefix of every step_id. */
  journalId?: string;
  /** The first step's timestamp; each later step is one second after (default 2026-01-01T00:00:00.000Z). */
  start?: Date | string;
}

/** Seals `steps` into a chain of StepRecords, as a journal would: seq from 0, linked by prev_hash. */
export function sealRun(steps: Iterable<StepInput>, options: SealRunOptions = {}): StepRecord[] {
  return [...sealRunLazily(steps, options)];
}

/** Like sealRun, one record at a time: for runs too long to hold in memory. */
export function* sealRunLazily(steps: Iterable<StepInput>, options: SealRunOptions = {}): Generator<StepRecord> {
  const journalId = options.journalId ?? 'run-a';
  const start =
    typeof options.start === 'string'
      ? Date.parse(options.start)
      : (options.start ?? new Date('2026-01-01T00:00:00.000Z')).getTime();
  const genesis = makeGenesis({ journalId, createdAt: new Date(start) });
  const profile = writerProfile(genesis);
  let prev = genesisHash(genesis);
  let seq = 0;
  for (const step of steps) {
    const { content, meta } = checkStepInput(step, profile);
    const record = {
      v: profile.version,
      seq,
      step_id: `${journalId}-${seq}`,
      ts: new Date(start + seq * 1000).toISOString(),
      prev_hash: prev,
      ...content,
      ...(meta === undefined ? {} : { meta }),
    } as UnsealedRecord;
    const sealed = sealRecord(record).record;
    prev = sealed.step_hash;
    seq++;
    yield sealed;
  }
}

/** The content a caller recorded for a step: its content fields and meta, without the envelope. */
export function stepContent(record: StepRecord): StepInput {
  const fields = record as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of writerProfile(undefined).contentFields) out[f] = fields[f];
  if (record.meta !== undefined) out.meta = record.meta;
  return out;
}
