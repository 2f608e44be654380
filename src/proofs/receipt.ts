/**
 * Receipts with transparency proofs (spec/RECEIPT.md §4.5, spec/PROOFS.md §9.8): the manifest member
 * `proof` — a signed checkpoint and the inclusion proof of the receipt's range in its tree — checked as
 * the receipt is read (an `onLine` observer collects the leaves of the verified lines) and at its end (a
 * `finish`): the checkpoint against a policy, its origin against the receipt's genesis, the range against
 * the root; and, given an earlier checkpoint the auditor trusts, that the receipt's tree extends it.
 * Every byte is hostile: nothing here throws on input. Pure; runs in a browser.
 */
import { pinHeld, settleVerdict } from '../chain/verdict.js';
import { genesisHash } from '../record/formats.js';
import type { VerifiedLine } from '../chain/verifier.js';
import { base64Decode, base64Encode } from '../receipt/base64.js';
import {
  verifyReceipt,
  type ByteInput,
  type ReceiptProblemCode,
  type ReceiptReport,
  type VerifyReceiptOptions,
} from '../receipt/verify.js';
import {
  parseCheckpoint,
  verifyCheckpoint,
  type Checkpoint,
  type CheckpointPolicy,
  type Cosignature,
} from './checkpoint.js';
import { verifyProofDocument } from './document.js';
import { HASH_SIZE, equalBytes, stepLeafHash } from './hash.js';
import { TreeFrontier } from './frontier.js';
import { parseNote } from './note.js';
import { parseJournalOrigin } from './origin.js';
import { ProofError, problem, type ProofProblem, type ProofProblemCode } from './problems.js';
import { treeRoot, type NodeReader } from './nodes.js';
import { proveInclusion } from './prove.js';
import { verifyRange } from './verify.js';
import type { TreeHead } from './witness.js';

/** The manifest member: `{"checkpoint": <signed note>, "hashes": [<base64>, …]}`. */
export interface ReceiptProofMember {
  checkpoint: string;
  hashes: string[];
}

export const PROOF_MEMBER = 'proof';

export interface ReceiptProofOptions {
  /** The log key (and witnesses, quorum) the receipt's checkpoint must satisfy. Without it the checkpoint is only parsed. */
  policy?: CheckpointPolicy;
  /**
   * An earlier checkpoint the auditor holds: what the receipt shows must extend it. Given with `policy`, the
   * caller MUST have verified its note against that policy (witnesses too): the verdict then counts it as a
   * pin that held (spec/RECEIPT.md §8.1 item 4). Without `policy` it is used for consistency only.
   */
  trusted?: TreeHead;
  /** A consistency proof file from `trusted` to the receipt's checkpoint, for a receipt that cannot show it alone. */
  consistency?: string | Uint8Array;
}

/** What the proofs part of a report says. */
export interface ReceiptProofReport {
  /** The receipt's checkpoint, when it carries one that parsed. */
  checkpoint: { origin: string; size: number; root: string } | null;
  /** Whether the checkpoint's signature was checked against a pinned log key (and quorum). */
  pinned: boolean;
  cosignatures: Cosignature[];
  /** The earlier checkpoint the receipt was shown to extend, or null. */
  extends: { origin: string; size: number; root: string } | null;
}

/** A report of a receipt with a `proof` member or verified against an earlier checkpoint (otherwise `tlog` is absent). */
export type ProvenReceiptReport = ReceiptReport<ReceiptProblemCode | ProofProblemCode> & { tlog?: ReceiptProofReport };

/** Why a `proof` member is malformed, or null. */
export function proofMemberDefect(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'proof is not an object';
  const keys = Object.keys(v).sort();
  if (keys.length !== 2 || keys[0] !== 'checkpoint' || keys[1] !== 'hashes')
    return 'proof must have exactly the members checkpoint and hashes';
  const m = v as Record<string, unknown>;
  if (typeof m.checkpoint !== 'string' || !parseNote(m.checkpoint).ok) return 'proof.checkpoint is not a signed note';
  if (!Array.isArray(m.hashes) || m.hashes.length > 106) return 'proof.hashes is not a list of at most 106 hashes';
  for (const [i, h] of m.hashes.entries()) {
    const b = typeof h === 'string' ? base64Decode(h) : null;
    if (b?.length !== HASH_SIZE) return `proof.hashes[${i}] is not the base64 of 32 bytes`;
  }
  return null;
}

/** The manifest member for steps from..to against a signed checkpoint, with the proof's hashes. */
export function receiptProofMember(checkpoint: string, proof: readonly Uint8Array[]): ReceiptProofMember {
  return { checkpoint, hashes: proof.map(base64Encode) };
}

