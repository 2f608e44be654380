/**
 * Human renderings of a diff report (spec/DIFF.md §6): a one-line summary a person takes in at a glance,
 * and a multi-line listing of every divergence. Both are derived from the report alone.
 */
import { parsePointer } from '../canonical/pointer.js';
import type { Json } from '../canonical/json.js';
import type { DiffReport, Divergence } from './diff.js';
import type { FieldDiff } from './values.js';
import { BLOB_MARKER, isMarker } from '../record/markers.js';
import { toolNameOf } from '../record/v1.js';

export interface SummaryOptions {
  /** Longest rendering of a value, in characters, before it is shortened in the middle (default 40, minimum 5). */
  maxValueLength?: number;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;
const INDEX = /^(?:0|[1-9][0-9]*)$/;

/** "/tool_call/arguments/city" → "tool_call.arguments.city"; "/result/items/0/a b" → 'result.items[0]["a b"]'. */
export function dottedPath(pointer: string): string {
  let tokens: string[];
  try {
    tokens = parsePointer(pointer);
  } catch {
    return pointer;
  }
  let out = '';
  for (const t of tokens) {
    if (t === V3_WITHHELD && out !== '') out += ' (its withheld members)';
    else if (INDEX.test(t) && out !== '') out += `[${t}]`;
    else if (IDENT.test(t)) out += out === '' ? t : `.${t}`;
    else out += `[${JSON.stringify(t)}]`;
  }
  return out === '' ? '(the step)' : out;
}

/** Shortens text longer than `max` characters by replacing its middle with "…"; never splits a code point. */
export function shorten(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const keep = max - 1;
  const head = Math.ceil(keep / 2);
  const tail = Math.floor(keep / 2);
  return chars.slice(0, head).join('') + '…' + (tail > 0 ? chars.slice(chars.length - tail).join('') : '');
}

/** A value as JSON text, markers named instead of spelled out, shortened to `max`. */
export function renderValue(v: Json | undefined, max: number): string {
  if (v === undefined) return '(absent)';
  // A string with withheld chunks is shortened around its markers, never through them: cut in the middle, a
  // withheld chunk there vanished and both sides of a diff read the same (outsider N).
  const chunks = isMarker(v) ? v[V3_CHUNKS] : undefined;
  if (Array.isArray(chunks)) return chunksText(chunks, max);
  return shorten(shownText(v), max);
}

/**
 * A value as JSON text with markers named: a blob reference, a v2 redaction, and the units a v3 publication
 * withholds (REDACTION §13) — a withheld value as ‹withheld›, a string with withheld chunks as its shown
 * chunks (each proven) with ‹withheld› in place of the others, an object's withheld members as one
 * `‹n withheld›` entry (their names are withheld too).
 */
function shownText(v: Json): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(shownText).join(',') + ']';
  if (isMarker(v)) {
    const [name] = Object.keys(v);
    const body = v[name!];
    if (name === BLOB_MARKER) {
      const d = (body as { digest?: unknown } | null)?.digest;
      return `‹blob ${typeof d === 'string' ? `${d.slice(0, 15)}…` : '?'}›`;
    }
    if (name === V3_WITHHELD && typeof body === 'string') return '‹withheld›';
    // An object all of whose members are withheld: their names are withheld too.
    if (name === V3_WITHHELD && Array.isArray(body)) return `{‹${body.length} withheld›}`;
    if (name === V3_ERASED) return Array.isArray(body) ? `{‹${body.length} erased›}` : '‹erased›';
    if (name === V3_CHUNKS && Array.isArray(body)) return chunksText(body);
    return '‹redacted›';
  }
  const parts = Object.keys(v)
    .filter((k) => !((k === V3_WITHHELD || k === V3_ERASED) && Array.isArray(v[k])))
    .map((k) => JSON.stringify(k) + ':' + shownText(v[k]));
  const held: unknown = v[V3_WITHHELD];
  if (Array.isArray(held)) parts.push(`‹${held.length} withheld›`);
  // erasure (ERASURE.md §2): an erased member's name is gone with its value
  const erased: unknown = v[V3_ERASED];
  if (Array.isArray(erased)) parts.push(`‹${erased.length} erased›`);
  return '{' + parts.join(',') + '}';
}

/**
 * A string with withheld chunks: its shown chunks as quoted text, each withheld one as ‹withheld› between the
 * quotes, outside them — `"write to "‹withheld›" today"` — so that a string whose text itself holds "‹withheld›"
 * (shown inside its quotes) cannot pass for a withheld chunk, nor a withheld chunk for text (outsider M).
 */
function chunksText(chunks: readonly Json[], max = Number.POSITIVE_INFINITY): string {
  const runs: (string | null)[] = []; // shown text, merged; null: a withheld chunk
  for (const c of chunks) {
    const last = runs.length - 1;
    if (typeof c !== 'string') runs.push(null);
    else if (last >= 0 && runs[last] !== null) runs[last] += c;
    else runs.push(c);
  }
  const whole = runs.map((r) => (r === null ? '‹withheld›' : JSON.stringify(r))).join('');
  if (whole.length <= max) return whole;
  const texts = runs.filter((r) => r !== null).length;
  const each = Math.max(8, Math.floor((max - 10 * (runs.length - texts)) / Math.max(1, texts)) - 2);
  return runs.map((r) => (r === null ? '‹withheld›' : JSON.stringify(shorten(r, each)))).join('');
}

const V3_WITHHELD = '$stepchain:withheld';
const V3_ERASED = '$stepchain:erased';
const V3_CHUNKS = '$stepchain:chunks';

