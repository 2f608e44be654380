/**
 * What the receiver and the in-process processor share (spec/OTEL.md §5): spans held per trace until the
 * trace settles, retried spans deduplicated, each trace's runs written — each run journal created and
 * filled in one appendMany unit, so a run is either absent or whole — and spans that arrive after their
 * trace was written recorded as a late run beside it, never dropped.
 */
import { StepchainError } from '../errors.js';
import type { Store } from '../index.js';
import { mapTrace, runIdOf, timestampOf, type MappedRun } from './mapping.js';
import type { OtelSpan } from './otlp.js';

export interface CollectorOptions {
  /** A trace is written once it has a root span and no span arrived for this long (ms). Default 2000. */
  settleMs?: number;
  /** A trace still open this long after its first span is written as it is (ms). Default 300000. */
  maxOpenMs?: number;
  /** A trace holding this many spans is written at once; more spans are late. Default 1500, at most 2000 (a run is one appendMany). */
  maxSpansPerTrace?: number;
  /** Spans held in all, beyond which `accept` refuses (the sender retries later). Default 200000. */
  maxHeldSpans?: number;
  /** Notes for people (a run written, a failure). */
  log?: (line: string) => void;
  /** Called with each run written. */
  onRun?: (run: { runId: string; steps: number; late: boolean }) => void;
}

/** Traces written at once. */
const WRITERS = 8;

interface OpenTrace {
  spans: Map<string, OtelSpan>;
  firstAt: number;
  lastAt: number;
  late: number;
}

/** A duplicate of a held span: the one that ended last is kept, the smaller text on a tie — so arrival order does not matter. */
function keep(a: OtelSpan, b: OtelSpan): OtelSpan {
  const ea = BigInt(a.end_time_unix_nano);
  const eb = BigInt(b.end_time_unix_nano);
  if (ea !== eb) return ea > eb ? a : b;
  const ta = JSON.stringify(a);
  const tb = JSON.stringify(b);
  return ta <= tb ? a : b;
}

export class SpanCollector {
  private readonly open = new Map<string, OpenTrace>();
  /** Traces written in this process: span ids already recorded (a retried export's duplicate is dropped), and how many late runs each has. */
  private readonly written = new Map<string, { spans: Set<string>; late: number }>();
  private held = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Runs being written; each is its own journal, so up to WRITERS are written side by side (a create waits on its fsyncs). */
  private readonly writing = new Set<Promise<void>>();
  private readonly queue: (() => Promise<void>)[] = [];
  private closed = false;
  readonly settleMs: number;
  readonly maxOpenMs: number;
  readonly maxSpansPerTrace: number;
  readonly maxHeldSpans: number;
  failures = 0;

  constructor(
    readonly store: Store,
    private readonly options: CollectorOptions = {},
  ) {
    this.settleMs = options.settleMs ?? 2000;
    this.maxOpenMs = options.maxOpenMs ?? 300_000;
    // A run is written as one appendMany unit, which holds up to 4096 records (FILE-STORE.md §9): 2 per span, 2 more.
    this.maxSpansPerTrace = Math.max(1, Math.min(options.maxSpansPerTrace ?? 1500, 2000));
    this.maxHeldSpans = options.maxHeldSpans ?? 200_000;
  }

  /** Whether `count` more spans can be held now (else the receiver answers 503: retry later). */
  hasRoomFor(count: number): boolean {
    return !this.closed && this.held + count <= this.maxHeldSpans;
  }

