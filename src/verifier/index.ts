/**
 * The one receipt verifier (issue 38): archive bytes in, one report out. It reads from the manifest what
 * the receipt carries and runs every check for it — the receipt itself (spec/RECEIPT.md §7), a publication
 * (spec/REDACTION.md §7: anchor, declarations, public parts), a transparency-log proof (spec/PROOFS.md:
 * the `proof` member, an earlier checkpoint), time-stamp tokens and co-signatures (spec/TIME.md), and
 * approvals (spec/APPROVALS.md) — so a receipt that is published and proven and attested at once gets all
 * of them. The CLI's `verify`, the page and the library all call this; nobody composes hooks by hand.
 *
 * Each kind of check is always armed: its members are understood whether or not the receipt has them,
 * and a check with nothing to look at leaves the report unchanged (an ordinary receipt's report is the
 * receipt verifier's). The report's optional sections say what was found: publication members
 * (`anchor`, `publication`, `redactions`, `unbound`) for a published receipt, `tlog` for a proven one,
 * `attest` for time stamps and co-signatures, `approvals` for a run with approvals.
 *
 * Never throws on the receipt's bytes: every failure is a Problem with a stable code. Pure — no Node-only
 * imports — so it runs in a browser.
 */
import type { PinnedApprover } from '../approval/ledger.js';
import { receiptAttestHooks, type AttestReport, type Cosigner } from '../attest/receipt.js';
import type { TsaCertificate } from '../attest/tsp.js';
import type { LineCheckPool } from '../chain/batch.js';
import { settleVerdict } from '../chain/verdict.js';
import type { VerifiedLine } from '../chain/verifier.js';
import type { CheckpointPolicy, TreeHead } from '../proofs/index.js';
import { receiptProofHooks, type ReceiptProofReport } from '../proofs/receipt.js';
import type { ByteInput } from '../receipt/inflate.js';
import { verifyReceipt as readReceipt, type EntryHasher, type ReceiptReport } from '../receipt/verify.js';
import { publishedReceiptHooks, type PublishedReport } from '../redact/verify.js';
import { ShownDigests } from '../redact/v3-approval-digest.js';
import { checkPins, type OptionProblem } from './options.js';

/** What the caller requires beyond a receipt that verifies (each unmet one is a REQUIREMENT_UNMET problem). */
export interface ReceiptRequirements {
  /** A pin must have held (a key, a head, a log key): the verdict must be 'authenticated', not only 'intact'. */
  authenticated?: boolean;
  /** The receipt must be a publication (carry an anchor or a publication block). */
  published?: boolean;
  /** The receipt must carry a transparency-log proof (a `proof` member). */
  proven?: boolean;
  /** The receipt must carry time-stamp tokens. */
  timestamped?: boolean;
  /** The receipt must carry co-signatures that met the threshold of the pinned co-signers. */
  cosigned?: boolean;
}

/** The one options object: every pin and requirement the receipt can be held to, all optional. */
export interface ReceiptVerifyOptions {
  /**
   * The receipt's pinned signing key (spec/RECEIPT.md §5.2): 32 raw bytes, or text (base64 of them, or an
   * SPKI PEM). A key that is given but unusable is KEY_MISMATCH: a pin never falls back to "unpinned".
   */
  publicKey?: Uint8Array | string;
  /** A head step_hash obtained independently: the receipt's head must equal it. */
  expectHead?: string;
  /** The log's key, witnesses and quorum (parseVerifierKey): the receipt's checkpoint must satisfy them. */
  log?: CheckpointPolicy;
  /**
   * An earlier checkpoint the auditor holds: what the receipt shows must extend it. With `log`, the caller
   * must have verified its note against that policy (parseCheckpoint + verifyCheckpoint): it then counts as
   * a pin that held.
   */
  checkpoint?: TreeHead;
  /** A consistency proof from `checkpoint` to the receipt's checkpoint, for a receipt that cannot show it alone. */
  consistencyProof?: string | Uint8Array;
  /** Pinned TSA certificates (parseTsaCertificate): every carried time-stamp token must verify against one. */
  tsaCerts?: TsaCertificate[];
  /** Pinned co-signers: the keys whose co-signatures count. */
  cosigners?: Cosigner[];
  /** How many of the pinned co-signers must have signed (default: all of them). */
  threshold?: number;
  /** Pinned approvers (spec/APPROVALS.md §5): a decision by another key is APPROVER_UNKNOWN. */
  approvers?: readonly PinnedApprover[];
  /** What the receipt must be beyond valid. */
  require?: ReceiptRequirements;
  /** Keep at most this many problems (default 1000). */
  maxProblems?: number;
  /** Runs the chain's per-line checks on these threads (`createLineCheckPool`); the report is the same. */
  pool?: LineCheckPool;
  /** Hashes each chain entry's bytes where the caller chooses (the page: a second Web Worker); the report is the same. */
  entryHasher?: () => EntryHasher;
  /** Observes every verified chain line (for a step list, run notes). */
  onLine?: (line: VerifiedLine) => void;
  /** Observes every canonical blob: its digest and text. */
  onBlob?: (digest: string, text: string) => void;
}

/** The publication members of a report (spec/REDACTION.md §7), present when the receipt is published. */
export type PublicationSection = Pick<
  PublishedReport,
  'anchor' | 'publication' | 'redactions' | 'located' | 'located_line' | 'unbound' | 'unbound_count'
>;