function typeName(v: Json | undefined): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** One field difference: `tool_call.arguments.city "Paris" → "Lyon"`. */
export function describeField(f: FieldDiff, max: number): string {
  const p = dottedPath(f.path);
  switch (f.kind) {
    case 'added':
      return `${p} added: ${withheldCount(f) ?? renderValue(f.b, max)}`;
    case 'removed':
      return `${p} removed (was ${withheldCount(f) ?? renderValue(f.a, max)})`;
    case 'type-changed':
      return `${p} ${renderValue(f.a, max)} → ${renderValue(f.b, max)} (${typeName(f.a)} → ${typeName(f.b)})`;
    default:
      return `${p} ${renderValue(f.a, max)} → ${renderValue(f.b, max)}`;
  }
}

/**
 * An object's withheld members as people read them, `‹n withheld›`, where a difference is that list itself
 * (`… (its withheld members) added`): their digests are salted, a run's own, and say nothing to a reader.
 */
function withheldCount(f: FieldDiff): string | null {
  const list = f.kind === 'added' ? f.b : f.a;
  return f.path.endsWith(`/${V3_WITHHELD}`) && Array.isArray(list) ? `‹${list.length} withheld›` : null;
}

/** What a step is, in a few words: its tool call's name, or its first non-null content. */
export function describeStep(step: Record<string, Json>, max: number): string {
  const name = toolNameOf(step.tool_call);
  // A name with control characters (a newline would start a line of its own) is shown as JSON, escaped.
  if (name !== null) return `tool_call ${/[\u0000-\u001f]/.test(name) ? renderValue(name, max) : shorten(name, max)}`;
  for (const f of ['prompt', 'input', 'result', 'tool_call', 'model']) {
    const v = step[f];
    if (v !== undefined && v !== null) return `${f} ${renderValue(v, max)}`;
  }
  return 'no content';
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function range(first: number, last: number): string {
  return first === last ? `step ${first}` : `steps ${first}–${last}`;
}

function sentence(d: Divergence, max: number): string {
  switch (d.kind) {
    case 'changed': {
      const where = d.seq_a === d.seq_b ? `step ${d.seq_a}` : `step ${d.seq_a} (step ${d.seq_b} in b)`;
      const total = d.fields.length + (d.fields_omitted ?? 0);
      const first = d.fields[0];
      const more = total > 1 ? ` (+${plural(total - 1, 'more field')})` : '';
      return `diverged at ${where}: ${first ? describeField(first, max) : 'fields differ'}${more}`;
    }
    case 'inserted':
      return `diverged at step ${d.seq_b}: b has an extra step ${d.seq_b} not in a (${describeStep(d.step, max)})`;
    case 'deleted':
      return `diverged at step ${d.seq_a}: b lacks a's step ${d.seq_a} (${describeStep(d.step, max)})`;
  }
}

function prefixSentence(report: DiffReport): string {
  const short = report.prefix!;
  const long = short === 'a' ? 'b' : 'a';
  const extra = report.divergences.filter((d) => d.kind === (short === 'a' ? 'inserted' : 'deleted'));
  const seqs = extra.map((d) => (d.kind === 'inserted' ? d.seq_b : d.kind === 'deleted' ? d.seq_a : 0));
  const n = report.compared[short];
  const head =
    n === 0
      ? `run ${short} is empty, a strict prefix of run ${long}`
      : `run ${short} is a strict prefix of run ${long} (${plural(n, 'step')}, all equal)`;
  if (seqs.length === 0) return head;
  const tail =
    report.complete && report.divergences.length === seqs.length
      ? `${long} continues with ${plural(seqs.length, 'more step')} (${range(seqs[0]!, seqs[seqs.length - 1]!)})`
      : `${long} continues at step ${seqs[0]}`;
  return `${head}; ${tail}`;
}

/** The one-line summary (spec/DIFF.md §6.1). */
export function summarize(report: DiffReport, options: SummaryOptions = {}): string {
  const max = Math.max(5, options.maxValueLength ?? 40);
  if (report.same) {
    const n = report.compared.a;
    return n === 0 ? 'same: both runs are empty' : n === 1 ? 'same: 1 step matches' : `same: ${n} steps match`;
  }
  if (report.prefix) return prefixSentence(report);
  const first = report.divergences[0]!;
  const rest = report.divergences.length - 1;
  return sentence(first, max) + (rest > 0 ? `; ${plural(rest, 'more divergent step')}` : '');
}

/** The summary followed by every divergence, one block each, for a terminal or a test failure. */
export function formatDiff(report: DiffReport, options: SummaryOptions = {}): string {
  const max = Math.max(5, options.maxValueLength ?? 60);
  const lines = [summarize(report, options)];
  const ignoring = report.ignore.length > 0 ? `; ignoring ${report.ignore.join(', ')}` : '';
  lines.push(
    `compared ${plural(report.compared.a, 'step')} of a and ${plural(report.compared.b, 'step')} of b (fields: ${report.fields.join(', ')}${ignoring})`,
  );
  for (const d of report.divergences) {
    switch (d.kind) {
      case 'changed':
        lines.push(
          d.seq_a === d.seq_b ? `step ${d.seq_a} changed:` : `step ${d.seq_a} of a / step ${d.seq_b} of b changed:`,
        );
        for (const f of d.fields) lines.push(`  ${describeField(f, max)}`);
        if (d.fields_omitted) lines.push(`  … and ${plural(d.fields_omitted, 'more field')}`);
        break;
      case 'inserted':
        lines.push(`step ${d.seq_b} of b inserted (not in a): ${describeStep(d.step, max)}`);
        break;
      case 'deleted':
        lines.push(`step ${d.seq_a} of a deleted (not in b): ${describeStep(d.step, max)}`);
        break;
    }
  }
  if (!report.complete) lines.push('stopped at the first divergence; pass { all: true } to list every one');
  return lines.join('\n');
}
