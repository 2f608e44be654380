/**
 * How the approval check reads a call (spec/APPROVALS.md §5 step 3–§5 step 5): which markers leave a value out of hand,
 * and the comparable text of a call with part references as their addresses. Pure; runs in a browser.
 */
import { canonicalJsonChecked, canonicalJsonTrusted } from '../canonical/jcs.js';
import { setMember } from '../canonical/json.js';
import { holdsWatchedText, toolCallMembers } from '../canonical/scan-fast.js';
import { latin1Utf8 } from '../canonical/sha256.js';
import { numbersExact } from '../canonical/exact-numbers.js';

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

export const PART = '$stepchain:part';

/** Whether a value holds a reserved marker (withheld, chunks, part, erased). */
export function hasMarker(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => hasMarker(x, depth + 1));
  if (!isObj(v)) return false;
  for (const k of Object.keys(v)) if (k.startsWith('$stepchain:') || hasMarker(v[k], depth + 1)) return true;
  return false;
}

/**
 * Whether a value holds a marker other than a part reference (withheld, chunks, erased): its true value is
 * not in hand. A part reference is in hand: within a journal equal content has one address (PARTS.md §5).
 */
export function hasHidden(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => hasHidden(x, depth + 1));
  if (!isObj(v)) return false;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === PART) return !(isObj(v[PART]) && typeof v[PART].digest === 'string');
  for (const k of keys) if (k.startsWith('$stepchain:') || hasHidden(v[k], depth + 1)) return true;
  return false;
}

/**
 * Whether a recorded call's name or arguments are not in hand: a marker stands for the whole call or as one of
 * its own members (an erasure or a withholding of `name` or `arguments` leaves only the marker, not which member
 * it was), or inside its name or arguments. A part reference is in hand.
 */
export function callIsHidden(call: Rec): boolean {
  for (const k of Object.keys(call)) if (k.startsWith('$stepchain:') && k !== PART) return true;
  return hasHidden(call.name) || hasHidden(call.arguments);
}

/**
 * A value with each part reference reduced to its address (private and public references alike); the value
 * itself, uncopied, where it holds none (every call of a v3 chain is read: most hold no reference).
 */
function addressed(v: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('too deep');
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x = addressed(v[i], depth + 1);
      if (x !== v[i]) (out ??= v.slice())[i] = x;
    }
    return out ?? v;
  }
  if (!isObj(v)) return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === PART && isObj(v[PART])) return { [PART]: v[PART].digest };
  let out: Rec | null = null;
  for (const k of keys) {
    const x = addressed(v[k], depth + 1);
    if (x !== v[k]) setMember((out ??= { ...v }), k, x);
  }
  return out ?? v;
}

/**
 * Arguments as compared (APPROVALS.md §5 step 3, "Arguments given as text"): a string that is the JSON text of an
 * object (as JSON.parse reads it) compares as that object — OpenAI-style tool calls carry their arguments as
 * text, and the tool receives the same values either way. Any other value, or text that does not parse to an
 * object that canonicalizes as a record's value, compares as itself.
 */
export function comparedArguments(args: unknown): unknown {
  if (typeof args !== 'string' || !args.trimStart().startsWith('{')) return args;
  try {
    const parsed: unknown = JSON.parse(args);
    // A number JSON.parse rounds (…993 read as …992) or an integer past ±(2^53−1): the text is what a tool reads.
    if (!isObj(parsed) || !numbersExact(args)) return args;
    // Text holding what no record may (a number past the doubles, a lone surrogate, a reserved member name,
    // nesting past the limit) is compared as text.
    canonicalJsonChecked(parsed);
    return parsed;
  } catch {
    return args;
  }
}

/** The canonical text of {arguments, name} with part references as addresses (APPROVALS.md §5 step 3), or null. */
export function callForm(name: unknown, args: unknown): string | null {
  if (name === undefined || args === undefined) return null; // not a call: one without name or arguments compares as none
  try {
    // Trusted: parsed JSON; a part reference's reserved name is what is compared here.
    return canonicalJsonTrusted(addressed({ arguments: comparedArguments(args), name }));
  } catch {
    return null;
  }
}

/**
 * The texts that send a line to be parsed (storedCall): `"$stepchain:`, `"approval` or `"kind":"model.` anywhere
 * in it. One search for the three: three includes cost a bench line 2.3 µs, this 1.0 µs (verify's hot path).
 */
const PARSED_LINE = /"(?:\$stepchain:|approval|kind":"model\.)/;

