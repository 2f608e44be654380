/**
 * fast-check arbitraries for property tests over runs (spec/DIFF.md §8): I-JSON values, realistic steps,
 * sealed runs, and replay variants that carry the divergence the diff engine must report for them.
 * fast-check is an optional peer dependency: only this entry point (stepchain/testing) imports it.
 */
import * as fc from 'fast-check';
import { canonicalJson } from '../canonical/jcs.js';
import { RESERVED_PREFIX } from '../canonical/limits.js';
import { escapeToken } from '../canonical/pointer.js';
import { checkStepInput, type Json, type JsonObject, type StepInput, type StepRecord } from '../record/index.js';
import type { FieldDiff } from '../diff/values.js';
import { sealRun } from './run.js';

export interface JsonValueOptions {
  /** Maximum nesting of arrays and objects (default 3). */
  maxDepth?: number;
  /** Maximum members of an object or elements of an array (default 4). */
  maxLength?: number;
}

/** Member names: short, printable, sometimes unicode; never the reserved "$stepchain:" prefix. */
export function jsonKey(): fc.Arbitrary<string> {
  return fc
    .oneof(
      { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 10 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
      { weight: 1, arbitrary: fc.constantFrom('id', 'request_id', 'a/b', 'til~de', '', '0') },
    )
    .filter((k) => !k.startsWith(RESERVED_PREFIX) && k !== '__proto__');
}

/** I-JSON strings: well-formed Unicode (no lone surrogates), mostly ASCII. */
export function jsonString(maxLength = 24): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength }) },
  );
}

/**
 * Finite numbers only: integers and doubles. -0 comes out as 0, because JCS writes -0 as 0: a value that
 * changed on its way through a journal would make a generated record differ from the one read back
 * (a fresh-clone run caught a property failing on exactly that).
 */
export function jsonNumber(): fc.Arbitrary<number> {
  return fc
    .oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
    .map((n) => (n === 0 ? 0 : n));
}

export function jsonScalar(): fc.Arbitrary<Json> {
  return fc.oneof(fc.constant(null), fc.boolean(), jsonNumber(), jsonString());
}

/** Any I-JSON value: finite numbers, well-formed strings, plain objects without reserved member names. */
export function jsonValue(options: JsonValueOptions = {}): fc.Arbitrary<Json> {
  const maxDepth = options.maxDepth ?? 3;
  const maxLength = options.maxLength ?? 4;
  const tree = fc.letrec<{ value: Json; array: Json[]; object: JsonObject }>((tie) => ({
    value: fc.oneof({ maxDepth, depthSize: 'small' }, jsonScalar(), tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength }),
    object: fc.dictionary(jsonKey(), tie('value'), { maxKeys: maxLength, noNullPrototype: true }),
  }));
  return tree.value;
}

const text = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom('What is the weather in Paris?', 'Summarize the report.', 'Book a table for two.', ''),
    jsonString(60),
  );

const identifier = (): fc.Arbitrary<string> => fc.stringMatching(/^[a-z][a-z_]{1,15}$/);

export function prompt(): fc.Arbitrary<Json> {
  const message = fc.record({ role: fc.constantFrom('system', 'user', 'assistant', 'tool'), content: text() });
  return fc.oneof(text(), fc.array(message, { minLength: 1, maxLength: 4 }));
}

export function model(): fc.Arbitrary<Json> {
  const name = fc.constantFrom('gpt-4o', 'claude-sonnet-4', 'llama-3.1-70b', 'mistral-large');
  return fc.oneof(
    name,
    fc.record(
      { name, temperature: fc.double({ min: 0, max: 2, noNaN: true }), max_tokens: fc.integer({ min: 1, max: 8192 }) },
      { requiredKeys: ['name'] },
    ),
  );
}

/** null (no tool used) or { id, name, arguments } with JSON arguments. */
export function toolCall(): fc.Arbitrary<Json> {
  return fc.oneof(
    fc.constant(null),
    fc.record({
      id: fc.stringMatching(/^call_[A-Za-z0-9]{6}$/),
      name: identifier(),
      arguments: fc.dictionary(identifier(), jsonValue({ maxDepth: 2 }), { maxKeys: 4, noNullPrototype: true }),
    }),
  );
}

export function result(): fc.Arbitrary<Json> {
  return fc.oneof(
    fc.constant(null),
    text(),
    fc.record({ status: fc.constantFrom('ok', 'error'), request_id: fc.uuid(), data: jsonValue({ maxDepth: 3 }) }),
    jsonValue({ maxDepth: 3 }),
  );
}

/** One step as a caller records it: input, model, prompt, tool_call, result and sometimes meta. */
export function step(): fc.Arbitrary<StepInput> {
  return fc.record(
    {
      input: fc.oneof(fc.constant(null), text(), fc.record({ query: text() }), jsonValue({ maxDepth: 2 })),
      model: model(),
      prompt: prompt(),
      tool_call: toolCall(),
      result: result(),
      meta: fc.record({ latency_ms: fc.nat(60_000), tokens: fc.nat(10_000) }),
    },
    { requiredKeys: ['input', 'model', 'prompt', 'tool_call', 'result'] },
  );
}

