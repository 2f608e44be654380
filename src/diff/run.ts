/**
 * The two runs a diff reads (spec/DIFF.md §2): arrays, iterables or async iterables of step records, or a
 * ChainSource (a journal or a receipt), read one step at a time through a bounded look-ahead buffer.
 * Diff does not verify chains: verify first when the bytes are untrusted. It does parse defensively, so a
 * line that is not a JSON object becomes a DiffError BAD_STEP, never an uncaught SyntaxError.
 */
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { nestsDeeper } from '../canonical/depth.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { blobValue, fetchBlob } from '../record/blobs.js';
import { capabilitiesOf } from '../record/formats.js';
import { partReaderOf, type PartReader } from '../record/v3/part-reader.js';
import { partRefsIn } from '../record/v3/parts.js';
import { publicPartRefsIn } from '../record/v3/public-part.js';
import { publicPartResolutionOf, type PublicPartResolution } from '../record/v3/public-resolve.js';
import { blobRefOf } from '../record/markers.js';
import type { StepRecord } from '../record/seal.js';
import type { ChainSource } from '../chain/source.js';
import { DiffError } from './errors.js';
import { KeyError, equalityKey } from './key.js';
import type { IgnoreSet, PatternState } from '../pattern/pattern.js';
import { PRUNED, prune } from './values.js';

/** A run: what `diff` accepts on either side. */
export type RunInput = Iterable<StepRecord> | AsyncIterable<StepRecord> | ChainSource;

export type Side = 'a' | 'b';

/** One step as the engine sees it. */
export interface Entry {
  seq: number;
  /** The stored values of the compared fields that the step has (blob references unresolved). */
  raw: Map<string, Json>;
  /** The compared projection: compared fields with ignored subtrees removed (spec/DIFF.md §3.1). */
  projection: JsonObject;
  /**
   * The equality key of `projection` (key.ts): equal keys exactly when the projections are equal. Made on
   * demand by Run.keyOf: steps that match in lockstep are compared structurally and never need one.
   */
  key?: string;
  /** The bucket the step was read from, for error locations. */
  file?: string;
  /** The equality key of each projected field, computed on demand to score pairings. */
  fieldKey?: Map<string, string>;
}

export interface ProjectionSpec {
  fields: readonly string[];
  ignore: IgnoreSet;
  /** The ignore state below each field's token; empty when no pattern reaches into the field. */
  fieldStates: ReadonlyMap<string, PatternState>;
}

function isChainSource(x: unknown): x is ChainSource {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as ChainSource).lines === 'function' &&
    typeof (x as ChainSource).blob === 'function' &&
    typeof (x as ChainSource).head === 'function'
  );
}

export class Run {
  private readonly buffer: Entry[] = [];
  private readonly iterator: AsyncIterator<unknown> | Iterator<unknown>;
  private readonly source: ChainSource | null;
  private done = false;
  private position = 0;
  private readonly blobCache = new Map<string, Json>();
  /** A v3 source's parts: a value that stands in a part is compared by the value (its address is keyed per journal). */
  private readonly parts: PartReader | null = null;
  /**
   * A published receipt's parts: a public reference is compared by what its part shows (a disclosed value, its
   * withheld units as markers), not as a marker standing for a value withheld (outsider L, F5).
   */
  private readonly publicParts: PublicPartResolution | null = null;

  constructor(
    input: RunInput,
    readonly side: Side,
    private readonly spec: ProjectionSpec,
  ) {
    if (isChainSource(input)) {
      this.source = input;
      if (capabilitiesOf(input.genesis).parts) {
        this.parts = partReaderOf(input);
        this.publicParts = publicPartResolutionOf(input);
      }
      const lines = input.lines();
      this.iterator = lines[Symbol.asyncIterator]();
      return;
    }
    this.source = null;
    const it = input as Partial<AsyncIterable<unknown> & Iterable<unknown>> | null;
    if (it !== null && typeof it === 'object' && typeof it[Symbol.asyncIterator] === 'function') {
      this.iterator = it[Symbol.asyncIterator]!();
    } else if (it !== null && typeof it === 'object' && typeof it[Symbol.iterator] === 'function') {
      this.iterator = it[Symbol.iterator]!();
    } else {
      throw new DiffError(
        'BAD_INPUT',
        `run ${side} must be an array, an iterable or async iterable of step records, or a ChainSource (a journal or a receipt)`,
      );
    }
  }

  /** Whether the run can resolve blob references. */
  get resolvesBlobs(): boolean {
    return this.source !== null;
  }

  /** The entry `i` places ahead, reading as needed; null past the end. */
  async peek(i: number): Promise<Entry | null> {
    while (this.buffer.length <= i && !this.done) await this.read();
    return this.buffer[i] ?? null;
  }

  /** Reads until `n` entries are buffered or the run ends; returns how many are buffered. */
  async fill(n: number): Promise<number> {
    await this.peek(n - 1);
    return this.buffer.length;
  }

  get buffered(): readonly Entry[] {
    return this.buffer;
  }

  get exhausted(): boolean {
    return this.done;
  }

  shift(n: number): void {
    this.buffer.splice(0, n);
  }

