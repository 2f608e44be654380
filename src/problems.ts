/**
 * Every problem code a stepchain verifier reports, composed from the layers that define them: the chain
 * (spec/FORMAT.md §4–§7), the journal store (§8), receipts (RECEIPT.md §5) and published receipts
 * (REDACTION.md §6). Codes are public API: add, never rename.
 */
import type { JournalProblemCode } from './store/types.js';
import type { PublishedProblemCode } from './redact/verify.js';
import type { ProofProblemCode } from './proofs/problems.js';

export type ProblemCode = JournalProblemCode | PublishedProblemCode | ProofProblemCode;
