/**
 * The redaction policy (spec/REDACTION.md §3): parsing and validation. A policy is hostile input written
 * by people: every member is checked, unknown members are errors (a typo must not silently disable a
 * rule), and every error names the rule (by id, else by index) and the member, with a JSON Pointer into
 * the policy. Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { isObject, isSeq } from '../canonical/json.js';
import { isValidId } from '../record/fields.js';
import { DEFAULT_FORMAT, REDACTABLE_MEMBERS } from '../record/formats.js';
import { IgnoreSet, compilePattern } from '../pattern/pattern.js';
import { DETECTORS, DETECTOR_IDS } from './detectors.js';
import { PolicyError, type PolicyErrorCode } from './errors.js';

export const POLICY_FORMAT = 'stepchain-redaction-policy/v1';

export type RedactMode = 'substring' | 'value';

/** A rule as written in the policy file. */
export interface PolicyRule {
  id: string;
  paths?: string[];
  detectors?: string[];
  tools?: string[];
  seq?: { from?: number; to?: number };
  mode?: RedactMode;
}

export interface PolicyDocument {
  format?: typeof POLICY_FORMAT;
  rules: PolicyRule[];
}

/** A validated rule, ready to apply. */
export interface CompiledRule {
  readonly id: string;
  readonly index: number;
  /** null: the rule's scope is every content field and meta. */
  readonly paths: IgnoreSet | null;
  readonly detectors: readonly string[];
  readonly tools: ReadonlySet<string> | null;
  readonly from: number;
  readonly to: number;
  readonly mode: RedactMode;
}

export interface Policy {
  readonly document: PolicyDocument;
  readonly rules: readonly CompiledRule[];
  /** digest(UTF-8(JCS(document))): what the anchor block records. */
  readonly digest: string;
}

const RULE_MEMBERS = new Set(['id', 'paths', 'detectors', 'tools', 'seq', 'mode']);
/** Enough for any real policy; keeps a hostile one from costing more than a moment per value. */
export const MAX_RULES = 256;
export const MAX_PATTERNS_PER_RULE = 256;

