// Approval record vectors (spec/APPROVALS.md): whole stepchain/v3 chains holding approval.requested,
// approval.granted / approval.denied and the tool.started records begun for them, each with the approvers
// pinned (if any) and what the verifier reports: ok, the problems (code, seq, field), the notices, and the
// approvals (who decided what, which effect ran). Fixed seeds, times and keys (Ed25519 signatures are
// deterministic), so every byte is reproducible. The valid case is built first; every negative changes one
// thing an attacker or a careless writer would: another signer, an altered presentation, an effect after a
// denial or after expiry, a signature replayed onto another request, journal or decision, two decisions.
// The presented digest and the signed statement bytes are recomputed here with node:crypto and JCS
// (canonicalJson), independently of src/approval. Built from dist/.
// The cases up to `digest-not-of-presented` are the first statement type's (stepchain-approval/v1: requests carry
// the presented call's unsalted digest, statements name it) and stay byte-identical; the cases after them are
// what a writer now writes (requests without a digest, stepchain-approval/v2 statements binding the request by its
// step hash alone), the pairings of the two, and calls run before the request that presents them (§5 step 4).
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { verifyChain } from '../../dist/chain/index.js';
import { genesisHash, makeGenesis } from '../../dist/record/index.js';
import { STEP_V3 } from '../../dist/record/v3.js';
import { signApproval } from '../../dist/approval/sign.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';

const enc = new TextEncoder();
const sha256hex = (bytes) => createHash('sha256').update(bytes).digest('hex');
const hex = (b) => Buffer.from(b).toString('hex');
const seedOf = (label) => hex(createHash('sha256').update(`stepchain approval vectors seed ${label}`).digest());
const b64 = (b) => Buffer.from(b).toString('base64');

const ALICE = keyPairFromSeed(Uint8Array.from(createHash('sha256').update('approval vectors key alice').digest()));
const MALLORY = keyPairFromSeed(Uint8Array.from(createHash('sha256').update('approval vectors key mallory').digest()));
const PINS = { alice: { name: 'alice', public_key: b64(ALICE.publicKey) }, mallory: { name: 'mallory', public_key: b64(MALLORY.publicKey) } };
const GENESIS = makeGenesis({ journalId: 'approval-vectors', createdAt: '2026-11-27T10:00:00.000Z', format: 'stepchain/v3', run: { agent: 'vectors' } });
const OTHER_GENESIS = makeGenesis({ journalId: 'approval-vectors-other', createdAt: '2026-11-27T10:00:00.000Z', format: 'stepchain/v3', run: { agent: 'vectors' } });
const CONTENT = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'];
const PAY = { name: 'pay_invoice', arguments: { amount: 120, invoice: 'INV-9' } };

/** APPROVALS.md §2: SHA-256 of the UTF-8 of JCS({"arguments", "name"}). */
const presentedDigest = (call) => 'sha256:' + sha256hex(enc.encode(canonicalJson({ arguments: call.arguments, name: call.name })));

/** A chain being written: each record sealed with a fixed seed and a ts one second after the last. */
function chain(genesis = GENESIS) {
  const lines = [];
  const records = [];
  let prev = genesisHash(genesis);
  const add = (step) => {
    const seq = lines.length;
    const texts = {};
    for (const f of CONTENT) texts[f] = canonicalJson(step[f] ?? null, { refuseReserved: false });
    if (step.meta) texts.meta = canonicalJson(step.meta, { refuseReserved: false });
    const ts = step.ts ?? `2026-11-27T10:00:${String(seq).padStart(2, '0')}.000Z`;
    const stepId = step.step_id ?? `s${seq}`;
    const { stepHash, line } = STEP_V3.seal(texts, { seq, stepId, ts, prevHash: prev, seed: seedOf(`${genesis.journal_id} ${seq} ${stepId}`) });
    prev = stepHash;
    lines.push(line.slice(0, -1));
    const rec = { seq, step_id: stepId, step_hash: stepHash, ts };
    records.push(rec);
    return rec;
  };
  return { genesis, lines, records, add };
}

const request = (c, id, call = PAY, expiresAt = null) => c.add({ kind: 'approval.requested', step_id: id, input: { digest: presentedDigest(call), expires_at: expiresAt, presented: call } });