  async close(): Promise<void> {
    if (!this.done) {
      this.done = true;
      await this.iterator.return?.();
    }
  }

  private async read(): Promise<void> {
    const r = await this.iterator.next();
    if (r.done) {
      this.done = true;
      return;
    }
    const index = this.position++;
    let record: unknown = r.value;
    let file: string | undefined;
    if (this.source) {
      const line = r.value as { segment?: unknown; text?: unknown } | null;
      if (typeof line?.text !== 'string') throw this.badStep(index, 'the source yielded a line without text');
      file = typeof line.segment === 'string' ? line.segment : undefined;
      if (nestsDeeper(line.text))
        throw this.badStep(index, `a stored line nests deeper than ${MAX_RECORD_DEPTH} levels (DEPTH_LIMIT)`, file);
      try {
        record = JSON.parse(line.text);
      } catch (e) {
        // JSON.parse's SyntaxError (or a RangeError on absurd nesting) becomes a coded error.
        throw this.badStep(index, `a stored line is not JSON (${(e as Error).message})`, file, e);
      }
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw this.badStep(index, 'a step must be a JSON object', file);
    }
    const rec = record as Record<string, unknown>;
    const seq = rec.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
      throw this.badStep(index, 'a step must have a non-negative integer seq', file);
    }
    this.buffer.push(await this.entry(rec, seq, file));
  }

  private async entry(rec: Record<string, unknown>, seq: number, file: string | undefined): Promise<Entry> {
    const raw = new Map<string, Json>();
    const projection: JsonObject = {};
    for (const f of this.spec.fields) {
      if (!Object.hasOwn(rec, f) || rec[f] === undefined) continue;
      let v = rec[f] as Json;
      // Looked for in the value as stored, not once resolved: a chat's resolved prompt holds the whole conversation.
      const published = this.publicParts !== null && publicPartRefsIn(v).length > 0;
      if (this.parts !== null && partRefsIn(v).length > 0) v = await this.parts.resolve(v, { seq, path: `/${f}` });
      if (published) v = await this.publicParts.resolve(v, { seq, path: `/${f}` });
      raw.set(f, v);
      const state = this.spec.fieldStates.get(f) ?? [];
      // A pattern reaching into a blob-held field needs the value itself (spec/DIFF.md §3.2).
      if (state.length !== 0 && blobRefOf(v) !== null && this.source) v = await this.resolve(v, seq, f);
      let p: Json | typeof PRUNED;
      try {
        p = prune(v, this.spec.ignore, state);
      } catch (e) {
        // Only a value nested deep enough to exhaust the stack gets here (the walk is recursive).
        throw new DiffError('BAD_STEP', `step ${seq} of run ${this.side} is nested too deeply at /${f}`, {
          location: { seq, path: `/${f}`, ...(file === undefined ? {} : { file }) },
          cause: e,
        });
      }
      if (p !== PRUNED) projection[f] = p;
    }
    return file === undefined ? { seq, raw, projection } : { seq, raw, projection, file };
  }

  /** The entry's equality key; making it is also the check that the step is I-JSON (BAD_STEP if not). */
  keyOf(e: Entry): string {
    if (e.key !== undefined) return e.key;
    try {
      e.key = equalityKey(e.projection, MAX_RECORD_DEPTH);
    } catch (error) {
      const path = error instanceof KeyError ? error.path : '';
      throw new DiffError(
        'BAD_STEP',
        `step ${e.seq} of run ${this.side} is not I-JSON: ${(error as Error).message}${path ? ` at ${path}` : ''}`,
        {
          location: { seq: e.seq, ...(path ? { path } : {}), ...(e.file === undefined ? {} : { file: e.file }) },
          cause: error,
        },
      );
    }
    return e.key;
  }

  /** The JSON value a blob reference stands for, checked (FORMAT §7); the marker itself without a source. */
  async resolve(marker: Json, seq: number, field: string): Promise<Json> {
    const ref = blobRefOf(marker);
    if (ref === null || !this.source) return marker;
    const source = this.source;
    const cached = this.blobCache.get(ref.digest);
    if (cached !== undefined) return cached;
    const blob = await fetchBlob((r) => source.blob(r.digest), ref);
    const location = { seq, path: `/${field}` };
    if (!blob.ok && blob.missing) {
      throw new DiffError(
        'BLOB_MISSING',
        `run ${this.side} step ${seq} references blob ${ref.digest} at /${field}, which the source does not hold`,
        { location },
      );
    }
    if (!blob.ok)
      throw new DiffError('BLOB_INVALID', `blob ${ref.digest} of run ${this.side} ${blob.defect}`, { location });
    const value = blobValue(blob.bytes);
    // Keep a few resolved blobs: a retry loop tends to reference the same large prompt again and again.
    if (this.blobCache.size >= 8) this.blobCache.delete(this.blobCache.keys().next().value!);
    this.blobCache.set(ref.digest, value);
    return value;
  }

  private badStep(index: number, message: string, file?: string, cause?: unknown): DiffError {
    return new DiffError('BAD_STEP', `run ${this.side}, step #${index + 1}: ${message}`, {
      location: file === undefined ? {} : { file },
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
