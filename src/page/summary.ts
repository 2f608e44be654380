/**
 * What the verification page shows of a step: short previews of its model, tool, prompt and result for
 * the step list, and the whole record for the expanded view. Values are turned into segments — plain
 * text, a redaction marker, a blob reference — so the view can show markers as markers (spec/FORMAT.md
 * §3.5, spec/REDACTION.md §4) and never renders receipt content as anything but text. Pure; no DOM.
 */

import { viewSlots } from '../redact/unbound.js';

/** A piece of a rendered value. */
export type Segment =
  | { kind: 'text'; text: string }
  /** A redaction marker: the value was replaced by a salted commitment (spec/REDACTION.md §4). */
  | { kind: 'redacted'; rule: string; commitment: string; text: string | null }
  /** A blob reference whose bytes were not resolved (spec/FORMAT.md §7). */
  | { kind: 'blob'; digest: string; size: number }
  /**
   * A withheld unit of a v3 publication (spec/REDACTION.md §13): a member (`count` of them, from an object's
   * withheld list), an element, a chunk of a string or a slot. Everything else such a receipt shows is proven.
   */
  | { kind: 'withheld'; digest: string; count: number }
  /**
   * An erased unit (spec/ERASURE.md; REDACTION.md §13.12): a member (`count` of them, from an object's erased
   * list), an element or a slot whose value and salt were deleted from the journal — neither shown nor withheld
   * by the publisher. `erasure` names the erasure record the verifier matched it with.
   */
  | { kind: 'erased'; digest: string; erasure: string; count: number };

export const REDACTED_KEY = '$stepchain:redacted';
export const BLOB_KEY = '$stepchain:blob';
export const WITHHELD_KEY = '$stepchain:withheld';
export const CHUNKS_KEY = '$stepchain:chunks';
export const ERASED_KEY = '$stepchain:erased';

/** An object's list of erased members (`[{digest, erasure}]`), or null. */
export function erasedListOf(v: unknown): { digest: string; erasure: string }[] | null {
  if (!isObject(v) || !Array.isArray(v[ERASED_KEY])) return null;
  return (v[ERASED_KEY] as unknown[]).filter(
    (e): e is { digest: string; erasure: string } =>
      isObject(e) && typeof e.digest === 'string' && typeof e.erasure === 'string',
  );
}

/** The chunks of a v3 chunk list (`{"$stepchain:chunks": [...]}`), or null when `v` is not one. */
export function chunkListOf(v: unknown): unknown[] | null {
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  return keys.length === 1 && keys[0] === CHUNKS_KEY && Array.isArray(v[CHUNKS_KEY])
    ? (v[CHUNKS_KEY] as unknown[])
    : null;
}

/** An object's list of withheld member digests (v3), or null. */
export function withheldListOf(v: unknown): string[] | null {
  if (!isObject(v) || !Array.isArray(v[WITHHELD_KEY])) return null;
  return (v[WITHHELD_KEY] as unknown[]).filter((d): d is string => typeof d === 'string');
}

/** Characters of a preview in the step list. */
export const PREVIEW_CHARS = 96;

export interface StepRow {
  /** Position in the receipt's chain entries (0-based): the key of a step on the page, since a damaged seq may repeat. */
  index: number;
  seq: number | null;
  file: string | null;
  line: number;
  /** The line raised no problem of its own. */
  clean: boolean;
  step_hash: string | null;
  /** Whether the line's text is held in memory (see engine.ts, KEEP_CHARS). */
  kept: boolean;
  ts: string | null;
  model: Segment[];
  tool: Segment[];
  prompt: Segment[];
  result: Segment[];
  /** Redaction markers anywhere in the step. */
  redactions: number;
  blobs: number;
  /**
   * Slots shown as redacted views (spec/REDACTION.md §12.5 step 6): their text is NOT bound to the head, so
   * the page marks them and never shows them as verified (the verifier's report lists the same places).
   */
  views: string[];
}

