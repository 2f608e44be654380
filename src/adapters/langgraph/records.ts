/**
 * The records a LangGraph thread leaves in a stepchain journal (spec/LANGGRAPH.md §2–§4): how a thread and
 * namespace name their journal, how a serializer's `(type, bytes)` pair is stored without re-encoding, and
 * the two record kinds — a checkpoint (one `put`) and a batch of pending writes (one `putWrites`) — built
 * and read back here and nowhere else. Records are v1 steps: the addressing in `input`, the values in
 * `result`, the other content fields null.
 */
import { createHash } from 'node:crypto';
import type { StepInput, StepRecord } from '../../journal.js';
import { LangGraphError } from './errors.js';

/** A serializer's output as stored (LANGGRAPH §3): UTF-8 text verbatim, anything else in base64. */
export type StoredValue = { type: string; text: string } | { type: string; base64: string };

/** A checkpoint's parent, pointing back at the record that holds it (LANGGRAPH §4). */
// eslint-disable-next-line @typescript-eslint/consistent-type-definitions -- a type alias, assignable to JsonValue (an interface is not)
export type ParentRef = {
  checkpoint_id: string;
  /** The parent's record in this journal, or null when the journal has no checkpoint with that id. */
  seq: number | null;
  step_hash: string | null;
};

export interface CheckpointRecord {
  kind: 'langgraph.checkpoint';
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent: ParentRef | null;
  /** The checkpoint without its channel values, serialized. */
  checkpoint: StoredValue;
  metadata: StoredValue;
  /** The values of the channels this put changed (its `newVersions`), by channel. */
  channel_values: Record<string, { version: string | number; value: StoredValue }>;
}

export interface WritesRecord {
  kind: 'langgraph.writes';
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  task_path: string;
  writes: { idx: number; channel: string; value: StoredValue }[];
}

export type ThreadRecord = CheckpointRecord | WritesRecord;

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Stores serializer bytes as they are: text when they are UTF-8 (which decodes and re-encodes exactly), base64 otherwise. */
export function storeValue(type: string, data: Uint8Array | string): StoredValue {
  if (typeof data === 'string') return { type, text: data };
  if (type !== 'bytes') {
    try {
      return { type, text: decoder.decode(data) };
    } catch {
      // not UTF-8: kept as binary below
    }
  }
  return { type, base64: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64') };
}

const encoder = new TextEncoder();

export function loadValue(v: StoredValue): [string, Uint8Array] {
  return 'text' in v ? [v.type, encoder.encode(v.text)] : [v.type, new Uint8Array(Buffer.from(v.base64, 'base64'))];
}

/** One name part of a journal id: base64url of the UTF-8 text when short, else a digest (LANGGRAPH §2). */
function idPart(text: string): string {
  const b64 = Buffer.from(text, 'utf8').toString('base64url');
  return b64.length <= 78 ? `b${b64}` : `h${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 40)}`;
}

/** The journal of one thread and namespace: `<prefix>.<thread part>.<namespace part>`. */
export function journalIdOf(prefix: string, threadId: string, ns: string): string {
  return `${threadPrefix(prefix, threadId)}${idPart(ns)}`;
}

/** What every journal id of one thread starts with. */
export function threadPrefix(prefix: string, threadId: string): string {
  return `${prefix}.${idPart(threadId)}.`;
}

export function checkpointStep(r: CheckpointRecord): StepInput {
  const { channel_values, ...input } = r;
  return { input, result: { channel_values } };
}

export function writesStep(r: WritesRecord): StepInput {
  const { writes, ...input } = r;
  return { input, result: { writes } };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStored = (v: unknown): v is StoredValue =>
  isObject(v) &&
  typeof v.type === 'string' &&
  (typeof v.text === 'string' || typeof v.base64 === 'string') &&
  Object.keys(v).length === 2;

/**
 * A journal record back as a thread record; null for a record that is not LangGraph's (a journal may hold
 * other steps). A record that claims to be LangGraph's but breaks its shape is RECORD_INVALID, naming the seq:
 * the chain verified, so whoever wrote it held the journal.
 */
export function readRecord(rec: StepRecord): ThreadRecord | null {
  const input = rec.input;
  if (!isObject(input) || typeof input.kind !== 'string' || !input.kind.startsWith('langgraph.')) return null;
  const bad = (what: string): never => {
    throw new LangGraphError('RECORD_INVALID', `record ${rec.seq} of kind ${String(input.kind)}: ${what}`, {
      location: { seq: rec.seq },
    });
  };
  const str = (name: string): string =>
    typeof input[name] === 'string' ? input[name] : bad(`${name} must be a string`);
  const result = isObject(rec.result) ? rec.result : bad('result must be an object');
  const base = {
    thread_id: str('thread_id'),
    checkpoint_ns: str('checkpoint_ns'),
    checkpoint_id: str('checkpoint_id'),
  };
  if (input.kind === 'langgraph.checkpoint') {
    const parent = input.parent;
    if (parent !== null && !(isObject(parent) && typeof parent.checkpoint_id === 'string'))
      bad('parent must be null or name a checkpoint_id');
    if (!isStored(input.checkpoint) || !isStored(input.metadata)) bad('checkpoint and metadata must be stored values');
    const values = isObject(result.channel_values)
      ? result.channel_values
      : bad('result.channel_values must be an object');
    for (const [channel, v] of Object.entries(values)) {
      if (!isObject(v) || !isStored(v.value) || (typeof v.version !== 'string' && typeof v.version !== 'number'))
        bad(`channel_values.${channel} must hold a version and a stored value`);
    }
    return {
      kind: 'langgraph.checkpoint',
      ...base,
      parent: parent as ParentRef | null,
      checkpoint: input.checkpoint as StoredValue,
      metadata: input.metadata as StoredValue,
      channel_values: values as CheckpointRecord['channel_values'],
    };
  }
  if (input.kind === 'langgraph.writes') {
    const writes = Array.isArray(result.writes) ? result.writes : bad('result.writes must be an array');
    for (const w of writes) {
      if (!isObject(w) || !Number.isSafeInteger(w.idx) || typeof w.channel !== 'string' || !isStored(w.value))
        bad('each write must hold idx, channel and a stored value');
    }
    return {
      kind: 'langgraph.writes',
      ...base,
      task_id: str('task_id'),
      task_path: str('task_path'),
      writes: writes as WritesRecord['writes'],
    };
  }
  return bad('unknown LangGraph record kind (written by a newer version?)');
}
