/**
 * The Art. 12 record-keeping view (issue 39; Regulation (EU) 2024/1689, Art. 12 and 19/26): per run, the
 * period of use, the reference inputs (models and tools), the input data (by seq and digest), the persons
 * involved in verifying results, and the retention period — from a journal's verified records, whatever
 * their format (only `seq`, `ts`, `step_hash` and, when present, `input`, `model`, `tool_call` are read).
 * It says plainly what Art. 12 asks (logging) and what this tool adds (tamper-evidence). Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { APPROVAL_FORMAT, DEFAULT_FORMAT, journalFormat } from '../record/formats.js';

export const RECORD_KEEPING_FORMAT = 'stepchain-record-keeping/v1';
export const ART12_PROFILE = 'eu-ai-act-art12';

export const ART12_NOTICE = [
  'Article 12 of Regulation (EU) 2024/1689 asks that a high-risk AI system technically allow the automatic recording of events (logs) over its lifetime, so that its functioning can be traced; this document is such a record, drawn from the run journals listed.',
  "Tamper-evidence is this tool's addition, not what Article 12 asks: each journal is a hash chain (its head below), and receipts may add signatures, co-signatures and RFC 3161 time-stamps; the times below are the agent's own clock unless a time-stamp says otherwise.",
  "Article 12(3) lists its items for remote biometric identification systems; for an agent they are read as: period of use = first to last recorded step; reference inputs = the models and tools the run used; input data = each step's input, by seq and digest (the values stay in the journal); persons involved = those named by approval records.",
].join(' ');

/** What the view reads of a record: any journal format has seq, ts and step_hash. */
export interface RecordLike {
  seq: number;
  ts: string;
  step_hash: string;
  input?: unknown;
  model?: unknown;
  tool_call?: unknown;
}

/** An approver, from the approval records (spec/APPROVALS.md §6), with what they decided. */
export interface PersonInvolved {
  /** The pinned name (authenticated), else the name the approver gave itself, else its key id. */
  name: string;
  role: 'approver';
  keyid: string;
  /** Whether the name comes from a pinned key (verify --approver), not from the approver's own claim. */
  authenticated: boolean;
  decisions: {
    request: string;
    tool: string | null;
    decision: 'granted' | 'denied';
    seq: number;
    decided_at: string | null;
  }[];
}

/** What the view reads of the verifier's approvals (ChainReport.approvals). */
export interface ApprovalLike {
  request: string;
  tool: string | null;
  status: string;
  decision_seq: number | null;
  decided_at: string | null;
  approver: { keyid: string; name: string | null; pinned: boolean } | null;
}

export interface RunRecordKeeping {
  journal_id: string;
  run: unknown;
  created_at: string;
  period_of_use: { start: string | null; end: string | null; clock: string };
  reference_inputs: { models: string[]; tools: string[] };
  input_data: { seq: number; step_hash: string; input_digest: string }[];
  persons_involved: { source: string; persons: PersonInvolved[] };
  integrity: { head: string | null; head_seq: number | null; steps: number; chain_verified: boolean };
}

export interface RecordKeepingDocument {
  format: typeof RECORD_KEEPING_FORMAT;
  profile: typeof ART12_PROFILE;
  notice: string;
  retention: { period: string; basis: string };
  runs: RunRecordKeeping[];
}

const name = (v: unknown): string | null =>
  typeof v === 'string' && v !== ''
    ? v
    : v !== null && typeof v === 'object' && typeof (v as { name?: unknown }).name === 'string'
      ? (v as { name: string }).name
      : null;

/** One run's entry, from its genesis and its records in seq order. */
export async function runRecordKeeping(
  genesis: { journal_id: string; created_at: string; run?: unknown },
  records: AsyncIterable<RecordLike>,
  chainVerified: boolean,
  approvals?: readonly ApprovalLike[],
): Promise<RunRecordKeeping> {
  const models = new Set<string>();
  const tools = new Set<string>();
  const inputs: RunRecordKeeping['input_data'] = [];
  let start: string | null = null;
  let end: string | null = null;
  let head: { seq: number; step_hash: string } | null = null;
  let steps = 0;
  for await (const r of records) {
    steps++;
    start ??= r.ts;
    end = r.ts;
    head = { seq: r.seq, step_hash: r.step_hash };
    const m = name(r.model);
    if (m) models.add(m);
    const t = name(r.tool_call);
    if (t) tools.add(t);
    if (r.input !== undefined && r.input !== null)
      inputs.push({ seq: r.seq, step_hash: r.step_hash, input_digest: digestUtf8(canonicalJson(r.input)) });
  }
  return {
    journal_id: genesis.journal_id,
    run: genesis.run ?? null,
    created_at: genesis.created_at,
    period_of_use: { start, end, clock: "the agent's own clock (each step's ts)" },
    reference_inputs: { models: [...models].sort(), tools: [...tools].sort() },
    input_data: inputs,
    persons_involved: personsOf((genesis as { format?: unknown }).format, approvals),
    integrity: { head: head?.step_hash ?? null, head_seq: head?.seq ?? null, steps, chain_verified: chainVerified },
  };
}

/** The approvers named by the verified approval records (spec/APPROVALS.md §6), one per key, in order of their first decision. */
function personsOf(
  format: unknown,
  approvals: readonly ApprovalLike[] | undefined,
): RunRecordKeeping['persons_involved'] {
  if (journalFormat(format)?.capabilities.approvals !== true)
    return {
      source: `approval records (spec/APPROVALS.md) exist only in ${APPROVAL_FORMAT} journals; this one is ${typeof format === 'string' ? format : DEFAULT_FORMAT.format}, so no person is named`,
      persons: [],
    };
  const byKey = new Map<string, PersonInvolved>();
  for (const a of approvals ?? []) {
    if (a.approver === null || a.decision_seq === null || (a.status !== 'granted' && a.status !== 'denied')) continue;
    const p = byKey.get(a.approver.keyid) ?? {
      name: a.approver.name ?? a.approver.keyid,
      role: 'approver' as const,
      keyid: a.approver.keyid,
      authenticated: a.approver.pinned,
      decisions: [],
    };
    p.decisions.push({
      request: a.request,
      tool: a.tool,
      decision: a.status,
      seq: a.decision_seq,
      decided_at: a.decided_at,
    });
    byKey.set(a.approver.keyid, p);
  }
  const persons = [...byKey.values()];
  const unauthenticated = persons.filter((p) => !p.authenticated).length;
  return {
    source:
      persons.length === 0
        ? 'approval records (spec/APPROVALS.md): no decision in this journal, so no person is named'
        : `approval records (spec/APPROVALS.md): each approver's key signed their decisions${unauthenticated === 0 ? '; every key was pinned, so the names are authenticated' : `; ${unauthenticated} approver${unauthenticated === 1 ? "'s name is its" : "s' names are their"} own claim (pin the keys: --approver KEY)`}`,
    persons,
  };
}

/** The whole document, for runs already read. */
export function recordKeepingDocument(runs: RunRecordKeeping[], retention: string): RecordKeepingDocument {
  return {
    format: RECORD_KEEPING_FORMAT,
    profile: ART12_PROFILE,
    notice: ART12_NOTICE,
    retention: {
      period: retention,
      basis:
        'Articles 19(1) and 26(6): logs kept for a period appropriate to the intended purpose, of at least six months unless other law provides otherwise',
    },
    runs,
  };
}