/** The canonical text of a step's compared content: equal texts mean diff sees equal steps. */
export function contentKey(s: StepInput): string {
  const { content, meta } = checkStepInput(s);
  return canonicalJson(meta === undefined ? content : { ...content, meta });
}

export interface StepsOptions {
  minLength?: number;
  maxLength?: number;
}

/** Steps with pairwise different content, so every alignment between two runs of them is unambiguous. */
export function steps(options: StepsOptions = {}): fc.Arbitrary<StepInput[]> {
  return fc.uniqueArray(step(), {
    minLength: options.minLength ?? 0,
    maxLength: options.maxLength ?? 8,
    selector: contentKey,
  });
}

/** A sealed run (journal id "run-a"): what a journal holds after recording `steps()`. */
export function run(options: StepsOptions = {}): fc.Arbitrary<StepRecord[]> {
  return steps(options).map((s) => sealRun(s, { journalId: 'run-a' }));
}

export type ReplayKind = 'same' | 'changed' | 'inserted' | 'deleted' | 'truncated' | 'extended';

/** The first divergence diff reports for a variant, as it appears in the report (less `step`). */
export type ExpectedDivergence =
  | { kind: 'changed'; seq_a: number; seq_b: number; fields: FieldDiff[] }
  | { kind: 'inserted'; seq_b: number }
  | { kind: 'deleted'; seq_a: number };

export interface ReplayVariant {
  kind: ReplayKind;
  /** The recorded run (journal "run-a"). */
  a: StepRecord[];
  /** The replay (journal "run-b": every step_id, ts and hash differs from a's). */
  b: StepRecord[];
  /** What diff(a, b) reports first; null when the runs are the same. */
  expected: ExpectedDivergence | null;
  /** With `all: true`, the number of divergences diff reports. */
  count: number;
  /** Set when one run is a strict prefix of the other. */
  prefix?: 'a' | 'b';
  description: string;
}

export interface ReplayOptions extends StepsOptions {
  /** The variants to draw from (default all). */
  kinds?: readonly ReplayKind[];
}

const ALL_KINDS: readonly ReplayKind[] = ['same', 'changed', 'inserted', 'deleted', 'truncated', 'extended'];

function typeOf(v: Json): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function clone<T>(v: T): T {
  return structuredClone(v);
}

interface Node {
  tokens: string[];
  value: Json;
  parent: JsonObject | Json[] | null;
}

/** Every node of a step's compared content, the fields themselves included, in a stable order. */
function nodes(s: StepInput): Node[] {
  const out: Node[] = [];
  const walk = (v: Json, tokens: string[], parent: JsonObject | Json[] | null): void => {
    out.push({ tokens, value: v, parent });
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...tokens, String(i)], v));
    else for (const k of Object.keys(v)) walk(v[k]!, [...tokens, k], v);
  };
  for (const f of ['input', 'model', 'prompt', 'tool_call', 'result', 'meta'] as const) {
    if (s[f] !== undefined) walk(s[f] as Json, [f], null);
  }
  return out;
}

function pointer(tokens: string[]): string {
  return tokens.map((t) => '/' + escapeToken(t)).join('');
}

/** Sets the value at `tokens` inside a step (cloned by the caller). */
function setAt(s: StepInput, tokens: string[], value: Json | undefined): void {
  let node = s as unknown as Record<string, Json>;
  for (let i = 0; i < tokens.length - 1; i++) node = node[tokens[i]!] as unknown as Record<string, Json>;
  const last = tokens[tokens.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(node)) node.pop();
    else delete node[last];
  } else if (Array.isArray(node)) node[Number(last)] = value;
  else if (last === '__proto__')
    Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  else node[last] = value;
}

/** A one-edit mutation of step k: the changed step and the one field difference diff must report. */
function mutate(
  s: StepInput,
  pick: number,
  op: number,
  fresh: Json,
  key: string,
): { step: StepInput; field: FieldDiff } {
  const all = nodes(s);
  const node = all[pick % all.length]!;
  const path = pointer(node.tokens);
  const out = clone(s);
  const old = node.value;
  const container = old !== null && typeof old === 'object';
  // add: a new member (or a new last element) below a container.
  if (op % 3 === 1 && container) {
    if (Array.isArray(old)) {
      setAt(out, [...node.tokens, String(old.length)], fresh);
      return { step: out, field: { path: `${path}/${old.length}`, kind: 'added', b: fresh } };
    }
    if (!Object.hasOwn(old, key)) {
      setAt(out, [...node.tokens, key], fresh);
      return { step: out, field: { path: `${path}/${escapeToken(key)}`, kind: 'added', b: fresh } };
    }
  }
  // remove: a member of an object, or the last element of an array (anything else would shift indices).
  if (op % 3 === 2 && node.parent !== null) {
    const isLast =
      !Array.isArray(node.parent) || Number(node.tokens[node.tokens.length - 1]) === node.parent.length - 1;
    if (isLast) {
      setAt(out, node.tokens, undefined);
      return { step: out, field: { path, kind: 'removed', a: old } };
    }
  }
  // meta must stay an object: change one of its numbers instead of replacing it.
  if (node.tokens.length === 1 && node.tokens[0] === 'meta') {
    const was = (old as JsonObject).latency_ms as number;
    setAt(out, ['meta', 'latency_ms'], was + 1);
    return { step: out, field: { path: '/meta/latency_ms', kind: 'changed', a: was, b: was + 1 } };
  }
  // replace: with a value the engine cannot descend into against the old one (so one difference, at path).
  let value = fresh;
  const both = typeOf(old) === typeOf(value) && value !== null && typeof value === 'object';
  if (both || canonicalJson(value) === canonicalJson(old)) {
    value = typeof old === 'string' ? `${old}!` : typeof old === 'number' ? (old === 1 ? 2 : 1) : 'replaced';
  }
  setAt(out, node.tokens, value);
  return {
    step: out,
    field: { path, kind: typeOf(old) === typeOf(value) ? 'changed' : 'type-changed', a: old, b: value },
  };
}

