/**
 * The divergence diff engine (spec/DIFF.md): reads two runs side by side, matches equal steps in lockstep
 * by their equality keys (§5.1), and when they part aligns a bounded window of upcoming keys (§5.2) to tell
 * changed steps from inserted and deleted ones. Memory is O(window) steps per run, whatever the length.
 */
import { DEFAULT_FORMAT, capabilitiesOf } from '../record/formats.js';
import { STEP_V2 } from '../record/v2.js';
import { DiffError } from './errors.js';
import { firstMatch, pairBlock } from './align.js';
import { IgnoreSet, type PatternState } from '../pattern/pattern.js';
import { Run, type Entry, type ProjectionSpec, type RunInput } from './run.js';
import { FieldCollector, jsonEqual, type FieldDiff } from './values.js';
import { blobRefOf } from '../record/markers.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { equalityKey, sameProjection } from './key.js';
import { VOLATILE_PATTERNS } from './volatile.js';
import type { Json, JsonObject } from '../canonical/json.js';

export const DIFF_FORMAT = 'stepchain-diff/v1';

/** The fields compared by default, in report order. */
export const DEFAULT_FIELDS: readonly string[] = DEFAULT_FORMAT.records[0]!.diffFields.content;
/** Added by `envelope: true`. */
export const ENVELOPE_DIFF_FIELDS: readonly string[] = DEFAULT_FORMAT.records[0]!.diffFields.envelope;

export interface DiffOptions {
  /** Report every divergence instead of stopping at the first (default false). */
  all?: boolean;
  /** Compare the envelope fields v, seq, step_id, ts, prev_hash and step_hash too (default false). */
  envelope?: boolean;
  /** JSON Pointer patterns of values to leave out of the comparison; `*` is one token, `**` any number. */
  ignore?: readonly string[];
  /** How many upcoming steps of each run the aligner looks at after a mismatch (1–1000, default 64). */
  window?: number;
  /** Field differences recorded per changed step (default 1000); the rest are only counted. */
  maxFields?: number;
  /**
   * Whether run journals (FORMAT §11) are compared without their volatile members (spec/REPLAY.md §4,
   * VOLATILE_PATTERNS), added before `ignore`. Default true; false compares them. v1 runs have none.
   */
  volatile?: boolean;
}

export interface ChangedStep {
  kind: 'changed';
  seq_a: number;
  seq_b: number;
  fields: FieldDiff[];
  /** Present when more than `maxFields` differences were found: how many were left out. */
  fields_omitted?: number;
}

export interface InsertedStep {
  kind: 'inserted';
  /** The step only run b has. */
  seq_b: number;
  /** Its compared projection (spec/DIFF.md §3.1). */
  step: JsonObject;
}

export interface DeletedStep {
  kind: 'deleted';
  /** The step only run a has. */
  seq_a: number;
  step: JsonObject;
}

export type Divergence = ChangedStep | InsertedStep | DeletedStep;

export interface DiffReport {
  format: typeof DIFF_FORMAT;
  /** True when no divergence was found: same length, every step equal under the options. */
  same: boolean;
  /** Present when one run is a strict prefix of the other: names the shorter run. */
  prefix?: 'a' | 'b';
  /** Steps of each run the engine aligned before it stopped (every step when `complete`). */
  compared: { a: number; b: number };
  /** True when both runs were read to the end; false when the engine stopped at the first divergence. */
  complete: boolean;
  /** The top-level fields compared, in report order. */
  fields: string[];
  /** The ignore patterns in force, as given. */
  ignore: string[];
  /** In run order. Without `all`, at most one: the first. */
  divergences: Divergence[];
}

interface Settings {
  all: boolean;
  window: number;
  maxFields: number;
  spec: ProjectionSpec;
  ignoreSources: string[];
}

