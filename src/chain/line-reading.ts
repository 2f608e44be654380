/**
 * What the thread that links a chain reads of each run record besides its facts: whether its kind is "step"
 * and its step_id (for the run notes an observer folds, RUNS.md §2), and its call as the approval check
 * reads every call before the chain's first request (APPROVALS.md §5 step 4). Read where the line is checked
 * — a batch's thread, from the members its canonical scan found — instead of on the linking thread, which
 * otherwise decoded and scanned every line of a v3 chain again (≈ 12 µs a bench line on one thread, the
 * larger part of what verify spent over the fast tier: bench/RESULTS.md). The same answers as
 * record/line-members.ts and approval/calls.ts give from the text. Pure; never throws.
 */
import { storedCallIn, storedKey } from '../approval/calls.js';
import type { JournalFormat } from '../record/profile.js';
import type { LineReading } from './line.js';

/**
 * The reading of a line that scanned as a canonical object with these top-level members, or undefined for a
 * format without run records (nothing reads it). `linksRead`: its check found seq and step_hash true to their
 * rules (calls.ts storedCallIn).
 */
export function readLine(
  text: string,
  members: ReadonlyMap<string, readonly [number, number]>,
  format: JournalFormat,
  linksRead = false,
): LineReading | undefined {
  const caps = format.capabilities;
  if (!caps.runRecords) return undefined;
  const kind = members.get('kind');
  const id = members.get('step_id');
  const reading: LineReading = {
    kindIsStep: kind !== undefined && kind[1] - kind[0] === 6 && text.startsWith('"step"', kind[0]),
    stepId: id === undefined ? null : stringWithoutEscapes(text, id[0], id[1]),
  };
  if (caps.approvals) {
    // APPROVALS.md §5: a record whose tool_call is null gives the ledger its ts alone (§5 step 3); any other
    // call (an object, an array, a marker) is read from the line, or the line is parsed (§5 step 4).
    const call = members.get('tool_call');
    // A tool.started with no call in tool_call is parsed: its call may sit elsewhere (§5 step 4).
    const started = kind !== undefined && text.startsWith('"tool.started"', kind[0]);
    if (!started && call !== undefined && call[1] - call[0] === 4 && text.startsWith('null', call[0])) {
      reading.call = null;
      const ts = members.get('ts');
      if (ts !== undefined) {
        const value = stringWithoutEscapes(text, ts[0], ts[1]);
        if (value !== null) reading.ts = value;
      }
    } else {
      const read = call === undefined ? null : storedCallIn(text, members, linksRead);
      if (read === null) reading.call = 'parse';
      else {
        const key = storedKey(read.form);
        reading.call = { id: read.id, seq: read.seq, ts: read.ts, digest: key.digest, digestAt: 0, name: key.name };
      }
    }
  }

  return reading;
}

/** The content of the JSON string text[start, end) when it holds no escape, else null (a value of another type: null). */
function stringWithoutEscapes(text: string, start: number, end: number): string | null {
  if (text.charCodeAt(start) !== 0x22) return null;
  const content = text.slice(start + 1, end - 1);
  return content.includes('\\') ? null : content;
}

/** A stored v3 line's last members (FORMAT.md §14.6): `"tool_call":null` before them is a record holding no call. */
const TS_MEMBER = ',"ts":"';
const NO_CALL = '"tool_call":null';
const OUTCOME_LINE = /"kind":"tool\.(completed|failed|updated)"/;
/** A start: one whose tool_call is null may carry its call elsewhere, and is always parsed (APPROVALS.md §5 step 4). */
const START_LINE = '"kind":"tool.started"';

/** Whether a stored line may be an outcome, which names its start or a request by `ref` (APPROVALS.md §5 step 4). */
export function isOutcomeLine(line: string): boolean {
  return OUTCOME_LINE.test(line);
}

/**
 * The ts of a stored line that holds no call, read from its tail without parsing it — all the approval check
 * needs of it (§5 step 3) — or null where the line must be read further: it holds a call, or it may be an
 * outcome while the chain holds a request (one naming a request as its start ran its call, §5 step 4).
 */
export function tsOfCallFreeLine(line: string, requests: boolean): string | null {
  const end = line.lastIndexOf(TS_MEMBER);
  if (end <= 0 || !line.startsWith(NO_CALL, end - NO_CALL.length)) return null;
  if ((requests && isOutcomeLine(line)) || line.includes(START_LINE)) return null;
  return line.slice(end + TS_MEMBER.length, end + TS_MEMBER.length + 24);
}
