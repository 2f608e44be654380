/**
 * The canonical scanner's fast path (spec/FORMAT.md §4.3): a second reading of the same grammar that only
 * ever says "canonical, and here are the root members" or "not sure". It accepts a text only when every
 * part of it is in the plain canonical form a writer produces — no whitespace, member names without escapes
 * in strictly increasing UTF-16 order and without the reserved prefix (so no markers), strings with only
 * the JCS escapes, numbers that are short integers or shortest decimals — and gives up at anything else:
 * a defect, a marker, an escaped name, a number that needs Number() to decide. Giving up costs nothing but
 * the general scanner's pass (scan.ts), which then finds and locates whatever there is; so this path never
 * builds a defect, a path or a name it does not return.
 *
 * Why a second reading: verify runs the scan on every line, and the general scanner's bookkeeping for the
 * report (every member name decoded, a JSON Pointer kept up to date) cost more than JSON.parse of the same
 * line; this path compares names in place and keeps no path (bench/scan.mjs). test/canonical/scan-fast.test.ts
 * holds it to the general scanner on generated lines and on mutations of valid ones.
 */
import { RESERVED_PREFIX } from './limits.js';

/** Returned by every step of this path when it gives up. */
const GIVE_UP = -1;

/** A character no canonical line holds outside a string's escapes (a control), or only in pairs (a surrogate). */
const CONTROL_OR_SURROGATE = /[\u0000-\u001f\ud800-\udfff]/;
/**
 * Per scan: whether the text has neither controls nor surrogates, so a string ends at the next quote that
 * no escape covers and its characters need no look (indexOf, native, instead of a loop over each one:
 * the whole-text test costs less than the loop it saves, measured in bench/scan.mjs); and the index of the
 * next backslash at or after the string being read (-1 until asked, the text's length when there is none).
 */
let indexed = false;
let nextBackslash = -1;

/**
 * Per scan: whether a quote — one that opens a string or name, or an escaped one inside a string — is followed
 * by `$stepchain:` or `approval`, or a member `kind` holds a string starting with `model.`: exactly where the
 * texts `"$stepchain:`, `"approval` and `"kind":"model.` occur in a canonical text (a quote that closes a string
 * is followed by `,` `:` `}` `]` or the end). The approval check sends such a line to be parsed
 * (approval/calls.ts storedCall); noting them here, where every string's start is passed anyway, spares it a
 * search over the whole line (≈ 0.8 µs a bench line on verify's hot path, bench/RESULTS.md).
 */
let watchedSeen = false;
/** The text of the last scan this path vouched for (its watchedSeen is known), else null. */
let vouched: string | null = null;
/**
 * Per scan: the members of the root's `tool_call` where it is an object (name → [start, end) of its value in
 * the whole text), else null. The approval check reads every call of a v3 chain (approval/calls.ts
 * storedCallIn); finding its members again, character by character, cost a bench line ≈ 2.4 µs on verify's hot
 * path, where the scan passes each of them anyway.
 */
let callMembers: Map<string, [number, number]> | null = null;

/**
 * For a text this path's last scan vouched for: whether it holds `"$stepchain:`, `"approval` or
 * `"kind":"model.` anywhere; undefined for any other text (search it).
 */
export function holdsWatchedText(s: string): boolean | undefined {
  return vouched === s ? watchedSeen : undefined;
}

/**
 * For a text this path's last scan vouched for: the members of its root `tool_call` (name as written → value
 * span), or null where that is not an object; undefined for any other text (read the call from the text).
 */
export function toolCallMembers(s: string): ReadonlyMap<string, readonly [number, number]> | null | undefined {
  return vouched === s ? callMembers : undefined;
}

/** Whether s[i] starts `$stepchain:` or `approval` (s[i - 1] is a quote). */
function watchedAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return (c === 0x24 && s.startsWith(RESERVED_PREFIX, i)) || (c === 0x61 && s.startsWith('approval', i));
}

/**
 * Whether the decimal s[start, end) — an optional "-", integer digits, "." at `dot`, fraction digits, no
 * exponent, already valid by the grammar — is exactly what ECMAScript's Number::toString prints for its
 * value, decided without converting. It answers true only when that is certain:
 * - at most 15 digits in all: every decimal of at most 15 significant digits survives the trip through a
 *   double (DBL_DIG), so no other decimal of that length or shorter names the same double, and the
 *   shortest round-trip digits that Number::toString picks are these digits;
 * - no trailing zero in the fraction (it would not be the shortest);
 * - below 1, at most five zeros after the point: from 1e-7 down Number::toString switches to exponent form.
 * Everything else takes the slow path (Number, then String, compared). test/canonical checks this against
 * String(Number(x)) on generated decimals.
 */
export function isShortestDecimal(s: string, start: number, dot: number, end: number): boolean {
  const digitsStart = s.charCodeAt(start) === 0x2d ? start + 1 : start;
  if (end - digitsStart - 1 > 15) return false;
  if (s.charCodeAt(end - 1) === 0x30) return false;
  if (dot - digitsStart === 1 && s.charCodeAt(digitsStart) === 0x30) {
    let zeros = 0;
    for (let k = dot + 1; k < end && s.charCodeAt(k) === 0x30; k++) zeros++;
    if (zeros > 5) return false;
  }
  return true;
}

