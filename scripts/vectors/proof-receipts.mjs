// Receipts with transparency proofs (spec/RECEIPT.md §4.5, spec/PROOFS.md §9.8): receipts of a fixed
// 37-step journal that carry a signed checkpoint and the inclusion proof of their range, and receipts checked
// against an earlier checkpoint — valid cases beside mutation-derived invalid ones. Deterministic: fixed
// steps, fixed Ed25519 seeds and cosignature times, uncompressed tar. Every expectation is checked against
// an independent recursive RFC 9162 Merkle tree over node:crypto's SHA-256 written here, and against the
// code each mutation is meant to cause; a disagreement stops the generator before it writes.
import { createHash } from 'node:crypto';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/record/index.js';
import { receiptBytes } from '../../dist/receipt/node.js';
import {
  MemoryTree, SIG_COSIGNATURE_V1, addSignatures, consistencyProofDocument, cosignCheckpoint, journalOrigin, noteSigner, parseVerifierKey,
  proveConsistency, proveInclusion, serializeProofDocument, signCheckpoint, stepLeafHash, verifierKey, verifyProvenReceipt,
} from '../../dist/proofs/index.js';

const enc = new TextEncoder();
const b64 = (b) => Buffer.from(b).toString('base64');
const sha = (...parts) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return new Uint8Array(h.digest()); };
const k = (n) => { let p = 1; while (p * 2 < n) p *= 2; return p; };
const mth = (d) => (d.length === 0 ? sha() : d.length === 1 ? d[0] : sha(Uint8Array.of(1), mth(d.slice(0, k(d.length))), mth(d.slice(k(d.length)))));
const must = (cond, what) => { if (!cond) throw new Error(`proof-receipts vectors: ${what}`); };

