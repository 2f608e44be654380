// Independent time and co-signatures (spec/TIME.md): receipts of a fixed 6-step journal that carry RFC 3161
// tokens (OpenSSL's, made once by scripts/time-tsa.mjs and committed in scripts/vectors-fixtures/) and DSSE
// co-signatures by fixed Ed25519 seeds, with the pins to verify them with — valid cases beside the refusals
// the spec names (another TSA, a token over another head, an expired TSA certificate, an altered token, a
// wrong signer, a policy not met, a statement of another journal). Deterministic: fixed steps, seeds and
// tokens, uncompressed tar. The timestamp subjects and statements are built here from their definitions
// (spec/TIME.md §3, §5.1) with node:crypto's SHA-256; each case's expected codes are checked against the
// library before anything is written.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ed25519 } from '@noble/curves/ed25519.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/record/index.js';
import { receiptBytes } from '../../dist/receipt/node.js';
import { verifyReceipt } from '../../dist/receipt/verify.js';
import { parseTsaCertificate, receiptAttestHooks } from '../../dist/attest/index.js';

const b64 = (b) => Buffer.from(b).toString('base64');
const sha = (b) => createHash('sha256').update(b).digest();
const must = (cond, what) => { if (!cond) throw new Error(`time vectors: ${what}`); };
// JCS of these flat objects of strings and small integers is JSON.stringify with the members sorted.
const jcs = (o) => JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1))));

