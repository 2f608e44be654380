/**
 * Ignore patterns (spec/DIFF.md §4): RFC 6901 JSON Pointers in which the whole token `*` matches exactly
 * one token and the whole token `**` matches any number of tokens, zero included; `~2` spells a literal
 * "*". Matching runs as a tiny NFA over the tokens of the path being walked, so the walk can stop descending as soon as no pattern can
 * match below the current node.
 */
import { DEFAULT_FORMAT } from '../record/formats.js';
import { STEP_V2 } from '../record/v2.js';
import { DiffError } from './errors.js';

const ONE = 0; // `*`
const ANY = 1; // `**`
type Token = string | typeof ONE | typeof ANY;

export interface CompiledPattern {
  readonly source: string;
  readonly tokens: readonly Token[];
}

/** A set of live NFA states: pairs (pattern index, token position). Empty means nothing can match below. */
export type PatternState = readonly number[];

export class IgnoreSet {
  private readonly patterns: CompiledPattern[];

  constructor(sources: readonly string[]) {
    this.patterns = sources.map(compilePattern);
  }

  get size(): number {
    return this.patterns.length;
  }

  /** The state at the root of a step (before any token). Encoded as pattern * 1024 + position. */
  root(): PatternState {
    const out: number[] = [];
    for (let p = 0; p < this.patterns.length; p++) this.close(p, 0, out);
    return out;
  }

  /** The state after descending into `token`; an empty array when no pattern can match at or below. */
  step(state: PatternState, token: string): PatternState {
    if (state.length === 0) return state;
    const out: number[] = [];
    for (const s of state) {
      const p = s >> 10;
      const i = s & 1023;
      const tokens = this.patterns[p]!.tokens;
      if (i >= tokens.length) continue;
      const t = tokens[i]!;
      if (t === ANY) this.close(p, i, out);
      else if (t === ONE || t === token) this.close(p, i + 1, out);
    }
    return out;
  }

  /** Whether a pattern ends exactly at this node: the node and everything under it is ignored. */
  matches(state: PatternState): boolean {
    for (const s of state) if ((s & 1023) === this.patterns[s >> 10]!.tokens.length) return true;
    return false;
  }

  /** Adds (p, i) and, while the token at i is `**`, its zero-token continuation. */
  private close(p: number, i: number, out: number[]): void {
    const tokens = this.patterns[p]!.tokens;
    for (;;) {
      const code = p * 1024 + i;
      if (!out.includes(code)) out.push(code);
      if (i < tokens.length && tokens[i] === ANY) i++;
      else return;
    }
  }
}

const MAX_TOKENS = 1000;

/** Parses and checks one pattern; throws DiffError BAD_IGNORE_PATTERN naming the pattern and the reason. */
export function compilePattern(source: string): CompiledPattern {
  const bad = (reason: string): never => {
    throw new DiffError('BAD_IGNORE_PATTERN', `ignore pattern ${JSON.stringify(source)} ${reason}`, {
      hint: 'patterns are JSON Pointers such as "/result/**/request_id"; "*" matches one token, "**" any number',
    });
  };
  if (typeof source !== 'string') {
    throw new DiffError('BAD_IGNORE_PATTERN', `ignore pattern ${String(source)} is not a string`);
  }
  if (source === '') bad('is empty: it would ignore the whole step');
  if (!source.startsWith('/')) bad('does not start with "/"');
  const rawTokens = source.slice(1).split('/');
  if (rawTokens.length > MAX_TOKENS) bad(`has more than ${MAX_TOKENS} tokens`);
  const tokens: Token[] = rawTokens.map((r) => {
    if (r === '*') return ONE;
    if (r === '**') return ANY;
    if (/~[^012]|~$/.test(r))
      bad(`has a bad "~" escape in the token ${JSON.stringify(r)} (~0 is "~", ~1 is "/", ~2 is "*")`);
    if (r.includes('*'))
      bad(
        `uses "*" inside the token ${JSON.stringify(r)}; a wildcard must be a whole token (write ~2 for a literal "*")`,
      );
    return r.replace(/~1/g, '/').replace(/~2/g, '*').replace(/~0/g, '~');
  });
  const first = tokens[0]!;
  if (typeof first === 'string' && !DEFAULT_FORMAT.memberNames.has(first) && !STEP_V2.memberNames.has(first)) {
    bad(
      `starts with ${JSON.stringify(first)}, which is not a step field (input, model, prompt, tool_call, result, meta, a run record's kind, ref or error, or an envelope field)`,
    );
  }
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i] === ANY && tokens[i - 1] === ANY) bad('has "**" twice in a row');
  }
  return { source, tokens };
}

/** The pattern that matches exactly the value at `pointer` (an RFC 6901 pointer): every "*" becomes ~2. */
export function patternFor(pointer: string): string {
  return pointer.replace(/\*/g, '~2');
}