/** What `blob` returns: a blob's canonical JSON text when it was kept, else null. */
export type BlobLookup = (digest: string) => string | null;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The marker a value is, if it is exactly one (the verifier has already checked the shape of those it accepted). */
export function markerOf(v: unknown): Segment | null {
  if (!isObject(v)) return null;
  const keys = Object.keys(v);
  if (keys.length !== 1) return null;
  const body = v[keys[0]!];
  if (keys[0] === WITHHELD_KEY && typeof body === 'string') return { kind: 'withheld', digest: body, count: 1 };
  if (!isObject(body)) return null;
  if (keys[0] === ERASED_KEY && typeof body.digest === 'string' && typeof body.erasure === 'string')
    return { kind: 'erased', digest: body.digest, erasure: body.erasure, count: 1 };
  if (keys[0] === REDACTED_KEY && typeof body.rule === 'string' && typeof body.commitment === 'string') {
    return {
      kind: 'redacted',
      rule: body.rule,
      commitment: body.commitment,
      text: typeof body.text === 'string' ? body.text : null,
    };
  }
  if (keys[0] === BLOB_KEY && typeof body.digest === 'string' && typeof body.size === 'number')
    return { kind: 'blob', digest: body.digest, size: body.size };
  return null;
}

/**
 * A value as compact JSON-like text in at most `max` characters, with markers as their own segments. A
 * string at the top is shown without quotes (a prompt reads as a prompt); blob references are resolved
 * through `blob` when their text was kept.
 */
export function preview(value: unknown, blob: BlobLookup, max = PREVIEW_CHARS): Segment[] {
  const out: Segment[] = [];
  let room = max;
  let text = '';
  const flush = (): void => {
    if (text !== '') out.push({ kind: 'text', text });
    text = '';
  };
  const put = (s: string): boolean => {
    if (room <= 0) return false;
    if (s.length > room) {
      text += s.slice(0, Math.max(0, room - 1)) + '…';
      room = 0;
      return false;
    }
    text += s;
    room -= s.length;
    return true;
  };
  const walk = (v: unknown, top: boolean): boolean => {
    const marker = markerOf(v);
    if (marker) {
      if (marker.kind === 'blob') {
        const resolved = resolveBlob(marker.digest, blob);
        if (resolved !== undefined) return walk(resolved, top);
      }
      flush();
      out.push(marker);
      room -= 12; // a marker takes about as much room as this much text
      return room > 0;
    }
    if (typeof v === 'string') return put(top ? v : JSON.stringify(v));
    if (v === null || typeof v !== 'object') return put(String(v));
    const chunks = chunkListOf(v);
    if (chunks) {
      // A string with withheld chunks: its shown chunks as text (each proven), the withheld ones as markers.
      if (!top && !put('"')) return false;
      for (const c of chunks) {
        const m = markerOf(c);
        if (m) {
          flush();
          out.push(m);
          room -= 12;
          if (room <= 0) return false;
        } else if (!put(typeof c === 'string' ? (top ? c : JSON.stringify(c).slice(1, -1)) : '')) return false;
      }
      return top || put('"');
    }
    if (Array.isArray(v)) {
      if (!put('[')) return false;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !put(', ')) return false;
        if (!walk(v[i], false)) return false;
      }
      return put(']');
    }
    if (!put('{')) return false;
    let first = true;
    for (const k of Object.keys(v)) {
      if ((k === WITHHELD_KEY && withheldListOf(v)) || (k === ERASED_KEY && erasedListOf(v))) continue;
      if (!first && !put(', ')) return false;
      first = false;
      if (!put(`${JSON.stringify(k)}: `)) return false;
      if (!walk((v as Record<string, unknown>)[k], false)) return false;
    }
    // An object's withheld members, then its erased ones: one marker each for all of them.
    for (const m of listMarkers(v as Record<string, unknown>)) {
      if (!first && !put(', ')) return false;
      first = false;
      flush();
      out.push(m);
      room -= 12;
      if (room <= 0) return false;
    }
    return put('}');
  };
  walk(value, true);
  flush();
  return out;
}

/** The markers of an object's lists: its withheld members (v3 publication) and its erased members (ERASURE.md). */
function listMarkers(v: Record<string, unknown>): Segment[] {
  const out: Segment[] = [];
  const held = withheldListOf(v);
  if (held && held.length > 0) out.push({ kind: 'withheld', digest: held[0]!, count: held.length });
  const gone = erasedListOf(v);
  if (gone && gone.length > 0)
    out.push({ kind: 'erased', digest: gone[0]!.digest, erasure: gone[0]!.erasure, count: gone.length });
  return out;
}

