/**
 * The approval records of spec/APPROVALS.md: what a request presents, the digest of exactly that, and the
 * statement an approver signs. Kept apart from the signature code (sign.ts, which loads Ed25519) so that a
 * writer reading its own requests does not load the curve. Pure; runs in a browser.
 */
/* eslint-disable @typescript-eslint/consistent-type-definitions -- these are a step's JSON input and meta: type
   aliases, because only a type alias (not an interface) is assignable to JsonValue. */
import { canonicalBytes, canonicalJson } from '../canonical/jcs.js';
import { utcInstant } from '../record/fields.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';

export const APPROVAL_REQUESTED = 'approval.requested';
export const APPROVAL_GRANTED = 'approval.granted';
export const APPROVAL_DENIED = 'approval.denied';
/**
 * The statement's `type` a writer signs (APPROVALS.md §3): `stepchain-approval/v2`, which binds the request by
 * its step hash alone. A signature over it can be read as nothing else.
 */
export const APPROVAL_STATEMENT_TYPE = 'stepchain-approval/v2';
/** The first statement type, which also carried the presented call's unsalted digest: verified, never written. */
export const APPROVAL_STATEMENT_TYPE_V1 = 'stepchain-approval/v1';
/** The DSSE payloadType of the signed statement (APPROVALS.md §3). */
export const APPROVAL_PAYLOAD_TYPE = 'application/vnd.stepchain.approval+json';

export type ApprovalDecision = 'granted' | 'denied';

/** A tool call as presented to the approver: exactly what its digest covers. */
export type PresentedCall = {
  name: string;
  arguments: unknown;
};

/**
 * The `input` of an approval.requested record (APPROVALS.md §2). A writer writes `{expires_at, presented}`;
 * `digest` (the presented call's unsalted SHA-256) is in requests written before statement v2, verified as written.
 */
export type RequestInput = {
  digest?: string;
  expires_at: string | null;
  presented: PresentedCall;
};

/**
 * The signed statement, stored as the `input` of approval.granted / approval.denied (APPROVALS.md §3): the
 * request is bound by its step hash, which commits to what was presented through salted units (FORMAT.md §14).
 */
export type ApprovalStatement = {
  decided_at: string;
  decision: ApprovalDecision;
  genesis_hash: string;
  reason: string | null;
  request: string;
  request_hash: string;
  request_seq: number;
  type: typeof APPROVAL_STATEMENT_TYPE;
};

/** A statement of the first type (APPROVALS.md §3.1): it also names the request's unsalted `digest`. Verified only. */
export type ApprovalStatementV1 = Omit<ApprovalStatement, 'type'> & {
  digest: string;
  type: typeof APPROVAL_STATEMENT_TYPE_V1;
};

/** A stored statement of either type. */
export type AnyApprovalStatement = ApprovalStatement | ApprovalStatementV1;

/** The approver as a decision's `meta.approver` names it: a key, and the name it gave itself. */
export type ApproverIdentity = {
  keyid: string;
  name: string | null;
  /** base64 of the raw 32-byte Ed25519 public key. */
  public_key: string;
};

/** The members a decision adds to its `meta`. */
export type DecisionMeta = {
  approver: ApproverIdentity;
  /** base64 of the Ed25519 signature over PAE(APPROVAL_PAYLOAD_TYPE, JCS(statement)). */
  signature: string;
};

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);
const membersAre = (v: Rec, names: string): boolean => Object.keys(v).sort().join(',') === names;

/**
 * SHA-256 of the UTF-8 of JCS({"arguments": A, "name": N}): the unsalted `digest` of a request written before
 * statement v2 (APPROVALS.md §2.1), checked when such a request is read. Never written: it lets a low-entropy
 * argument be guessed where the arguments are withheld.
 */
export function presentedDigest(call: PresentedCall): string {
  return digestUtf8(canonicalJson({ arguments: call.arguments, name: call.name }));
}

/** The exact bytes an approver signs, before PAE: the UTF-8 of the statement's JCS. */
export function statementBytes(statement: AnyApprovalStatement): Uint8Array {
  return canonicalBytes(statement);
}

/** A timestamp as FORMAT.md §5.1 writes one, read as milliseconds, or null. */
export const instant = utcInstant;

/** The shape rules of a request's `input` (APPROVALS.md §2), either form; null when they hold. */
function requestShapeDefect(v: unknown): string | null {
  if (!isObj(v) || !(membersAre(v, 'expires_at,presented') || membersAre(v, 'digest,expires_at,presented')))
    return 'input must have exactly the members expires_at and presented (and digest, in a request written before statement v2)';
  const p = v.presented;
  if (!isObj(p) || !membersAre(p, 'arguments,name'))
    return 'input.presented must have exactly the members name and arguments';
  if (isObj(p.name) && Object.keys(p.name).some((k) => k.startsWith('$stepchain:')))
    return "input.presented.name is stored as a part (a name as long as the journal's part threshold, PARTS.md §3): a tool's name presented for approval stands in the line";
  if (typeof p.name !== 'string' || p.name.length === 0) return 'input.presented.name must be a non-empty string';
  if ('digest' in v && !isDigest(v.digest)) return 'input.digest must be "sha256:" and 64 lowercase hex digits';
  if (v.expires_at !== null && instant(v.expires_at) === null)
    return 'input.expires_at must be null or a UTC timestamp (2026-11-27T10:00:00.000Z)';
  return null;
}