  /** Takes a whole request's spans (already checked): all are held, or — closed — none. */
  accept(spans: readonly OtelSpan[]): void {
    if (this.closed) throw new Error('the collector is closed');
    const now = Date.now();
    const full: string[] = [];
    for (const s of spans) {
      const done = this.written.get(s.trace_id);
      if (done?.spans.has(s.span_id)) continue;
      let t = this.open.get(s.trace_id);
      if (t === undefined)
        this.open.set(
          s.trace_id,
          (t = { spans: new Map(), firstAt: now, lastAt: now, late: done === undefined ? 0 : done.late + 1 }),
        );
      const had = t.spans.get(s.span_id);
      if (had === undefined) this.held++;
      t.spans.set(s.span_id, had === undefined ? s : keep(had, s));
      t.lastAt = now;
      if (t.spans.size >= this.maxSpansPerTrace) full.push(s.trace_id);
    }
    for (const id of full) this.writeTrace(id);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed || this.open.size === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.sweep(Date.now());
        this.schedule();
      },
      Math.min(this.settleMs, 1000),
    );
    this.timer.unref();
  }

  /** Writes each trace that settled (a root span, quiet for settleMs) or stayed open past maxOpenMs. */
  private sweep(now: number): void {
    for (const [id, t] of this.open) {
      const hasRoot = [...t.spans.values()].some(
        (s) => s.parent_span_id === '' || (t.late > 0 && !t.spans.has(s.parent_span_id)),
      );
      if ((hasRoot && now - t.lastAt >= this.settleMs) || now - t.firstAt >= this.maxOpenMs) this.writeTrace(id);
    }
  }

  private writeTrace(traceId: string): void {
    const t = this.open.get(traceId);
    if (t === undefined) return;
    this.open.delete(traceId);
    const spans = [...t.spans.values()].sort((a, b) => (a.span_id < b.span_id ? -1 : 1));
    const done = this.written.get(traceId) ?? { spans: new Set<string>(), late: 0 };
    for (const s of spans) done.spans.add(s.span_id);
    done.late = t.late;
    this.written.set(traceId, done);
    const runs = t.late === 0 ? mapTrace(spans) : [lateRun(traceId, t.late, spans)];
    this.queue.push(async () => {
      for (const run of runs) await this.writeRun(run, t.late > 0);
      this.held -= spans.length;
    });
    this.pump();
  }

  private pump(): void {
    while (this.writing.size < WRITERS && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const p: Promise<void> = job().finally(() => {
        this.writing.delete(p);
        this.pump();
      });
      this.writing.add(p);
    }
  }

  private async writeRun(run: MappedRun, late: boolean): Promise<void> {
    try {
      const opts = {
        runId: run.runId,
        labels: run.labels,
        createdAt: run.createdAt,
        ...(run.agent === undefined ? {} : { agent: run.agent }),
        ...(run.conversationId === undefined ? {} : { conversationId: run.conversationId }),
        ...(run.parentRunId === undefined ? {} : { parentRunId: run.parentRunId }),
      };
      await writeMapped(this.store, opts, run.steps);
      this.options.onRun?.({ runId: run.runId, steps: run.steps.length, late });
      this.options.log?.(`wrote run ${run.runId} (${run.steps.length} records${late ? ', late spans' : ''})`);
    } catch (e) {
      this.failures++;
      this.options.log?.(`run ${run.runId} not written: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** Writes every trace held now, settled or not, and waits for the writes. */
  async flush(): Promise<void> {
    for (const id of [...this.open.keys()]) this.writeTrace(id);
    while (this.writing.size > 0) await Promise.all([...this.writing]);
  }

  /** Stops taking spans, writes everything held, waits. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    this.closed = true;
  }

  get heldSpans(): number {
    return this.held;
  }
}

/** Spans that came after their trace was written: a run of their own beside it (§5.3), each span a step. */
function lateRun(traceId: string, n: number, spans: OtelSpan[]): MappedRun {
  const mapped = mapTrace(spans);
  const steps = mapped.flatMap((r) =>
    r.steps.filter((s) => s.kind !== 'run.started' && s.kind !== 'run.completed' && s.kind !== 'run.failed'),
  );
  const first = spans.reduce(
    (m, s) => (BigInt(s.start_time_unix_nano) < BigInt(m) ? s.start_time_unix_nano : m),
    spans[0]!.start_time_unix_nano,
  );
  const runId = `${runIdOf(traceId, null)}.late-${n}`;
  return {
    runId,
    span: null,
    labels: { 'otel.trace_id': traceId, 'otel.late': String(n) },
    parentRunId: runIdOf(traceId, null),
    createdAt: timestampOf(first),
    steps: [
      {
        kind: 'run.started',
        step_id: 'late.start',
        ts: timestampOf(first),
        meta: { otel: { trace_id: traceId, late: n, runs: mapped.map((r) => r.runId) } },
      },
      ...steps,
      { kind: 'run.completed', step_id: 'late.end', ts: timestampOf(first) },
    ],
  };
}

/**
 * Creates the run journal and appends all its records in one unit. A run already in the store (a restart
 * re-sent by an exporter's retry) is left as it is: its records are the same spans.
 */
export async function writeMapped(
  store: Store,
  options: {
    runId: string;
    createdAt: string;
    agent?: string;
    conversationId?: string;
    parentRunId?: string;
    labels?: Record<string, string>;
  },
  steps: MappedRun['steps'],
): Promise<void> {
  const { runId, createdAt, ...identity } = options;
  let journal;
  try {
    journal = await store.create(runId, { journalId: runId, createdAt, run: runIdentityOf(identity) });
  } catch (e) {
    if (e instanceof StepchainError && e.code === 'JOURNAL_EXISTS') return;
    throw e;
  }
  try {
    await journal.appendMany(steps);
  } finally {
    await journal.close();
  }
}

function runIdentityOf(o: {
  agent?: string;
  conversationId?: string;
  parentRunId?: string;
  labels?: Record<string, string>;
}): Record<string, unknown> {
  const run: Record<string, unknown> = {};
  if (o.agent !== undefined) run.agent = o.agent;
  if (o.conversationId !== undefined) run.conversation_id = o.conversationId;
  if (o.labels !== undefined) run.labels = o.labels;
  if (o.parentRunId !== undefined) run.parent_run_id = o.parentRunId;
  return run;
}