/** The statement of APPROVALS.md §3, and the decision record that carries it with its signature. */
function statementFor(c, req, decision, ts, { reason = null, call = PAY, genesis = c.genesis } = {}) {
  return { decided_at: ts, decision, digest: presentedDigest(call), genesis_hash: genesisHash(genesis), reason, request: req.step_id, request_hash: req.step_hash, request_seq: req.seq, type: 'stepchain-approval/v1' };
}
function decide(c, req, decision, { key = ALICE, name = 'alice', reason = null, kind, statement, meta, ref } = {}) {
  const ts = `2026-11-27T10:00:${String(c.lines.length).padStart(2, '0')}.000Z`;
  const s = statement ?? statementFor(c, req, decision, ts, { reason });
  return c.add({ kind: kind ?? `approval.${decision}`, ref: ref ?? req.step_id, ts: s.decided_at === ts ? ts : ts, input: s, meta: meta ?? signApproval(s, key.privateKey, name) });
}
const effect = (c, req, call = PAY, extra = {}) => c.add({ kind: 'tool.started', tool_call: call, meta: req === null ? undefined : { approval: { request: req.step_id, request_hash: req.step_hash } }, ...extra });
const start = (c) => c.add({ kind: 'run.started', input: { task: 'pay INV-9' } });
/** A chain begun (run.started at seq 0) with the request `id` made by `makeRequest` (request or requestV2) at seq 1. */
function opened(makeRequest = request, id = 'req-1', ...args) {
  const c = chain();
  start(c);
  return { c, req: makeRequest(c, id, ...args) };
}
/** What an implementer checks a statement against: its JCS, the DSSE PAE bytes and alice's signature. */
function signedBytes(s) {
  const payload = canonicalJson(s);
  const pae = `DSSEv1 ${'application/vnd.stepchain.approval+json'.length} application/vnd.stepchain.approval+json ${enc.encode(payload).length} ${payload}`;
  return { payload, pae, signature: signApproval(s, ALICE.privateKey, 'alice').signature };
}

function caseOf(cases, id, comment, c, approvers = []) {
  const pins = approvers.map((p) => ({ key: Uint8Array.from(Buffer.from(p.public_key, 'base64')), name: p.name }));
  const r = verifyChain({ genesis: c.genesis, storedOnly: true, files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(c.lines.map((l) => l + '\n').join('')) }], ...(pins.length ? { approvers: pins } : {}) });
  cases.push({
    id, comment, kind: 'chain', result: r.ok ? 'valid' : 'invalid', genesis: c.genesis, lines: c.lines, approvers,
    expect: {
      ok: r.ok,
      problems: r.problems.map((p) => ({ code: p.code, ...(p.location.seq === undefined ? {} : { seq: p.location.seq }), ...(p.location.field === undefined ? {} : { field: p.location.field }) })),
      notices: r.warnings.map((w) => ({ code: w.code, ...(w.location.seq === undefined ? {} : { seq: w.location.seq }) })),
      approvals: r.approvals ?? [],
    },
  });
}

