/**
 * A second, independent reading of spec/FORMAT.md §4.3, written from the spec's rules and not from
 * src/canonical/scan.ts: it walks the text collecting every defect with the position where it is met, and
 * only then picks one — the hard defect at the smallest position (a grammar defect at the first character
 * that cannot continue), else the first non-canonical form by position. The scanner stops at the first
 * defect it meets instead; tests run both and compare. Text decoded from UTF-8 holds no lone surrogate
 * code unit, so this reading does not look for one.
 */
type Hard = 'MALFORMED_LINE' | 'DEPTH_LIMIT' | 'DUPLICATE_KEY' | 'LONE_SURROGATE' | 'NOT_FINITE_NUMBER';
interface Found {
  code: Hard | 'NONCANONICAL_LINE';
  at: number;
  path: string;
}

const pointer = (tokens: Array<string | number>): string =>
  tokens.map((t) => '/' + String(t).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
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
export function referenceScan(text: string): { code: string; at: number; path: string } | null {
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
      const simple: Record<string, string> = {
        '"': '"',
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      };
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
      const pairs =
        unit >= 0xd800 &&
        unit <= 0xdbff &&
        text.slice(i + 6, i + 8) === '\\u' &&
        /^[0-9a-fA-F]{4}$/.test(lowHex) &&
        parseInt(lowHex, 16) >= 0xdc00 &&
        parseInt(lowHex, 16) <= 0xdfff;
      if (pairs) {
        at('NONCANONICAL_LINE', i); // a pair is written as the character itself
        out += String.fromCharCode(unit, parseInt(lowHex, 16));
        i += 12;
        continue;
      }
      if (unit >= 0xd800 && unit <= 0xdfff) at('LONE_SURROGATE', i);
      const canonicalControl =
        unit < 0x20 && !'\b\t\n\f\r'.includes(String.fromCharCode(unit)) && hex === hex.toLowerCase();
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
  const first = (list: Found[]): Found | null =>
    list.reduce<Found | null>((a, b) => (a === null || b.at < a.at ? b : a), null);
  const pick = first(hard) ?? first(soft);
  return pick && { code: pick.code, at: pick.at, path: pick.path };
}
