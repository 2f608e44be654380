/**
 * The record kinds of `stepchain/v3` and the extension rule (spec/FORMAT.md §14.8, spec/KINDS.md; design
 * §10). Every record has the same members, commitments and tiers whatever its kind, so the chain verifies
 * without knowing any kind. A kind is a dotted name; a vendor's kind is `x.<reverse-dns>.<name>`. A kind in
 * the registry below is held to its rules between members; a kind that matches the pattern but is not
 * registered is integrity-verified and reported as a notice (KIND_UNKNOWN), never as a failure. Adding a
 * kind is a registry change, not a format version. Pure.
 */
import { canonicalValue } from '../../canonical/value.js';
import type { RuleViolation } from '../profile.js';

/** A kind: dot-separated lowercase segments, each starting with a letter; at most 128 characters. */
export const KIND_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
export const MAX_KIND_LENGTH = 128;

export interface KindSpec {
  readonly kind: string;
  /** `ref`: must name an earlier record, must be null, or either. */
  readonly ref: 'required' | 'none' | 'any';
  /** `error`: must be non-null (a failure), must be null, or either. */
  readonly error: 'required' | 'none' | 'any';
  /**
   * Whether this implementation checks the kind's own semantics beyond ref and error. False: reported as
   * KIND_UNCHECKED (a notice) — registered, its rules are another issue's (#36, #40).
   */
  readonly checked: boolean;
  /** One line of what it records (spec/KINDS.md). */
  readonly summary: string;
}

const spec = (
  kind: string,
  ref: KindSpec['ref'],
  error: KindSpec['error'],
  checked: boolean,
  summary: string,
): KindSpec => ({ kind, ref, error, checked, summary });

/** The v3 registry: v2's eleven kinds, and the kinds other issues land inside v3. */
export const KIND_REGISTRY: readonly KindSpec[] = [
  spec('step', 'none', 'none', true, 'a finished step written in one append'),
  spec('run.started', 'none', 'none', true, 'a run began'),
  spec('run.completed', 'none', 'none', true, 'a run ended'),
  spec('run.failed', 'none', 'required', true, 'a run failed; error says why'),
  spec('model.started', 'none', 'none', true, 'a model call began'),
  spec('model.completed', 'required', 'none', true, 'a model call ended; ref names its start'),
  spec('model.failed', 'required', 'required', true, 'a model call failed; ref names its start'),
  spec('tool.started', 'none', 'none', true, 'a tool call (an effect) began'),
  spec('tool.updated', 'required', 'none', true, 'progress of a tool call; ref names its start'),
  spec('tool.completed', 'required', 'none', true, 'a tool call ended; ref names its start'),
  spec('tool.failed', 'required', 'required', true, 'a tool call failed; ref names its start'),
  spec(
    'decision',
    'required',
    'none',
    false,
    'how a pending effect was resolved (#36): input {effect, resolution, result?}, meta {by, reason}; ref names the pending effect',
  ),
  spec(
    'approval.requested',
    'any',
    'none',
    true,
    'a tool call presented for approval (spec/APPROVALS.md §2): input {presented: {name, arguments}, digest, expires_at}',
  ),
  spec(
    'approval.granted',
    'required',
    'none',
    true,
    'an approval of a request (APPROVALS.md §3): ref names the request; input is the signed statement, meta {approver, signature}',
  ),
  spec(
    'approval.denied',
    'required',
    'none',
    true,
    'a refusal of a request (APPROVALS.md §3): as approval.granted, with decision "denied"',
  ),
  spec(
    'erasure',
    'none',
    'none',
    true,
    'an erasure of a committed unit (#40): input {target, path, digest, reason, by}, cross-checked against the sealed record it names (ERASURE.md §5)',
  ),
];

export const KINDS_BY_NAME: ReadonlyMap<string, KindSpec> = new Map(KIND_REGISTRY.map((k) => [k.kind, k]));

/** Whether a value is a well-formed kind name (registered or not). */
export function isKindName(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_KIND_LENGTH && KIND_PATTERN.test(v);
}

/** The member rule of `kind`: a well-formed name. Registration is not a rule: an unknown kind is a notice. */
export function kindRule(text: string, start: number, end: number): RuleViolation | null {
  return isKindName(canonicalValue(text, start, end))
    ? null
    : {
        message: `kind must be a dotted lowercase name (${KIND_PATTERN.source}, at most ${MAX_KIND_LENGTH} characters), such as "tool.started" or "x.com.example.audit"`,
      };
}

/** What a verifier says about a well-formed kind: checked, registered but unchecked, or unknown. */
export function kindStatus(kind: string): 'checked' | 'unchecked' | 'unknown' {
  const s = KINDS_BY_NAME.get(kind);
  return s === undefined ? 'unknown' : s.checked ? 'checked' : 'unchecked';
}