function checkOptions(
  options: unknown,
  contentFields: readonly string[] = DEFAULT_FIELDS,
  runJournal = false,
): Settings {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options))
    throw new DiffError('BAD_OPTION', 'options must be an object');
  const o = options as Record<string, unknown>;
  const known = new Set(['all', 'envelope', 'ignore', 'window', 'maxFields', 'volatile']);
  for (const k of Object.keys(o)) {
    if (!known.has(k) && o[k] !== undefined) {
      throw new DiffError('BAD_OPTION', `unknown option ${JSON.stringify(k)}`, {
        hint: 'options are all, envelope, ignore, window, maxFields and volatile',
      });
    }
  }
  const bool = (k: string): boolean => {
    const v = o[k];
    if (v === undefined) return false;
    if (typeof v !== 'boolean')
      throw new DiffError('BAD_OPTION', `option ${k} must be a boolean, not ${JSON.stringify(v)}`);
    return v;
  };
  const int = (k: string, min: number, max: number, dflt: number): number => {
    const v = o[k];
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new DiffError(
        'BAD_OPTION',
        `option ${k} must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`,
      );
    }
    return v;
  };
  const all = bool('all');
  const envelope = bool('envelope');
  const window = int('window', 1, 1000, 64);
  const maxFields = int('maxFields', 1, 1_000_000, 1000);
  const ignoreOpt = o.ignore ?? [];
  if (!Array.isArray(ignoreOpt))
    throw new DiffError('BAD_OPTION', 'option ignore must be an array of JSON Pointer patterns');
  const volatile = o.volatile === undefined ? true : bool('volatile');
  const ignoreSources = [...(runJournal && volatile ? VOLATILE_PATTERNS : []), ...(ignoreOpt as unknown[])] as string[];
  const ignore = new IgnoreSet(ignoreSources);
  const fields: string[] = [...contentFields, ...(envelope ? ENVELOPE_DIFF_FIELDS : [])];
  const root = ignore.root();
  const fieldStates = new Map<string, PatternState>();
  for (const f of fields) fieldStates.set(f, ignore.step(root, f));
  return { all, window, maxFields, spec: { fields, ignore, fieldStates }, ignoreSources };
}

/**
 * Compares two runs and returns the divergences: the first by default, every one with `all: true`.
 * Throws DiffError for bad options or unreadable input; never for a difference.
 */
export async function diff(a: RunInput, b: RunInput, options: DiffOptions = {}): Promise<DiffReport> {
  const run = isRunJournal(a) || isRunJournal(b);
  const settings = checkOptions(options, run ? STEP_V2.diffFields.content : DEFAULT_FIELDS, run);
  const runA = new Run(a, 'a', settings.spec);
  const runB = new Run(b, 'b', settings.spec);
  try {
    return await new Engine(runA, runB, settings).run();
  } finally {
    await Promise.all([runA.close(), runB.close()]);
  }
}

/**
 * A journal of a run (FORMAT §11, §14) is compared on its record's fields too — kind, ref and error (DIFF.md
 * §3.1) — and without its volatile members unless `volatile: false` (REPLAY.md §4).
 */
export function isRunJournal(x: RunInput): boolean {
  const genesis = x !== null && typeof x === 'object' ? (x as { genesis?: { format?: unknown } }).genesis : undefined;
  return typeof genesis === 'object' && genesis !== null && capabilitiesOf(genesis).runRecords;
}

class Engine {
  private readonly out: Divergence[] = [];
  private countA = 0;
  private countB = 0;
  private stopped = false;

  constructor(
    private readonly a: Run,
    private readonly b: Run,
    private readonly s: Settings,
  ) {}

  async run(): Promise<DiffReport> {
    let prefix: 'a' | 'b' | undefined;
    while (!this.stopped) {
      const ea = await this.a.peek(0);
      const eb = await this.b.peek(0);
      if (ea === null && eb === null) break;
      if (ea === null || eb === null) {
        if (this.out.length === 0) prefix = ea === null ? 'a' : 'b';
        await this.tail(ea === null ? this.b : this.a);
        break;
      }
      // Lockstep: equal projections, nothing to look at. Equal steps are the common case, and a structural
      // walk of both (which only says yes for valid I-JSON) costs a fraction of making their two keys.
      if (sameProjection(ea.projection, eb.projection, MAX_RECORD_DEPTH) || this.a.keyOf(ea) === this.b.keyOf(eb)) {
        this.a.shift(1);
        this.b.shift(1);
        this.countA++;
        this.countB++;
        continue;
      }
      await this.block();
    }
    // Stopped at the first divergence: complete only when that was the end of both runs anyway.
    const complete = !this.stopped || ((await this.a.peek(0)) === null && (await this.b.peek(0)) === null);
    const report: DiffReport = {
      format: DIFF_FORMAT,
      same: this.out.length === 0,
      ...(prefix === undefined ? {} : { prefix }),
      compared: { a: this.countA, b: this.countB },
      complete,
      fields: [...this.s.spec.fields],
      ignore: [...this.s.ignoreSources],
      divergences: this.out,
    };
    return report;
  }

  private emit(d: Divergence): void {
    this.out.push(d);
    if (!this.s.all) this.stopped = true;
  }

