/**
 * The redaction walk (spec/REDACTION.md §5): applies a policy to one step's content fields and meta and
 * returns the redacted values, with one salted marker per redacted location. Pure; it never mutates its
 * input (an unchanged subtree is returned as the same object).
 *
 * Precedence at each node, in document order (members in UTF-16 order of their names, elements by index):
 *   1. a path rule without detectors whose pattern ends at the node redacts the whole node (first such rule
 *      in policy order); nothing below is visited;
 *   2. an object one of whose member NAMES a detector in scope matches is redacted whole (a marker cannot
 *      stand for a name);
 *   3. a string in which detectors in scope match: if a matching rule's mode is "value", the whole string
 *      (first such rule); otherwise the matched substrings, with a `text` showing the rest;
 *   4. otherwise arrays and objects are walked, and everything else is left as it is.
 * A detector rule is *in scope* at a node when the step passes its filters and, if it has paths, one of
 * them ends at the node or an ancestor.
 */
import { toPointer } from '../canonical/pointer.js';
import { setMember, type Json, type JsonObject } from '../canonical/json.js';
import { DEFAULT_FORMAT } from '../record/formats.js';
import { REDACTED_MARKER } from '../record/markers.js';
import type { RecordProfile } from '../record/profile.js';
import type { PatternState } from '../pattern/pattern.js';
import { commitment, type SaltSource } from './commit.js';
import { findSecrets, placeholder } from './detectors.js';
import type { CompiledRule, Policy } from './policy.js';

/** One redacted location, with everything needed to disclose it. */
export interface Redaction {
  seq: number;
  /** JSON Pointer into the step record: where the marker stands. */
  path: string;
  rule: string;
  commitment: string;
  salt: Uint8Array;
  /** The original value the marker replaces. */
  value: Json;
  /**
   * What the leak sweep searches for (spec/REDACTION.md §5.5): the detector matches, or the string leaves
   * and the number leaves (as JCS writes them) of a path-selected value.
   */
  matched: string[];
  /** Whether `matched` holds detector matches (true) or the leaves of a path-selected value. */
  detected: boolean;
  /**
   * A substring redaction's merged spans, [start, end) in UTF-16 code units of `value`: a v3 publication
   * withholds the chunks they touch (REDACTION.md §13).
   */
  spans?: [number, number][];
}

/** `{"$stepchain:redacted": {"commitment", "rule", "text"?}}` (FORMAT.md §3.5). */
export type RedactionMarker = { [REDACTED_MARKER]: { commitment: string; rule: string; text?: string } } & JsonObject;

/** The rules that apply to a step: its seq in the rule's range, its tool (if the rule names tools) listed. */
export function rulesForStep(policy: Policy, seq: number, tool: string | null): CompiledRule[] {
  return policy.rules.filter(
    (r) => seq >= r.from && seq <= r.to && (r.tools === null || (tool !== null && r.tools.has(tool))),
  );
}

const NO_SALT = new Uint8Array(0);

interface Walk {
  seq: number;
  rules: CompiledRule[];
  /** null: no commitment is made (a stepchain/v3 publication commits to each unit itself, §13). */
  salt: SaltSource | null;
  out: Redaction[];
}

/**
 * Redacts one step. `fields` holds the original values of the content fields and meta (blobs already
 * resolved); the result holds the redacted value of each (the same object when nothing changed). The
 * record profile says which members a policy may redact, in walk order, and what the step's tool is.
 * `salt` draws each marker's salt; null makes no commitment (each redaction's `commitment` is empty): a
 * stepchain/v3 publication, which commits to every unit itself, reads only what was selected.
 */
export function redactStep(
  policy: Policy,
  seq: number,
  fields: Partial<Record<string, Json>>,
  salt: SaltSource | null,
  profile: RecordProfile = DEFAULT_FORMAT.records[0]!,
): { fields: Record<string, Json>; redactions: Redaction[] } {
  const rules = rulesForStep(policy, seq, profile.toolName(fields));
  const w: Walk = { seq, rules, salt, out: [] };
  const result: Record<string, Json> = {};
  for (const field of profile.redactable) {
    if (!(field in fields) || fields[field] === undefined) continue;
    const value = fields[field]!;
    if (rules.length === 0) {
      result[field] = value;
      continue;
    }
    const states = rules.map((r) => (r.paths ? r.paths.step(r.paths.root(), field) : null));
    result[field] = walk(
      w,
      value,
      [field],
      states,
      rules.map((r) => r.paths === null),
    );
  }
  return { fields: result, redactions: w.out };
}

