/**
 * A small in-memory ChainSource for the receipt tests: sealed lines in buckets, with blob references
 * ({"$stepchain:blob":{digest,size}} standing for a whole content field whose canonical JSON is the blob).
 * Deterministic: fixed journal id, timestamps and step ids.
 */
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import {
  genesisHash,
  makeGenesis,
  sealRecord,
  type Genesis,
  type Json,
  type UnsealedRecord,
} from '../../src/record/index.js';
import type { ChainHead, ChainSource, SeqRange, StoredLine } from '../../src/chain/source.js';

export interface FixtureOptions {
  steps: number;
  /** Steps per bucket (default 4). */
  bucketSize?: number;
  /** Put the result of every n-th step into a blob (0: never; default 3). */
  blobEvery?: number;
  journalId?: string;
  /** Bytes of filler text in each step's input (default 20). */
  filler?: number;
}

export interface Fixture extends ChainSource {
  stored: StoredLine[];
  blobs: Map<string, Uint8Array>;
}

const enc = new TextEncoder();

export function makeFixture(opts: FixtureOptions): Fixture {
  const bucketSize = opts.bucketSize ?? 4;
  const blobEvery = opts.blobEvery ?? 3;
  const genesis: Genesis = makeGenesis({
    journalId: opts.journalId ?? 'fixture-journal',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  let prev = genesisHash(genesis);
  const stored: StoredLine[] = [];
  const blobs = new Map<string, Uint8Array>();
  for (let seq = 0; seq < opts.steps; seq++) {
    const result: Json = { answer: `result ${seq}`, items: [seq, seq * 2, 'x'.repeat(seq % 7)] };
    let resultField: Json = result;
    if (blobEvery > 0 && seq % blobEvery === 0) {
      const bytes = enc.encode(canonicalJson(result));
      const digest = digestUtf8(canonicalJson(result));
      blobs.set(digest, bytes);
      resultField = { '$stepchain:blob': { digest, size: bytes.length } };
    }
    const record: UnsealedRecord = {
      v: 1,
      seq,
      step_id: `step-${seq}`,
      ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
      prev_hash: prev,
      input: { text: `input ${seq} ${'é'.repeat(opts.filler ?? 20)}` },
      model: 'test-model',
      prompt: null,
      tool_call: seq % 2 ? { name: 'search', args: { q: `q${seq}` } } : null,
      result: resultField,
    };
    const { record: sealed, line } = sealRecord(record);
    prev = sealed.step_hash;
    const first = Math.floor(seq / bucketSize) * bucketSize;
    stored.push({ segment: `${String(first).padStart(16, '0')}.jsonl`, seq, text: line.slice(0, -1) });
  }
  return sourceOf(genesis, stored, blobs);
}

export function sourceOf(genesis: Genesis, stored: StoredLine[], blobs: Map<string, Uint8Array>): Fixture {
  return {
    genesis,
    stored,
    blobs,
    async head(): Promise<ChainHead | null> {
      const last = stored[stored.length - 1];
      if (!last) return null;
      return { seq: last.seq, step_hash: (JSON.parse(last.text) as { step_hash: string }).step_hash };
    },
    async *lines(range: SeqRange = {}): AsyncIterable<StoredLine> {
      for (const l of stored) {
        if (l.seq < (range.from ?? 0)) continue;
        if (range.to !== undefined && l.seq > range.to) return;
        yield l;
      }
    },
    async blob(digest: string): Promise<Uint8Array | null> {
      return blobs.get(digest) ?? null;
    },
  };
}

/** A fixed Ed25519 seed for tests (never a real key). */
export function testSeed(n = 1): Uint8Array {
  return Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n * 13) & 0xff);
}