function variant(
  kind: ReplayKind,
  a: StepInput[],
  b: StepInput[],
  expected: ExpectedDivergence | null,
  count: number,
  description: string,
  prefix?: 'a' | 'b',
): ReplayVariant {
  return {
    kind,
    a: sealRun(a, { journalId: 'run-a', start: '2026-01-01T00:00:00.000Z' }),
    b: sealRun(b, { journalId: 'run-b', start: '2026-02-01T12:00:00.000Z' }),
    expected,
    count,
    ...(prefix === undefined ? {} : { prefix }),
    description,
  };
}

/**
 * A recorded run and a replay of it with one known difference: the same steps, one field changed at a
 * known seq and path, an inserted retry, a dropped step, a truncated or an extended replay. The replay is
 * sealed as another journal, so its envelope differs everywhere and only content differences count.
 */
export function replayVariant(options: ReplayOptions = {}): fc.Arbitrary<ReplayVariant> {
  const kinds = options.kinds ?? ALL_KINDS;
  const minLength = options.minLength ?? 0;
  const maxLength = Math.max(options.maxLength ?? 8, 1);
  return fc
    .tuple(
      fc.constantFrom(...kinds),
      steps({ minLength, maxLength }),
      fc.nat(),
      fc.nat(),
      fc.nat(),
      jsonValue({ maxDepth: 2 }),
      jsonKey(),
      step(),
      fc.array(step(), { minLength: 1, maxLength: 3 }),
    )
    .map(([kind, c, i, j, op, fresh, key, extra, more]): ReplayVariant | null => {
      const n = c.length;
      const keys = new Set(c.map(contentKey));
      switch (kind) {
        case 'same':
          return variant(kind, c, clone(c), null, 0, `the same ${n} steps`);
        case 'changed': {
          if (n === 0) return null;
          const k = i % n;
          const m = mutate(c[k]!, j, op, fresh, key);
          // Unique content keeps the alignment unambiguous: the changed step must match no other step.
          if (keys.has(contentKey(m.step))) return null;
          const b = clone(c);
          b[k] = m.step;
          return variant(
            kind,
            c,
            b,
            { kind: 'changed', seq_a: k, seq_b: k, fields: [m.field] },
            1,
            `step ${k}: ${m.field.kind} at ${m.field.path}`,
          );
        }
        case 'inserted': {
          const k = i % (n + 1);
          const base = n === 0 ? extra : c[Math.min(k, n - 1)]!;
          const retry: StepInput = {
            ...clone(base),
            result: { error: { type: 'timeout', message: 'upstream timed out' }, attempt: 1 + (op % 3) },
          };
          if (keys.has(contentKey(retry))) return null;
          const b = clone(c);
          b.splice(k, 0, retry);
          return variant(
            kind,
            c,
            b,
            { kind: 'inserted', seq_b: k },
            1,
            `a retry inserted at step ${k}`,
            k === n ? 'a' : undefined,
          );
        }
        case 'deleted': {
          if (n === 0) return null;
          const k = i % n;
          const b = clone(c);
          b.splice(k, 1);
          return variant(
            kind,
            c,
            b,
            { kind: 'deleted', seq_a: k },
            1,
            `step ${k} dropped`,
            k === n - 1 ? 'b' : undefined,
          );
        }
        case 'truncated': {
          if (n === 0) return null;
          const m = i % n;
          return variant(
            kind,
            c,
            c.slice(0, m),
            { kind: 'deleted', seq_a: m },
            n - m,
            `the replay stops after ${m} of ${n} steps`,
            'b',
          );
        }
        case 'extended':
          return variant(
            kind,
            c,
            [...clone(c), ...more],
            { kind: 'inserted', seq_b: n },
            more.length,
            `the replay adds ${more.length} steps after ${n}`,
            'a',
          );
      }
    })
    .filter((v): v is ReplayVariant => v !== null);
}