function marker(
  w: Walk,
  tokens: (string | number)[],
  rule: CompiledRule,
  value: Json,
  matched: string[],
  detected: boolean,
  text?: string,
  spans?: [number, number][],
): RedactionMarker {
  // Hashing the value for a commitment no v3 publication uses was a seventh of publishing a chat with a secret in
  // every message (each prompt repeats them all).
  const salt = w.salt === null ? NO_SALT : w.salt();
  const c = w.salt === null ? '' : commitment(salt, value);
  w.out.push({
    seq: w.seq,
    path: toPointer(tokens),
    rule: rule.id,
    commitment: c,
    salt,
    value,
    matched,
    detected,
    ...(spans ? { spans } : {}),
  });
  return {
    [REDACTED_MARKER]: { commitment: c, rule: rule.id, ...(text === undefined ? {} : { text }) },
  };
}

/**
 * The string and number leaves of a path-selected value, numbers as JCS writes them (a card number
 * redacted from a number field must not survive in text). Not its member names: those are structure,
 * shared by unselected values. Booleans and null are not searched: they occur everywhere.
 */
function leaves(v: Json, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number')
    out.push(JSON.stringify(v)); // ECMAScript Number::toString, which JCS uses
  else if (Array.isArray(v)) for (const x of v) leaves(x, out);
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) leaves(v[k]!, out);
  return out;
}

function walk(
  w: Walk,
  value: Json,
  tokens: (string | number)[],
  states: (PatternState | null)[],
  scoped: boolean[],
): Json {
  const { rules } = w;
  // 1. whole-value path rules; and which detector rules come into scope here.
  let inScope: boolean[] | null = null;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    const s = states[i];
    if (!s || !r.paths!.matches(s)) continue;
    if (r.detectors.length === 0) return marker(w, tokens, r, value, leaves(value), false);
    if (!scoped[i]) (inScope ??= [...scoped])[i] = true;
  }
  const scope = inScope ?? scoped;
  const anyScoped = scope.some((x, i) => x && rules[i]!.detectors.length > 0);
  if (typeof value === 'string') {
    if (!anyScoped) return value;
    return redactString(w, value, tokens, scope);
  }
  if (value === null || typeof value !== 'object') return value;
  // Prune: no detector in scope and no path pattern alive below.
  if (!anyScoped && states.every((s) => s === null || s.length === 0)) return value;
  const step = (token: string): (PatternState | null)[] =>
    states.map((s, i) => (s === null ? null : rules[i]!.paths!.step(s, token)));
  if (Array.isArray(value)) {
    let out: Json[] | null = null;
    for (let k = 0; k < value.length; k++) {
      const v = walk(w, value[k]!, [...tokens, k], step(String(k)), scope);
      if (v !== value[k]) (out ??= value.slice())[k] = v;
    }
    return out ?? value;
  }
  // 2. secrets in member names: redact the object whole.
  if (anyScoped) {
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i]!;
      if (!scope[i] || r.detectors.length === 0) continue;
      const names = Object.keys(value).filter((k) => findSecrets(k, r.detectors).length > 0);
      if (names.length > 0)
        return marker(
          w,
          tokens,
          r,
          value,
          names.flatMap((k) => findSecrets(k, r.detectors).map((m) => k.slice(m.start, m.end))),
          true,
        );
    }
  }
  let out: JsonObject | null = null;
  for (const k of Object.keys(value).sort(utf16)) {
    const v = walk(w, value[k]!, [...tokens, k], step(k), scope);
    if (v !== value[k]) setMember((out ??= { ...value }), k, v);
  }
  return out ?? value;
}

const utf16 = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function redactString(w: Walk, s: string, tokens: (string | number)[], scope: boolean[]): Json {
  let first: { rule: CompiledRule; matches: ReturnType<typeof findSecrets> } | null = null;
  const ids: string[] = [];
  for (let i = 0; i < w.rules.length; i++) {
    const r = w.rules[i]!;
    if (!scope[i] || r.detectors.length === 0) continue;
    const matches = findSecrets(s, r.detectors);
    if (matches.length === 0) continue;
    if (r.mode === 'value')
      return marker(
        w,
        tokens,
        r,
        s,
        matches.map((m) => s.slice(m.start, m.end)),
        true,
      );
    first ??= { rule: r, matches };
    for (const d of r.detectors) if (!ids.includes(d)) ids.push(d);
  }
  if (first === null) return s;
  // Substring mode: every detector of every matching substring rule, merged.
  const all = findSecrets(s, ids);
  let text = '';
  let at = 0;
  for (const m of all) {
    text += s.slice(at, m.start) + placeholder(m.detector);
    at = m.end;
  }
  text += s.slice(at);
  return marker(
    w,
    tokens,
    first.rule,
    s,
    all.map((m) => s.slice(m.start, m.end)),
    true,
    text,
    all.map((m) => [m.start, m.end] as [number, number]),
  );
}