/** The end of `step_id` and the start of `tool_call` in a stored v3 line, and the members before `step_id`. */
const CALL_KEY = '","tool_call":{';
const BEFORE_ID = /^,"seq":(\d+),"step_hash":"sha256:[0-9a-f]{64}"$/;

/**
 * The top-level members of a canonical JSON object's text: name (as written) → [start, end) of its value, or
 * null when the text is not exactly one object (it ends before the text does, or is not an object).
 */
function membersOf(t: string): Map<string, [number, number]> | null {
  const out = new Map<string, [number, number]>();
  if (t === '{}') return out;
  let i = 1;
  while (i < t.length && t.charCodeAt(i) === 34) {
    let j = i + 1;
    while (j < t.length && t.charCodeAt(j) !== 34) j += t.charCodeAt(j) === 92 ? 2 : 1;
    if (t.charCodeAt(j + 1) !== 58) return null;
    let k = j + 2;
    let depth = 0;
    let inString = false;
    for (; k < t.length; k++) {
      const c = t.charCodeAt(k);
      if (inString) {
        if (c === 92) k++;
        else if (c === 34) inString = false;
      } else if (c === 34) inString = true;
      else if (c === 123 || c === 91) depth++;
      else if (c === 125 || c === 93) {
        if (depth-- === 0) break;
      } else if (c === 44 && depth === 0) break;
    }
    out.set(t.slice(i + 1, j), [j + 2, k]);
    if (t.charCodeAt(k) === 125) return k === t.length - 1 ? out : null;
    i = k + 1;
  }
  return null;
}

/**
 * The compared form (callForm) of the record's own call, read from a stored v3 line without parsing it, with
 * its step_id (as JSON text), seq and ts; null where this cannot be read for certain (a line holding any
 * marker, any text `"approval` or `"kind":"model.`, a call without name or arguments, none of the shape) — the caller then
 * parses the line. A stored line is canonical and ends with `tool_call`, `ts`, `v` (FORMAT.md §14.6), so the
 * call's `arguments` and `name` texts are their canonical JSON; of the places the pattern before `tool_call`
 * matches, only the record's own is followed by exactly one object up to `,"ts":`. This is how every call of a
 * v3 chain is read before its first request (APPROVALS.md §5 step 4) at a small cost.
 */
export function storedCall(line: string): StoredCall | null {
  // Markers, approvals and model records (a model's tool_call is what it asked for, not a call run) are parsed.
  // The scan that vouched for the line noted them already (the common case on verify's hot path): no search.
  if (holdsWatchedText(line) ?? PARSED_LINE.test(line)) return null;
  const end = line.lastIndexOf(',"ts":"');
  if (end < 0) return null;
  for (let at = line.lastIndexOf(CALL_KEY, end); at > 0; at = line.lastIndexOf(CALL_KEY, at - 1)) {
    const from = at + CALL_KEY.length - 1;
    const members = membersOf(line.slice(from, end));
    if (members === null) continue; // a nested match: not the record's own call
    const idAt = line.lastIndexOf(',"step_id":"', at);
    const seqAt = idAt < 0 ? -1 : line.lastIndexOf(',"seq":', idAt);
    const seq = seqAt < 0 ? null : BEFORE_ID.exec(line.slice(seqAt, idAt));
    return seq === null ? null : callAt(line, members, from, [idAt + 11, at + 1], Number(seq[1]), end);
  }
  return null;
}

/**
 * storedCall for a line whose canonical scan has just found its top-level members (verify's hot path): where
 * they sit as a sealer writes them (`seq`, `step_hash`, `step_id`, `tool_call`, `ts`, adjacent), the call's
 * members come from the same scan (scan-fast.ts toolCallMembers) and its place from the spans, with no search
 * over the line; anywhere else, storedCall's own reading. The same answer either way
 * (test/approval/stored-call.test.ts). `linksRead`: the line's own check found its seq and step_hash true to
 * their rules (chain/line.ts), so their texts need no second look here.
 */
