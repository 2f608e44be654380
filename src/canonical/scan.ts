/**
 * The strict canonical-form scanner (spec/FORMAT.md §4.3). It decides, in one left-to-right pass and
 * without building the value, whether a text is exactly RFC 8785 (JCS) output for an I-JSON value: no
 * insignificant whitespace, members sorted by UTF-16 code units, ECMAScript number formatting, the JCS
 * string escapes and nothing else. A general parser would accept what it must refuse: JSON.parse keeps the
 * last of two duplicate members and turns "\ud800" into a lone surrogate.
 *
 * Every byte it reads is hostile: it never throws, and it stops at the nesting limit so a line of a
 * million brackets costs one pass and no stack.
 *
 * Lines in the plain form a writer produces are vouched for first by the fast path (scan-fast.ts), which
 * builds nothing for the report; this scanner reads the rest and says where and why.
 */
import { MAX_RECORD_DEPTH, RESERVED_PREFIX } from './limits.js';
import { CANONICAL_SHORT, PLAIN_RUN, SHORT_ESCAPES, hexValue, isHex } from './escapes.js';
import { toPointer } from './pointer.js';
import { isShortestDecimal, scanPlain } from './scan-fast.js';

export { isShortestDecimal };

export type ScanCode =
  'MALFORMED_LINE' | 'DEPTH_LIMIT' | 'DUPLICATE_KEY' | 'LONE_SURROGATE' | 'NOT_FINITE_NUMBER' | 'NONCANONICAL_LINE';

export interface ScanDefect {
  code: ScanCode;
  /** UTF-16 index into the scanned text where the defect is met (FORMAT §4.3). */
  index: number;
  /** JSON Pointer to the value being scanned when the defect was found. */
  path: string;
  reason: string;
}

/** A marker object: one whose member names include the reserved prefix (spec/FORMAT.md §3.5). */
export interface MarkerSpan {
  /** JSON Pointer to the marker object itself. */
  path: string;
  /** Its member names, in order. */
  names: string[];
  start: number;
  end: number;
}

export interface ScanResult {
  defect: ScanDefect | null;
  /** For a root object: member name → [start, end) of the member's value text. */
  members: Map<string, [number, number]> | null;
  markers: MarkerSpan[];
}

export interface ScanOptions {
  maxDepth?: number;
  /** Collect root member spans (default true). */
  members?: boolean;
}

class Abort {
  constructor(readonly defect: ScanDefect) {}
}

class Scanner {
  private i = 0;
  private readonly path: (string | number)[] = [];
  private noncanonical: ScanDefect | null = null;
  readonly markers: MarkerSpan[] = [];
  members: Map<string, [number, number]> | null = null;

  constructor(
    private readonly s: string,
    private readonly maxDepth: number,
    private readonly wantMembers: boolean,
  ) {}

  run(): ScanDefect | null {
    try {
      this.skipWs();
      this.value(0);
      this.skipWs();
      if (this.i !== this.s.length) this.hard('MALFORMED_LINE', 'unexpected text after the JSON value');
    } catch (e) {
      if (e instanceof Abort) return e.defect;
      /* c8 ignore next 2 -- a scanner bug must still yield a report, never an exception */
      return {
        code: 'MALFORMED_LINE',
        index: this.i,
        path: toPointer(this.path),
        reason: `internal scanner error: ${String(e)}`,
      };
    }
    return this.noncanonical;
  }

  private hard(code: ScanCode, reason: string, index = this.i): never {
    throw new Abort({ code, index, path: toPointer(this.path), reason });
  }

  /**
   * Records a non-canonical form. The one reported is the first by position (FORMAT §4.3), which is not
   * always the first met: a member name out of order is located at its opening quote but known only at its
   * closing one, after any needless escape inside it.
   */
  private soft(reason: string, index = this.i): void {
    if (this.noncanonical === null || index < this.noncanonical.index)
      this.noncanonical = { code: 'NONCANONICAL_LINE', index, path: toPointer(this.path), reason };
  }

  private skipWs(): void {
    const s = this.s;
    let c = s.charCodeAt(this.i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      this.soft('insignificant whitespace');
      do c = s.charCodeAt(++this.i);
      while (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d);
    }
  }