const N = 6;
const genesis = makeGenesis({ journalId: 'time-vector-journal', createdAt: '2026-01-01T00:00:00.000Z' });
const G = genesisHash(genesis);
const stored = [];
for (let seq = 0, prev = G; seq < N; seq++) {
  const { record, line } = sealRecord({
    v: 1, seq, step_id: `step-${seq}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), prev_hash: prev,
    input: { text: `input ${seq}` }, model: 'vector-model', prompt: null, tool_call: null, result: { answer: `result ${seq}` },
  });
  prev = record.step_hash;
  stored.push({ segment: '0000000000000000.jsonl', seq, text: line.slice(0, -1), step_hash: record.step_hash });
}
const source = {
  genesis,
  async head() { const l = stored[stored.length - 1]; return { seq: l.seq, step_hash: l.step_hash }; },
  async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { segment: l.segment, seq: l.seq, text: l.text }; } },
  async blob() { return null; },
};
const hashAt = (seq) => stored[seq].step_hash;
/** spec/TIME.md §3: the timestamp subject of a head. */
const subject = (seq) => jcs({ genesis_hash: G, seq, step_hash: hashAt(seq), type: 'stepchain-timestamp-subject/v1' });

/** What scripts/time-tsa.mjs asks OpenSSL to stamp: SHA-256 of a subject, and which TSA signs it. */
export const SUBJECTS = {
  head: { digest: sha(subject(N - 1)).toString('hex'), signer: 'tsa' },
  seq3: { digest: sha(subject(3)).toString('hex'), signer: 'tsa' },
  'head-other-tsa': { digest: sha(subject(N - 1)).toString('hex'), signer: 'other' },
  'head-expired-tsa': { digest: sha(subject(N - 1)).toString('hex'), signer: 'expired' },
};

const FIXTURE = fileURLToPath(new URL('../vectors-fixtures/time-tsa.json', import.meta.url));
const seed = (n) => Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + n * 13 + 7) & 255);
const party = (n, name) => { const pub = ed25519.getPublicKey(seed(n)); return { name, priv: seed(n), pub, keyid: 'sha256:' + sha(pub).toString('hex') }; };
const OPERATOR = party(1, 'operator');
const PROVIDER = party(2, 'provider');
const APPROVER = party(3, 'approver');
const STRANGER = party(4, 'stranger');
const PAYLOAD_TYPE = 'application/vnd.stepchain.cosignature+json';
const pae = (type, body) => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body]);
/** spec/TIME.md §5: a statement over from..to, signed by each party (the envelope's signatures sorted by keyid). */
function envelope(from, to, signers, { genesis_hash = G, sigOf = (p) => p } = {}) {
  const payload = Buffer.from(jcs({ from, genesis_hash, prev_hash: from === 0 ? G : hashAt(from - 1), step_hash: hashAt(to), to, type: 'stepchain-cosignature/v1' }));
  const signatures = signers.map((p) => ({ keyid: p.keyid, sig: b64(ed25519.sign(pae(PAYLOAD_TYPE, payload), sigOf(p).priv)) })).sort((a, b) => (a.keyid < b.keyid ? -1 : 1));
  return { payload: b64(payload), payloadType: PAYLOAD_TYPE, signatures };
}

async function verify(c) {
  const hooks = receiptAttestHooks({
    ...(c.tsa_certs ? { tsa: c.tsa_certs.map((pem) => parseTsaCertificate(pem).tsa) } : {}),
    ...(c.cosigners ? { cosigners: c.cosigners.map((k) => ({ key: Buffer.from(k.public_key, 'base64'), name: k.name })) } : {}),
    ...(c.threshold !== undefined ? { threshold: c.threshold } : {}),
  });
  const r = await hooks.finish(await verifyReceipt(Buffer.from(c.base64, 'base64'), { extensions: hooks.extensions, onLine: hooks.onLine }));
  return { ok: r.ok, codes: r.problems.map((p) => p.code) };
}

export async function generate() {
  must(existsSync(FIXTURE), `${FIXTURE} is missing: run node scripts/time-tsa.mjs once (it needs openssl)`);
  const fx = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  const token = (name) => fx.tokens[name];
  const receipt = async (members, range = {}) => b64(await receiptBytes(source, { ...range, extra: members }));
  const stamp = (name, seq = N - 1, tok = token(name)) => ({ timestamps: [{ seq, step_hash: hashAt(seq), token: tok }] });
  const pins = (...ps) => ps.map((p) => ({ name: p.name, public_key: b64(p.pub) }));
  const ok = { ok: true, codes: [] };
  const bad = (...codes) => ({ ok: false, codes });
  const cases = [];
  const add = async (c) => {
    const got = await verify(c);
    must(JSON.stringify(got) === JSON.stringify(c.expect), `${c.id}: got ${JSON.stringify(got)}, expected ${JSON.stringify(c.expect)}`);
    cases.push(c);
  };
  const tsa = [fx.certificates.tsa];
  // The token's bytes: flip one bit of the TSTInfo's hashed message (it starts 32 bytes into the message imprint's octet string).
  const altered = (() => {
    const der = Buffer.from(token('head'), 'base64');
    const at = der.indexOf(Buffer.from(SUBJECTS.head.digest, 'hex'));
    must(at > 0, 'the head token holds its imprint');
    der[at + 5] ^= 1;
    return b64(der);
  })();

  await add({ id: 'timestamp-valid', comment: 'steps 0..5 with a token over the head from the pinned TSA: existed no later than its genTime', result: 'valid', tsa_certs: tsa, base64: await receipt(stamp('head')), expect: ok });
  await add({ id: 'timestamp-unpinned', comment: 'the same receipt without a pinned TSA certificate: the token is carried, not checked', result: 'valid', base64: await receipt(stamp('head')), expect: ok });
  await add({ id: 'timestamp-partial', comment: 'a token over step 3 carried by the receipt of steps 2..4 (the head it stamps is inside the range)', result: 'valid', tsa_certs: tsa, base64: await receipt(stamp('seq3', 3), { from: 2, to: 4 }), expect: ok });
  await add({ id: 'timestamp-wrong-tsa', comment: 'the token of another TSA, with this TSA\'s certificate pinned', result: 'invalid', tsa_certs: tsa, base64: await receipt(stamp('head-other-tsa')), expect: bad('TIMESTAMP_SIGNER') });
  await add({ id: 'timestamp-other-head', comment: 'a token over the head at seq 3, presented as stamping the head at seq 5 (a token over a different checkpoint of the chain)', result: 'invalid', tsa_certs: tsa, base64: await receipt(stamp('head', N - 1, token('seq3'))), expect: bad('TIMESTAMP_MISMATCH') });
  await add({ id: 'timestamp-step-hash-altered', comment: 'the entry names another step_hash than the chain\'s at its seq', result: 'invalid', tsa_certs: tsa, base64: await receipt({ timestamps: [{ seq: N - 1, step_hash: hashAt(N - 2), token: token('head') }] }), expect: bad('TIMESTAMP_MISMATCH') });
  await add({ id: 'timestamp-expired-tsa-cert', comment: 'a token whose genTime is after its TSA certificate expired (2021-01-01)', result: 'invalid', tsa_certs: [fx.certificates.expired], base64: await receipt(stamp('head-expired-tsa')), expect: bad('TIMESTAMP_CERT_EXPIRED') });
  await add({ id: 'timestamp-token-altered', comment: 'one bit of the token\'s message imprint flipped', result: 'invalid', tsa_certs: tsa, base64: await receipt({ timestamps: [{ seq: N - 1, step_hash: hashAt(N - 1), token: altered }] }), expect: bad('TIMESTAMP_MISMATCH') });
  await add({ id: 'timestamp-missing', comment: 'a TSA certificate pinned, and no token carried', result: 'invalid', tsa_certs: tsa, base64: await receipt(undefined), expect: bad('TIMESTAMP_MISSING') });

  const three = pins(OPERATOR, PROVIDER, APPROVER);
  await add({ id: 'cosign-2-of-3', comment: 'the operator and the provider signed steps 0..5; policy: 2 of operator, provider, approver', result: 'valid', cosigners: three, threshold: 2, base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR, PROVIDER])] }), expect: ok });
  await add({ id: 'cosign-ranges', comment: 'the approver signed steps 2..3 only, the operator 0..5: both count', result: 'valid', cosigners: pins(OPERATOR, APPROVER), base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR]), envelope(2, 3, [APPROVER])] }), expect: ok });
  await add({ id: 'cosign-unpinned', comment: 'co-signatures carried, no co-signer pinned: checked for binding only', result: 'valid', base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR, STRANGER])] }), expect: ok });
  await add({ id: 'cosign-wrong-signer', comment: 'a stranger\'s signature under the provider\'s key id', result: 'invalid', cosigners: three, threshold: 2, base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR, PROVIDER], { sigOf: (p) => (p === PROVIDER ? STRANGER : p) })] }), expect: bad('COSIGNATURE_INVALID', 'COSIGN_QUORUM') });
  await add({ id: 'cosign-quorum-not-met', comment: 'only the operator signed; policy: 2 of 3', result: 'invalid', cosigners: three, threshold: 2, base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR, STRANGER])] }), expect: bad('COSIGN_QUORUM') });
  await add({ id: 'cosign-other-journal', comment: 'a statement naming another journal\'s genesis hash', result: 'invalid', cosigners: three, threshold: 1, base64: await receipt({ cosignatures: [envelope(0, N - 1, [OPERATOR], { genesis_hash: 'sha256:' + '5a'.repeat(32) })] }), expect: bad('COSIGNATURE_MISMATCH', 'COSIGN_QUORUM') });
  return { 'time.json': { format: 'stepchain-vectors/v1', kind: 'time', description: 'receipts with RFC 3161 time-stamp tokens and co-signatures (spec/TIME.md §9): base64 is the receipt; tsa_certs (PEM), cosigners (name and base64 public key) and threshold are the pins; expect is ok and the problem codes in order', cases } };
}