/**
 * The root members of `s` — name → [start, end) of its value — when `s` is a canonical object in the plain
 * form above (null when `members` is false or the canonical root is not an object), or
 * undefined when this path cannot vouch for the text and the general scanner must read it.
 */
export function scanPlain(
  s: string,
  maxDepth: number,
  members: boolean,
): Map<string, [number, number]> | null | undefined {
  indexed = !CONTROL_OR_SURROGATE.test(s);
  nextBackslash = -1;
  watchedSeen = false;
  vouched = null;
  callMembers = null;
  if (s.charCodeAt(0) === 0x7b) {
    const found = members ? new Map<string, [number, number]>() : null;
    const end = object(s, 0, 1, maxDepth, found);
    if (end !== s.length) return undefined;
    vouched = s;
    return found;
  }
  if (value(s, 0, 0, maxDepth) !== s.length) return undefined;
  vouched = s;
  return null;
}

/** The index after the value that starts at i, or GIVE_UP. */
function value(s: string, i: number, depth: number, maxDepth: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) {
    if (watchedAt(s, i + 1)) watchedSeen = true;
    return string(s, i + 1, false);
  }
  if (c === 0x7b) return object(s, i, depth + 1, maxDepth, null);
  if (c === 0x5b) return array(s, i, depth + 1, maxDepth);
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return number(s, i);
  if (c === 0x74) return s.startsWith('true', i) ? i + 4 : GIVE_UP;
  if (c === 0x66) return s.startsWith('false', i) ? i + 5 : GIVE_UP;
  if (c === 0x6e) return s.startsWith('null', i) ? i + 4 : GIVE_UP;
  return GIVE_UP;
}

/**
 * From just inside an opening quote, the index after the closing one, or GIVE_UP. A member name (`name`)
 * may hold no escape at all: its text between the quotes is then its value, compared in place.
 */
function string(s: string, i: number, name: boolean): number {
  if (indexed) return indexedString(s, i, name);
  for (;;) {
    const c = s.charCodeAt(i);
    // The common case first: a printable BMP character that is neither a quote, a backslash nor a surrogate.
    if (c >= 0x20 && c < 0xd800 && c !== 0x22 && c !== 0x5c) {
      i++;
    } else if (c === 0x22) {
      return i + 1;
    } else if (c > 0xdfff) {
      i++;
    } else if (c >= 0xd800 && c <= 0xdbff) {
      const low = s.charCodeAt(i + 1);
      if (!(low >= 0xdc00 && low <= 0xdfff)) return GIVE_UP;
      i += 2;
    } else if (c === 0x5c && !name) {
      i = escape(s, i);
      if (i === GIVE_UP) return GIVE_UP;
    } else {
      // A control character, a lone low surrogate, the end of the text (NaN), or a backslash in a name.
      return GIVE_UP;
    }
  }
}

/**
 * string() for a text without controls or surrogates: only quotes and backslashes matter. Both positions
 * are looked up again only once passed, so a long string full of escapes (blob text: every line break is
 * one) costs one pass, not one search to its end per escape.
 */
function indexedString(s: string, i: number, name: boolean): number {
  let quote = s.indexOf('"', i);
  for (;;) {
    if (quote < 0) return GIVE_UP;
    if (nextBackslash < i) {
      nextBackslash = s.indexOf('\\', i);
      if (nextBackslash < 0) nextBackslash = s.length;
    }
    if (nextBackslash > quote) return quote + 1;
    if (name) return GIVE_UP;
    i = escape(s, nextBackslash);
    if (i === GIVE_UP) return GIVE_UP;
    // An escaped quote is passed; any other quote found is still the first at or after i.
    if (quote < i) quote = s.indexOf('"', i);
  }
}

/** At a backslash: the index after a JCS escape (\" \\ \b \f \n \r \t, \u00xx for another control character), or GIVE_UP. */
function escape(s: string, i: number): number {
  const e = s.charCodeAt(i + 1);
  if (e === 0x22 && watchedAt(s, i + 2)) watchedSeen = true;
  if (e === 0x22 || e === 0x5c || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) return i + 2;
  if (e !== 0x75 || s.charCodeAt(i + 2) !== 0x30 || s.charCodeAt(i + 3) !== 0x30) return GIVE_UP;
  const high = s.charCodeAt(i + 4);
  const low = s.charCodeAt(i + 5);
  const lowValue = low >= 0x30 && low <= 0x39 ? low - 0x30 : low >= 0x61 && low <= 0x66 ? low - 0x57 : -1;
  if ((high !== 0x30 && high !== 0x31) || lowValue < 0) return GIVE_UP;
  const code = (high - 0x30) * 16 + lowValue;
  return code === 8 || code === 9 || code === 10 || code === 12 || code === 13 ? GIVE_UP : i + 6;
}

