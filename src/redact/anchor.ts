/**
 * The published receipt's extension members (spec/REDACTION.md §6): the `anchor` block, which binds the
 * re-chained steps to the original run without revealing any hash a reader could test guesses against,
 * and the `redactions` list, which declares every marker. Shape checks for the receipt verifier's
 * extension hook (a shape violation is MANIFEST_INVALID, §7 step 1), and the types the publisher writes.
 * Pure.
 */
import { isDigest } from '../canonical/sha256.js';
import { hasExactMembers, isObject, isSeq, type Json } from '../canonical/json.js';
import { isValidId } from '../record/fields.js';
import { REDACTABLE_MEMBERS, genesisHash } from '../record/formats.js';
import type { ChainSource } from '../chain/source.js';
import { parsePointer } from '../canonical/pointer.js';
import { saltFromHex, stepCommitment } from './commit.js';

export const REDACTION_FORMAT = 'stepchain-redaction/v2';
/**
 * Anchor formats this verifier refuses, and why (spec/REDACTION.md §11). Version 1 listed the original
 * step hashes unsalted: with every other member of a record public, anyone could rebuild a redacted record
 * with guessed values and compare hashes.
 */
export const WITHDRAWN_FORMATS: Readonly<Record<string, string>> = {
  'stepchain-redaction/v1':
    'anchors of format "stepchain-redaction/v1" are withdrawn: they list the original step hashes unsalted, which lets any reader test guesses of the redacted values; ask the publisher to publish again with this version (and withdraw the old receipt)',
};

export interface AnchorBlock {
  /**
   * Salted step commitments (commit.ts) to the original step hashes of steps redacted_from..length−1, in
   * seq order; the last one commits to the original head. Empty when nothing was redacted.
   */
  commitments: string[];
  format: typeof REDACTION_FORMAT;
  /** The original journal's genesis hash (the published receipt carries the same genesis object). */
  genesis_hash: string;
  /** Number of steps in the original chain (head.seq + 1: a published receipt covers the whole journal). */
  length: number;
  /** digest(UTF-8(JCS(policy))). */
  policy_digest: string;
  /**
   * The first seq with a redaction (length when none). Steps before it are published unchanged, so their
   * published step hashes are the original ones; every original hash from it on depends on a redacted
   * value and appears only as a salted commitment.
   */
  redacted_from: number;
}

/** The private opening of one step commitment: the original step hash and its salt (hex). */
export interface StepOpening {
  salt: string;
  seq: number;
  step_hash: string;
}

export interface Declaration {
  seq: number;
  path: string;
  rule: string;
}

const ANCHOR_MEMBERS = ['commitments', 'format', 'genesis_hash', 'length', 'policy_digest', 'redacted_from'];

/** Why `value` is not an anchor block, judged from the block alone (§6.2), or null. */
export function anchorDefect(value: unknown): string | null {
  if (
    isObject(value) &&
    typeof value.format === 'string' &&
    Object.prototype.hasOwnProperty.call(WITHDRAWN_FORMATS, value.format)
  )
    return WITHDRAWN_FORMATS[value.format]!;
  if (!isObject(value) || !hasExactMembers(value, ANCHOR_MEMBERS))
    return `anchor must be {${ANCHOR_MEMBERS.map((m) => JSON.stringify(m)).join(',')}} and nothing else`;
  if (value.format !== REDACTION_FORMAT)
    return `anchor.format is ${JSON.stringify(value.format)}; this verifier reads ${JSON.stringify(REDACTION_FORMAT)}`;
  if (!isDigest(value.genesis_hash)) return 'anchor.genesis_hash must be a digest';
  if (!isDigest(value.policy_digest)) return 'anchor.policy_digest must be a digest';
  if (!isSeq(value.length) || value.length < 1) return 'anchor.length must be a positive integer';
  if (!isSeq(value.redacted_from) || value.redacted_from > value.length)
    return `anchor.redacted_from must be an integer from 0 to anchor.length (${value.length})`;
  const c = value.commitments;
  const want = value.length - value.redacted_from;
  if (!Array.isArray(c) || c.length !== want)
    return `anchor.commitments must hold exactly anchor.length − anchor.redacted_from (${want}) step commitments`;
  for (let i = 0; i < c.length; i++) if (!isDigest(c[i])) return `anchor.commitments[${i}] is not a digest`;
  return null;
}

