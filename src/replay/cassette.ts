/**
 * A verified run journal read as a cassette (spec/REPLAY.md §2, §5): the recorded outcome of every model
 * request and tool call, in record order, each with its matching key and ordinal. Only outcomes are served
 * (model.completed, model.failed, tool.completed, tool.failed); a request started without an outcome (a
 * crash) has nothing to serve, so replaying it goes live or fails like an unrecorded one.
 */
import type { Json, JsonObject } from '../canonical/json.js';
import type { ChainSource } from '../chain/source.js';
import type { IgnoreSet } from '../diff/index.js';
import type { StepRecord } from '../record/seal.js';
import { capabilitiesOf } from '../record/formats.js';
import { isRunRecord } from '../record/run-state.js';
import { partReaderOf, type PartReader } from '../record/v3/part-reader.js';
import { partRefsIn } from '../record/v3/parts.js';
import { restoreRecord } from '../store/restore.js';
import { ReplayError } from './errors.js';
import { matchKey, recordProjection, type RequestKind } from './request.js';

export interface RecordedOutcome {
  kind: RequestKind;
  /** The outcome record's seq in the recorded journal. */
  seq: number;
  key: string;
  /** Among recorded requests of this kind with this key, the how-manieth (from 0). */
  ordinal: number;
  projection: JsonObject;
  record: StepRecord;
  served: boolean;
}

const OUTCOMES: Record<string, RequestKind> = {
  'model.completed': 'model',
  'model.failed': 'model',
  'tool.completed': 'tool',
  'tool.failed': 'tool',
};

export interface Cassette {
  models: RecordedOutcome[];
  tools: RecordedOutcome[];
  /** The run.started record's input, so a replay run can start from the same task. */
  runInput: Json | undefined;
}

export async function readCassette(source: ChainSource, ignore: IgnoreSet): Promise<Cassette> {
  const cassette: Cassette = { models: [], tools: [], runInput: undefined };
  const counts = new Map<string, number>();
  const loadBlob = (ref: { digest: string }): Promise<Uint8Array | null> => source.blob(ref.digest);
  const parts = capabilitiesOf(source.genesis).parts ? partReaderOf(source) : null;
  for await (const line of source.lines()) {
    const stored = await restoreRecord(source.genesis, line.text, line.seq, `replay source ${line.segment}`, loadBlob);
    if (!isRunRecord(stored)) continue;
    const record = await withPartsResolved(stored, parts, String(source.genesis.journal_id));
    if (record.kind === 'run.started') cassette.runInput = record.input;
    const kind = OUTCOMES[record.kind];
    if (kind === undefined) continue;
    const projection = recordProjection(kind, record as unknown as Record<string, unknown>);
    const key = matchKey(kind, projection, ignore);
    const ordinal = counts.get(key) ?? 0;
    counts.set(key, ordinal + 1);
    (kind === 'model' ? cassette.models : cassette.tools).push({
      kind,
      seq: record.seq,
      key,
      ordinal,
      projection,
      record,
      served: false,
    });
  }
  return cassette;
}

/**
 * A stepchain/v3 record with each value that stands in a part read back (PARTS.md §9, every part checked), so
 * a request compares and an outcome is served by its real value. A reference with no part store to read it
 * from is refused: replay never serves a reference as if it were the value.
 */
async function withPartsResolved<R extends StepRecord>(
  record: R,
  reader: PartReader | null,
  where: string,
): Promise<R> {
  const fields = Object.keys(record).filter(
    (k) => k !== 'meta' && partRefsIn((record as unknown as Record<string, Json>)[k]!).length > 0,
  );
  if (fields.length === 0) return record;
  if (reader === null)
    throw new ReplayError(
      'REPLAY_UNVERIFIED',
      `journal ${where} seq ${record.seq}: /${fields[0]} stands in a part, and this source holds no parts to read it from`,
      { hint: 'replay from the journal itself (its store holds the parts)' },
    );
  const out = { ...record } as Record<string, Json>;
  for (const k of fields) out[k] = await reader.resolve(out[k]!, { seq: record.seq, path: `/${k}` });
  return out as unknown as R;
}
