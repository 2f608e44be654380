/**
 * The published receipt's extension members (spec/REDACTION.md §6): the `anchor` block, which binds the
 * re-chained steps to the original run, and the `redactions` list, which declares every marker. Shape
 * checks for the receipt verifier's extension hook, and the types the publisher writes. Pure.
 */
import { isDigest } from '../canonical/sha256.js';
import { genesisHash, isValidId, type Json } from '../chain/record.js';
import type { ChainSource } from '../chain/source.js';
import { parsePointer } from '../canonical/pointer.js';

export const REDACTION_FORMAT = 'stepchain-redaction/v1';
/** Content fields and meta: the only top-level members a redaction may stand in. */
const REDACTABLE_TOP = new Set(['input', 'meta', 'model', 'prompt', 'result', 'tool_call']);

export interface AnchorBlock {
  format: typeof REDACTION_FORMAT;
  /** The original journal's genesis hash (the published receipt carries the same genesis object). */
  genesis_hash: string;
  /** The original chain's head. */
  head: { seq: number; step_hash: string };
  /** Number of steps in the original chain (head.seq + 1: a published receipt covers the whole journal). */
  length: number;
  /** digest(UTF-8(JCS(policy))). */
  policy_digest: string;
  /** The original step_hash of every step, by seq. */
  steps: string[];
}

export interface Declaration {
  seq: number;
  path: string;
  rule: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const keysAre = (o: Record<string, unknown>, keys: string[]): boolean => {
  const k = Object.keys(o).sort();
  return k.length === keys.length && k.every((x, i) => x === keys[i]);
};

/** Why `value` is not an anchor block, or null. */
export function anchorDefect(value: unknown): string | null {
  if (!isObject(value) || !keysAre(value, ['format', 'genesis_hash', 'head', 'length', 'policy_digest', 'steps'])) {
    return 'anchor must be {"format","genesis_hash","head","length","policy_digest","steps"} and nothing else';
  }
  if (value.format !== REDACTION_FORMAT) return `anchor.format is ${JSON.stringify(value.format)}; this verifier reads ${JSON.stringify(REDACTION_FORMAT)}`;
  if (!isDigest(value.genesis_hash)) return 'anchor.genesis_hash must be a digest';
  if (!isDigest(value.policy_digest)) return 'anchor.policy_digest must be a digest';
  const h = value.head;
  if (!isObject(h) || !keysAre(h, ['seq', 'step_hash']) || !isSeq(h.seq) || !isDigest(h.step_hash)) return 'anchor.head must be {"seq": <seq>, "step_hash": <digest>}';
  if (!isSeq(value.length) || value.length < 1) return 'anchor.length must be a positive integer';
  if (h.seq !== value.length - 1) return `anchor.head.seq ${h.seq} is not anchor.length − 1 (${value.length - 1})`;
  const steps = value.steps;
  if (!Array.isArray(steps) || steps.length !== value.length) return `anchor.steps must list exactly anchor.length (${String(value.length)}) step hashes`;
  for (let i = 0; i < steps.length; i++) if (!isDigest(steps[i])) return `anchor.steps[${i}] is not a digest`;
  if (steps[steps.length - 1] !== h.step_hash) return 'anchor.head.step_hash is not the last of anchor.steps';
  return null;
}

/** Compares declarations in their required order: by seq, then by path in UTF-16 order. */
export function compareDeclarations(a: Declaration, b: Declaration): number {
  return a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

/** Why `value` is not a redactions list, or null. `maxSeq`: the last seq a declaration may name, if known. */
export function redactionsDefect(value: unknown): string | null {
  if (!Array.isArray(value)) return 'redactions must be an array';
  let prev: Declaration | null = null;
  for (let i = 0; i < value.length; i++) {
    const d = value[i] as unknown;
    if (!isObject(d) || !keysAre(d, ['path', 'rule', 'seq']) || !isSeq(d.seq) || typeof d.path !== 'string' || !isValidId(d.rule)) {
      return `redactions[${i}] must be {"path": <JSON Pointer>, "rule": <id>, "seq": <seq>}`;
    }
    let tokens: string[];
    try {
      tokens = parsePointer(d.path);
    } catch {
      return `redactions[${i}].path is not a JSON Pointer`;
    }
    if (tokens.length === 0 || !REDACTABLE_TOP.has(tokens[0]!)) return `redactions[${i}].path must point into a content field or meta`;
    const decl = d as unknown as Declaration;
    if (prev && compareDeclarations(prev, decl) >= 0) return `redactions[${i}] is out of order or repeated: declarations are sorted by seq, then path`;
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
 * Compares an anchor block with the original journal (someone who holds it: the publisher, an auditor
 * given access). Returns the differences as sentences; empty when the anchor is true of that journal.
 */
export async function compareAnchor(source: ChainSource, anchor: AnchorBlock): Promise<string[]> {
  const out: string[] = [];
  if (genesisHash(source.genesis) !== anchor.genesis_hash) out.push(`the journal's genesis hash is ${genesisHash(source.genesis)}, the anchor's ${anchor.genesis_hash}`);
  let seq = 0;
  for await (const line of source.lines({ from: 0 })) {
    let hash: string | null = null;
    try {
      const v = (JSON.parse(line.text) as { step_hash?: unknown }).step_hash;
      hash = isDigest(v) ? v : null;
    } catch {
      hash = null;
    }
    if (seq < anchor.steps.length && hash !== anchor.steps[seq]) out.push(`step ${seq}: the journal's step_hash is ${hash ?? 'unreadable'}, the anchor's ${anchor.steps[seq]}`);
    seq++;
    if (out.length >= 20) return out;
  }
  if (seq !== anchor.length) out.push(`the journal has ${seq} steps, the anchor ${anchor.length}${seq > anchor.length ? ' (it has grown since publishing)' : ''}`);
  return out;
}
