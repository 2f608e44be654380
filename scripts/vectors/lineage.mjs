// Fork receipt vectors (spec/APPROVALS.md §4.1, §8 *Forks*, *Copies and forks*): receipts of stepchain/v3 forks
// whose manifest carries `lineage` {from_step, parent_step_hash}, with the pinned approvers and what a receipt
// verifier reports (ok, problems with code, seq and path or field, and the approvals). Fixed seeds, times and
// keys, so the bytes are the same on every run. Built from dist/.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { genesisHash, makeGenesis } from '../../dist/record/index.js';
import { STEP_V3 } from '../../dist/record/v3.js';
import { signApproval } from '../../dist/approval/sign.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { receiptBytes } from '../../dist/receipt/node.js';
import { verifyReceipt } from '../../dist/receipt/verify.js';

const b64 = (b) => Buffer.from(b).toString('base64');
const seedOf = (label) => createHash('sha256').update(`stepchain lineage vectors seed ${label}`).digest('hex');
const ALICE = keyPairFromSeed(Uint8Array.from(createHash('sha256').update('lineage vectors key alice').digest()));
const APPROVERS = [{ name: 'alice', public_key: b64(ALICE.publicKey) }];
const GENESIS = makeGenesis({ journalId: 'lineage-vectors', createdAt: '2026-11-27T10:00:00.000Z', format: 'stepchain/v3', run: { agent: 'vectors' } });
const CONTENT = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'];
const UNLOCK = { name: 'unlock', arguments: { door: 'D-7' } };

/** A chain being written: each record sealed with a seed of its own (label) and a ts one second after the last. */
function chain() {
  const lines = [];
  let prev = genesisHash(GENESIS);
  const add = (step, label = '') => {
    const seq = lines.length;
    const texts = {};
    for (const f of CONTENT) texts[f] = canonicalJson(step[f] ?? null);
    if (step.meta) texts.meta = canonicalJson(step.meta);
    const ts = `2026-11-27T10:00:${String(seq).padStart(2, '0')}.000Z`;
    const stepId = step.step_id ?? `s${seq}`;
    const { stepHash, line } = STEP_V3.seal(texts, { seq, stepId, ts, prevHash: prev, seed: seedOf(`${seq} ${stepId} ${label}`) });
    prev = stepHash;
    lines.push(line.slice(0, -1));
    return { seq, step_id: stepId, step_hash: stepHash, ts };
  };
  return { lines, add };
}
const request = (c, id, label) => c.add({ kind: 'approval.requested', step_id: id, input: { expires_at: null, presented: UNLOCK } }, label);
function grant(c, req, label) {
  const ts = `2026-11-27T10:00:${String(c.lines.length).padStart(2, '0')}.000Z`;
  const s = { decided_at: ts, decision: 'granted', genesis_hash: genesisHash(GENESIS), reason: null, request: req.step_id, request_hash: req.step_hash, request_seq: req.seq, type: 'stepchain-approval/v2' };
  return c.add({ kind: 'approval.granted', ref: req.step_id, input: s, meta: signApproval(s, ALICE.privateKey, 'alice') }, label);
}
const effect = (c, req, label) => c.add({ kind: 'tool.started', tool_call: UNLOCK, meta: { approval: { request: req.step_id, request_hash: req.step_hash } } }, label);

/** The parent's records 0..2: the run starts, req-1 presents unlock, alice grants it. */
function parentPrefix() {
  const c = chain();
  c.add({ kind: 'run.started', input: { task: 'open D-7' } });
  const req = request(c, 'req-1');
  const granted = grant(c, req);
  return { c, req, granted };
}

/** The receipt (bare tar, unsigned) of the chain as a fork with `lineage`, as an exporter writes it. */
async function receiptOf(c, lineage) {
  const lines = c.lines.map((text, seq) => ({ segment: '0000000000000000.jsonl', seq, text }));
  const source = {
    genesis: GENESIS,
    lineage,
    async head() { const last = JSON.parse(c.lines[c.lines.length - 1]); return { seq: last.seq, step_hash: last.step_hash }; },
    async *lines(range = {}) { for (const l of lines) if (l.seq >= (range.from ?? 0) && (range.to === undefined || l.seq <= range.to)) yield l; },
    async blob() { return null; },
  };
  return receiptBytes(source);
}

