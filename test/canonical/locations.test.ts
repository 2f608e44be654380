/**
 * Where a defect of a stored line is reported, and which one wins (spec/FORMAT.md §4.3, issue 15 item 6).
 * The vectors (refused.json, group "locations") are checked against the chain verifier, which is what
 * reports them. Then a second, independent reading of §4.3 — written from the spec's rules, not from the
 * scanner: it collects every defect with its position and picks the first, where the scanner stops at the
 * first it meets — is run against the scanner on generated damaged lines. Where they disagree, the spec is
 * ambiguous or the scanner wrong.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { scanCanonical } from '../../src/canonical/scan.js';
import { verifyChain } from '../../src/chain/index.js';
import { genesisHash, type Genesis } from '../../src/record/index.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface LocatedCase { id: string; group: string; text?: string; base64?: string; expected_code: string; expected_column: number; expected_path: string | null }

const refused = loadVectors<LocatedCase>('refused.json');
const located = refused.cases.filter((c) => c.group === 'locations');
const genesis: Genesis = { format: 'stepchain/v1', journal_id: 'locations', created_at: '2026-01-01T00:00:00.000Z' };

describe('refused.json locations: the problem the chain verifier reports', () => {
  test('there are location cases for grammar, UTF-8, precedence and non-canonical forms', () => {
    for (const prefix of ['grammar-', 'utf8-', 'wins-', 'noncanonical-']) expect(located.some((c) => c.id.startsWith(prefix))).toBe(true);
    expect(genesisHash(genesis)).toMatch(/^sha256:/);
  });

  test.each(located.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const bytes = vectorBytes(c);
    const line = new Uint8Array(bytes.length + 1);
    line.set(bytes);
    line[bytes.length] = 0x0a;
    const report = verifyChain({ genesis, files: [{ name: '0000000000000000.jsonl', bytes: line }] });
    const first = report.problems[0]!;
    expect({ code: first.code, column: first.location.column, path: first.location.path ?? (c.expected_path === null ? null : '') }).toEqual({
      code: c.expected_code,
      column: c.expected_column,
      path: c.expected_path,
    });
  });
});

// ---------------------------------------------------------------- an independent reading of §4.3

type Hard = 'MALFORMED_LINE' | 'DEPTH_LIMIT' | 'DUPLICATE_KEY' | 'LONE_SURROGATE' | 'NOT_FINITE_NUMBER';
interface Found { code: Hard | 'NONCANONICAL_LINE'; at: number; path: string }

const pointer = (tokens: Array<string | number>): string => tokens.map((t) => '/' + String(t).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
const isWs = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isHexDigit = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);
class GrammarStop {
  constructor(readonly at: number) {}
}

/**
 * Every defect of `text` with its position (§4.3's table), then the rule: the hard defect at the smallest
 * position, where a defect counts only if it is complete before the grammar breaks; else the first
 * non-canonical form by position; else none.
 */