  /** Everything left in `run` once the other has ended: inserted (run b) or deleted (run a) steps. */
  private async tail(run: Run): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const e = await run.peek(0);
      if (e === null) return;
      run.shift(1);
      this.one(run, e);
    }
  }

  private one(run: Run, e: Entry): void {
    run.keyOf(e); // the I-JSON check, as for every step compared
    if (run.side === 'a') {
      this.countA++;
      this.emit({ kind: 'deleted', seq_a: e.seq, step: e.projection });
    } else {
      this.countB++;
      this.emit({ kind: 'inserted', seq_b: e.seq, step: e.projection });
    }
  }

  /**
   * The heads differ: align the next `window` steps of both runs and report the block before their first
   * common step (spec/DIFF.md §5.2).
   */
  private async block(): Promise<void> {
    const w = this.s.window;
    await this.a.fill(w);
    await this.b.fill(w);
    const wa = this.a.buffered.slice(0, w);
    const wb = this.b.buffered.slice(0, w);
    const match = firstMatch(
      wa.map((e) => this.a.keyOf(e)),
      wb.map((e) => this.b.keyOf(e)),
    );
    const na = match ? match[0] : wa.length;
    const nb = match ? match[1] : wb.length;
    const pairs = pairBlock(na, nb, (i, j) => similarity(wa[i]!, wb[j]!));
    // Emit in run order: before each pair, the unpaired steps of a (deleted) then of b (inserted).
    let i = 0;
    let j = 0;
    for (const [pi, pj] of [...pairs, [na, nb] as [number, number]]) {
      for (; i < pi && !this.stopped; i++) this.one(this.a, wa[i]!);
      for (; j < pj && !this.stopped; j++) this.one(this.b, wb[j]!);
      if (this.stopped) break;
      if (pi === na) break;
      const changed = await this.changed(wa[pi]!, wb[pj]!);
      this.countA++;
      this.countB++;
      i++;
      j++;
      if (changed) this.emit(changed);
      if (this.stopped) break;
    }
    this.a.shift(i);
    this.b.shift(j);
  }

  /** The field differences of two steps; null when there are none once blob references are resolved. */
  private async changed(ea: Entry, eb: Entry): Promise<ChangedStep | null> {
    const c = new FieldCollector(this.s.maxFields, this.s.spec.ignore);
    for (const f of this.s.spec.fields) {
      const inA = ea.raw.has(f);
      const inB = eb.raw.has(f);
      const state = this.s.spec.fieldStates.get(f)!;
      if (!inA && !inB) continue;
      if (!inB) {
        c.field('a', await this.a.resolve(ea.raw.get(f) as Json, ea.seq, f), `/${f}`, state);
        continue;
      }
      if (!inA) {
        c.field('b', await this.b.resolve(eb.raw.get(f) as Json, eb.seq, f), `/${f}`, state);
        continue;
      }
      let va = ea.raw.get(f) as Json;
      let vb = eb.raw.get(f) as Json;
      const da = blobRefOf(va)?.digest ?? null;
      const db = blobRefOf(vb)?.digest ?? null;
      // Equal digests are equal values; otherwise detail needs the values behind the references.
      if (da !== null && da === db) continue;
      if (da !== null) va = await this.a.resolve(va, ea.seq, f);
      if (db !== null) vb = await this.b.resolve(vb, eb.seq, f);
      try {
        c.compare(va, vb, `/${f}`, state);
      } catch (e) {
        // A value read from a blob is not depth-checked up front; the recursive walk may exhaust the stack.
        if (!(e instanceof RangeError)) throw e;
        throw new DiffError(
          'BAD_STEP',
          `step ${ea.seq} of run a and step ${eb.seq} of run b nest too deeply at /${f} to compare`,
          {
            location: { seq: ea.seq, path: `/${f}` },
            cause: e,
          },
        );
      }
    }
    if (c.count === 0) return null;
    return {
      kind: 'changed',
      seq_a: ea.seq,
      seq_b: eb.seq,
      fields: c.fields,
      ...(c.omitted > 0 ? { fields_omitted: c.omitted } : {}),
    };
  }
}

/**
 * How alike two steps are, to pair the steps of a block: 1 for each compared field with equal projections,
 * plus up to 0.5 for a differing field by the share of its members (or elements) that are equal, so a
 * retried call's success pairs with the original rather than its failed attempt.
 */
function similarity(x: Entry, y: Entry): number {
  const tx = fieldTexts(x);
  const ty = fieldTexts(y);
  let n = 0;
  for (const [f, t] of tx) {
    const u = ty.get(f);
    if (u === undefined) continue;
    n += u === t ? 1 : 0.5 * overlap(x.projection[f] as Json, y.projection[f] as Json);
  }
  return n;
}

function overlap(a: Json, b: Json): number {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return 0;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return 0;
    const len = Math.max(a.length, b.length);
    let same = 0;
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (jsonEqual(a[i] as Json, b[i] as Json)) same++;
    return len === 0 ? 1 : same / len;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  let same = 0;
  for (const k of keys) if (Object.hasOwn(a, k) && Object.hasOwn(b, k) && jsonEqual(a[k] as Json, b[k] as Json)) same++;
  return keys.size === 0 ? 1 : same / keys.size;
}

function fieldTexts(e: Entry): Map<string, string> {
  if (!e.fieldKey) {
    e.fieldKey = new Map();
    for (const [f, v] of Object.entries(e.projection)) e.fieldKey.set(f, equalityKey(v, MAX_RECORD_DEPTH));
  }
  return e.fieldKey;
}