/** The genesis hash of the receipt's genesis (for a partial receipt too: the manifest carries the genesis). */
function receiptGenesisHash(report: ReceiptReport): string | null {
  try {
    return report.genesis ? genesisHash(report.genesis) : null;
  } catch {
    return null;
  }
}

/**
 * The `proof` member for steps from..to against a signed checkpoint of the tree behind `reader`. Throws
 * ProofError ARGUMENT_INVALID when the checkpoint is not of that tree (another root at its size) or does
 * not hold the range: a writer never ships a proof that cannot verify.
 */
export async function proveReceiptRange(
  reader: NodeReader,
  note: string,
  from: number,
  to: number,
): Promise<ReceiptProofMember> {
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.note.text) : null;
  if (!cp?.ok) throw new ProofError('ARGUMENT_INVALID', 'the checkpoint is not a signed checkpoint note');
  if (to >= cp.checkpoint.size)
    throw new ProofError(
      'ARGUMENT_INVALID',
      `steps ${from}..${to} are not in the checkpoint's ${cp.checkpoint.size} steps`,
      { hint: 'sign a newer checkpoint, or export a range that ends before its size' },
    );
  if (!equalBytes(await treeRoot(reader, cp.checkpoint.size), cp.checkpoint.root)) {
    throw new ProofError(
      'ARGUMENT_INVALID',
      `the checkpoint's root is not this journal's root at size ${cp.checkpoint.size}: it is of another journal, or this one was rewritten`,
    );
  }
  return receiptProofMember(note, await proveInclusion(reader, from, to, cp.checkpoint.size));
}

const b64 = (b: Uint8Array): string => base64Encode(b);
const head = (c: {
  origin: string;
  size: number;
  root: Uint8Array;
}): { origin: string; size: number; root: string } => ({ origin: c.origin, size: c.size, root: b64(c.root) });

/**
 * Hooks for `verifyReceipt` that understand the `proof` member and check an earlier checkpoint. Pass
 * `options` to verifyReceipt; its `finish` returns the report with the proofs' problems and `tlog`.
 */
export function receiptProofHooks(options: ReceiptProofOptions = {}): {
  extensions: Record<string, (value: unknown) => string | null>;
  onLine: (line: VerifiedLine) => void;
  finish: <R extends ReceiptReport>(report: R) => R & { tlog?: ReceiptProofReport };
} {
  const checks = new ProofChecks(options ?? {});
  return {
    extensions: { [PROOF_MEMBER]: (v) => checks.member(v) },
    onLine: (line) => checks.line(line),
    finish: (report) => checks.finish(report),
  };
}

class ProofChecks {
  private member_: ReceiptProofMember | null = null;
  private leaves: Uint8Array[] = [];
  /** Leaves 0.. of a complete receipt, folded as they come: the root at the trusted size without keeping them. */
  private readonly prefix = new TreeFrontier();
  private prefixRoot: Uint8Array | null = null;
  private broken = false;
  private nextSeq: number | null = null;

  constructor(private readonly options: ReceiptProofOptions) {}

  member(v: unknown): string | null {
    const why = proofMemberDefect(v);
    if (!why) this.member_ = v as ReceiptProofMember;
    return why;
  }

  /** Each verified line, in order: its leaf. A line that did not verify gives no leaf (PROOFS.md §9.7). */
  line(l: VerifiedLine): void {
    if (this.broken) return;
    const leaf = l.clean && l.step_hash !== null ? stepLeafHash(l.step_hash) : null;
    if (leaf === null || l.seq === null || (this.nextSeq !== null && l.seq !== this.nextSeq)) {
      this.broken = true;
      return;
    }
    this.nextSeq = l.seq + 1;
    if (this.member_) this.leaves.push(leaf);
    const trusted = this.options.trusted;
    if (trusted && l.seq === this.prefix.size && this.prefix.size < trusted.size) {
      this.prefix.append(leaf);
      if (this.prefix.size === trusted.size) this.prefixRoot = this.prefix.root();
    }
  }