/** A kept blob's parsed value; undefined when it was not kept (or, impossibly after verification, is not JSON). */
export function resolveBlob(digest: string, blob: BlobLookup): unknown {
  const text = blob(digest);
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A prompt; a list of chat messages ({role, content}) reads best as its count and its last message. */
export function promptPreview(prompt: unknown, blob: BlobLookup): Segment[] {
  const isMessage = (m: unknown): m is { role: string; content: unknown } =>
    isObject(m) && typeof m.role === 'string' && 'content' in m;
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every(isMessage)) {
    const last = prompt[prompt.length - 1] as { role: string; content: unknown };
    const head = `${prompt.length} message${prompt.length === 1 ? '' : 's'}, last ${last.role}: `;
    const rest = preview(last.content, blob, Math.max(16, PREVIEW_CHARS - head.length));
    return rest[0]?.kind === 'text'
      ? [{ kind: 'text', text: head + rest[0].text }, ...rest.slice(1)]
      : [{ kind: 'text', text: head }, ...rest];
  }
  return preview(prompt, blob);
}

/** The tool a step called: tool_call.name (through a kept blob), or the marker standing for it. */
export function toolOf(toolCall: unknown, blob: BlobLookup): Segment[] {
  let v = toolCall;
  const m = markerOf(v);
  if (m?.kind === 'blob') {
    const resolved = resolveBlob(m.digest, blob);
    if (resolved === undefined) return [m];
    v = resolved;
  } else if (m) return [m];
  if (!isObject(v)) return v === null ? [] : preview(v, blob, 40);
  return 'name' in v ? preview(v.name, blob, 40) : [];
}

/** Counts redaction markers in a parsed record (blobs are not searched: a published receipt keeps every marker in its lines). */
export function countRedactions(v: unknown): number {
  const m = markerOf(v);
  if (m) return m.kind === 'redacted' || m.kind === 'withheld' ? 1 : 0;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countRedactions(x), 0);
  if (isObject(v))
    return Object.entries(v).reduce(
      (n: number, [k, x]) => n + (k === WITHHELD_KEY && Array.isArray(x) ? x.length : countRedactions(x)),
      0,
    );
  return 0;
}

/** The list row of one verified line. `text` is the stored line, or null when it was not kept in memory. */
export function summarize(
  entry: {
    index: number;
    seq: number | null;
    file: string | null;
    line: number;
    clean: boolean;
    step_hash: string | null;
    blobs: number;
  },
  text: string | null,
  blob: BlobLookup,
): StepRow {
  const row: StepRow = {
    ...entry,
    kept: text !== null,
    ts: null,
    model: [],
    tool: [],
    prompt: [],
    result: [],
    redactions: 0,
    views: [],
  };
  if (text === null) return row;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return row; // cannot happen: the verifier hands over only lines that scanned as canonical JSON
  }
  if (!isObject(record)) return row;
  row.ts = typeof record.ts === 'string' ? record.ts : null;
  row.step_hash = typeof record.step_hash === 'string' ? record.step_hash : null;
  row.model = preview(record.model ?? null, blob, 40);
  row.tool = toolOf(record.tool_call ?? null, blob);
  row.prompt = promptPreview(record.prompt ?? null, blob);
  row.result = preview(record.result ?? null, blob);
  row.redactions = countRedactions(record);
  row.views = viewSlots(record);
  return row;
}

/** Plain text of segments (for tests, titles and copy): markers as [redacted: rule] and [blob sha256:…]. */
export function segmentsText(segments: readonly Segment[]): string {
  return segments
    .map((s) =>
      s.kind === 'text'
        ? s.text
        : s.kind === 'redacted'
          ? `[redacted: ${s.rule}]`
          : s.kind === 'withheld'
            ? s.count === 1
              ? '[withheld]'
              : `[${s.count} withheld]`
            : s.kind === 'erased'
              ? s.count === 1
                ? '[erased]'
                : `[${s.count} erased]`
              : `[blob ${s.digest.slice(0, 19)}…, ${s.size} bytes]`,
    )
    .join('');
}