export function generate() {
  const cases = [];
  // The statement bytes and the digest, spelled out for an implementer.
  {
    const { c, req } = opened();
    const ts = '2026-11-27T10:00:02.000Z';
    const s = statementFor(c, req, 'granted', ts, { reason: 'invoice checked' });
    const { payload, pae, signature } = signedBytes(s);
    cases.push({
      id: 'statement-bytes', kind: 'statement', result: 'valid',
      comment: 'the presented call, its digest (SHA-256 of JCS({arguments, name})), the statement alice signs for it, its JCS, the DSSE PAE bytes and the Ed25519 signature (deterministic) with her public key',
      presented: PAY, digest: presentedDigest(PAY), genesis_hash: genesisHash(GENESIS), statement: s, payload, pae, public_key: b64(ALICE.publicKey), keyid: ALICE.keyId, signature,
    });
  }
  {
    const { c, req } = opened();
    decide(c, req, 'granted', { reason: 'invoice checked' });
    const e = effect(c, req);
    c.add({ kind: 'tool.completed', ref: e.step_id, result: { paid: true } });
    caseOf(cases, 'valid', 'presented, granted by alice (pinned), executed once as presented: valid, alice named as the approver', c, [PINS.alice]);
    caseOf(cases, 'valid-unpinned', 'the same chain with no approver pinned: valid, the approver named by its key and unauthenticated (notice APPROVER_UNPINNED)', c);
    caseOf(cases, 'wrong-signer', 'the same chain verified with mallory pinned: alice\'s grant is by an unknown approver (APPROVER_UNKNOWN)', c, [PINS.mallory]);
  }
  {
    const { c, req } = opened();
    const ts = '2026-11-27T10:00:02.000Z';
    const s = statementFor(c, req, 'granted', ts);
    const forged = { ...signApproval(s, MALLORY.privateKey, 'alice'), approver: signApproval(s, ALICE.privateKey, 'alice').approver };
    decide(c, req, 'granted', { statement: s, meta: forged });
    effect(c, req);
    caseOf(cases, 'signature-not-the-named-key', 'a grant that names alice\'s key but is signed by mallory: APPROVAL_INVALID at the decision, and the effect has no valid grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decide(c, req, 'granted');
    effect(c, req, { name: 'pay_invoice', arguments: { amount: 1200, invoice: 'INV-9' } });
    caseOf(cases, 'altered-presentation', 'granted for amount 120, executed with amount 1200: APPROVAL_MISMATCH at the effect\'s tool_call', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decide(c, req, 'denied', { reason: 'duplicate invoice' });
    effect(c, req);
    caseOf(cases, 'denied-then-executed', 'denied by alice, then an effect begun naming the request: APPROVAL_DENIED', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decide(c, req, 'denied');
    effect(c, null);
    caseOf(cases, 'denied-then-executed-unnamed', 'denied, then the presented call begun without naming any request: APPROVAL_MISSING (a presented call runs only for its granted request)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(request, 'req-1', PAY, '2026-11-27T10:00:03.000Z');
    decide(c, req, 'granted');
    c.add({ kind: 'step', input: { note: 'waited' } });
    effect(c, req, PAY, { ts: '2026-11-27T10:00:04.000Z' });
    caseOf(cases, 'expired-then-executed', 'granted before its expiry (10:00:03), executed after it (10:00:04): APPROVAL_EXPIRED at the effect\'s ts', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(request, 'req-1', PAY, '2026-11-27T10:00:01.500Z');
    decide(c, req, 'granted');
    caseOf(cases, 'granted-after-expiry', 'a grant decided after the request expired: APPROVAL_EXPIRED, the grant does not count', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const reqA = request(c, 'req-a');
    const grantA = statementFor(c, reqA, 'granted', '2026-11-27T10:00:02.000Z');
    const metaA = signApproval(grantA, ALICE.privateKey, 'alice');
    decide(c, reqA, 'granted', { statement: grantA, meta: metaA });
    const reqB = request(c, 'req-b', PAY);
    c.add({ kind: 'approval.granted', ref: reqB.step_id, ts: '2026-11-27T10:00:02.000Z', input: grantA, meta: metaA });
    effect(c, reqB);
    caseOf(cases, 'signature-replayed-other-request', 'alice\'s grant of req-a copied as the grant of req-b (same call): the statement names req-a (APPROVAL_INVALID), so req-b\'s effect has no grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    const other = chain(OTHER_GENESIS);
    start(other);
    const otherReq = request(other, 'req-1');
    const s = statementFor(other, otherReq, 'granted', '2026-11-27T10:00:02.000Z');
    decide(c, req, 'granted', { statement: s, meta: signApproval(s, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'signature-replayed-other-journal', 'a grant alice signed for req-1 of another journal, copied into this one: the statement names the other genesis and request hash (APPROVAL_INVALID); the effect has no grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    const s = statementFor(c, req, 'denied', '2026-11-27T10:00:02.000Z');
    decide(c, req, 'granted', { kind: 'approval.granted', statement: s, meta: signApproval(s, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'denial-flipped-to-grant', 'alice\'s signed denial stored as approval.granted: the signed decision is "denied" (APPROVAL_INVALID); the effect has no grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decide(c, req, 'granted');
    decide(c, req, 'denied');
    caseOf(cases, 'two-decisions', 'granted, then denied: one decision per request, the second is APPROVAL_REPEATED and does not count', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decide(c, req, 'granted');
    effect(c, req);
    effect(c, req);
    caseOf(cases, 'one-grant-two-effects', 'one grant used by two effects: the second is APPROVAL_REPEATED', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    effect(c, req);
    caseOf(cases, 'undecided-then-executed', 'an effect begun for a request nobody decided: APPROVAL_MISSING', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    c.add({ kind: 'approval.requested', step_id: 'req-1', input: { digest: presentedDigest({ name: 'pay_invoice', arguments: { amount: 1, invoice: 'INV-9' } }), expires_at: null, presented: PAY } });
    caseOf(cases, 'digest-not-of-presented', 'a request whose digest is not that of what it presents: APPROVAL_INVALID', c);
  }
  v2Cases(cases);
  carriedCallCases(cases);
  shapeCases(cases);
  outsider6Cases(cases);
  return {
    'approvals.json': {
      format: 'stepchain-vectors/v1',
      kind: 'approvals',
      description: 'Approval records (spec/APPROVALS.md): the statement an approver signs, and whole stepchain/v3 chains of requests, signed decisions and the effects begun for them, with the pinned approvers (approvers: name, base64 raw Ed25519 public key) and what a verifier reports: ok, problems (code, seq, field), notices (code, seq), and approvals (each request, its status, who decided, which effect ran).',
      cases,
    },
  };
}

// ------------------------------------------------------------------------------------------------------------------
// Statement v2 (APPROVALS.md §2, §3): the request carries no digest of the presented call, the statement binds the
// request by its step hash (which commits to the call through salted units, FORMAT.md §14) and names no digest.

const requestV2 = (c, id, call = PAY, expiresAt = null) => c.add({ kind: 'approval.requested', step_id: id, input: { expires_at: expiresAt, presented: call } });

function statementV2(c, req, decision, ts, { reason = null, genesis = c.genesis } = {}) {
  return { decided_at: ts, decision, genesis_hash: genesisHash(genesis), reason, request: req.step_id, request_hash: req.step_hash, request_seq: req.seq, type: 'stepchain-approval/v2' };
}
const tsOf = (c) => `2026-11-27T10:00:${String(c.lines.length).padStart(2, '0')}.000Z`;
const decideV2 = (c, req, decision, { reason = null } = {}) => decide(c, req, decision, { statement: statementV2(c, req, decision, tsOf(c), { reason }) });
/** A chain begun with PAY presented as req-1 (statement v2, seq 1) and denied by alice at seq 2 (`options`: decideV2's). */
function deniedV2(options) {
  const { c, req } = opened(requestV2);
  decideV2(c, req, 'denied', options);
  return { c, req };
}
/** PAY's arguments as JSON text, the way OpenAI-style wire calls carry them. */
const textArgs = JSON.stringify(PAY.arguments);

function v2Cases(cases) {
  {
    const { c, req } = opened(requestV2, 'req-1');
    const s = statementV2(c, req, 'granted', '2026-11-27T10:00:02.000Z', { reason: 'invoice checked' });
    const { payload, pae, signature } = signedBytes(s);
    cases.push({
      id: 'v2-statement-bytes', kind: 'statement', result: 'valid',
      comment: 'statement v2: the request (no digest: its input is {expires_at, presented}) and its step hash, the statement alice signs for it (no digest member: the request is bound by request_hash), its JCS, the DSSE PAE bytes and the Ed25519 signature with her public key',
      presented: PAY, request_input: { expires_at: null, presented: PAY }, request_line: c.lines[1], genesis_hash: genesisHash(GENESIS), statement: s, payload, pae, public_key: b64(ALICE.publicKey), keyid: ALICE.keyId, signature,
    });
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    decideV2(c, req, 'granted', { reason: 'invoice checked' });
    const e = effect(c, req);
    c.add({ kind: 'tool.completed', ref: e.step_id, result: { paid: true } });
    caseOf(cases, 'v2-valid', 'statement v2: presented (no digest), granted by alice (pinned) with a v2 statement, executed once as presented: valid, alice named, the entry\'s digest null', c, [PINS.alice]);
    caseOf(cases, 'v2-valid-unpinned', 'the v2 chain with no approver pinned: valid, notice APPROVER_UNPINNED', c);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    decideV2(c, req, 'granted');
    effect(c, req, { name: 'pay_invoice', arguments: { amount: 1200, invoice: 'INV-9' } });
    caseOf(cases, 'v2-altered-presentation', 'statement v2: granted for amount 120, executed with amount 1200: APPROVAL_MISMATCH at the effect\'s tool_call', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    decideV2(c, req, 'denied', { reason: 'duplicate invoice' });
    effect(c, req);
    caseOf(cases, 'v2-denied-then-executed', 'statement v2: denied, then an effect naming the request: APPROVAL_DENIED', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    decideV2(c, req, 'granted');
    effect(c, req);
    caseOf(cases, 'v2-statement-on-v1-request', 'a request written before statement v2 (with its digest), decided by a v2 statement (as a writer now decides it): valid, the request\'s step hash binds it', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    const s = statementFor(c, req, 'granted', tsOf(c));
    decide(c, req, 'granted', { statement: s, meta: signApproval(s, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'v1-statement-on-v2-request', 'a request without a digest decided by a v1 statement (which names the unsalted digest the request no longer shows), signed by alice: APPROVAL_INVALID at the decision\'s input; the effect has no grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const { c, req } = opened();
    const ts = tsOf(c);
    const v2 = statementV2(c, req, 'granted', ts);
    const relabelled = { ...v2, digest: presentedDigest(PAY), type: 'stepchain-approval/v1' };
    decide(c, req, 'granted', { statement: relabelled, meta: signApproval(v2, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'v2-signature-relabelled-v1', 'alice\'s v2 statement relabelled as a v1 statement (type changed, the request\'s digest added) with her v2 signature: the signature is over other bytes (APPROVAL_INVALID at meta); the effect has no grant', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    const ts = tsOf(c);
    const { request_hash: _dropped, ...stripped } = statementV2(c, req, 'granted', ts);
    decide(c, req, 'granted', { statement: stripped, meta: signApproval(stripped, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'v2-statement-without-request-hash', 'a v2 statement alice signed without request_hash (it would bind no request record): not a statement (APPROVAL_INVALID at input); the effect has no grant', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    const other = chain(OTHER_GENESIS);
    start(other);
    const otherReq = requestV2(other, 'req-1');
    const s = statementV2(other, otherReq, 'granted', tsOf(c));
    decide(c, req, 'granted', { statement: s, meta: signApproval(s, ALICE.privateKey, 'alice') });
    effect(c, req);
    caseOf(cases, 'v2-signature-replayed-other-journal', 'a v2 grant alice signed for req-1 of another journal (same call), copied into this one: it names another request hash (APPROVAL_INVALID); the effect has no grant (APPROVAL_MISSING)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    effect(c, null);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'denied', { reason: 'duplicate invoice' });
    caseOf(cases, 'call-before-request', 'the call run (naming no request) at seq 1, then presented at seq 2 and denied: APPROVAL_MISSING at seq 1 (a call put to an approver runs only for its granted request, after the grant); the verdict says it ran at seq 1, never "never executed"', c, [PINS.alice]);
  }
  {
    const { c, req } = opened(requestV2, 'req-1');
    decideV2(c, req, 'granted');
    effect(c, req);
    const again = c.add({ kind: 'tool.started', tool_call: PAY });
    void again;
    const req2 = requestV2(c, 'req-2');
    decideV2(c, req2, 'granted');
    effect(c, req2);
    caseOf(cases, 'call-again-before-its-request', 'granted and run once for req-1; run again at seq 4 naming no request (APPROVAL_MISSING: req-1 presented it), then presented again as req-2 and run for it: only seq 4 is a problem', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const early = c.add({ kind: 'tool.started', tool_call: PAY, meta: { approval: { request: 'req-1', request_hash: 'sha256:' + '0'.repeat(64) } } });
    void early;
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    caseOf(cases, 'effect-naming-a-later-request', 'an effect at seq 1 naming request req-1, which is made only at seq 2: APPROVAL_MISSING at seq 1 (it names no request earlier in the chain), and the request\'s effect is seq 1 (a record claims to run it: never "never executed", §6)', c, [PINS.alice]);
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Every record that carries a call (APPROVALS.md §5 step 4 as it reads since outsider 3): an outcome naming a start,
// with a dangling ref, a record of an unknown kind, each element of an array tool_call; a model's records run
// nothing. The times of §5 step 3: an effect is no earlier than any record before it.

function carriedCallCases(cases) {
  const OTHER = { name: 'lookup', arguments: { q: 'INV-9' } };
  const ALTERED = { name: 'pay_invoice', arguments: { amount: 1200, invoice: 'INV-9' } };
  const deniedChain = () => deniedV2({ reason: 'duplicate invoice' }).c;
  {
    const c = deniedChain();
    const s = c.add({ kind: 'tool.started', tool_call: OTHER });
    c.add({ kind: 'tool.completed', ref: s.step_id, tool_call: PAY, result: { paid: true } });
    caseOf(cases, 'completion-carries-denied-call', 'denied, then a harmless start (lookup) whose tool.completed carries the denied call: the completion ran it (APPROVAL_MISSING at seq 4), the verdict says executed at seq 4', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const s = c.add({ kind: 'tool.started', tool_call: OTHER });
    c.add({ kind: 'tool.completed', ref: s.step_id, tool_call: PAY, result: { paid: true } });
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'denied');
    caseOf(cases, 'completion-carries-call-before-request', 'a harmless start whose completion carries the call at seq 2, then the call presented and denied: APPROVAL_MISSING at seq 2 (it ran before anyone was asked)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    const e = effect(c, req);
    c.add({ kind: 'tool.completed', ref: e.step_id, tool_call: ALTERED, result: { paid: true } });
    caseOf(cases, 'completion-of-granted-effect-other-call', 'granted and begun as presented, then completed carrying amount 1200: the outcome carries a call other than its start\'s (APPROVAL_MISMATCH at seq 4, field tool_call)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    const e = effect(c, req);
    c.add({ kind: 'tool.updated', ref: e.step_id, tool_call: { name: 'pay_invoice', summary: 'paying INV-9' } });
    c.add({ kind: 'tool.completed', ref: e.step_id, tool_call: PAY, result: { paid: true } });
    caseOf(cases, 'completion-of-granted-effect-same-call', 'granted, begun, annotated (a tool.updated naming the start with name and summary, no arguments) and completed carrying the same call: valid, executed at seq 3', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const reqA = requestV2(c, 'req-a', OTHER);
    decideV2(c, reqA, 'granted');
    const reqB = requestV2(c, 'req-b');
    decideV2(c, reqB, 'denied');
    const e = effect(c, reqA, OTHER);
    c.add({ kind: 'tool.updated', ref: e.step_id, tool_call: ALTERED });
    c.add({ kind: 'tool.completed', ref: e.step_id, tool_call: PAY, result: { paid: true } });
    caseOf(cases, 'outcomes-of-granted-effect-carry-other-calls', 'req-a (lookup) granted and begun at seq 5, req-b (pay_invoice) denied; a tool.updated of the lookup carries amount 1200 (presented by no request: APPROVAL_MISMATCH at seq 6) and its completion the denied call (APPROVAL_MISSING at seq 7, req-b executed at seq 7)', c, [PINS.alice]);
  }
  {
    const c = deniedChain();
    c.add({ kind: 'tool.completed', ref: 'nosuch', tool_call: PAY, result: { paid: true } });
    c.add({ kind: 'tool.failed', ref: 'nosuch', tool_call: PAY, error: { message: 'timeout' } });
    c.add({ kind: 'tool.updated', ref: 'nosuch', tool_call: PAY });
    caseOf(cases, 'outcome-dangling-ref-carries-denied-call', 'denied, then a tool.completed, a tool.failed and a tool.updated naming no start and carrying the denied call: each ran it (APPROVAL_MISSING at seq 3, 4, 5), executed at seq 3', c, [PINS.alice]);
  }
  {
    const c = deniedChain();
    c.add({ kind: 'tool.executed', tool_call: PAY, result: { paid: true } });
    caseOf(cases, 'unknown-kind-carries-denied-call', 'denied, then a record of a kind this verifier does not know carrying the denied call: APPROVAL_MISSING at seq 3 (and the notice KIND_UNKNOWN)', c, [PINS.alice]);
  }
  {
    const c = deniedChain();
    c.add({ kind: 'tool.started', tool_call: [OTHER, PAY] });
    c.add({ kind: 'step', tool_call: [PAY], result: { paid: true } });
    caseOf(cases, 'array-call-carries-denied-call', 'denied, then a tool.started whose tool_call is an array holding the denied call, and a step likewise: each element is compared (APPROVAL_MISSING at seq 3 and 4)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    c.add({ kind: 'tool.started', tool_call: [PAY], meta: { approval: { request: req.step_id, request_hash: req.step_hash } } });
    caseOf(cases, 'named-effect-array-call', 'granted, then an effect naming the request whose tool_call is an array holding the presented call: not the presented call (APPROVAL_MISMATCH at seq 3, field tool_call)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const m1 = c.add({ kind: 'model.started', prompt: 'pay INV-9' });
    c.add({ kind: 'model.completed', ref: m1.step_id, tool_call: PAY });
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'denied');
    const m2 = c.add({ kind: 'model.started', prompt: 'denied; pay INV-9' });
    c.add({ kind: 'model.completed', ref: m2.step_id, tool_call: PAY });
    caseOf(cases, 'model-completed-proposes-denied-call', 'a model asks for the call (model.completed holding it) before and after it is presented and denied: a model\'s records run nothing, valid, never executed', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1', PAY, '2026-11-27T10:00:03.000Z');
    decideV2(c, req, 'granted');
    c.add({ kind: 'step', ts: '2026-11-27T10:30:00.000Z', input: { note: 'much later' } });
    effect(c, req, PAY, { ts: '2026-11-27T10:00:02.500Z' });
    caseOf(cases, 'effect-backdated-behind-later-record', 'request expiring 10:00:03, granted at 10:00:02, a step dated 10:30:00, then the effect dated 10:00:02.500: by chain order it began no earlier than 10:30:00 (APPROVAL_EXPIRED at seq 4, field ts)', c, [PINS.alice]);
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Outsider 5 (APPROVALS.md §5 step 3, step 4 as they read since): a denied call in another framework's wire shape or
// nested in lists; a same-tool call whose arguments cannot be compared; a look-alike after a grant (one grant, one
// effect) and of an unused grant; a same-tool call before its request; an effect naming a request the chain lacks.

function shapeCases(cases) {
  {
    const { c } = deniedV2();
    c.add({ kind: 'step', tool_call: { id: 'call_1', type: 'function', function: { name: PAY.name, arguments: textArgs } }, result: { paid: true } });
    caseOf(cases, 'openai-chat-call-carries-denied-call', 'denied, then a step whose tool_call is the denied call in OpenAI Chat\'s shape ({type: function, function: {name, arguments as JSON text}}): compared as that call (APPROVAL_MISSING at seq 3), executed at seq 3', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'step', tool_call: [[{ name: 'lookup', arguments: {} }], [[PAY]]], result: { paid: true } });
    caseOf(cases, 'nested-array-carries-denied-call', 'denied, then a step whose tool_call nests the denied call in lists of lists: every object at any depth is compared (APPROVAL_MISSING at seq 3)', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'step', tool_call: { toolCallId: 't1', toolName: PAY.name, input: PAY.arguments }, result: { paid: true } });
    caseOf(cases, 'ai-sdk-input-carries-denied-call', 'denied, then a step carrying the denied call in the AI SDK\'s shape (toolName, input): compared as that call (APPROVAL_MISSING at seq 3)', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'step', tool_call: { name: PAY.name, params: PAY.arguments }, result: { paid: true } });
    caseOf(cases, 'same-tool-arguments-not-comparable', 'denied, then a step running the same tool with its arguments under a member no shape names: not compared, so the notice APPROVAL_UNCHECKED at seq 3 and the request unchecked (never "never executed")', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    effect(c, req);
    c.add({ kind: 'tool.started', tool_call: { name: PAY.name, arguments: { ...PAY.arguments, retry: 1 } } });
    caseOf(cases, 'look-alike-after-grant-used', 'granted and executed at seq 3, then the same tool with one member added, naming no request: one grant authorises one effect, so the notice APPROVAL_UNCHECKED at seq 4; the request keeps its effect (executed at seq 3)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'granted');
    c.add({ kind: 'tool.started', tool_call: { name: PAY.name, arguments: { ...PAY.arguments, retry: 1 } } });
    caseOf(cases, 'look-alike-of-unused-grant', 'granted, never named by an effect, then the same tool with one member added: the notice APPROVAL_UNCHECKED at seq 3 and the request unchecked ("not executed" is not proven)', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    c.add({ kind: 'tool.started', tool_call: { name: PAY.name, arguments: { ...PAY.arguments, amount: 12 } } });
    const req = requestV2(c, 'req-1');
    decideV2(c, req, 'denied');
    caseOf(cases, 'same-tool-before-request', 'the same tool run with other arguments at seq 1, then the call presented and denied: the notice APPROVAL_UNCHECKED at the request (seq 2), unchecked', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'tool.started', tool_call: PAY, meta: { approval: { request: 'req-9', request_hash: 'sha256:' + '0'.repeat(64) } } });
    caseOf(cases, 'effect-naming-unknown-request', 'denied, then an effect running the denied call that names a request the chain does not hold: APPROVAL_MISSING at seq 3, and the request that presented the call names it as its effect', c, [PINS.alice]);
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Outsider 6 (APPROVALS.md §5 step 3 "Arguments given as text", step 4 as it reads since): text arguments whose
// numbers JSON.parse rounds; a denied call inside a message wrapper; an outcome of a granted start carrying another
// tool without comparable arguments; a start whose tool_call is null.

function outsider6Cases(cases) {
  {
    const c = chain();
    start(c);
    const presented = { name: 'transfer', arguments: '{"to_account":9007199254740992,"eur":5000}' };
    const req = requestV2(c, 'req-1', presented);
    decideV2(c, req, 'granted');
    effect(c, req, { name: 'transfer', arguments: '{"to_account":9007199254740993,"eur":5000}' });
    caseOf(cases, 'text-arguments-rounded-number', 'granted for text arguments naming account 9007199254740992, executed with text naming …993 (which JSON.parse reads as …992): a number that is not exact makes the text compare as the string it is, so APPROVAL_MISMATCH at seq 3', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const req = requestV2(c, 'req-1', { name: 'pay', arguments: '{ "amount": 0.1, "n": 1.0e2 }' });
    decideV2(c, req, 'granted');
    effect(c, req, { name: 'pay', arguments: { amount: 0.1, n: 100 } });
    caseOf(cases, 'text-arguments-exact-numbers', 'granted for text arguments whose numbers are all exact (0.1, 1.0e2), executed with the object they denote: the same call, valid', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'step', tool_call: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: PAY.name, arguments: textArgs } }] } });
    c.add({ kind: 'step', tool_call: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: PAY.name, input: PAY.arguments }] } });
    c.add({ kind: 'step', tool_call: { call: { name: PAY.name, arguments: PAY.arguments } } });
    c.add({ kind: 'step', tool_call: { name: 'x', type: 'function', function: { name: PAY.name, arguments: textArgs } } });
    caseOf(cases, 'message-wrapper-carries-denied-call', 'denied, then steps carrying the denied call inside an OpenAI Chat assistant message, an Anthropic message, a {"call": …} wrapper and an OpenAI call with its own name: each found (APPROVAL_MISSING at seq 3, 4, 5, 6), executed at seq 3', c, [PINS.alice]);
  }
  {
    const c = chain();
    start(c);
    const pay = requestV2(c, 'req-pay');
    decideV2(c, pay, 'granted');
    const unlock = requestV2(c, 'req-unlock', { name: 'unlock', arguments: { pin: '4821' } });
    decideV2(c, unlock, 'denied');
    const e = effect(c, pay);
    c.add({ kind: 'tool.completed', ref: e.step_id, tool_call: { name: 'unlock', parameters: { pin: '4821' } } });
    c.add({ kind: 'tool.updated', ref: e.step_id, tool_call: { name: PAY.name } });
    caseOf(cases, 'outcome-of-granted-start-other-tool-no-arguments', 'pay granted and begun at seq 5, unlock denied; the completion carries unlock with its arguments under a member no shape names: the notice APPROVAL_UNCHECKED at seq 6, unlock unchecked; a tool.updated carrying pay without arguments repeats its start (nothing)', c, [PINS.alice]);
  }
  {
    const { c } = deniedV2();
    c.add({ kind: 'tool.started', tool_call: null, input: PAY });
    c.add({ kind: 'tool.started', tool_call: null, input: 'pay the invoice' });
    caseOf(cases, 'start-without-tool-call', 'denied, then a tool.started with tool_call null and the denied call in its input (APPROVAL_MISSING at seq 3), and one with no call anywhere (a call not in hand: the notice APPROVAL_UNCHECKED at seq 4)', c, [PINS.alice]);
  }
  {
    // Outsider E: a call the writer stored as a part (a tool_call of 1 KiB or more, PARTS.md §3) shows no call in its
    // line; read as a wrapper, the denied call inside was "never executed". A part reference where calls are read is
    // a call not in hand (§5 step 5).
    const part = (n) => ({ '$stepchain:part': { digest: 'sha256:' + sha256hex(enc.encode(`part ${n}`)), file: 'sha256:' + sha256hex(enc.encode(`file ${n}`)), size: 1552 } });
    const { c } = deniedV2();
    c.add({ kind: 'tool.started', tool_call: part(1) });
    c.add({ kind: 'step', tool_call: { role: 'assistant', content: null, tool_calls: part(2) } });
    c.add({ kind: 'tool.started', tool_call: null, input: part(3) });
    c.add({ kind: 'step', tool_call: { name: PAY.name, arguments: part(4) } });
    caseOf(cases, 'calls-in-a-part', 'denied, then a tool.started whose whole tool_call is a part reference (seq 3), a step whose assistant message holds its tool_calls as a part (seq 4), a tool.started with tool_call null and its input a part (seq 5): each a call not in hand, the notice APPROVAL_UNCHECKED, and the denied request unchecked, never "never executed"; a call whose arguments alone are a part is compared by address (seq 6: another address than the presented object, no finding of its own beyond the same-tool notice)', c, [PINS.alice]);
  }
  {
    // Outsider E: a call run before its request and again after it: the request's effect is the first (§6).
    const c = chain();
    start(c);
    c.add({ kind: 'step', step_id: 'early', tool_call: PAY });
    requestV2(c, 'req-1');
    c.add({ kind: 'step', step_id: 'late', tool_call: PAY });
    caseOf(cases, 'ran-before-and-after-request', 'the presented call run at seq 1, requested at seq 2, run again at seq 3: APPROVAL_MISSING at seq 1 and at seq 3, and the request\'s effect is the record at seq 1, the first that ran it', c, [PINS.alice]);
  }

}