/** Compares declarations in their required order: by seq, then by path in UTF-16 order. */
export function compareDeclarations(a: Declaration, b: Declaration): number {
  return a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** Why `value` is not a redactions list (§6.3), or null. */
export function redactionsDefect(value: unknown): string | null {
  if (!Array.isArray(value)) return 'redactions must be an array';
  let prev: Declaration | null = null;
  for (let i = 0; i < value.length; i++) {
    const d = value[i] as unknown;
    if (
      !isObject(d) ||
      !hasExactMembers(d, ['path', 'rule', 'seq']) ||
      !isSeq(d.seq) ||
      typeof d.path !== 'string' ||
      !isValidId(d.rule)
    ) {
      return `redactions[${i}] must be {"path": <JSON Pointer>, "rule": <id>, "seq": <seq>}`;
    }
    let tokens: string[];
    try {
      tokens = parsePointer(d.path);
    } catch {
      return `redactions[${i}].path is not a JSON Pointer`;
    }
    if (tokens.length === 0 || !REDACTABLE_MEMBERS.has(tokens[0]!))
      return `redactions[${i}].path must point into a content field or meta`;
    const decl = d as unknown as Declaration;
    if (prev && compareDeclarations(prev, decl) >= 0)
      return `redactions[${i}] is out of order or repeated: declarations are sorted by seq, then path`;
    prev = decl;
  }
  return null;
}

/** The manifest members a publisher adds (both are required in a published receipt). */
export interface PublishedExtras {
  anchor: AnchorBlock;
  redactions: Declaration[];
}

export function extrasToJson(x: PublishedExtras): Record<string, Json> {
  return { anchor: x.anchor as unknown as Json, redactions: x.redactions as unknown as Json };
}

/**
 * Differences `compareAnchor` lists before it stops reading the journal: an anchor held against the wrong
 * journal, or a secrets file of another publication, differs at every step, and a list of 200 000 sentences
 * says no more than its first few. The list then ends with a sentence saying where comparison stopped, so a
 * caller never takes the first 20 differences for all of them.
 */
export const MAX_ANCHOR_DIFFERENCES = 20;

/**
 * Compares an anchor block with the original journal (someone who holds it and the step openings of the
 * secrets file: the publisher, an auditor given both). Checks the genesis hash, the length, and that every
 * step commitment opens to the journal's step hash with the opening's salt. Steps before redacted_from are
 * not in the anchor: the published chain carries their original hashes. Returns the differences as
 * sentences; empty when the anchor is true of that journal. Once MAX_ANCHOR_DIFFERENCES are found (the
 * genesis hash counts), no further line is read: the last sentence then names the first step not compared.
 */
export async function compareAnchor(
  source: ChainSource,
  anchor: AnchorBlock,
  openings: readonly { seq: number; salt: string }[],
): Promise<string[]> {
  const out: string[] = [];
  if (genesisHash(source.genesis) !== anchor.genesis_hash)
    out.push(`the journal's genesis hash is ${genesisHash(source.genesis)}, the anchor's ${anchor.genesis_hash}`);
  const salts = new Map(openings.map((o) => [o.seq, saltFromHex(o.salt)]));
  let seq = 0;
  for await (const line of source.lines({ from: 0 })) {
    if (out.length >= MAX_ANCHOR_DIFFERENCES) {
      out.push(`stopped after ${out.length} differences: steps ${seq} on and the journal's length were not compared`);
      return out;
    }
    const at = seq - anchor.redacted_from;
    if (at >= 0 && at < anchor.commitments.length) {
      let hash: unknown = null;
      try {
        hash = (JSON.parse(line.text) as { step_hash?: unknown }).step_hash;
      } catch {
        hash = null;
      }
      const salt = salts.get(seq);
      if (!salt) out.push(`step ${seq}: no opening (salt) for its commitment`);
      else if (!isDigest(hash)) out.push(`step ${seq}: the journal's line has no readable step_hash`);
      else if (stepCommitment(salt, hash) !== anchor.commitments[at])
        out.push(`step ${seq}: the anchor's commitment does not open to the journal's step hash ${hash}`);
    }
    seq++;
  }
  if (seq !== anchor.length)
    out.push(
      `the journal has ${seq} steps, the anchor ${anchor.length}${seq > anchor.length ? ' (it has grown since publishing)' : ''}`,
    );
  return out;
}