  private value(depth: number): void {
    const c = this.s.charCodeAt(this.i);
    if (c === 0x22) this.string(false);
    else if (c === 0x7b) this.object(depth + 1);
    else if (c === 0x5b) this.array(depth + 1);
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) this.number();
    else if (c === 0x74) this.literal('true');
    else if (c === 0x66) this.literal('false');
    else if (c === 0x6e) this.literal('null');
    else if (Number.isNaN(c)) this.hard('MALFORMED_LINE', 'unexpected end of text');
    else this.hard('MALFORMED_LINE', `unexpected character ${JSON.stringify(this.s[this.i])}`);
  }

  private literal(word: string): void {
    // A grammar defect is met at the first character that cannot continue (FORMAT §4.3), not at the word's start.
    for (let k = 1; k < word.length; k++) {
      if (this.s.charCodeAt(this.i + k) !== word.charCodeAt(k))
        this.hard('MALFORMED_LINE', `expected ${word}`, this.i + k);
    }
    this.i += word.length;
  }

  private number(): void {
    const s = this.s;
    const start = this.i;
    let i = this.i;
    if (s.charCodeAt(i) === 0x2d) i++;
    let c = s.charCodeAt(i);
    if (c === 0x30) i++;
    else if (c >= 0x31 && c <= 0x39) {
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    } else {
      this.i = i;
      this.hard('MALFORMED_LINE', 'a number needs a digit');
    }
    let plain = true;
    const dot = s.charCodeAt(i) === 0x2e ? i : -1;
    if (dot >= 0) {
      plain = false;
      c = s.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) {
        this.i = i;
        this.hard('MALFORMED_LINE', 'a fraction needs a digit');
      }
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    }
    c = s.charCodeAt(i);
    let exponent = false;
    if (c === 0x65 || c === 0x45) {
      plain = false;
      exponent = true;
      c = s.charCodeAt(++i);
      if (c === 0x2b || c === 0x2d) c = s.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) {
        this.i = i;
        this.hard('MALFORMED_LINE', 'an exponent needs a digit');
      }
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    }
    // An integer of at most 15 digits is exact in a double and ECMAScript prints it digit for digit, so the
    // grammar above (no leading zero) already makes it canonical; only "-0" is not. Most numbers in a step
    // are such integers, and skipping Number() and String() for them is measured in bench/.
    if (plain && i - start <= 15 && !(s.charCodeAt(start) === 0x2d && s.charCodeAt(start + 1) === 0x30)) {
      this.i = i;
      return;
    }
    if (dot >= 0 && !exponent && isShortestDecimal(s, start, dot, i)) {
      this.i = i;
      return;
    }
    const token = s.slice(start, i);
    const n = Number(token);
    if (!Number.isFinite(n))
      this.hard('NOT_FINITE_NUMBER', `${token} is outside the range of an IEEE 754 double`, start);
    const canonical = String(n);
    if (canonical !== token) this.soft(`number ${token} is written ${canonical} in canonical form`, start);
    this.i = i;
  }

  /**
   * Scans a string starting at its opening quote. A member name (`decode`) comes back decoded; a value
   * is only checked, so no text is built for it (values are most of a line).
   */
  private string(decode: boolean): string {
    const s = this.s;
    let i = this.i + 1;
    let chunkStart = i;
    let out = '';
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) {
        if (decode) out += s.slice(chunkStart, i);
        const esc = s.charCodeAt(i + 1);
        if (esc === 0x22 || esc === 0x5c) {
          if (decode) out += s[i + 1]!;
          i += 2;
        } else if (esc === 0x2f) {
          this.soft('"/" is not escaped in canonical form', i);
          if (decode) out += '/';
          i += 2;
        } else if (SHORT_ESCAPES[esc] !== undefined) {
          if (decode) out += String.fromCharCode(SHORT_ESCAPES[esc]);
          i += 2;
        } else if (esc === 0x75) {
          const code = this.hex4(i + 2);
          if (code >= 0xd800 && code <= 0xdbff) {
            // Lone unless a complete low-surrogate escape follows at once; a broken escape after it does not
            // make it less lone, and LONE_SURROGATE, met at this backslash, comes first (FORMAT §4.3).
            const low = s.charCodeAt(i + 6) === 0x5c && s.charCodeAt(i + 7) === 0x75 ? hexValue(s, i + 8) : -1;
            if (!(low >= 0xdc00 && low <= 0xdfff))
              this.hard('LONE_SURROGATE', 'escaped high surrogate without its low half', i);
            this.soft('a surrogate pair is written literally in canonical form', i);
            if (decode) out += String.fromCharCode(code, low);
            i += 12;
            chunkStart = i;
            continue;
          }
          if (code >= 0xdc00 && code <= 0xdfff)
            this.hard('LONE_SURROGATE', 'escaped low surrogate without a high half', i);
          if (code >= 0x20) this.soft(`\\u${s.slice(i + 2, i + 6)} is written literally in canonical form`, i);
          else if (CANONICAL_SHORT.has(code))
            this.soft(`\\u${s.slice(i + 2, i + 6)} has a short escape in canonical form`, i);
          else if (s.slice(i + 2, i + 6) !== code.toString(16).padStart(4, '0'))
            this.soft('\\u escapes use lowercase hex in canonical form', i);
          if (decode) out += String.fromCharCode(code);
          i += 6;
        } else {
          this.hard('MALFORMED_LINE', 'invalid escape sequence', i + 1);
        }
        chunkStart = i;
        continue;
      }
      // The common case first: a printable BMP character that is not a surrogate.
      if (c >= 0x20 && c < 0xd800) {
        i++;
        // Past sixteen such characters (prose, a blob's text) one compiled regex step skips the rest of
        // the run: 2.3x faster on 100 KB blob text, no slower on short strings (measured, bench/).
        if (i - chunkStart > 16) {
          PLAIN_RUN.lastIndex = i;
          if (PLAIN_RUN.test(s)) i = PLAIN_RUN.lastIndex;
        }
        continue;
      }
      // charCodeAt past the end is NaN, which fails every comparison: test the end explicitly.
      if (i >= s.length) this.hard('MALFORMED_LINE', 'unterminated string', i);
      if (c < 0x20) this.hard('MALFORMED_LINE', 'control character inside a string must be escaped', i);
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = s.charCodeAt(i + 1);
        if (c >= 0xdc00 || !(next >= 0xdc00 && next <= 0xdfff))
          this.hard('LONE_SURROGATE', 'lone surrogate in a string', i);
        i += 2;
        continue;
      }
      i++;
    }
    if (decode) out += s.slice(chunkStart, i);
    this.i = i + 1;
    return out;
  }

  private hex4(at: number): number {
    const s = this.s;
    for (let k = 0; k < 4; k++) {
      if (!isHex(s.charCodeAt(at + k))) this.hard('MALFORMED_LINE', 'a \\u escape needs four hex digits', at + k);
    }
    return parseInt(s.slice(at, at + 4), 16);
  }

  private object(depth: number): void {
    const start = this.i;
    if (depth > this.maxDepth) this.hard('DEPTH_LIMIT', `nesting deeper than ${this.maxDepth} levels`);
    const recordMembers = depth === 1 && this.wantMembers;
    if (recordMembers) this.members = new Map();
    this.i++;
    this.skipWs();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return;
    }
    const keys: string[] = [];
    // While members arrive sorted a duplicate can only be the previous name; after the first disorder a
    // set keeps the check linear even for a hostile object with a million members in reverse order.
    let seen: Set<string> | null = null;
    let reserved = false;
    for (;;) {
      if (this.s.charCodeAt(this.i) !== 0x22) this.hard('MALFORMED_LINE', 'expected a member name');
      const keyIndex = this.i;
      const key = this.string(true);
      const prev = keys.length > 0 ? keys[keys.length - 1]! : undefined;
      if (seen !== null || (prev !== undefined && !(prev < key))) {
        seen ??= new Set(keys);
        if (seen.has(key)) {
          this.path.push(key);
          this.hard('DUPLICATE_KEY', `member ${JSON.stringify(key)} appears twice`, keyIndex);
        }
        seen.add(key);
        if (prev !== undefined && !(prev < key)) {
          this.path.push(key);
          this.soft(`member ${JSON.stringify(key)} must come before ${JSON.stringify(prev)} (UTF-16 order)`, keyIndex);
          this.path.pop();
        }
      }
      keys.push(key);
      if (key.startsWith(RESERVED_PREFIX)) reserved = true;
      // A member's name is part of the pointer from its closing quote to the end of its value (FORMAT §4.3).
      this.path.push(key);
      this.skipWs();
      if (this.s.charCodeAt(this.i) !== 0x3a) this.hard('MALFORMED_LINE', 'expected ":" after a member name');
      this.i++;
      this.skipWs();
      const valueStart = this.i;
      this.value(depth);
      if (recordMembers) this.members!.set(key, [valueStart, this.i]);
      this.path.pop();
      this.skipWs();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        this.skipWs();
      } else if (c === 0x7d) {
        this.i++;
        break;
      } else this.hard('MALFORMED_LINE', 'expected "," or "}" in an object');
    }
    if (reserved) this.markers.push({ path: toPointer(this.path), names: keys, start, end: this.i });
  }

  private array(depth: number): void {
    if (depth > this.maxDepth) this.hard('DEPTH_LIMIT', `nesting deeper than ${this.maxDepth} levels`);
    this.i++;
    this.skipWs();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return;
    }
    for (let index = 0; ; index++) {
      this.path.push(index);
      this.value(depth);
      this.path.pop();
      this.skipWs();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x2c) {
        this.i++;
        this.skipWs();
      } else if (c === 0x5d) {
        this.i++;
        return;
      } else this.hard('MALFORMED_LINE', 'expected "," or "]" in an array');
    }
  }
}

/**
 * Scans `text` (already decoded from UTF-8). The defect, if any, is the one FORMAT §4.3 chooses: the hard
 * defect met first (a grammar defect at the first character that cannot continue), else the first
 * non-canonical form by position; test/canonical/locations.test.ts holds it to an independent reading.
 * A text in the plain canonical form a writer produces is vouched for by the fast path (scan-fast.ts);
 * anything else, and everything it gives up on, is read by the general scanner below.
 */
export function scanCanonical(text: string, options: ScanOptions = {}): ScanResult {
  const maxDepth = options.maxDepth ?? MAX_RECORD_DEPTH;
  const wantMembers = options.members ?? true;
  const members = scanPlain(text, maxDepth, wantMembers);
  if (members !== undefined) return { defect: null, members, markers: [] };
  return scanGeneral(text, options);
}

/** The general scanner alone, without the fast path: what scanCanonical falls back on (and what tests hold the fast path to). */
export function scanGeneral(text: string, options: ScanOptions = {}): ScanResult {
  const scanner = new Scanner(text, options.maxDepth ?? MAX_RECORD_DEPTH, options.members ?? true);
  const defect = scanner.run();
  return { defect, members: scanner.members, markers: scanner.markers };
}