  /** Adds the proofs' problems and `tlog`; a receipt without the member, verified without an earlier checkpoint, is returned unchanged. */
  finish<R extends ReceiptReport>(report: R): R & { tlog?: ReceiptProofReport } {
    if (!this.member_ && !this.options.trusted) return report;
    const tlog: ReceiptProofReport = { checkpoint: null, pinned: false, cosignatures: [], extends: null };
    const out = report as R & { tlog: ReceiptProofReport };
    out.tlog = tlog;
    const problems: ProofProblem[] = [];
    const verified = this.member_ ? this.checkMember(report, tlog, problems) : null;
    if (this.options.trusted) this.checkExtends(report, verified, tlog, problems);
    if (problems.length > 0) {
      report.problems.push(
        ...problems.map((p) => ({ code: p.code, message: p.message, location: { path: `/${PROOF_MEMBER}` } })),
      );
      report.ok = false;
      report.proves = [];
    } else if (report.ok) {
      if (tlog.checkpoint && tlog.pinned) {
        // The pinned checkpoint ties the range to the log's tree: what a bare partial receipt cannot show.
        report.does_not_prove = report.does_not_prove.filter(
          (s) => !/^That (steps 0–\d+ exist|step 0 exists|these steps belong|this step belongs)\b/.test(s),
        );
        report.does_not_prove.push(
          `That the log showed the same tree to everyone: that is what witness cosignatures (a quorum in the policy) attest, and ${tlog.cosignatures.length} counted`,
        );
      }
      if (tlog.checkpoint) {
        report.proves.push(
          `steps ${report.range!.from}..${report.range!.to} are in the tree of ${tlog.checkpoint.origin} at size ${tlog.checkpoint.size}${tlog.pinned ? `, whose checkpoint is signed by the pinned log key${tlog.cosignatures.length ? ` and cosigned by ${tlog.cosignatures.map((c) => c.name).join(', ')}` : ''}` : ''}`,
        );
        if (!tlog.pinned)
          report.does_not_prove.push(
            'who signed the checkpoint: no log key was pinned, so the inclusion proof shows only that the receipt agrees with the checkpoint it carries',
          );
      }
      if (tlog.extends)
        report.proves.push(
          `it extends the earlier checkpoint of size ${tlog.extends.size}: no step of that tree was changed, removed or reordered`,
        );
      this.pinsHeld(report, tlog);
    }
    return settleVerdict(out, 'receipt');
  }

  /**
   * The checkpoints that authenticate the receipt (chain/verdict.ts): its own, verified against the pinned
   * log key and witness policy; or the earlier one it extends, which the caller verified against that
   * policy (`trusted` with `policy`: the CLI's --checkpoint and the page's refuse one that fails it).
   */
  private pinsHeld(report: ReceiptReport, tlog: ReceiptProofReport): void {
    const policy = this.options.policy;
    if (!policy) return;
    const quorum = policy.quorum ?? 0;
    const witnesses =
      quorum > 0 ? ` and cosigned by ${tlog.cosignatures.length} of the pinned witnesses (quorum ${quorum})` : '';
    if (tlog.checkpoint && tlog.pinned) {
      pinHeld(
        report,
        `steps ${report.range!.from}..${report.range!.to} are in the checkpoint of ${tlog.checkpoint.origin} at size ${tlog.checkpoint.size}, signed by the log key you pinned${witnesses}`,
      );
    } else if (tlog.extends && tlog.extends.size > 0) {
      const t = tlog.extends;
      pinHeld(
        report,
        `steps 0..${t.size - 1} have the root of the earlier checkpoint you pinned (${t.origin}, size ${t.size}), signed by the log key you pinned${t.size - 1 < report.range!.to ? `; steps ${t.size}..${report.range!.to} only extend it` : ''}`,
      );
    }
  }

  /** The member's checkpoint (against the policy when there is one), its origin, and the range proof. */
  private checkMember(report: ReceiptReport, tlog: ReceiptProofReport, problems: ProofProblem[]): Checkpoint | null {
    const m = this.member_!;
    let cp: Checkpoint | null;
    if (this.options.policy) {
      const v = verifyCheckpoint(m.checkpoint, this.options.policy);
      problems.push(...v.problems);
      cp = v.checkpoint;
      tlog.pinned = v.ok;
      tlog.cosignatures = v.cosignatures;
    } else {
      const note = parseNote(m.checkpoint);
      const parsed = note.ok ? parseCheckpoint(note.note.text) : null;
      if (parsed && !parsed.ok) problems.push(parsed.problem);
      cp = parsed?.ok ? parsed.checkpoint : null;
    }
    if (cp === null) return null;
    tlog.checkpoint = head(cp);
    const origin = parseJournalOrigin(cp.origin);
    const genesis = receiptGenesisHash(report);
    if (origin === null)
      problems.push(
        problem(
          'ORIGIN_MISMATCH',
          `the checkpoint's origin "${cp.origin.slice(0, 300)}" is not a journal origin (PROOFS.md §8.5)`,
        ),
      );
    else if (genesis !== null && origin.genesisHash !== genesis)
      problems.push(
        problem(
          'ORIGIN_MISMATCH',
          `the checkpoint is of a journal with genesis ${origin.genesisHash}, the receipt's is ${genesis}`,
        ),
      );
    const range = report.range;
    if (!range || this.broken || this.leaves.length !== range.to - range.from + 1) return cp; // the chain's problems say why
    const proof = m.hashes.map((h) => base64Decode(h)!);
    const v = verifyRange({ from: range.from, to: range.to, size: cp.size, leaves: this.leaves, proof, root: cp.root });
    if (!v.ok) problems.push(v.problem);
    return v.ok ? cp : null;
  }

