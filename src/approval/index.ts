/** Approval records (spec/APPROVALS.md): requests, signed decisions, and the chain-level check. Pure; runs in a browser. */
export {
  APPROVAL_REQUESTED,
  APPROVAL_GRANTED,
  APPROVAL_DENIED,
  APPROVAL_STATEMENT_TYPE,
  APPROVAL_STATEMENT_TYPE_V1,
  APPROVAL_PAYLOAD_TYPE,
  presentedDigest,
  statementBytes,
  approvalStatement,
  requestInputDefect,
  statementDefect,
  decisionMetaDefect,
  type ApprovalDecision,
  type PresentedCall,
  type RequestInput,
  type ApprovalStatement,
  type ApprovalStatementV1,
  type AnyApprovalStatement,
  type ApproverIdentity,
  type DecisionMeta,
} from './records.js';
export { signApproval, approvalSignatureDefect } from './sign.js';
export {
  ApprovalLedger,
  type ApprovalLedgerOptions,
  type ApprovalEntry,
  type ApproverFacts,
  type PinnedApprover,
  type ApprovalFinding,
  type ApprovalProblemCode,
  type ApprovalNoticeCode,
} from './ledger.js';