async function caseOf(cases, id, comment, c, lineage) {
  const bytes = await receiptOf(c, lineage);
  const pins = APPROVERS.map((p) => ({ key: Uint8Array.from(Buffer.from(p.public_key, 'base64')), name: p.name }));
  const r = await verifyReceipt(bytes, { approvers: pins });
  cases.push({
    id, comment, kind: 'receipt', result: r.ok ? 'valid' : 'invalid', lineage, approvers: APPROVERS, receipt: b64(bytes),
    expect: {
      ok: r.ok,
      problems: r.problems.map((p) => ({ code: p.code, ...(p.location.seq === undefined ? {} : { seq: p.location.seq }), ...(p.location.field === undefined ? {} : { field: p.location.field }), ...(p.location.path === undefined ? {} : { path: p.location.path }) })),
      approvals: (r.approvals ?? []).map((a) => ({ request: a.request, request_seq: a.request_seq, status: a.status, effect_seq: a.effect_seq, ...(a.unchecked ? { unchecked: true } : {}) })),
    },
  });
}

export async function generate() {
  const cases = [];
  {
    // The fork (at F = 2) asks again: its own request req-2, alice's grant, and the effect for req-2.
    const { c, granted } = parentPrefix();
    const req2 = request(c, 'req-2', 'fork');
    grant(c, req2, 'fork');
    effect(c, req2, 'fork');
    await caseOf(cases, 'fork-asks-again', 'a fork made at F = 2 (after the parent\'s request req-1 and its grant) that requests approval again (req-2, seq 3), is granted (seq 4) and runs the call for req-2 (seq 5): valid; req-1, copied from the parent, has no effect here (in a receipt: "no effect found, not proven")', c, { from_step: 2, parent_step_hash: granted.step_hash });
  }
  {
    const { c, req, granted } = parentPrefix();
    effect(c, req, 'fork');
    await caseOf(cases, 'fork-uses-copied-grant', 'the fork rule (APPROVALS.md §5 step 3) read from the receipt\'s lineage: the fork made at F = 2 runs the call for req-1 (seq 3), whose request and grant it copied from its parent: APPROVAL_MISSING at seq 3 (the same grant would otherwise run in both journals)', c, { from_step: 2, parent_step_hash: granted.step_hash });
  }
  {
    const { c, req } = parentPrefix();
    effect(c, req, 'fork');
    const other = JSON.parse(c.lines[1]).step_hash;
    await caseOf(cases, 'fork-lineage-hash-mismatch', 'a lineage whose parent_step_hash is not the step hash of seq from_step in the receipt (here seq 1\'s, for from_step 2): MANIFEST_INVALID at /lineage/parent_step_hash; the receipt does not share the prefix it names', c, { from_step: 2, parent_step_hash: other });
  }
  {
    // What 4.sh's `copy <parent> <fork>` would have written into a fork made at F = 0: the parent's own request
    // and grant, byte for byte, at seqs 1 and 2, then the fork's effect naming req-1.
    const { c, req } = parentPrefix();
    const start = JSON.parse(c.lines[0]).step_hash;
    effect(c, req, 'fork');
    await caseOf(cases, 'fork-holding-parent-steps-past-from-step', 'the shape outsider 5 (4.sh) built with `stepchain copy <parent> <fork>` into a fork made at F = 0: the parent\'s request and grant past the fork point, byte for byte, and an effect naming req-1. From the receipt alone this is the parent\'s own chain with a lineage that understates the shared prefix: a verifier reports it valid, and invents no rule (APPROVALS.md §8, *Copies and forks*); `stepchain copy` refuses to build it (COPY_INTO_FORK), and a pinned witnessed checkpoint rules out a second chain', c, { from_step: 0, parent_step_hash: start });
  }
  return {
    'lineage.json': {
      format: 'stepchain-vectors/v1',
      kind: 'lineage',
      description: 'Receipts of stepchain/v3 forks (spec/APPROVALS.md §4.1): the manifest member lineage {from_step, parent_step_hash}, the fork rule it carries to a receipt verifier, and what it cannot rule out (§8). Each case: the receipt (base64 of a bare tar, unsigned), its lineage, the pinned approvers (name, base64 raw Ed25519 public key), and what a verifier reports: ok, problems (code, seq, field or path), approvals (request, request_seq, status, effect_seq, unchecked).',
      cases,
    },
  };
}