function reference(text: string): { code: string; at: number; path: string } | null {
  const found: Found[] = [];
  const path: Array<string | number> = [];
  const at = (code: Found['code'], i: number): void => void found.push({ code, at: i, path: pointer(path) });
  let i = 0;
  const stop = (): never => {
    throw new GrammarStop(i);
  };
  const ws = (): void => {
    if (isWs(text[i])) at('NONCANONICAL_LINE', i);
    while (isWs(text[i])) i++;
  };
  const str = (): string => {
    i++; // opening quote
    let out = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) stop();
      if (c === '"') {
        i++;
        return out;
      }
      if (c! < ' ') stop();
      if (c !== '\\') {
        out += c;
        i++;
        continue;
      }
      const e = text[i + 1];
      if (e === undefined) {
        i++;
        stop();
      }
      const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
      if (simple[e!] !== undefined) {
        if (e === '/') at('NONCANONICAL_LINE', i);
        out += simple[e!];
        i += 2;
        continue;
      }
      if (e !== 'u') {
        i++;
        stop();
      }
      for (let k = 2; k < 6; k++) if (!isHexDigit(text[i + k])) ((i += k), stop());
      const hex = text.slice(i + 2, i + 6);
      const unit = parseInt(hex, 16);
      const lowHex = text.slice(i + 8, i + 12);
      const pairs = unit >= 0xd800 && unit <= 0xdbff && text.slice(i + 6, i + 8) === '\\u' && /^[0-9a-fA-F]{4}$/.test(lowHex) && parseInt(lowHex, 16) >= 0xdc00 && parseInt(lowHex, 16) <= 0xdfff;
      if (pairs) {
        at('NONCANONICAL_LINE', i); // a pair is written as the character itself
        out += String.fromCharCode(unit, parseInt(lowHex, 16));
        i += 12;
        continue;
      }
      if (unit >= 0xd800 && unit <= 0xdfff) at('LONE_SURROGATE', i);
      const canonicalControl = unit < 0x20 && !'\b\t\n\f\r'.includes(String.fromCharCode(unit)) && hex === hex.toLowerCase();
      if (!canonicalControl) at('NONCANONICAL_LINE', i);
      out += String.fromCharCode(unit);
      i += 6;
    }
  };
  const num = (): void => {
    const start = i;
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (isDigit(text[i])) while (isDigit(text[i])) i++;
    else stop();
    if (text[i] === '.') {
      i++;
      if (!isDigit(text[i])) stop();
      while (isDigit(text[i])) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!isDigit(text[i])) stop();
      while (isDigit(text[i])) i++;
    }
    const token = text.slice(start, i);
    if (!Number.isFinite(Number(token))) at('NOT_FINITE_NUMBER', start);
    else if (String(Number(token)) !== token) at('NONCANONICAL_LINE', start);
  };
  const value = (depth: number): void => {
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth + 1 > 128) at('DEPTH_LIMIT', i);
      i++;
      ws();
      if (c === '[') {
        if (text[i] === ']') return void i++;
        for (let index = 0; ; index++) {
          path.push(index);
          value(depth + 1);
          path.pop();
          ws();
          if (text[i] === ']') return void i++;
          if (text[i] !== ',') stop();
          i++;
          ws();
        }
      }
      if (text[i] === '}') return void i++;
      const names: string[] = [];
      for (;;) {
        if (text[i] !== '"') stop();
        const quote = i;
        const name = str();
        path.push(name);
        if (names.includes(name)) at('DUPLICATE_KEY', quote);
        else if (names.length > 0 && !(names[names.length - 1]! < name)) at('NONCANONICAL_LINE', quote);
        names.push(name);
        ws();
        if (text[i] !== ':') stop();
        i++;
        ws();
        value(depth + 1);
        path.pop();
        ws();
        if (text[i] === '}') return void i++;
        if (text[i] !== ',') stop();
        i++;
        ws();
      }
    }
    if (c === '"') return void str();
    if (c === '-' || isDigit(c)) return num();
    for (const word of ['true', 'false', 'null']) {
      if (c !== word[0]) continue;
      for (let k = 1; k < word.length; k++) if (text[i + k] !== word[k]) ((i += k), stop());
      i += word.length;
      return;
    }
    stop();
  };
  let grammar: Found | null = null;
  try {
    ws();
    value(0);
    ws();
    if (i < text.length) stop();
  } catch (e) {
    if (!(e instanceof GrammarStop)) throw e;
    grammar = { code: 'MALFORMED_LINE', at: e.at, path: pointer(path) };
  }
  const hard = found.filter((f) => f.code !== 'NONCANONICAL_LINE');
  if (grammar) hard.push(grammar);
  const soft = found.filter((f) => f.code === 'NONCANONICAL_LINE');
  const first = (list: Found[]): Found | null => list.reduce<Found | null>((a, b) => (a === null || b.at < a.at ? b : a), null);
  const pick = first(hard) ?? first(soft);
  return pick && { code: pick.code, at: pick.at, path: pick.path };
}

describe('an independent reading of §4.3 agrees with the scanner', () => {
  const scanned = (text: string) => {
    const d = scanCanonical(text).defect;
    return d && { code: d.code, at: d.index, path: d.path };
  };

  test.each(located.filter((c) => c.text !== undefined).map((c) => [c.id, c.text!] as const))('on the vector %s', (_id, text) => {
    expect(reference(text)).toEqual(scanned(text));
  });

  test('on generated damaged lines: the same code, position and pointer', () => {
    const piece = fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', ' ', 'u', 'd800', 'dc00', 'D83D', '\\ud800', '\\udc00', '\\u0061', '\\/', '0', '1', '-', '.', 'e', '+', '1e400', 'tru', 'nul', 'a', 'é', '😀', '\t');
    const edit = fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.array(piece, { minLength: 1, maxLength: 3 }));
    const base = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((v) => canonicalJson(v)),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v, null, 1)),
      fc.array(piece, { maxLength: 30 }).map((a) => a.join('')),
    );
    fc.assert(
      fc.property(base, fc.array(edit, { maxLength: 3 }), (text, edits) => {
        // Edited by code point: text decoded from UTF-8 never holds half of a surrogate pair.
        let t = [...text];
        for (const [pos, cut, insert] of edits) {
          const p = pos % (t.length + 1);
          t = [...t.slice(0, p), ...insert.flatMap((x) => [...x]), ...t.slice(p + cut)];
        }
        const line = t.join('');
        expect(reference(line), line).toEqual(scanned(line));
      }),
      { numRuns: 20_000 },
    );
  });
});