/** Why an approval.requested record's `input` is not a request, or null (APPROVALS.md §2). */
export function requestInputDefect(v: unknown): string | null {
  const shape = requestShapeDefect(v);
  if (shape !== null || !('digest' in (v as Rec))) return shape;
  const { digest: stored, presented: p } = v as Rec;
  let digest: string;
  try {
    digest = presentedDigest(p as PresentedCall);
  } catch {
    return 'input.presented is not JSON that canonicalizes';
  }
  if (digest !== stored)
    return `input.digest ${String(stored)} is not the digest of input.presented (${digest}): what was presented is not what was digested`;
  return null;
}

/**
 * Why a request whose presented values hold part references (PARTS.md §5) is not a request, or null: its
 * shape only, since a digest covers the values the parts hold, which the chain alone does not carry.
 */
export function partedRequestDefect(v: unknown): string | null {
  return requestShapeDefect(v);
}

const STATEMENT_MEMBERS = 'decided_at,decision,genesis_hash,reason,request,request_hash,request_seq,type';
const STATEMENT_MEMBERS_V1 = 'decided_at,decision,digest,genesis_hash,reason,request,request_hash,request_seq,type';

/** Why a decision's `input` is not an approval statement of either type, or null (APPROVALS.md §3). */
export function statementDefect(v: unknown): string | null {
  if (!isObj(v))
    return `input must be the signed statement, with exactly the members ${STATEMENT_MEMBERS.replace(/,/g, ', ')}`;
  const v1 = v.type === APPROVAL_STATEMENT_TYPE_V1;
  if (v.type !== APPROVAL_STATEMENT_TYPE && !v1)
    return `input.type must be ${JSON.stringify(APPROVAL_STATEMENT_TYPE)} (or ${JSON.stringify(APPROVAL_STATEMENT_TYPE_V1)}, as written before)`;
  const members = v1 ? STATEMENT_MEMBERS_V1 : STATEMENT_MEMBERS;
  if (!membersAre(v, members))
    return `input, a ${String(v.type)} statement, must have exactly the members ${members.replace(/,/g, ', ')}`;
  if (v.decision !== 'granted' && v.decision !== 'denied') return 'input.decision must be "granted" or "denied"';
  if ((v1 && !isDigest(v.digest)) || !isDigest(v.genesis_hash) || !isDigest(v.request_hash))
    return `${v1 ? 'input.digest, ' : ''}input.genesis_hash and input.request_hash must be digests`;
  if (typeof v.request !== 'string' || v.request.length === 0) return "input.request must be the request's step_id";
  if (typeof v.request_seq !== 'number' || !Number.isSafeInteger(v.request_seq) || v.request_seq < 0)
    return 'input.request_seq must be a seq';
  if (instant(v.decided_at) === null) return 'input.decided_at must be a UTC timestamp';
  if (v.reason !== null && typeof v.reason !== 'string') return 'input.reason must be a string or null';
  return null;
}

/** Why a decision's `meta` does not carry an approver and a signature, or null (APPROVALS.md §3). */
export function decisionMetaDefect(v: unknown): string | null {
  if (!isObj(v) || !isObj(v.approver) || typeof v.signature !== 'string')
    return 'meta must carry approver {keyid, name, public_key} and signature';
  const a = v.approver;
  if (!membersAre(a, 'keyid,name,public_key'))
    return 'meta.approver must have exactly the members keyid, name and public_key';
  if (!isDigest(a.keyid) || typeof a.public_key !== 'string' || (a.name !== null && typeof a.name !== 'string'))
    return 'meta.approver: keyid is a digest, public_key base64, name a string or null';
  return null;
}

/**
 * The statement an approver signs for `request` (APPROVALS.md §3, type v2): for approvers outside a Run, who
 * hold what the request showed them (an ApprovalRequest, or the same members read from the journal).
 */
export function approvalStatement(
  request: { id: string; seq: number; stepHash: string; genesisHash: string },
  decision: ApprovalDecision,
  options: { reason?: string | null; decidedAt?: Date } = {},
): ApprovalStatement {
  return {
    decided_at: (options.decidedAt ?? new Date()).toISOString(),
    decision,
    genesis_hash: request.genesisHash,
    reason: options.reason === undefined || options.reason === '' ? null : options.reason,
    request: request.id,
    request_hash: request.stepHash,
    request_seq: request.seq,
    type: APPROVAL_STATEMENT_TYPE,
  };
}