const N = 37;
const genesis = makeGenesis({ journalId: 'vector-journal', createdAt: '2026-01-01T00:00:00.000Z' });
const stored = [];
for (let seq = 0, prev = genesisHash(genesis); seq < N; seq++) {
  const { record, line } = sealRecord({
    v: 1, seq, step_id: `step-${seq}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), prev_hash: prev,
    input: { text: `input ${seq}` }, model: 'vector-model', prompt: null, tool_call: null, result: { answer: `result ${seq}` },
  });
  prev = record.step_hash;
  stored.push({ segment: `${String(Math.floor(seq / 8) * 8).padStart(16, '0')}.jsonl`, seq, text: line.slice(0, -1), step_hash: record.step_hash });
}
const source = {
  genesis,
  async head() { const l = stored[stored.length - 1]; return { seq: l.seq, step_hash: l.step_hash }; },
  async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { segment: l.segment, seq: l.seq, text: l.text }; } },
  async blob() { return null; },
};
const LEAVES = stored.map((l) => sha(Uint8Array.of(0), Buffer.from(l.step_hash.slice(7), 'hex')));
const ROOT = (n) => mth(LEAVES.slice(0, n));
const seed = (n) => Uint8Array.from({ length: 32 }, (_, i) => (i * 31 + n * 11 + 3) & 255);
const ORIGIN = journalOrigin({ authority: 'agents.example.com', journalId: 'vector-journal', genesisHash: genesisHash(genesis) });
const OTHER_ORIGIN = journalOrigin({ authority: 'agents.example.com', journalId: 'vector-journal', genesisHash: 'sha256:' + '5a'.repeat(32) });
const LOG = noteSigner(ORIGIN, seed(1));
const OTHER_LOG = noteSigner(OTHER_ORIGIN, seed(1));
const STRANGER = noteSigner(ORIGIN, seed(66));
const WITNESS = noteSigner('witness1.example/w', seed(10), SIG_COSIGNATURE_V1, () => 1_800_000_000);

export async function generate() {
  const tree = new MemoryTree();
  for (const l of stored) tree.append(stepLeafHash(l.step_hash));
  const cp = (size, signer = LOG, origin = signer.name) => signCheckpoint({ origin, size, root: ROOT(size) }, signer);
  const member = async (note, from, to, size) => ({ checkpoint: note, hashes: (await proveInclusion(tree, from, to, size)).map(b64) });
  const receipt = async (from, to, proof) => b64(await receiptBytes(source, { from, to, ...(proof ? { extra: { proof } } : {}) }));
  const policies = {
    log: { log: verifierKey(LOG), witnesses: [], quorum: 0 },
    'log+1-of-1': { log: verifierKey(LOG), witnesses: [verifierKey(WITNESS)], quorum: 1 },
    other: { log: verifierKey(OTHER_LOG), witnesses: [], quorum: 0 },
  };
  const cases = [];
  const add = async (c) => {
    // The library's verdict must be the one the case states (and the reference agrees for the valid ones).
    const got = await verify(c, policies);
    must(JSON.stringify(got) === JSON.stringify(c.expect), `${c.id}: got ${JSON.stringify(got)}, expected ${JSON.stringify(c.expect)}`);
    cases.push(c);
  };
  const cp37 = cp(N);
  const cosigned = addSignatures(cp37, cosignCheckpoint(cp37, WITNESS));
  const m = await member(cp37, 3, 9, N);
  must(m.hashes.length === 6, 'the range proof of 3..9 of 37 has six hashes (PROOFS.md §1)');
  const ok = { ok: true, codes: [] };
  const bad = (...codes) => ({ ok: false, codes });

  await add({ id: 'partial-proof-log', comment: 'steps 3..9 of 37 with the checkpoint of size 37 and the range proof; the log key pinned', result: 'valid', policy: 'log', base64: await receipt(3, 9, m), expect: ok });
  await add({ id: 'partial-proof-unpinned', comment: 'the same receipt without a pinned key: the proof is checked, the signer is not', result: 'valid', base64: await receipt(3, 9, m), expect: ok });
  await add({ id: 'partial-proof-witness', comment: 'the checkpoint cosigned by the witness; policy: the log key and 1 of 1 witness', result: 'valid', policy: 'log+1-of-1', base64: await receipt(3, 9, await member(cosigned, 3, 9, N)), expect: ok });
  const flipped = { ...m, hashes: [b64(Uint8Array.from(Buffer.from(m.hashes[0], 'base64'), (x, i) => (i === 0 ? x ^ 1 : x))), ...m.hashes.slice(1)] };
  await add({ id: 'partial-proof-hash-flipped', comment: 'one bit of the first proof hash flipped', result: 'invalid', policy: 'log', base64: await receipt(3, 9, flipped), expect: bad('ROOT_MISMATCH') });
  await add({ id: 'partial-proof-hash-missing', comment: 'the last proof hash removed', result: 'invalid', policy: 'log', base64: await receipt(3, 9, { ...m, hashes: m.hashes.slice(0, -1) }), expect: bad('PROOF_LENGTH_INVALID') });
  await add({ id: 'partial-proof-of-another-range', comment: 'the proof of steps 4..10 carried by the receipt of steps 3..9 (its length is not that of 3..9)', result: 'invalid', policy: 'log', base64: await receipt(3, 9, await member(cp37, 4, 10, N)), expect: bad('PROOF_LENGTH_INVALID') });
  await add({ id: 'partial-proof-smaller-checkpoint', comment: 'a checkpoint of size 8, which does not hold step 9', result: 'invalid', policy: 'log', base64: await receipt(3, 9, { checkpoint: cp(8), hashes: [] }), expect: bad('INDEX_OUT_OF_RANGE') });
  await add({ id: 'partial-proof-stranger', comment: 'the checkpoint signed by a key that is not the pinned log key', result: 'invalid', policy: 'log', base64: await receipt(3, 9, await member(cp(N, STRANGER), 3, 9, N)), expect: bad('SIGNATURE_MISSING') });
  await add({ id: 'partial-proof-quorum', comment: 'no witness cosigned; the policy needs 1 of 1', result: 'invalid', policy: 'log+1-of-1', base64: await receipt(3, 9, m), expect: bad('QUORUM_NOT_MET') });
  const other = signCheckpoint({ origin: OTHER_ORIGIN, size: N, root: ROOT(N) }, OTHER_LOG);
  await add({ id: 'partial-proof-other-genesis', comment: 'a checkpoint whose origin names another genesis than the receipt\'s', result: 'invalid', policy: 'other', base64: await receipt(3, 9, await member(other, 3, 9, N)), expect: bad('ORIGIN_MISMATCH') });
  await add({ id: 'partial-proof-member-malformed', comment: 'a proof member with an extra member', result: 'invalid', policy: 'log', base64: await receipt(3, 9, { ...m, size: N }), expect: bad('MANIFEST_INVALID') });

  // Against an earlier checkpoint.
  const cp20 = cp(20);
  const trusted20 = { origin: ORIGIN, size: 20, root: b64(ROOT(20)) };
  await add({ id: 'complete-extends', comment: 'a complete receipt of 37 steps against the earlier checkpoint of size 20', result: 'valid', policy: 'log', trusted: trusted20, base64: await receipt(0, 36), expect: ok });
  await add({ id: 'complete-rewritten', comment: 'the earlier checkpoint\'s root differs from the root of the receipt\'s first 20 steps (a rewritten journal)', result: 'invalid', policy: 'log', trusted: { ...trusted20, root: b64(ROOT(21)) }, base64: await receipt(0, 36), expect: bad('INCONSISTENT') });
  await add({ id: 'complete-truncated', comment: 'a complete receipt of 15 steps against the earlier checkpoint of size 20 (a truncated journal)', result: 'invalid', policy: 'log', trusted: trusted20, base64: await receipt(0, 14), expect: bad('SIZE_DECREASED') });
  await add({ id: 'complete-other-origin', comment: 'an earlier checkpoint of another journal', result: 'invalid', policy: 'log', trusted: { ...trusted20, origin: OTHER_ORIGIN }, base64: await receipt(0, 36), expect: bad('ORIGIN_MISMATCH') });
  await add({ id: 'partial-unproven', comment: 'a partial receipt with a checkpoint, against an earlier checkpoint, without a consistency proof', result: 'invalid', policy: 'log', trusted: trusted20, base64: await receipt(3, 9, m), expect: bad('CONSISTENCY_UNPROVEN') });
  const consistency = serializeProofDocument(consistencyProofDocument({ oldCheckpoint: cp20, checkpoint: cp37, proof: await proveConsistency(tree, 20, N) }));
  await add({ id: 'partial-consistent', comment: 'the same, with the consistency proof file from size 20 to 37', result: 'valid', policy: 'log', trusted: trusted20, consistency, base64: await receipt(3, 9, m), expect: ok });
  await add({ id: 'partial-consistency-forked', comment: 'the consistency proof against an earlier checkpoint with another root for size 20', result: 'invalid', policy: 'log', trusted: { ...trusted20, root: b64(ROOT(21)) }, consistency, base64: await receipt(3, 9, m), expect: bad('INCONSISTENT') });
  // Equal sizes (PROOFS.md §9.8 step 2.3): the same root needs no consistency proof; another root is a fork.
  const trusted37 = { origin: ORIGIN, size: N, root: b64(ROOT(N)) };
  await add({ id: 'partial-same-size', comment: 'a partial receipt against an earlier checkpoint of its own checkpoint\'s size and root, without a consistency proof', result: 'valid', policy: 'log', trusted: trusted37, base64: await receipt(3, 9, m), expect: ok });
  await add({ id: 'partial-same-size-forked', comment: 'the earlier checkpoint has the receipt\'s checkpoint\'s size but another root: two trees of one size', result: 'invalid', policy: 'log', trusted: { ...trusted37, root: b64(ROOT(21)) }, base64: await receipt(3, 9, m), expect: bad('FORKED') });
  await add({ id: 'complete-same-size-forked', comment: 'a complete receipt of 37 steps against an earlier checkpoint of size 37 with another root', result: 'invalid', policy: 'log', trusted: { ...trusted37, root: b64(ROOT(21)) }, base64: await receipt(0, 36), expect: bad('FORKED') });

  return {
    'proof-receipts.json': {
      format: 'stepchain-vectors/v1',
      kind: 'proof-receipts',
      description: 'Receipts carrying a checkpoint and the inclusion proof of their range (spec/RECEIPT.md §4.5), and receipts checked against an earlier checkpoint (spec/PROOFS.md §9.8). base64 is an uncompressed receipt; policy names one of policies (vkeys; quorum); trusted is the earlier checkpoint (origin, size, base64 root); consistency a proof file (§7.4). expect: ok and the problem codes after the receipt\'s own, in order. The journal: 37 steps, step i with input {"text":"input i"} and result {"answer":"result i"}.',
      policies,
      cases,
    },
  };
}

async function verify(c, policies) {
  const p = c.policy ? policies[c.policy] : null;
  const policy = p && { log: parseVerifierKey(p.log), witnesses: p.witnesses.map(parseVerifierKey), quorum: p.quorum };
  const trusted = c.trusted && { origin: c.trusted.origin, size: c.trusted.size, root: new Uint8Array(Buffer.from(c.trusted.root, 'base64')) };
  const r = await verifyProvenReceipt(new Uint8Array(Buffer.from(c.base64, 'base64')), { ...(policy ? { policy } : {}), ...(trusted ? { trusted } : {}), ...(c.consistency ? { consistency: c.consistency } : {}) });
  return { ok: r.ok, codes: r.problems.map((x) => x.code) };
}