/**
 * The one report: the receipt's own (chain, signature, scope, head, what it proves) with typed optional
 * sections for what the receipt carries, and one verdict (`ok`, `verdict`, `authenticated`).
 */
export type ReceiptVerdict = ReceiptReport &
  Partial<PublicationSection> & {
    /** The transparency-log section: present for a proven receipt or one checked against an earlier checkpoint. */
    tlog?: ReceiptProofReport;
    /** Time-stamp tokens and co-signatures: present when the receipt carries either. */
    attest?: AttestReport;
  };

/** The problem code of an unmet `require` entry. */
export const REQUIREMENT_UNMET = 'REQUIREMENT_UNMET';

/** Verifies a receipt (bytes, a web stream or an async iterable of byte chunks); never throws on its content. */
export async function verifyReceipt(
  input: ByteInput,
  given: ReceiptVerifyOptions | null = {},
): Promise<ReceiptVerdict> {
  // A caller in plain JavaScript may pass anything here: the verifier reports, it never throws.
  const options: ReceiptVerifyOptions = typeof given === 'object' && given !== null ? given : {};
  // A malformed pin is the caller's mistake, named as such; the receipt is still read without it.
  const pins = checkPins(options);
  const published = publishedReceiptHooks().options;
  const proofs = receiptProofHooks({
    ...(options.log ? { policy: options.log } : {}),
    ...(options.checkpoint ? { trusted: options.checkpoint } : {}),
    ...(options.consistencyProof !== undefined ? { consistency: options.consistencyProof } : {}),
  });
  const attest = receiptAttestHooks({
    ...(options.tsaCerts?.length ? { tsa: options.tsaCerts } : {}),
    ...(pins.cosigners?.length ? { cosigners: pins.cosigners } : {}),
    ...(options.threshold !== undefined && !pins.problems.some((p) => p.code === 'COSIGNERS_INVALID')
      ? { threshold: options.threshold }
      : {}),
  });
  const { onLine, onBlob } = options;
  const digests = new ShownDigests(); // pre-v2 approval digests beside calls not shown whole (APPROVALS.md §8)
  const receipt = await readReceipt(input, {
    ...(options.expectHead !== undefined ? { expectHead: options.expectHead } : {}),
    ...(options.publicKey !== undefined ? { publicKey: options.publicKey } : {}),
    ...(Number.isSafeInteger(options.maxProblems) ? { maxProblems: options.maxProblems } : {}),
    ...(options.pool ? { pool: options.pool } : {}),
    ...(typeof options.entryHasher === 'function' ? { entryHasher: options.entryHasher } : {}),
    ...(pins.approvers?.length ? { approvers: pins.approvers } : {}),
    extensions: { ...published.extensions, ...proofs.extensions, ...attest.extensions },
    onPublicPart: published.onPublicPart,
    onLine: (line) => {
      published.onLine(line);
      digests.line(line.seq, line.text);
      proofs.onLine(line);
      attest.onLine(line);
      onLine?.(line);
    },
    onBlob: (digest, text) => {
      published.onBlob(digest, text);
      onBlob?.(digest, text);
    },
    finish: (report, reading) => proofs.finish(published.finish(digests.finish(report), reading)),
  });
  const report: ReceiptVerdict = await attest.finish(receipt);
  if (options.require !== undefined) holdRequirements(report, options.require);
  if (pins.problems.length > 0) failOn(report, pins.problems);
  return report;
}

/** The report fails on the options' own problems (location: none in the receipt), and settles its verdict again. */
function failOn(report: ReceiptVerdict, problems: readonly OptionProblem[]): void {
  for (const p of problems) report.problems.push({ code: p.code, message: p.message, location: {} });
  report.ok = false;
  report.proves = [];
  settleVerdict(report, 'receipt');
}

/** Adds a REQUIREMENT_UNMET problem for each requirement the receipt does not meet, and settles the verdict again. */
function holdRequirements(report: ReceiptVerdict, require: ReceiptRequirements): void {
  const unmet: string[] = [];
  // A requirement given as anything but an object of flags is unmet, never silently ignored.
  if (typeof require !== 'object' || (require as unknown) === null || Array.isArray(require))
    unmet.push('require is not an object of flags ({ authenticated, published, proven, timestamped, cosigned })');
  else unmetOf(report, require, unmet);
  if (unmet.length === 0) return;
  for (const message of unmet)
    report.problems.push({ code: REQUIREMENT_UNMET, message: `required: ${message}`, location: {} });
  report.ok = false;
  report.proves = [];
  settleVerdict(report, 'receipt');
}

function unmetOf(report: ReceiptVerdict, require: ReceiptRequirements, unmet: string[]): void {
  if (require.authenticated && !report.authenticated)
    unmet.push('no pin held: pass publicKey, expectHead, or log (with a checkpoint)');
  if (require.published && !report.anchor && !report.publication) unmet.push('the receipt is not a publication');
  if (require.proven && !(report.tlog?.checkpoint && report.tlog.pinned))
    unmet.push('the receipt carries no transparency-log proof checked against a pinned log key (pass log)');
  if (require.timestamped && !report.attest?.timestamps.length) unmet.push('the receipt carries no time-stamp token');
  if (require.cosigned && !cosigned(report)) unmet.push('the pinned co-signers did not co-sign the receipt');
}

/** Whether pinned co-signers met the threshold (the attest checks report a shortfall as a problem already). */
function cosigned(report: ReceiptVerdict): boolean {
  const a = report.attest;
  return a !== undefined && a.threshold !== null && a.cosigned_by.length >= a.threshold;
}