  /** That what the receipt shows extends the trusted checkpoint; never falls back to "not pinned". */
  private checkExtends(
    report: ReceiptReport,
    cp: Checkpoint | null,
    tlog: ReceiptProofReport,
    problems: ProofProblem[],
  ): void {
    const trusted = this.options.trusted!;
    const range = report.range;
    if (!range) return; // the receipt itself did not read: its problems say so
    const origin = parseJournalOrigin(trusted.origin);
    if (origin?.genesisHash !== receiptGenesisHash(report) || (cp && cp.origin !== trusted.origin)) {
      problems.push(
        problem(
          'ORIGIN_MISMATCH',
          `the earlier checkpoint is of "${trusted.origin.slice(0, 300)}", not of this receipt's journal`,
        ),
      );
      return;
    }
    const shown = range.to + 1;
    // A complete receipt holds every leaf up to its head: the root at the trusted size is computed here.
    if (range.from === 0 && trusted.size <= shown && !this.broken) {
      const root = this.prefixRoot ?? (trusted.size === 0 ? this.prefix.root() : null);
      if (root === null) return;
      if (!equalBytes(root, trusted.root)) {
        problems.push(
          trusted.size === shown
            ? problem(
                'FORKED',
                `the receipt's ${shown} steps and the earlier checkpoint of size ${trusted.size} have different roots: two histories of the same size (a fork)`,
              )
            : problem(
                'INCONSISTENT',
                `steps 0..${trusted.size - 1} of the receipt do not have the earlier checkpoint's root: the journal was rewritten after it`,
              ),
        );
      } else tlog.extends = head(trusted);
      return;
    }
    if (trusted.size > shown && (!cp || cp.size < trusted.size)) {
      problems.push(
        problem(
          'SIZE_DECREASED',
          `the earlier checkpoint has ${trusted.size} steps, the receipt shows ${cp ? cp.size : shown}: the journal was truncated, or the receipt stops early`,
        ),
      );
      return;
    }
    if (!cp) {
      problems.push(
        problem(
          'CONSISTENCY_UNPROVEN',
          'a partial receipt without a verified checkpoint cannot be shown to extend the earlier checkpoint',
        ),
      );
      return;
    }
    // Equal sizes need no proof (PROOFS.md §9.8 step 2.3): the same root is the same tree, another root a fork.
    if (cp.size === trusted.size && !equalBytes(cp.root, trusted.root)) {
      problems.push(
        problem(
          'FORKED',
          `the receipt's checkpoint and the earlier one both have size ${cp.size} but different roots: the log showed two histories (a fork)`,
        ),
      );
      return;
    }
    if (cp.size === trusted.size && this.options.consistency === undefined) {
      tlog.extends = head(trusted);
      return;
    }
    if (this.options.consistency === undefined) {
      problems.push(
        problem(
          'CONSISTENCY_UNPROVEN',
          `no consistency proof from size ${trusted.size} to the receipt's checkpoint (size ${cp.size}) was given`,
        ),
      );
      return;
    }
    const policy = this.options.policy ?? null;
    if (!policy) {
      problems.push(
        problem('CONSISTENCY_UNPROVEN', 'a consistency proof is checked against a pinned log key, and none was given'),
      );
      return;
    }
    const v = verifyProofDocument(this.options.consistency, { log: policy.log }, { trusted });
    problems.push(...v.problems);
    if (
      v.ok &&
      v.checkpoint &&
      (v.type !== 'consistency' || v.checkpoint.size !== cp.size || !equalBytes(v.checkpoint.root, cp.root))
    ) {
      problems.push(
        problem(
          'INCONSISTENT',
          `the consistency proof ends at size ${v.checkpoint.size}, not at the receipt's checkpoint (size ${cp.size}) with its root`,
        ),
      );
      return;
    }
    if (v.ok) tlog.extends = head(trusted);
  }
}

/**
 * verifyReceipt with the proofs checks added to any other hooks the caller passes (a published receipt's):
 * extensions merged, both observers called, the caller's finish first, then the proofs'. Never throws.
 */
export async function verifyProvenReceipt<R extends ReceiptReport = ReceiptReport<ReceiptProblemCode>>(
  input: ByteInput,
  proofs: ReceiptProofOptions = {},
  options: VerifyReceiptOptions<R> = {},
): Promise<R & { tlog?: ReceiptProofReport }> {
  const hooks = receiptProofHooks(proofs);
  const base = options ?? {};
  const report = await verifyReceipt<R>(input, {
    ...base,
    extensions: { ...(base.extensions ?? {}), ...hooks.extensions },
    onLine: (line) => {
      base.onLine?.(line);
      hooks.onLine(line);
    },
    finish: (r, reading) => (base.finish ? base.finish(r, reading) : (r as unknown as R)),
  });
  return hooks.finish(report);
}