/** Parses policy JSON text (strict: no duplicate members) and validates it. */
export function parsePolicyText(text: string, file = 'policy'): Policy {
  const scan = scanCanonical(text, { members: false });
  if (scan.defect && scan.defect.code !== 'NONCANONICAL_LINE') {
    throw new PolicyError(
      'POLICY_INVALID',
      `${file} is not valid I-JSON: ${scan.defect.reason} (character ${scan.defect.index + 1}${scan.defect.path ? `, at ${scan.defect.path}` : ''})`,
      { location: { file, path: scan.defect.path } },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new PolicyError('POLICY_INVALID', `${file} is not JSON: ${e instanceof Error ? e.message : String(e)}`, {
      location: { file },
    });
  }
  return compilePolicy(value, file);
}

type Fail = (code: PolicyErrorCode, message: string, path: string, hint?: string) => never;
/** A rule member that breaks its rule: throws PolicyError naming the rule and the member. */
type Bad = (code: PolicyErrorCode, member: string | null, why: string, hint?: string) => never;

/** Validates a parsed policy; throws PolicyError naming the rule and member. */
export function compilePolicy(value: unknown, file = 'policy'): Policy {
  const fail: Fail = (code, message, path, hint) => {
    throw new PolicyError(code, message, { location: { file, path }, ...(hint ? { hint } : {}) });
  };
  if (!isObject(value)) return fail('POLICY_INVALID', 'a policy is a JSON object {"rules": [...]}', '');
  for (const k of Object.keys(value)) {
    if (k !== 'rules' && k !== 'format')
      fail(
        'UNKNOWN_MEMBER',
        `the policy has an unknown member ${JSON.stringify(k)} (allowed: "rules", "format")`,
        `/${k}`,
      );
  }
  if ('format' in value && value.format !== POLICY_FORMAT)
    fail(
      'POLICY_INVALID',
      `the policy's format is ${JSON.stringify(value.format)}; this version reads ${JSON.stringify(POLICY_FORMAT)}`,
      '/format',
    );
  const rules = value.rules;
  if (!Array.isArray(rules) || rules.length === 0)
    return fail('POLICY_INVALID', 'the policy needs a non-empty "rules" array', '/rules');
  if (rules.length > MAX_RULES)
    fail('POLICY_INVALID', `the policy has ${rules.length} rules; at most ${MAX_RULES} are allowed`, '/rules');
  const seen = new Map<string, number>();
  const compiled: CompiledRule[] = [];
  const document: PolicyDocument = { ...('format' in value ? { format: POLICY_FORMAT } : {}), rules: [] };
  rules.forEach((raw: unknown, index) => {
    const { rule, compiledRule } = compileRule(raw, index, seen, fail);
    compiled.push(compiledRule);
    document.rules.push(rule);
  });
  return { document, rules: compiled, digest: digestUtf8(canonicalJson(document)) };
}

/** One rule (spec/REDACTION.md §3): its members by their rules, as written back and as the walk uses it. */
function compileRule(
  raw: unknown,
  index: number,
  seen: Map<string, number>,
  fail: Fail,
): { rule: PolicyRule; compiledRule: CompiledRule } {
  const at = `/rules/${index}`;
  const idOk = isObject(raw) && isValidId(raw.id);
  const name = idOk ? `rule "${(raw as { id: string }).id}" (rules[${index}])` : `rules[${index}]`;
  const bad: Bad = (code, member, why, hint) =>
    fail(code, `${name}${member ? ` member "${member}"` : ''}: ${why}`, member ? `${at}/${member}` : at, hint);
  if (!isObject(raw))
    return bad('RULE_INVALID', null, 'a rule is an object {"id": …, "paths": […] and/or "detectors": […]}');
  for (const k of Object.keys(raw)) {
    if (!RULE_MEMBERS.has(k))
      bad(
        'UNKNOWN_MEMBER',
        k,
        `is not a rule member (allowed: ${[...RULE_MEMBERS].join(', ')})`,
        'a misspelt member would otherwise disable the rule silently',
      );
  }
  if (!idOk)
    bad(
      'RULE_ID_INVALID',
      'id',
      `must be an id matching ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$ (got ${JSON.stringify(raw.id)})`,
    );
  const id = raw.id as string;
  const dup = seen.get(id);
  if (dup !== undefined) bad('RULE_ID_DUPLICATE', 'id', `repeats the id of rules[${dup}]; every rule has its own id`);
  seen.set(id, index);
  const rule: PolicyRule = { id };
  let paths: IgnoreSet | null = null;
  if ('paths' in raw) {
    rule.paths = compilePaths(strings(bad, 'paths', raw.paths, MAX_PATTERNS_PER_RULE), bad);
    paths = new IgnoreSet(rule.paths);
  }
  let detectors: string[] = [];
  if ('detectors' in raw) {
    detectors = strings(bad, 'detectors', raw.detectors, DETECTOR_IDS.length);
    for (const d of detectors)
      if (!DETECTORS.has(d))
        bad(
          'DETECTOR_UNKNOWN',
          'detectors',
          `${JSON.stringify(d)} is not a built-in detector (${DETECTOR_IDS.join(', ')})`,
        );
    rule.detectors = detectors;
  }
  if (paths === null && detectors.length === 0)
    bad('RULE_INVALID', null, 'selects nothing: give "paths", "detectors" or both');
  let tools: Set<string> | null = null;
  if ('tools' in raw) {
    const list = strings(bad, 'tools', raw.tools, 1024);
    tools = new Set(list);
    rule.tools = list;
  }
  const range = 'seq' in raw ? compileSeq(raw.seq, bad) : null;
  if (range) rule.seq = range.written;
  let mode: RedactMode = detectors.length > 0 ? 'substring' : 'value';
  if ('mode' in raw) {
    if (raw.mode !== 'substring' && raw.mode !== 'value')
      bad('RULE_INVALID', 'mode', `must be "substring" or "value" (got ${JSON.stringify(raw.mode)})`);
    mode = raw.mode;
    if (mode === 'substring' && detectors.length === 0)
      bad('RULE_INVALID', 'mode', '"substring" needs detectors: a path selects a whole value');
    rule.mode = mode;
  }
  return {
    rule,
    compiledRule: {
      id,
      index,
      paths,
      detectors,
      tools,
      from: range?.from ?? 0,
      to: range?.to ?? Number.MAX_SAFE_INTEGER,
      mode,
    },
  };
}

/** A member that is a non-empty array of at most `max` distinct strings. */
function strings(bad: Bad, member: string, v: unknown, max: number): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > max || !v.every((x) => typeof x === 'string')) {
    return bad('RULE_INVALID', member, `must be a non-empty array of at most ${max} strings`);
  }
  if (new Set(v).size !== v.length) bad('RULE_INVALID', member, 'lists the same entry twice');
  return v;
}

/** Each path a pointer pattern into a member a redaction may stand in (REDACTION.md §3.2). */
function compilePaths(list: string[], bad: Bad): string[] {
  list.forEach((p, i) => {
    const where = `paths/${i}`;
    try {
      compilePattern(p);
    } catch (e) {
      bad(
        'PATH_INVALID',
        where,
        `${JSON.stringify(p)} is not a pointer pattern: ${e instanceof Error ? e.message.replace(/^[A-Z_]+: /, '') : String(e)}`,
      );
    }
    const first = p.slice(1).split('/')[0]!;
    if (first !== '*' && first !== '**' && !REDACTABLE_MEMBERS.has(first)) {
      bad(
        'PATH_INVALID',
        where,
        `${JSON.stringify(p)} points into the envelope field "${first}"; only content fields (${DEFAULT_FORMAT.records[0]!.contentFields.join(', ')}) and meta can be redacted`,
      );
    }
  });
  return list;
}

/** The seq range `{"from", "to"}`, either end optional. */
function compileSeq(s: unknown, bad: Bad): { from: number; to: number; written: { from?: number; to?: number } } {
  if (
    !isObject(s) ||
    Object.keys(s).some((k) => k !== 'from' && k !== 'to') ||
    Object.keys(s).length === 0 ||
    ('from' in s && !isSeq(s.from)) ||
    ('to' in s && !isSeq(s.to))
  ) {
    bad('RULE_INVALID', 'seq', 'must be {"from": N, "to": M} (either may be left out) with non-negative integers');
  }
  const r = s as { from?: number; to?: number };
  const from = r.from ?? 0;
  const to = r.to ?? Number.MAX_SAFE_INTEGER;
  if (from > to) bad('RULE_INVALID', 'seq', `from ${from} is after to ${to}`);
  return {
    from,
    to,
    written: { ...(r.from !== undefined ? { from: r.from } : {}), ...(r.to !== undefined ? { to: r.to } : {}) },
  };
}