/**
 * The index after the number at i, or GIVE_UP unless it is certainly canonical: an integer of at most 15
 * characters other than "-0" (exact in a double, printed digit for digit), or a shortest decimal.
 */
function number(s: string, i: number): number {
  const start = i;
  if (s.charCodeAt(i) === 0x2d) i++;
  let c = s.charCodeAt(i);
  if (c === 0x30) {
    if (i !== start && s.charCodeAt(i + 1) !== 0x2e) return GIVE_UP; // "-0"
    c = s.charCodeAt(++i);
  } else if (c >= 0x31 && c <= 0x39) {
    do c = s.charCodeAt(++i);
    while (c >= 0x30 && c <= 0x39);
  } else {
    return GIVE_UP;
  }
  if (c === 0x2e) {
    const dot = i;
    c = s.charCodeAt(++i);
    if (!(c >= 0x30 && c <= 0x39)) return GIVE_UP;
    do c = s.charCodeAt(++i);
    while (c >= 0x30 && c <= 0x39);
    return c === 0x65 || c === 0x45 || !isShortestDecimal(s, start, dot, i) ? GIVE_UP : i;
  }
  return c === 0x65 || c === 0x45 || i - start > 15 ? GIVE_UP : i;
}

/** Whether s[a, aEnd) comes strictly before s[b, bEnd) in UTF-16 code unit order. */
function before(s: string, a: number, aEnd: number, b: number, bEnd: number): boolean {
  const n = Math.min(aEnd - a, bEnd - b);
  for (let k = 0; k < n; k++) {
    const x = s.charCodeAt(a + k);
    const y = s.charCodeAt(b + k);
    if (x !== y) return x < y;
  }
  return aEnd - a < bEnd - b;
}

/** At "{": the index after the object, or GIVE_UP; `found` (the root's) gets each member's value span. */
function object(
  s: string,
  i: number,
  depth: number,
  maxDepth: number,
  found: Map<string, [number, number]> | null,
): number {
  if (depth > maxDepth) return GIVE_UP;
  i++;
  if (s.charCodeAt(i) === 0x7d) return i + 1;
  let previous = -1;
  let previousEnd = -1;
  for (;;) {
    if (s.charCodeAt(i) !== 0x22) return GIVE_UP;
    const name = i + 1;
    const nameEnd = string(s, name, true) - 1; // at the closing quote
    if (nameEnd < 0) return GIVE_UP;
    // In order and not a repeat (a repeat is not strictly after); a reserved name makes a marker.
    if (previous >= 0 && !before(s, previous, previousEnd, name, nameEnd)) return GIVE_UP;
    if (s.charCodeAt(name) === 0x24 && s.startsWith(RESERVED_PREFIX, name)) return GIVE_UP;
    if (s.charCodeAt(nameEnd + 1) !== 0x3a) return GIVE_UP;
    const start = nameEnd + 2;
    if (s.charCodeAt(name) === 0x61 && s.startsWith('approval', name)) watchedSeen = true;
    else if (nameEnd - name === 4 && s.startsWith('kind":"model.', name)) watchedSeen = true;
    // The root is the object at depth 1; the only other with a member map is its tool_call.
    if (
      depth === 1 &&
      found !== null &&
      nameEnd - name === 9 &&
      s.charCodeAt(start) === 0x7b &&
      s.startsWith('tool_call', name)
    )
      i = object(s, start, depth + 1, maxDepth, (callMembers = new Map()));
    else i = value(s, start, depth, maxDepth);
    if (i === GIVE_UP) return GIVE_UP;
    if (found !== null)
      found.set(knownName(depth === 1 ? lastNames : lastCallNames, s, name, nameEnd, found.size), [start, i]);
    previous = name;
    previousEnd = nameEnd;
    const c = s.charCodeAt(i);
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return GIVE_UP;
    i++;
  }
}

/**
 * The root names of the last line, and its call's, by position: the next line of a journal almost always has
 * the same, and handing back the same string (compared in place) spares a new string and the Map its hashing
 * per member.
 */
const lastNames: string[] = [];
const lastCallNames: string[] = [];
/** Positions remembered: a record has a dozen members; a hostile line's millions are not kept. */
const REMEMBERED_NAMES = 32;

function knownName(last: string[], s: string, name: number, nameEnd: number, k: number): string {
  const known = last[k];
  if (known?.length === nameEnd - name && s.startsWith(known, name)) return known;
  const text = s.slice(name, nameEnd);
  if (k < REMEMBERED_NAMES) last[k] = text;
  return text;
}

/** At "[": the index after the array, or GIVE_UP. */
function array(s: string, i: number, depth: number, maxDepth: number): number {
  if (depth > maxDepth) return GIVE_UP;
  i++;
  if (s.charCodeAt(i) === 0x5d) return i + 1;
  for (;;) {
    i = value(s, i, depth, maxDepth);
    if (i === GIVE_UP) return GIVE_UP;
    const c = s.charCodeAt(i);
    if (c === 0x5d) return i + 1;
    if (c !== 0x2c) return GIVE_UP;
    i++;
  }
}
