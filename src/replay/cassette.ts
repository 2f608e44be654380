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
import { isRunRecord } from '../record/run-state.js';
import { restoreRecord } from '../store/restore.js';
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
  for await (const line of source.lines()) {
    const record = await restoreRecord(source.genesis, line.text, line.seq, `replay source ${line.segment}`, loadBlob);
    if (!isRunRecord(record)) continue;
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
