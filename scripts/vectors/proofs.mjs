// Transparency-log proof vectors (spec/PROOFS.md): the leaf and roots of a 37-step tree, inclusion proofs
// of single steps and ranges, consistency proofs, tree states, signed notes, checkpoints with witness
// cosignatures, the witness check, proof files and journal origins — valid cases beside mutation-derived
// invalid ones. Deterministic: fixed step hashes, fixed Ed25519 seeds and cosignature times. Built from
// dist/, and every expectation is checked against facts that do not depend on it: a recursive RFC 9162
// Merkle tree over node:crypto's SHA-256 written here, node:crypto's Ed25519 for every signature, and
// the code each mutation is meant to cause. A disagreement stops the generator before it writes.
import { createHash, createPublicKey, verify as nodeVerify } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  MemoryTree, SIG_COSIGNATURE_V1, TreeFrontier, addSignatures, checkWitnessUpdate, consistencyProofDocument, cosignCheckpoint, formatCheckpoint,
  inclusionProofDocument, journalOrigin, noteSigner, noteVerifier, openNote, parseNote, parseVerifierKey, proveConsistency, proveInclusion,
  serializeProofDocument, signCheckpoint, signNote, stepLeafHash, verifierKey, verifyCheckpoint, verifyConsistency, verifyProofDocument, verifyRange,
} from '../../dist/proofs/index.js';
import { formatNote } from '../../dist/proofs/note.js';

const enc = new TextEncoder();
const b64 = (b) => Buffer.from(b).toString('base64');
const unb64 = (s) => new Uint8Array(Buffer.from(s, 'base64'));

// ---- the independent reference -------------------------------------------------------------------------
const sha = (...parts) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return new Uint8Array(h.digest()); };
const refLeaf = (stepHash) => sha(Uint8Array.of(0), Buffer.from(stepHash.slice(7), 'hex'));
const node = (l, r) => sha(Uint8Array.of(1), l, r);
const k = (n) => { let p = 1; while (p * 2 < n) p *= 2; return p; };
const mth = (d) => (d.length === 0 ? sha() : d.length === 1 ? d[0] : node(mth(d.slice(0, k(d.length))), mth(d.slice(k(d.length)))));
// PROOFS.md §7.1 RANGE_PROOF(a, b, D), with b exclusive here; for b = a + 1 it is RFC 9162's PATH.
function refRange(a, b, d, lo = 0) {
  const n = d.length;
  if (a <= lo && lo + n <= b) return [];
  const s = k(n);
  if (b <= lo + s) return [...refRange(a, b, d.slice(0, s), lo), mth(d.slice(s))];
  if (a >= lo + s) return [...refRange(a, b, d.slice(s), lo + s), mth(d.slice(0, s))];
  return [...refRange(a, b, d.slice(0, s), lo), ...refRange(a, b, d.slice(s), lo + s)];
}
// RFC 9162 §2.1.4.1 SUBPROOF.
function refConsistency(m, d) {
  const sub = (m, d, whole) => {
    if (m === d.length) return whole ? [] : [mth(d)];
    const s = k(d.length);
    return m <= s ? [...sub(m, d.slice(0, s), whole), mth(d.slice(s))] : [...sub(m - s, d.slice(s), false), mth(d.slice(0, s))];
  };
  return m === 0 || m === d.length ? [] : sub(m, d, true);
}
const sameList = (x, y) => x.length === y.length && x.every((h, i) => Buffer.compare(Buffer.from(h), Buffer.from(y[i])) === 0);
const keyIdOf = (name, type, pub) => Buffer.from(sha(enc.encode(name + '\n'), Uint8Array.of(type), pub)).readUInt32BE(0);
const edVerify = (pub, msg, sig) => nodeVerify(null, msg, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub).toString('base64url') }, format: 'jwk' }), sig);

function must(cond, what) {
  if (!cond) throw new Error(`proofs vectors: ${what}`);
}

// ---- the fixed world -----------------------------------------------------------------------------------
const N = 37;
const STEPS = Array.from({ length: N }, (_, i) => 'sha256:' + Buffer.from(sha(enc.encode(`stepchain proofs vector step ${i}`))).toString('hex'));
const LEAVES = STEPS.map(refLeaf);
const ROOT = (n) => mth(LEAVES.slice(0, n));
const GENESIS_HASH = 'sha256:' + Buffer.from(sha(enc.encode('stepchain proofs vector genesis'))).toString('hex');
const ORIGIN = journalOrigin({ authority: 'agents.example.com', journalId: 'vector-journal', genesisHash: GENESIS_HASH });
const seed = (n) => Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + n * 7 + 1) & 255);
const T0 = 1_800_000_000;
const LOG = noteSigner(ORIGIN, seed(1));
const WITNESSES = [1, 2, 3].map((i) => noteSigner(`witness${i}.example/w`, seed(10 + i), SIG_COSIGNATURE_V1, () => T0 + i));
const STRANGER = noteSigner(ORIGIN, seed(66));
const LOG_VKEY = verifierKey(LOG);
const W_VKEYS = WITNESSES.map(verifierKey);
for (const s of [LOG, ...WITNESSES, STRANGER]) must(s.keyId === keyIdOf(s.name, s.type, s.publicKey), `key id of ${s.name}`);

function flipBit(h, bit = 0) { const c = Uint8Array.from(h); c[bit >> 3] ^= 1 << (bit & 7); return c; }
const flipB64 = (s, bit) => b64(flipBit(unb64(s), bit));