export function storedCallIn(
  line: string,
  top: ReadonlyMap<string, readonly [number, number]>,
  linksRead = false,
): StoredCall | null {
  const callMembers = toolCallMembers(line);
  const seq = top.get('seq');
  const hash = top.get('step_hash');
  const id = top.get('step_id');
  const call = top.get('tool_call');
  const ts = top.get('ts');
  if (
    callMembers == null ||
    seq === undefined ||
    hash === undefined ||
    id === undefined ||
    call === undefined ||
    ts === undefined ||
    hash[0] !== seq[1] + 13 ||
    id[0] !== hash[1] + 11 ||
    call[0] !== id[1] + 13 ||
    ts[0] !== call[1] + 6 ||
    line.charCodeAt(seq[0] - 7) !== 0x2c ||
    line.charCodeAt(id[1] - 1) !== 0x22 ||
    line.charCodeAt(ts[0]) !== 0x22
  )
    return storedCall(line);
  if (holdsWatchedText(line) === true) return null;
  // What BEFORE_ID asks of the text between `,"seq":` and `,"step_id":`, asked in place; already answered where
  // the line's own check read its seq and step_hash (`linksRead`: a canonical seq is digits, a valid step_hash a digest).
  if (!linksRead) {
    DIGITS.lastIndex = seq[0];
    STEP_HASH.lastIndex = hash[0];
    if (!DIGITS.test(line) || DIGITS.lastIndex !== seq[1] || !STEP_HASH.test(line) || STEP_HASH.lastIndex !== hash[1])
      return null;
  }
  // Spans of the whole line: callAt reads the call's members at an offset of 0 from the line's start.
  return callAt(line, callMembers, 0, id, Number(line.slice(seq[0], seq[1])), call[1]);
}

const DIGITS = /\d+/y;
/** What follows a stored v3 line's `ts`: its `v`, last (FORMAT.md §14.6). */
const LINE_TAIL = /^,"v":\d+\}$/;
const STEP_HASH = /"sha256:[0-9a-f]{64}"/y;

export interface StoredCall {
  id: string;
  seq: number;
  ts: string;
  form: string;
}

/**
 * The call of `line` whose members (spans from `from`) are the record's own, its object ending at `end`
 * (`,"ts":"` follows), with the record's seq and the span of its step_id's text; null where the caller must
 * parse the line.
 */
function callAt(
  line: string,
  members: ReadonlyMap<string, readonly [number, number]>,
  from: number,
  id: readonly [number, number],
  seq: number,
  end: number,
): StoredCall | null {
  const a = members.get('arguments');
  const n = members.get('name');
  // Arguments given as text may compare as the object they hold (comparedArguments): the caller parses.
  if (a === undefined || n === undefined || line.charCodeAt(from + a[0]) === 34) return null;
  // Another member holding an object or array may wrap further calls (wire-calls.ts callsIn): the caller parses.
  let wraps = false;
  members.forEach((span, k) => {
    const c = line.charCodeAt(from + span[0]);
    if (k !== 'arguments' && k !== 'name' && (c === 0x7b || c === 0x5b)) wraps = true;
  });
  if (wraps) return null;
  // The record's own `ts` and `v` end the line (FORMAT.md §14.6): `,"ts":"` inside a member after them (a line
  // verify refuses, UNKNOWN_FIELD) would otherwise pass off a call nested there, its seq and step_id, as the record's.
  const tsEnd = line.indexOf('"', end + 7);
  if (!LINE_TAIL.test(line.slice(tsEnd + 1))) return null;
  const form = `{"arguments":${line.slice(from + a[0], from + a[1])},"name":${line.slice(from + n[0], from + n[1])}}`;
  return { id: line.slice(id[0], id[1]), seq, ts: line.slice(end + 7, tsEnd), form };
}

/**
 * What a stored call is remembered by before its request (earlier-calls.ts): the SHA-256 of its compared form, as
 * its 32 bytes in one-byte characters (sha256.ts latin1Utf8), and the canonical text of its name where the name is
 * a string (a same-tool call, §5 step 4), else null.
 */
export interface StoredKey {
  /** Holds the digest's 32 characters at `digestAt`: a batch's digests unpacked on another thread stay one string. */
  digest: string;
  digestAt: number;
  name: string | null;
}

export function storedKey(form: string): StoredKey {
  return { digest: latin1Utf8(form), digestAt: 0, name: nameTextOf(form) };
}

/** The canonical text of a compared form's name where it is a string (the form's last member), else null. */
export function nameTextOf(form: string): string | null {
  if (!form.endsWith('"}')) return null;
  const at = form.lastIndexOf(',"name":"');
  return at < 0 ? null : form.slice(at + 8, -1);
}

/** The tool_call members an effect may add to the presented call (APPROVALS.md §4); any other is a different call. */
export const EFFECT_EXTRA_MEMBERS = new Set(['name', 'arguments', 'call_id', 'idempotency_key']);