export async function generate() {
  const tree = new MemoryTree();
  for (const l of LEAVES) tree.append(stepLeafHash(STEPS[tree.size]));
  for (let n = 0; n <= N; n++) must(b64(ROOT(n)) === b64(mth(LEAVES.slice(0, n))), `root ${n}`);
  const cases = [];
  const add = (c) => cases.push(c);

  // -- leaves and roots
  add({ id: 'roots-37', comment: 'the leaf hash of each of 37 step hashes, and the root of the first n steps for n = 0..37', result: 'valid', kind: 'roots',
    steps: STEPS, leaf_hashes: LEAVES.map(b64), roots: Array.from({ length: N + 1 }, (_, n) => b64(ROOT(n))) });

  // -- inclusion proofs, and their mutations
  const inclusion = async (id, comment, from, to, size) => {
    const hashes = await proveInclusion(tree, from, to, size);
    must(sameList(hashes, refRange(from, to + 1, LEAVES.slice(0, size))), `${id} proof differs from the reference`);
    const base = { kind: 'inclusion', from, to, size, steps: STEPS.slice(from, to + 1), root: b64(ROOT(size)), hashes: hashes.map(b64) };
    add({ id, comment, result: 'valid', ...base, expect: { ok: true } });
    return base;
  };
  const mutate = (base, id, comment, change, code) => add({ id, comment, result: 'invalid', ...base, ...change, expect: { ok: false, code } });
  const single = await inclusion('inclusion-13-of-37', 'one step: the RFC 9162 audit path of leaf 13', 13, 13, 37);
  await inclusion('inclusion-0-of-1', 'the only step of a one-step tree: an empty proof', 0, 0, 1);
  await inclusion('inclusion-0-of-37', 'the first step', 0, 0, 37);
  await inclusion('inclusion-36-of-37', 'the last step, on the right edge', 36, 36, 37);
  await inclusion('inclusion-5-of-8', 'a step of a perfect tree', 5, 5, 8);
  const range = await inclusion('inclusion-range-3-9-of-37', 'steps 3..9: the left edge of 3, the right edge of 9, nothing inside', 3, 9, 37);
  await inclusion('inclusion-range-16-31-of-37', 'steps 16..31: one whole perfect subtree', 16, 31, 37);
  await inclusion('inclusion-range-30-36-of-37', 'steps 30..36: a range ending at the tree\'s last step', 30, 36, 37);
  await inclusion('inclusion-range-0-36-of-37', 'every step: an empty proof', 0, 36, 37);
  await inclusion('inclusion-range-1-6-of-7', 'steps 1..6 of 7', 1, 6, 7);
  for (const [base, tag] of [[single, '13-of-37'], [range, 'range-3-9-of-37']]) {
    mutate(base, `invalid-inclusion-${tag}-hash-bit`, 'one bit of the second proof hash flipped', { hashes: base.hashes.map((h, i) => (i === 1 ? flipB64(h, 77) : h)) }, 'ROOT_MISMATCH');
    mutate(base, `invalid-inclusion-${tag}-hash-dropped`, 'the last proof hash removed', { hashes: base.hashes.slice(0, -1) }, 'PROOF_LENGTH_INVALID');
    mutate(base, `invalid-inclusion-${tag}-hash-added`, 'the root appended to the proof', { hashes: [...base.hashes, base.root] }, 'PROOF_LENGTH_INVALID');
    mutate(base, `invalid-inclusion-${tag}-hashes-swapped`, 'the first two proof hashes swapped', { hashes: [base.hashes[1], base.hashes[0], ...base.hashes.slice(2)] }, 'ROOT_MISMATCH');
    mutate(base, `invalid-inclusion-${tag}-root`, 'one bit of the root flipped', { root: flipB64(base.root, 3) }, 'ROOT_MISMATCH');
    mutate(base, `invalid-inclusion-${tag}-step`, 'the first step hash replaced by the next step\'s', { steps: [STEPS[base.to + 1], ...base.steps.slice(1)] }, 'ROOT_MISMATCH');
    // Claimed elsewhere, the proof fails on its length when the reference proof there has another length.
    const elsewhere = (from, to, size) => (refRange(from, to + 1, LEAVES.slice(0, size)).length === base.hashes.length ? 'ROOT_MISMATCH' : 'PROOF_LENGTH_INVALID');
    mutate(base, `invalid-inclusion-${tag}-shifted`, 'the same steps and proof claimed one position later', { from: base.from + 1, to: base.to + 1 }, elsewhere(base.from + 1, base.to + 1, 37));
    mutate(base, `invalid-inclusion-${tag}-root-of-36`, 'checked against the root of the first 36 steps', { size: 36, root: b64(ROOT(36)) }, elsewhere(base.from, base.to, 36));
  }
  mutate(single, 'invalid-inclusion-past-the-tree', 'a step index equal to the size', { from: 37, to: 37, steps: [STEPS[13]] }, 'INDEX_OUT_OF_RANGE');
  mutate(range, 'invalid-inclusion-reversed-range', 'from after to', { from: 9, to: 3 }, 'INDEX_OUT_OF_RANGE');
  mutate(single, 'invalid-inclusion-short-hash', 'a proof hash of 31 bytes', { hashes: [b64(unb64(single.hashes[0]).subarray(1)), ...single.hashes.slice(1)] }, 'PROOF_MALFORMED');
  mutate(single, 'invalid-inclusion-not-a-digest', 'a step hash in uppercase hex', { steps: [single.steps[0].toUpperCase().replace('SHA256', 'sha256')] }, 'PROOF_MALFORMED');

  // -- consistency proofs, and their mutations
  const consistency = async (id, comment, m, n) => {
    const hashes = await proveConsistency(tree, m, n);
    must(sameList(hashes, refConsistency(m, LEAVES.slice(0, n))), `${id} proof differs from the reference`);
    const base = { kind: 'consistency', old_size: m, old_root: b64(ROOT(m)), size: n, root: b64(ROOT(n)), hashes: hashes.map(b64) };
    add({ id, comment, result: 'valid', ...base, expect: { ok: true } });
    return base;
  };
  const c13 = await consistency('consistency-13-37', 'from 13 steps to 37', 13, 37);
  const c8 = await consistency('consistency-8-37', 'from a perfect tree of 8: its root is the first node of the walk', 8, 37);
  await consistency('consistency-1-37', 'from one step', 1, 37);
  await consistency('consistency-36-37', 'one step added', 36, 37);
  await consistency('consistency-6-7', 'RFC 6962\'s 6 → 7 shape', 6, 7);
  await consistency('consistency-37-37', 'the same tree: an empty proof', 37, 37);
  await consistency('consistency-0-37', 'from the empty tree: an empty proof, and the old root is the hash of the empty string', 0, 37);
  for (const [base, tag] of [[c13, '13-37'], [c8, '8-37']]) {
    mutate(base, `invalid-consistency-${tag}-hash-bit`, 'one bit of the first proof hash flipped', { hashes: base.hashes.map((h, i) => (i === 0 ? flipB64(h, 200) : h)) }, 'INCONSISTENT');
    mutate(base, `invalid-consistency-${tag}-hash-dropped`, 'the last proof hash removed', { hashes: base.hashes.slice(0, -1) }, 'PROOF_LENGTH_INVALID');
    mutate(base, `invalid-consistency-${tag}-hash-added`, 'a hash appended', { hashes: [...base.hashes, base.root] }, 'PROOF_LENGTH_INVALID');
    mutate(base, `invalid-consistency-${tag}-old-root`, 'one bit of the old root flipped', { old_root: flipB64(base.old_root, 9) }, 'INCONSISTENT');
    mutate(base, `invalid-consistency-${tag}-new-root`, 'one bit of the new root flipped', { root: flipB64(base.root, 9) }, 'INCONSISTENT');
    mutate(base, `invalid-consistency-${tag}-swapped`, 'old and new swapped', { old_size: base.size, old_root: base.root, size: base.old_size, root: base.old_root }, 'SIZE_DECREASED');
  }
  mutate(c13, 'invalid-consistency-same-size-fork', 'two roots for one size', { old_size: 37, old_root: b64(ROOT(36)), size: 37, root: b64(ROOT(37)), hashes: [] }, 'INCONSISTENT');
  mutate(c13, 'invalid-consistency-empty-old-root', 'the empty tree with a root other than the empty hash', { old_size: 0, old_root: b64(ROOT(1)), hashes: [] }, 'INCONSISTENT');
  mutate(c13, 'invalid-consistency-from-zero-with-proof', 'a proof from the empty tree that is not empty', { old_size: 0, old_root: b64(sha()) }, 'PROOF_LENGTH_INVALID');
  // A journal truncated to 30 steps then extended to 37 with other steps, against the checkpoint of 33.
  const rewrittenLeaves = [...LEAVES.slice(0, 30), ...Array.from({ length: 7 }, (_, i) => refLeaf('sha256:' + Buffer.from(sha(enc.encode(`rewritten ${i}`))).toString('hex')))];
  const rewritten = new MemoryTree();
  for (const l of rewrittenLeaves) rewritten.append(l);
  add({ id: 'invalid-consistency-truncated-and-extended', comment: 'the checkpoint of 33 steps against a journal truncated to 30 and re-extended to 37', result: 'invalid', kind: 'consistency',
    old_size: 33, old_root: b64(ROOT(33)), size: 37, root: b64(mth(rewrittenLeaves)), hashes: (await proveConsistency(rewritten, 33, 37)).map(b64), expect: { ok: false, code: 'INCONSISTENT' } });

  // -- tree states
  const frontier = new TreeFrontier();
  for (const s of STEPS.slice(0, 13)) frontier.append(stepLeafHash(s));
  const state = frontier.toJSON();
  must(b64(frontier.root()) === b64(ROOT(13)), 'frontier root');
  add({ id: 'tree-state-13', comment: 'the state after 13 steps: subtrees of 8, 4 and 1 leaves', result: 'valid', kind: 'tree-state', state, expect: { ok: true, size: 13, root: b64(ROOT(13)) } });
  add({ id: 'tree-state-0', comment: 'the empty tree', result: 'valid', kind: 'tree-state', state: { format: 'stepchain-tree/v1', nodes: [], size: 0 }, expect: { ok: true, size: 0, root: b64(sha()) } });
  for (const [id, comment, bad] of [
    ['invalid-tree-state-node-count', 'two nodes for size 13 (three one bits)', { ...state, nodes: state.nodes.slice(1) }],
    ['invalid-tree-state-size', 'size 12 with the nodes of 13', { ...state, size: 12 }],
    ['invalid-tree-state-short-node', 'a node of 16 bytes', { ...state, nodes: [state.nodes[0], state.nodes[1], b64(new Uint8Array(16))] }],
    ['invalid-tree-state-extra-member', 'a member the format does not define', { ...state, head: 'x' }],
    ['invalid-tree-state-format', 'another format', { ...state, format: 'stepchain-tree/v0' }],
  ]) add({ id, comment, result: 'invalid', kind: 'tree-state', state: bad, expect: { ok: false, error: 'TREE_STATE_INVALID' } });

  // -- verifier keys
  for (const [s, role] of [[LOG, 'log'], [WITNESSES[0], 'witness']]) {
    const vkey = verifierKey(s);
    add({ id: `vkey-${role}`, comment: `the ${role} key (signature type 0x0${s.type}); key id = SHA-256(name || 0x0A || type || key)[:4]`, result: 'valid', kind: 'vkey', vkey,
      expect: { name: s.name, key_id: s.keyId.toString(16).padStart(8, '0'), type: s.type, public_key: b64(s.publicKey) } });
  }
  const [vn, vid, vb] = [LOG_VKEY.slice(0, LOG_VKEY.indexOf('+')), LOG_VKEY.split('+')[1], LOG_VKEY.slice(LOG_VKEY.indexOf('+', LOG_VKEY.indexOf('+') + 1) + 1)];
  for (const [id, comment, vkey] of [
    ['invalid-vkey-id', 'the key id of another key', `${vn}+${(parseInt(vid, 16) ^ 1).toString(16).padStart(8, '0')}+${vb}`],
    ['invalid-vkey-name', 'another name with this key id', `agents.example.com/other+${vid}+${vb}`],
    ['invalid-vkey-type', 'signature type 0x02 (ECDSA), which this implementation does not support', `${vn}+${vid}+${b64(Uint8Array.of(2, ...LOG.publicKey))}`],
    ['invalid-vkey-parts', 'no key material', `${vn}+${vid}`],
  ]) add({ id, comment, result: 'invalid', kind: 'vkey', vkey, expect: { error: 'KEY_INVALID' } });

  // -- signed notes
  const text = 'stepchain proofs vector note\n\nwith a blank line inside\n';
  const note = signNote(text, [LOG, STRANGER]);
  const sigOf = (n, name, i = 0) => parseNote(n).note.signatures.filter((s) => s.name === name)[i];
  must(edVerify(LOG.publicKey, enc.encode(text), sigOf(note, ORIGIN).signature), 'note signature (node:crypto)');
  const noteCase = (id, comment, result, n, vkeys, expect) => add({ id, comment, result, kind: 'note', text: n, vkeys, expect });
  noteCase('note-signed', 'a note with a blank line in its text, signed by the log key and by an unknown key of the same name', 'valid', note, [LOG_VKEY], { ok: true, codes: [], verified: [ORIGIN], text });
  noteCase('invalid-note-unknown-key-only', 'only a signature by a key the verifier does not know', 'invalid', signNote(text, [STRANGER]), [LOG_VKEY], { ok: false, codes: ['SIGNATURE_MISSING'] });
  noteCase('invalid-note-altered-text', 'one character of the text changed after signing', 'invalid', note.replace('vector', 'Vector'), [LOG_VKEY], { ok: false, codes: ['SIGNATURE_INVALID'] });
  noteCase('invalid-note-no-blank-line', 'the blank line before the signatures removed', 'invalid', note.replace('line inside\n\n', 'line inside\n'), [LOG_VKEY], { ok: false, codes: ['NOTE_MALFORMED'] });
  noteCase('invalid-note-cr', 'a carriage return before a newline', 'invalid', note.replace('note\n', 'note\r\n'), [LOG_VKEY], { ok: false, codes: ['NOTE_MALFORMED'] });
  noteCase('invalid-note-plus-in-name', 'a signature line whose key name holds a plus', 'invalid', note.replace('\u2014 agents', '\u2014 +agents'), [LOG_VKEY], { ok: false, codes: ['NOTE_MALFORMED'] });
  noteCase('invalid-note-hyphen', 'a signature line starting with a hyphen instead of an em dash', 'invalid', note.replace(/\u2014/g, '-'), [LOG_VKEY], { ok: false, codes: ['NOTE_MALFORMED'] });
  noteCase('invalid-note-no-final-newline', 'the final newline removed', 'invalid', note.slice(0, -1), [LOG_VKEY], { ok: false, codes: ['NOTE_MALFORMED'] });

  // -- checkpoints and cosignatures
  const cp37 = signCheckpoint({ origin: ORIGIN, size: 37, root: ROOT(37) }, LOG);
  const cosigned = (n, ws) => addSignatures(n, ws.map((w) => cosignCheckpoint(n, w)).join(''));
  const full = cosigned(cp37, WITNESSES);
  const cpText = parseNote(cp37).note.text;
  for (const [i, w] of WITNESSES.entries()) {
    const sig = sigOf(full, w.name).signature;
    must(Buffer.from(sig.subarray(0, 8)).readBigUInt64BE(0) === BigInt(T0 + i + 1), 'cosignature time');
    must(edVerify(w.publicKey, enc.encode(`cosignature/v1\ntime ${T0 + i + 1}\n${cpText}`), sig.subarray(8)), `cosignature of ${w.name} (node:crypto)`);
  }
  const policy = (quorum, witnesses = W_VKEYS) => ({ log: LOG_VKEY, witnesses, quorum });
  const cpFacts = { origin: ORIGIN, size: 37, root: b64(ROOT(37)) };
  const cosigs = (ws) => ws.map((w) => ({ name: w.name, timestamp: T0 + WITNESSES.indexOf(w) + 1 }));
  const cpCase = (id, comment, result, n, p, expect) => add({ id, comment, result, kind: 'checkpoint', text: n, policy: p, expect });
  cpCase('checkpoint-log-only', 'signed by the log; a policy with no witnesses', 'valid', cp37, policy(0, []), { ok: true, codes: [], checkpoint: cpFacts, cosignatures: [] });
  cpCase('checkpoint-2-of-3', 'the log and all three witnesses; the policy asks for 2 of 3', 'valid', full, policy(2), { ok: true, codes: [], checkpoint: cpFacts, cosignatures: cosigs(WITNESSES) });
  cpCase('checkpoint-empty-tree', 'a checkpoint of the empty tree', 'valid', signCheckpoint({ origin: ORIGIN, size: 0, root: sha() }, LOG), policy(0, []),
    { ok: true, codes: [], checkpoint: { origin: ORIGIN, size: 0, root: b64(sha()) }, cosignatures: [] });
  cpCase('invalid-checkpoint-quorum', 'one witness cosigned; the policy asks for 2', 'invalid', cosigned(cp37, WITNESSES.slice(0, 1)), policy(2), { ok: false, codes: ['QUORUM_NOT_MET'], checkpoint: cpFacts, cosignatures: cosigs(WITNESSES.slice(0, 1)) });
  const forgedLine = cosignCheckpoint(cp37, WITNESSES[0]).replace(/ (\S+)\n$/, (_, s) => ` ${flipB64(s, 8 * 20)}\n`);
  cpCase('invalid-checkpoint-forged-cosignature', 'a cosignature with one bit of its Ed25519 signature flipped, beside two good ones', 'invalid', addSignatures(cp37, forgedLine + WITNESSES.slice(1).map((w) => cosignCheckpoint(cp37, w)).join('')), policy(2),
    { ok: false, codes: ['COSIGNATURE_INVALID'], checkpoint: cpFacts, cosignatures: cosigs(WITNESSES.slice(1)) });
  const movedTime = cosignCheckpoint(cp37, WITNESSES[0]).replace(/ (\S+)\n$/, (_, s) => ` ${flipB64(s, 8 * 11 + 0)}\n`);
  cpCase('invalid-checkpoint-cosignature-time', 'a cosignature whose timestamp was changed after signing', 'invalid', addSignatures(cp37, movedTime), policy(1, W_VKEYS.slice(0, 1)),
    { ok: false, codes: ['COSIGNATURE_INVALID', 'QUORUM_NOT_MET'], checkpoint: cpFacts, cosignatures: [] });
  cpCase('invalid-checkpoint-key-not-in-policy', 'signed by another key under the log\'s name, cosigned by all witnesses', 'invalid', cosigned(signCheckpoint({ origin: ORIGIN, size: 37, root: ROOT(37) }, STRANGER), WITNESSES), policy(2),
    { ok: false, codes: ['SIGNATURE_MISSING'], checkpoint: cpFacts, cosignatures: cosigs(WITNESSES) });
  cpCase('invalid-checkpoint-altered-size', 'the size changed after signing', 'invalid', cp37.replace('\n37\n', '\n36\n'), policy(0, []), { ok: false, codes: ['SIGNATURE_INVALID'], checkpoint: { ...cpFacts, size: 36 }, cosignatures: [] });
  const otherOrigin = noteSigner(journalOrigin({ authority: 'agents.example.com', journalId: 'fork-of-vector-journal', genesisHash: GENESIS_HASH }), seed(1));
  cpCase('invalid-checkpoint-origin', 'the same key and tree under the origin of a fork (same genesis, another journal id)', 'invalid', signCheckpoint({ origin: otherOrigin.name, size: 37, root: ROOT(37) }, otherOrigin), policy(0, []),
    { ok: false, codes: ['ORIGIN_MISMATCH'], checkpoint: { ...cpFacts, origin: otherOrigin.name }, cosignatures: [] });
  cpCase('invalid-checkpoint-leading-zero', 'a tree size written with a leading zero', 'invalid', signNote(`${ORIGIN}\n037\n${b64(ROOT(37))}\n`, [LOG]), policy(0, []), { ok: false, codes: ['CHECKPOINT_MALFORMED'], checkpoint: null, cosignatures: [] });
  cpCase('invalid-checkpoint-two-lines', 'a note text of two lines', 'invalid', signNote(`${ORIGIN}\n37\n`, [LOG]), policy(0, []), { ok: false, codes: ['CHECKPOINT_MALFORMED'], checkpoint: null, cosignatures: [] });
  cpCase('invalid-checkpoint-policy-quorum', 'a policy asking for more witnesses than it lists', 'invalid', full, policy(4), { ok: false, codes: ['POLICY_INVALID'], checkpoint: null, cosignatures: [] });

  // -- the witness check
  const head = (n, leaves = LEAVES) => ({ origin: ORIGIN, size: n, root: b64(mth(leaves.slice(0, n))) });
  const witness = (id, comment, result, last, next, hashes, expect, oldSize) => add({ id, comment, result, kind: 'witness', last, ...(oldSize === undefined ? {} : { old_size: oldSize }), next, hashes, expect });
  witness('witness-first', 'a witness that never cosigned this origin: no proof needed', 'valid', null, head(13), [], { ok: true });
  witness('witness-extends', 'from the last cosigned 13 to 37', 'valid', head(13), head(37), c13.hashes, { ok: true });
  witness('invalid-witness-rewritten', 'the last cosigned 33; the journal was truncated to 30 and re-extended to 37', 'invalid', head(33), head(37, rewrittenLeaves), (await proveConsistency(rewritten, 33, 37)).map(b64), { ok: false, code: 'INCONSISTENT' });
  witness('invalid-witness-shrunk', 'the last cosigned 37; now 13', 'invalid', head(37), head(13), [], { ok: false, code: 'SIZE_DECREASED' });
  witness('invalid-witness-old-size', 'the submitter thinks the witness last cosigned 8, it cosigned 13', 'invalid', head(13), head(37), c8.hashes, { ok: false, code: 'OLD_SIZE_MISMATCH' }, 8);
  witness('invalid-witness-fork', 'the same size with another root', 'invalid', head(37), { ...head(37), root: b64(ROOT(36)) }, [], { ok: false, code: 'INCONSISTENT' });

  // -- proof files
  const incFile = serializeProofDocument(inclusionProofDocument({ checkpoint: full, from: 3, to: 9, steps: STEPS.slice(3, 10), proof: range.hashes.map(unb64) }));
  const conFile = serializeProofDocument(consistencyProofDocument({ oldCheckpoint: signCheckpoint({ origin: ORIGIN, size: 13, root: ROOT(13) }, LOG), checkpoint: full, proof: c13.hashes.map(unb64) }));
  const fileCase = (id, comment, result, textOrBytes, p, expect, trusted) => add({ id, comment, result, kind: 'proof-file',
    ...(typeof textOrBytes === 'string' ? { text: textOrBytes } : { base64: b64(textOrBytes) }), policy: p, ...(trusted ? { trusted } : {}), expect });
  fileCase('proof-file-inclusion', 'steps 3..9 against the cosigned checkpoint of 37', 'valid', incFile, policy(2), { ok: true, codes: [], type: 'inclusion', from: 3, to: 9 });
  fileCase('proof-file-consistency', 'the checkpoint of 13 is extended by the cosigned checkpoint of 37', 'valid', conFile, policy(2), { ok: true, codes: [], type: 'consistency' }, head(13));
  fileCase('invalid-proof-file-quorum', 'the inclusion file under a policy of 3 of 3 witnesses… with one missing', 'invalid',
    incFile.replace(JSON.stringify(full).slice(1, -1), JSON.stringify(cosigned(cp37, WITNESSES.slice(0, 2))).slice(1, -1)), policy(3), { ok: false, codes: ['QUORUM_NOT_MET'], type: 'inclusion', from: 3, to: 9 });
  const doc = JSON.parse(incFile);
  fileCase('invalid-proof-file-step', 'one step hash of the range replaced', 'invalid', JSON.stringify({ ...doc, steps: [STEPS[20], ...doc.steps.slice(1)] }) + '\n', policy(2), { ok: false, codes: ['ROOT_MISMATCH'], type: 'inclusion', from: 3, to: 9 });
  fileCase('invalid-proof-file-hash', 'one bit of a proof hash flipped', 'invalid', JSON.stringify({ ...doc, hashes: doc.hashes.map((h, i) => (i === 0 ? flipB64(h, 5) : h)) }) + '\n', policy(2), { ok: false, codes: ['ROOT_MISMATCH'], type: 'inclusion', from: 3, to: 9 });
  fileCase('invalid-proof-file-noncanonical', 'the same document with a space after a colon', 'invalid', incFile.replace('"from":3', '"from": 3'), policy(2), { ok: false, codes: ['PROOF_MALFORMED'], type: null, from: null, to: null });
  fileCase('invalid-proof-file-extra-member', 'a member the format does not define', 'invalid', JSON.stringify({ ...doc, root: 'x' }) + '\n', policy(2), { ok: false, codes: ['PROOF_MALFORMED'], type: null, from: null, to: null });
  fileCase('invalid-proof-file-trusted-fork', 'the consistency file, but the auditor trusts another root for size 13', 'invalid', conFile, policy(2), { ok: false, codes: ['INCONSISTENT'], type: 'consistency' }, { ...head(13), root: b64(ROOT(12)) });
  fileCase('invalid-proof-file-not-utf8', 'a byte 0xff inside the document', 'invalid', Uint8Array.from([...enc.encode(incFile.slice(0, 20)), 0xff, ...enc.encode(incFile.slice(20))]), policy(2), { ok: false, codes: ['PROOF_MALFORMED'], type: null, from: null, to: null });

  // -- origins
  add({ id: 'origin-journal', comment: 'authority / journal id / genesis hash hex', result: 'valid', kind: 'origin', parts: { authority: 'agents.example.com', journal_id: 'vector-journal', genesis_hash: GENESIS_HASH },
    expect: { origin: `agents.example.com/vector-journal/${GENESIS_HASH.slice(7)}` } });
  add({ id: 'origin-path-authority', comment: 'an authority with a path', result: 'valid', kind: 'origin', parts: { authority: 'example.com/team-a', journal_id: 'run_7', genesis_hash: GENESIS_HASH },
    expect: { origin: `example.com/team-a/run_7/${GENESIS_HASH.slice(7)}` } });
  for (const [id, comment, parts] of [
    ['invalid-origin-uppercase', 'an uppercase host name', { authority: 'Agents.example.com', journal_id: 'j', genesis_hash: GENESIS_HASH }],
    ['invalid-origin-scheme', 'a URL scheme', { authority: 'https://agents.example.com', journal_id: 'j', genesis_hash: GENESIS_HASH }],
    ['invalid-origin-plus', 'a plus in the journal id', { authority: 'agents.example.com', journal_id: 'a+b', genesis_hash: GENESIS_HASH }],
    ['invalid-origin-too-long', 'more than 255 bytes', { authority: 'a'.repeat(63) + '.' + 'b'.repeat(63) + '.example.com', journal_id: 'j'.repeat(100), genesis_hash: GENESIS_HASH }],
  ]) add({ id, comment, result: 'invalid', kind: 'origin', parts, expect: { error: 'ARGUMENT_INVALID' } });

  addIssue37Cases({ add, cpCase, fileCase, policy, cp37, cpText, cpFacts, cosigned, doc });
  await check(cases);
  return {
    'proofs.json': {
      format: 'stepchain-vectors/v1',
      kind: 'proofs',
      description: 'Transparency-log proofs (spec/PROOFS.md): leaves and roots, inclusion and consistency proofs, tree states, vkeys, signed notes, checkpoints and cosignatures, the witness check, proof files and journal origins. Hashes are standard base64. Step i of the tree is sha256:hex(SHA-256("stepchain proofs vector step <i>")). keys lists the fixed test keys (Ed25519 seeds in hex: for tests only).',
      keys: [
        { role: 'log', name: LOG.name, seed: Buffer.from(seed(1)).toString('hex'), vkey: LOG_VKEY },
        ...WITNESSES.map((w, i) => ({ role: 'witness', name: w.name, seed: Buffer.from(seed(11 + i)).toString('hex'), vkey: W_VKEYS[i], cosigns_at: T0 + i + 1 })),
        { role: 'stranger', name: STRANGER.name, seed: Buffer.from(seed(66)).toString('hex'), vkey: verifierKey(STRANGER) },
      ],
      cases,
    },
  };
}

// ---- added for issue 37: points PROOFS.md had left open, each pinned by a case -------------------------
function addIssue37Cases({ add, cpCase, fileCase, policy, cp37, cpText, cpFacts, cosigned, doc }) {
  // §8.1: a vkey splits at its first two '+' only: the base64 after them may hold '+'.
  let plus = null;
  for (let n = 100; plus === null; n++) {
    const s = noteSigner('agents.example.com/plus', seed(n));
    const v = verifierKey(s);
    if (v.split('+').length > 3) plus = s;
  }
  add({ id: 'vkey-plus-in-key', comment: 'a vkey whose base64 key material holds a plus: split at the first two pluses only (PROOFS.md §8.1)', result: 'valid', kind: 'vkey', vkey: verifierKey(plus),
    expect: { name: plus.name, key_id: plus.keyId.toString(16).padStart(8, '0'), type: plus.type, public_key: b64(plus.publicKey) } });
  add({ id: 'invalid-vkey-plus-in-name', comment: 'a name holding a plus: the text after the first plus is read as the key id, which is not 8 hex digits (PROOFS.md §8.1)', result: 'invalid', kind: 'vkey',
    vkey: `agents.example.com+plus+${verifierKey(plus).split('+').slice(1).join('+')}`, expect: { error: 'KEY_INVALID' } });

  // §8.2: a checkpoint of size 0 whose root is not SHA-256() is a malformed checkpoint.
  cpCase('invalid-checkpoint-empty-tree-root', 'a checkpoint of size 0 whose root is not the hash of the empty string (PROOFS.md §8.2)', 'invalid', signNote(`${ORIGIN}\n0\n${b64(ROOT(1))}\n`, [LOG]), policy(0, []),
    { ok: false, codes: ['CHECKPOINT_MALFORMED'], checkpoint: null, cosignatures: [] });

  // §8.1: Ed25519 as RECEIPT.md §5.1 — the cofactorless equation. A mixed-order log key A = a·B + T (T of
  // order 8) and a signature that only the cofactored equation accepts: SIGNATURE_INVALID.
  const Point = ed25519.Point;
  const L = Point.Fn.ORDER;
  const le = (x) => Uint8Array.from({ length: 32 }, (_, i) => Number((x >> BigInt(8 * i)) & 0xffn));
  const fromLe = (bytes) => bytes.reduceRight((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
  const a = 987654321n;
  const A = Point.BASE.multiplyUnsafe(a).add(Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a')).toBytes();
  const M = enc.encode(cpText);
  let mixedSig = null;
  for (let r = 1000003n; mixedSig === null; r += 1n) {
    const R = Point.BASE.multiplyUnsafe(r).toBytes();
    const kk = fromLe(createHash('sha512').update(R).update(A).update(M).digest()) % L;
    if (kk % 8n !== 0n) mixedSig = Uint8Array.from([...R, ...le((r + kk * a) % L)]);
  }
  must(ed25519.verify(mixedSig, M, A, { zip215: false }), 'the mixed-order signature holds under the cofactored equation');
  must(!edVerify(A, M, mixedSig), 'node:crypto (cofactorless) refuses the mixed-order signature');
  const mixedId = keyIdOf(ORIGIN, 1, A);
  const mixedVkey = verifierKey({ name: ORIGIN, keyId: mixedId, type: 1, publicKey: A });
  cpCase('invalid-checkpoint-mixed-order-log-key', 'a log key of mixed order and a signature that only the cofactored equation accepts: the cofactorless rule of RECEIPT.md §5.1 refuses it (PROOFS.md §8.1)', 'invalid',
    formatNote({ text: cpText, signatures: [{ name: ORIGIN, keyId: mixedId, signature: mixedSig }] }), { log: mixedVkey, witnesses: [], quorum: 0 },
    { ok: false, codes: ['SIGNATURE_INVALID'], checkpoint: cpFacts, cosignatures: [] });

  // §9.4: signatures of the wrong length, and one witness's several cosignatures.
  const logSig = parseNote(cp37).note.signatures[0];
  cpCase('invalid-checkpoint-short-signature', 'the log\'s signature cut to 63 bytes: a known key whose signature does not verify (PROOFS.md §9.4)', 'invalid',
    formatNote({ text: cpText, signatures: [{ ...logSig, signature: logSig.signature.subarray(0, 63) }] }), policy(0, []), { ok: false, codes: ['SIGNATURE_INVALID'], checkpoint: cpFacts, cosignatures: [] });
  const w0 = WITNESSES[0];
  const w0Line = cosignCheckpoint(cp37, w0);
  const w0Sig = parseNote(addSignatures(cp37, w0Line)).note.signatures[1];
  cpCase('invalid-checkpoint-short-cosignature', 'a cosignature of 71 bytes (not 8 + 64): COSIGNATURE_INVALID, and the witness does not count (PROOFS.md §9.4)', 'invalid',
    formatNote({ text: cpText, signatures: [logSig, { ...w0Sig, signature: w0Sig.signature.subarray(0, 71) }] }), policy(1, W_VKEYS.slice(0, 1)),
    { ok: false, codes: ['COSIGNATURE_INVALID', 'QUORUM_NOT_MET'], checkpoint: cpFacts, cosignatures: [] });
  const w0Later = noteSigner(w0.name, seed(11), SIG_COSIGNATURE_V1, () => T0 + 500);
  const twice = addSignatures(cp37, w0Line + cosignCheckpoint(cp37, w0Later));
  cpCase('checkpoint-witness-twice', 'one witness cosigned twice (two times): it counts once, with the time of its first line (PROOFS.md §9.4)', 'valid', twice, policy(1, W_VKEYS.slice(0, 1)),
    { ok: true, codes: [], checkpoint: cpFacts, cosignatures: [{ name: w0.name, timestamp: T0 + 1 }] });
  cpCase('invalid-checkpoint-witness-twice-quorum', 'one witness cosigned twice; the policy asks for 2 of 2: one witness counted, QUORUM_NOT_MET (PROOFS.md §8.4, §9.4)', 'invalid', twice, policy(2, W_VKEYS.slice(0, 2)),
    { ok: false, codes: ['QUORUM_NOT_MET'], checkpoint: cpFacts, cosignatures: [{ name: w0.name, timestamp: T0 + 1 }] });
  const w0Forged = cosignCheckpoint(cp37, w0Later).replace(/ (\S+)\n$/, (_, s) => ` ${flipB64(s, 8 * 20)}\n`);
  cpCase('invalid-checkpoint-witness-good-and-bad', 'one witness with a good cosignature and a forged one: the forged line is COSIGNATURE_INVALID although the witness counts (PROOFS.md §9.4)', 'invalid', addSignatures(cp37, w0Line + w0Forged), policy(1, W_VKEYS.slice(0, 1)),
    { ok: false, codes: ['COSIGNATURE_INVALID'], checkpoint: cpFacts, cosignatures: [{ name: w0.name, timestamp: T0 + 1 }] });

  // §7.4 and §9.6: from > to in a proof file is INDEX_OUT_OF_RANGE from §9.2, not PROOF_MALFORMED.
  fileCase('invalid-proof-file-reversed-range', 'an inclusion file with from 9 and to 3 (and no steps): §9.6 runs §9.2, which reports INDEX_OUT_OF_RANGE (PROOFS.md §7.4, §9.6)', 'invalid',
    JSON.stringify({ ...doc, from: 9, hashes: [], steps: [], to: 3 }) + '\n', policy(2), { ok: false, codes: ['INDEX_OUT_OF_RANGE'], type: 'inclusion', from: 9, to: 3 });
  void cosigned;
}

// Every case is run through dist/ before anything is written; Merkle cases are also run through the
// reference above (valid exactly when the proof is the reference proof for the true tree and the
// leaves and roots are the true ones).
async function check(cases) {
  const ids = new Set();
  for (const c of cases) {
    must(!ids.has(c.id), `duplicate id ${c.id}`);
    ids.add(c.id);
    const expectsValid = !(c.expect && (c.expect.ok === false || c.expect.error));
    must(c.result === (expectsValid ? 'valid' : 'invalid'), `${c.id}: result and expect disagree`);
    const got = await run(c);
    must(JSON.stringify(got) === JSON.stringify(c.expect ?? got), `${c.id}: dist/ gives ${JSON.stringify(got)}, expected ${JSON.stringify(c.expect)}`);
    if (c.kind === 'inclusion') {
      const inTree = c.size >= 1 && c.size <= N && c.from <= c.to && c.to < c.size && c.root === b64(ROOT(c.size)) && JSON.stringify(c.steps) === JSON.stringify(STEPS.slice(c.from, c.to + 1));
      const refValid = inTree && sameList(c.hashes.map(unb64), refRange(c.from, c.to + 1, LEAVES.slice(0, c.size)));
      must(refValid === c.expect.ok, `${c.id}: the reference says ${refValid}`);
    }
    if (c.kind === 'consistency' && c.old_size <= c.size && c.size <= N) {
      const refValid = c.old_root === b64(ROOT(c.old_size)) && c.root === b64(ROOT(c.size)) && sameList(c.hashes.map(unb64), refConsistency(c.old_size, LEAVES.slice(0, c.size)));
      must(refValid === c.expect.ok, `${c.id}: the reference says ${refValid}`);
    }
  }
}

const policyOf = (p) => ({ log: parseVerifierKey(p.log), witnesses: p.witnesses.map(parseVerifierKey), quorum: p.quorum });
const headOf = (h) => h && { origin: h.origin, size: h.size, root: unb64(h.root) };
const verdict = (v) => (v.ok ? { ok: true } : { ok: false, code: v.problem.code });

async function run(c) {
  switch (c.kind) {
    case 'roots': {
      const t = new TreeFrontier();
      const roots = [b64(t.root())];
      for (const s of c.steps) { t.append(stepLeafHash(s)); roots.push(b64(t.root())); }
      must(JSON.stringify(c.steps.map((s) => b64(stepLeafHash(s)))) === JSON.stringify(c.leaf_hashes), 'leaf hashes');
      must(JSON.stringify(roots) === JSON.stringify(c.roots), 'roots');
      return undefined;
    }
    case 'inclusion': {
      const leaves = c.steps.map(stepLeafHash);
      if (leaves.some((l) => l === null)) return { ok: false, code: 'PROOF_MALFORMED' };
      return verdict(verifyRange({ from: c.from, to: c.to, size: c.size, leaves, proof: c.hashes.map(unb64), root: unb64(c.root) }));
    }
    case 'consistency':
      return verdict(verifyConsistency({ oldSize: c.old_size, oldRoot: unb64(c.old_root), size: c.size, root: unb64(c.root), proof: c.hashes.map(unb64) }));
    case 'tree-state':
      try {
        const t = TreeFrontier.parse(c.state);
        return { ok: true, size: t.size, root: b64(t.root()) };
      } catch (e) {
        return { ok: false, error: e.code };
      }
    case 'vkey':
      try {
        const v = parseVerifierKey(c.vkey);
        return { name: v.name, key_id: v.keyId.toString(16).padStart(8, '0'), type: v.type, public_key: b64(v.publicKey) };
      } catch (e) {
        return { error: e.code };
      }
    case 'note': {
      const r = openNote(c.text, c.vkeys.map(parseVerifierKey));
      return r.ok ? { ok: true, codes: [], verified: r.verifiedBy.map((v) => v.name), text: r.note.text } : { ok: false, codes: r.problems.map((p) => p.code) };
    }
    case 'checkpoint': {
      const r = verifyCheckpoint(c.text, policyOf(c.policy));
      return { ok: r.ok, codes: r.problems.map((p) => p.code), checkpoint: r.checkpoint && { origin: r.checkpoint.origin, size: r.checkpoint.size, root: b64(r.checkpoint.root) }, cosignatures: r.cosignatures.map((s) => ({ name: s.name, timestamp: s.timestamp })) };
    }
    case 'witness':
      return verdict(checkWitnessUpdate({ last: headOf(c.last), next: headOf(c.next), proof: c.hashes.map(unb64), ...(c.old_size === undefined ? {} : { oldSize: c.old_size }) }));
    case 'proof-file': {
      const r = verifyProofDocument(c.text ?? unb64(c.base64), policyOf(c.policy), c.trusted ? { trusted: headOf(c.trusted) } : {});
      const out = { ok: r.ok, codes: r.problems.map((p) => p.code), type: r.type };
      if (c.expect.from !== undefined) Object.assign(out, { from: r.from, to: r.to });
      return out;
    }
    case 'origin':
      try {
        return { origin: journalOrigin({ authority: c.parts.authority, journalId: c.parts.journal_id, genesisHash: c.parts.genesis_hash }) };
      } catch (e) {
        return { error: e.code };
      }
    default:
      throw new Error(`unknown kind ${c.kind}`);
  }
}
