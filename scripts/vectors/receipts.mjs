// Receipt vectors (spec/RECEIPT.md): small receipts, valid and invalid side by side, with the report a
// verifier must produce. Built deterministically from dist/ (fixed journal, timestamps and key seed).
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { ed25519 } from '@noble/curves/ed25519.js';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestUtf8 } from '../../dist/canonical/sha256.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/record/index.js';
import { receiptBytes } from '../../dist/receipt/node.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { PAYLOAD_TYPE, pae } from '../../dist/receipt/dsse.js';
import { checksum, ustarHeader } from '../../dist/receipt/tar.js';

const enc = new TextEncoder();

function journal(steps, resultOf = (seq) => ({ answer: `result ${seq}` })) {
  const genesis = makeGenesis({ journalId: 'vector-journal', createdAt: '2026-01-01T00:00:00.000Z' });
  let prev = genesisHash(genesis);
  const stored = [];
  const blobs = new Map();
  for (let seq = 0; seq < steps; seq++) {
    let result = resultOf(seq);
    if (seq % 2 === 0) {
      const text = canonicalJson(result);
      const digest = digestUtf8(text);
      blobs.set(digest, enc.encode(text));
      result = { '$stepchain:blob': { digest, size: enc.encode(text).length } };
    }
    const { record, line } = sealRecord({
      v: 1, seq, step_id: `step-${seq}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), prev_hash: prev,
      input: { text: `input ${seq}` }, model: 'vector-model', prompt: null, tool_call: null, result,
    });
    prev = record.step_hash;
    stored.push({ segment: `${String(Math.floor(seq / 2) * 2).padStart(16, '0')}.jsonl`, seq, text: line.slice(0, -1), step_hash: record.step_hash });
  }
  return {
    genesis, stored,
    async head() { const l = stored[stored.length - 1]; return l ? { seq: l.seq, step_hash: l.step_hash } : null; },
    async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { segment: l.segment, seq: l.seq, text: l.text }; } },
    async blob(d) { return blobs.get(d) ?? null; },
  };
}

function entries(tar) {
  const out = [];
  for (let o = 0; ;) {
    const h = tar.subarray(o, o + 512);
    if (h.every((b) => b === 0)) return out;
    let name = '';
    for (let i = 0; i < 100 && h[i] !== 0; i++) name += String.fromCharCode(h[i]);
    const size = parseInt(new TextDecoder().decode(h.subarray(124, 135)), 8);
    out.push({ name, data: tar.slice(o + 512, o + 512 + size) });
    o += 512 + Math.ceil(size / 512) * 512;
  }
}

function pack(list) {
  const parts = [];
  for (const e of list) {
    const h = ustarHeader(e.name, e.data.length);
    if (e.type) {
      h[156] = e.type.charCodeAt(0);
      h.fill(0, 148, 156);
      h.set(enc.encode(checksum(h).toString(8).padStart(6, '0') + ' '), 148);
    }
    parts.push(h, e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

const sha256 = (b) => 'sha256:' + createHash('sha256').update(b).digest('hex');
const Point = ed25519.Point;
const L = Point.Fn.ORDER;
const le = (n) => { const b = new Uint8Array(32); for (let i = 0; i < 32; i++) { b[i] = Number(n & 0xffn); n >>= 8n; } return b; };
const fromLe = (b) => { let n = 0n; for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]); return n; };
const cat = (...parts) => { const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let o = 0; for (const p of parts) { out.set(p, o); o += p.length; } return out; };
/** k = SHA-512(R || A || M) mod L (RFC 8032 §5.1.7), over the bytes as given. */
const challenge = (r, a, m) => fromLe(createHash('sha512').update(r).update(a).update(m).digest()) % L;
/** The two verification equations of spec/RECEIPT.md §5.1, computed here so each vector states which one it separates. */
function equations(publicKey, sig, message) {
  const A = Point.fromBytes(publicKey, true); // ZIP-215 decoding: accepts every encoding, to evaluate the equations alone
  const R = Point.fromBytes(sig.subarray(0, 32), true);
  const s = fromLe(sig.subarray(32)) % L;
  const k = challenge(sig.subarray(0, 32), publicKey, message);
  const diff = R.add(A.multiplyUnsafe(k)).subtract(Point.BASE.multiplyUnsafe(s));
  return { cofactorless: diff.is0(), cofactored: diff.clearCofactor().is0() };
}
const must = (ok, why) => { if (!ok) throw new Error(`receipts.mjs: ${why}`); };

/**
 * Cases added by issues 14 and 15: what may follow a receipt (§3.1), the Ed25519 rules (§5.1), unusable
 * pins (§5.2, §7 step 0), the declared-size bound (§6.1), one manifest problem (§7 step 5) and the report
 * order (§7.1). Appended after the original cases, which stay byte-identical.
 */
async function secondRound({ key, complete, partial, gz, ce, pe, head, tampered }) {
  const evil = gzipSync(pack([{ name: 'evil.txt', data: enc.encode('rm -rf ~\n') }]));
  evil[9] = 0xff;
  const manifest = pe[0].data;
  const message = pae(PAYLOAD_TYPE, manifest);
  const signedWith = (publicKey, sig) => pack([pe[0], { name: 'manifest.sig.json', data: enc.encode(canonicalJson({
    envelope: { payload: base64Encode(manifest), payloadType: PAYLOAD_TYPE, signatures: [{ keyid: sha256(publicKey), sig: base64Encode(sig) }] },
    format: 'stepchain-receipt-signature/v1', public_key: base64Encode(publicKey),
  })) }, ...pe.slice(2)]);

  // A small-order key (the identity): with R = [S]B both equations hold for any message; only the
  // small-order rule refuses it.
  const identity = Point.ZERO.toBytes();
  const smallSig = cat(Point.BASE.multiplyUnsafe(7n).toBytes(), le(7n));
  must(equations(identity, smallSig, message).cofactorless && equations(identity, smallSig, message).cofactored, 'the small-order signature should satisfy both equations');
  // The same identity point, encoded non-canonically (y = p + 1): ZIP-215 verifiers accept it.
  const noncanonicalIdentity = le((1n << 255n) - 19n + 1n);
  must(Point.fromBytes(noncanonicalIdentity, true).is0(), 'y = p + 1 should decode to the identity under ZIP-215');
  // A mixed-order key A = [a]B + T (T of order 8): an honest signature by a satisfies the cofactored
  // equation; the cofactorless one fails whenever [k]T is not the identity (k mod 8 ≠ 0).
  const a = fromLe(createHash('sha512').update('stepchain mixed-order vector key').digest()) % L;
  const T = Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
  must(!T.is0() && T.multiplyUnsafe(8n).is0() && !T.multiplyUnsafe(4n).is0(), 'T should have order 8');
  const mixed = Point.BASE.multiplyUnsafe(a).add(T).toBytes();
  let mixedSig = null;
  for (let i = 0; mixedSig === null; i++) {
    const r = fromLe(createHash('sha512').update(`nonce ${i}`).digest()) % L;
    const R = Point.BASE.multiplyUnsafe(r).toBytes();
    const k = challenge(R, mixed, message);
    if (k % 8n !== 0n) mixedSig = cat(R, le((r + k * a) % L));
  }
  const mixedEq = equations(mixed, mixedSig, message);
  must(mixedEq.cofactored && !mixedEq.cofactorless, 'the mixed-order signature should separate the equations');
  must(ed25519.verify(mixedSig, message, mixed, { zip215: false }), '@noble/curves (cofactored) should accept the mixed-order signature');
  // A valid signature with S + L in place of S: both equations hold; only the range check refuses it.
  const sigDoc = JSON.parse(new TextDecoder().decode(pe[1].data));
  const goodSig = Uint8Array.from(Buffer.from(sigDoc.envelope.signatures[0].sig, 'base64'));
  const bigS = cat(goodSig.subarray(0, 32), le(fromLe(goodSig.subarray(32)) + L));
  must(fromLe(bigS.subarray(32)) < 1n << 256n && equations(key.publicKey, bigS, message).cofactorless, 'S + L should satisfy the equation');

  // A receipt whose chain entry's header claims 2 MiB more than the manifest lists, cut off after the
  // header: refused at the header (ARCHIVE_LIMIT), before anything is read, not as a truncation.
  const bomb = (() => {
    const t = pack([ce[0], ce[1]]);
    const h = ustarHeader(ce[1].name, ce[1].data.length + 2 * 1024 * 1024);
    return cat(t.subarray(0, 512 + Math.ceil(ce[0].data.length / 512) * 512), h);
  })();
  // A legitimate, highly repetitive receipt: 32 MiB of "a" in a blob compresses about 1000:1.
  const repetitive = journal(2, (seq) => (seq === 0 ? { log: 'a'.repeat(32 * 1024 * 1024) } : { answer: `result ${seq}` }));
  const repetitiveGz = gzipSync(await receiptBytes(repetitive), { level: 9 });
  repetitiveGz[9] = 0xff;
  must(repetitiveGz.length < 64 * 1024, 'the repetitive receipt should compress to under 64 KiB');
  // Manifest problems: more than one violation is one MANIFEST_INVALID (then stop); a §4 violation wins
  // over a listing beyond the limits.
  const m = JSON.parse(new TextDecoder().decode(ce[0].data));
  const twoProblems = pack([{ name: 'manifest.json', data: enc.encode(canonicalJson({ ...m, exporter: '', range: { ...m.range, to: -1 } })) }, ...ce.slice(1)]);
  const limitAndFormat = pack([{ name: 'manifest.json', data: enc.encode(canonicalJson({ ...m, chain: m.chain.map((c, i) => (i === 0 ? { ...c, size: 2 ** 31 } : c)), exporter: '' })) }, ...ce.slice(1)]);
  // Report order: receipt problems in reading order (the edited entry's DIGEST_MISMATCH, then ENTRY_MISSING
  // at the end for the blobs left out), then the chain verification's problems (HASH_MISMATCH).
  const editedNoBlobs = pack(tampered.filter((e) => !e.name.startsWith('blobs/')));
  // Within one entry: its size, then its digest, then its line count (a line removed from an entry).
  const lineRemoved = pack(ce.map((e) => (e.name === 'chain/0000000000000002.jsonl' ? { ...e, data: e.data.subarray(0, e.data.indexOf(0x0a) + 1) } : e)));

  return [
    { id: 'invalid-gzip-smuggled-member', comment: 'a 0x00 byte and a second gzip member (a tar holding evil.txt) after the receipt\'s member: readers that skip zeros extract evil.txt, so nothing may follow the member (§3.1)', result: 'invalid', bytes: cat(gz, Uint8Array.of(0), evil), options: {},
      expect: { ok: false, codes: ['ARCHIVE_INVALID'] } },
    { id: 'invalid-gzip-second-member', comment: 'two gzip members: a receipt is exactly one (§3.1)', result: 'invalid', bytes: cat(gz, evil), options: {},
      expect: { ok: false, codes: ['ARCHIVE_INVALID'] } },
    { id: 'invalid-gzip-trailing-zeros', comment: '512 zero bytes after the gzip member: zeros are allowed inside the tar stream, never after the member (§3.1)', result: 'invalid', bytes: cat(gz, new Uint8Array(512)), options: {},
      expect: { ok: false, codes: ['ARCHIVE_INVALID'] } },
    { id: 'valid-tar-record-padding', comment: 'a bare tar padded with zeros to a 10 240-byte record, as tar programs write: up to 1 MiB of zeros may follow the end marker (§3.2 item 5)', result: 'valid', bytes: cat(complete, new Uint8Array(10240 - (complete.length % 10240))), options: {},
      expect: { ok: true, codes: [], steps: 6, compressed: false } },
    { id: 'invalid-tar-after-zeros', comment: 'a second tar after a zero block following the end marker (what tar -i or ignore_zeros would read)', result: 'invalid', bytes: cat(complete, new Uint8Array(512), pack([{ name: 'evil.txt', data: enc.encode('x') }])), options: {},
      expect: { ok: false, codes: ['ARCHIVE_INVALID'] } },
    { id: 'invalid-signature-small-order-key', comment: 'public_key is the identity point: S·B = R + k·A holds for every message, so a small-order key is refused (§5.1)', result: 'invalid', bytes: signedWith(identity, smallSig), options: {},
      expect: { ok: false, codes: ['SIGNATURE_INVALID'], signed_by: null } },
    { id: 'invalid-signature-noncanonical-key', comment: 'public_key is the identity encoded with y = p + 1, which ZIP-215 decoding accepts: only canonical encodings are (§5.1)', result: 'invalid', bytes: signedWith(noncanonicalIdentity, smallSig), options: {},
      expect: { ok: false, codes: ['SIGNATURE_INVALID'], signed_by: null } },
    { id: 'invalid-signature-mixed-order-key', comment: 'public_key = a·B + T with T of order 8 and an honest signature by a: the cofactored equation holds, the cofactorless one required by §5.1 does not', result: 'invalid', bytes: signedWith(mixed, mixedSig), options: {},
      expect: { ok: false, codes: ['SIGNATURE_INVALID'], signed_by: null } },
    { id: 'invalid-signature-noncanonical-s', comment: 'the valid signature with S + L in place of S: the equation holds, but S must be below L (§5.1)', result: 'invalid', bytes: signedWith(key.publicKey, bigS), options: {},
      expect: { ok: false, codes: ['SIGNATURE_INVALID'], signed_by: null } },
    { id: 'invalid-pinned-key-empty', comment: 'an empty pinned key on a signed receipt: a pin that cannot be used is KEY_MISMATCH, never "unpinned" (§5.2, §7 step 0)', result: 'invalid', bytes: partial, options: { publicKey: '' },
      expect: { ok: false, codes: ['KEY_MISMATCH'], signed_by: key.keyId } },
    { id: 'invalid-pinned-key-small-order', comment: 'a small-order pinned key on an unsigned receipt: KEY_MISMATCH for the key, then SIGNATURE_MISSING (§7 steps 0 and 4)', result: 'invalid', bytes: complete, options: { publicKey: base64Encode(identity) },
      expect: { ok: false, codes: ['KEY_MISMATCH', 'SIGNATURE_MISSING'], signed_by: null } },
    { id: 'invalid-pinned-head-empty', comment: 'an empty pinned head: HEAD_MISMATCH, never "unpinned" (§7 step 0)', result: 'invalid', bytes: complete, options: { expectHead: '' },
      expect: { ok: false, codes: ['HEAD_MISMATCH'] } },
    { id: 'invalid-header-beyond-declared', comment: 'a chain entry header claiming 2 MiB more than the manifest lists, then nothing: the size differs (DIGEST_MISMATCH) and the entry would pass the declared size plus 1 MiB (ARCHIVE_LIMIT), refused before its data is read (§6.1)', result: 'invalid', bytes: bomb, options: {},
      expect: { ok: false, codes: ['DIGEST_MISMATCH', 'ARCHIVE_LIMIT'] } },
    { id: 'valid-gzip-repetitive', comment: '32 MiB of "a" in a blob, gzip about 1000:1: the bound is what the manifest declares, not a compression ratio (§6.1)', result: 'valid', bytes: repetitiveGz, options: {},
      expect: { ok: true, codes: [], steps: 2, compressed: true, head: repetitive.stored[1].step_hash } },
    { id: 'invalid-manifest-two-problems', comment: 'an empty exporter and a negative range.to: one MANIFEST_INVALID, then stop (§7 step 5)', result: 'invalid', bytes: twoProblems, options: {},
      expect: { ok: false, codes: ['MANIFEST_INVALID'] } },
    { id: 'invalid-manifest-limit-and-format', comment: 'a chain entry listed beyond the 1 GiB limit and an empty exporter: the §4 violation wins, MANIFEST_INVALID (§7 step 5)', result: 'invalid', bytes: limitAndFormat, options: {},
      expect: { ok: false, codes: ['MANIFEST_INVALID'] } },
    { id: 'invalid-order-receipt-then-chain', comment: 'an edited step and the blobs left out: receipt problems in reading order (DIGEST_MISMATCH, then ENTRY_MISSING at the end), then the chain\'s (HASH_MISMATCH) (§7.1)', result: 'invalid', bytes: editedNoBlobs, options: {},
      expect: { ok: false, codes: ['DIGEST_MISMATCH', 'ENTRY_MISSING', 'ENTRY_MISSING', 'ENTRY_MISSING', 'HASH_MISMATCH'] } },
    { id: 'invalid-order-within-entry', comment: 'a line removed from a chain entry: its size, digest and count problems in that order, then the chain\'s (§7.1)', result: 'invalid', bytes: lineRemoved, options: {},
      expect: { ok: false, codes: ['DIGEST_MISMATCH', 'DIGEST_MISMATCH', 'COUNT_MISMATCH', 'SEQ_GAP', 'LINK_BROKEN'] } },
  ];
}

export async function generate() {
  const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 1));
  const other = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => 200 - i));
  const j = journal(6);
  const complete = await receiptBytes(j);
  const partial = await receiptBytes(j, { from: 2, to: 4, sign: key.privateKey });
  const gz = gzipSync(complete, { level: 9 });
  gz[9] = 0xff;
  const head = (seq) => j.stored[seq].step_hash;
  const pub = base64Encode(key.publicKey);
  const ce = entries(complete);
  const pe = entries(partial);
  const tampered = ce.map((e) => (e.name === 'chain/0000000000000002.jsonl' ? { ...e, data: enc.encode(new TextDecoder().decode(e.data).replace('input 2', 'input X')) } : e));
  const badSig = pe.map((e) => (e.name === 'manifest.sig.json' ? { ...e, data: enc.encode(new TextDecoder().decode(e.data).replace(/"sig":"(.)/, (_m, c) => `"sig":"${c === 'A' ? 'B' : 'A'}`)) } : e));

  const cases = [
    { id: 'valid-complete-unsigned', comment: 'steps 0–5 with blobs, bare tar, no signature', result: 'valid', bytes: complete, options: {},
      expect: { ok: true, codes: [], scope: 'complete', range: { from: 0, to: 5 }, head: head(5), steps: 6, signed_by: null, compressed: false } },
    { id: 'valid-complete-gzip', comment: 'the same receipt gzip-compressed (OS byte 255)', result: 'valid', bytes: gz, options: { expectHead: head(5) },
      expect: { ok: true, codes: [], scope: 'complete', range: { from: 0, to: 5 }, head: head(5), steps: 6, signed_by: null, compressed: true } },
    { id: 'valid-partial-signed', comment: 'steps 2–4, signed, verified against the pinned key', result: 'valid', bytes: partial, options: { publicKey: pub },
      expect: { ok: true, codes: [], scope: 'partial', range: { from: 2, to: 4, prev_hash: head(1) }, head: head(4), steps: 3, signed_by: key.keyId, compressed: false } },
    { id: 'invalid-key-mismatch', comment: 'signed by one key, another pinned', result: 'invalid', bytes: partial, options: { publicKey: base64Encode(other.publicKey) },
      expect: { ok: false, codes: ['KEY_MISMATCH'], signed_by: key.keyId } },
    { id: 'invalid-signature-missing', comment: 'unsigned receipt, key pinned', result: 'invalid', bytes: complete, options: { publicKey: pub },
      expect: { ok: false, codes: ['SIGNATURE_MISSING'], signed_by: null } },
    { id: 'invalid-signature-tampered', comment: 'one base64 character of the signature changed', result: 'invalid', bytes: pack(badSig), options: {},
      expect: { ok: false, codes: ['SIGNATURE_INVALID'] } },
    { id: 'invalid-head-pinned', comment: 'a different head pinned', result: 'invalid', bytes: complete, options: { expectHead: head(4) },
      expect: { ok: false, codes: ['HEAD_MISMATCH'] } },
    { id: 'invalid-chain-edited', comment: 'step 2 edited inside its chain entry: the entry digest and the step hash both fail', result: 'invalid', bytes: pack(tampered), options: {},
      expect: { ok: false, codes: ['DIGEST_MISMATCH', 'HASH_MISMATCH'] } },
    { id: 'invalid-blob-absent', comment: 'the manifest lists blobs the archive lacks', result: 'invalid', bytes: pack(ce.filter((e) => !e.name.startsWith('blobs/'))), options: {},
      expect: { ok: false, codes: ['ENTRY_MISSING', 'ENTRY_MISSING', 'ENTRY_MISSING'] } },
    { id: 'invalid-symlink', comment: 'a symbolic link entry', result: 'invalid', bytes: pack([ce[0], { name: 'chain/0000000000000000.jsonl', data: new Uint8Array(0), type: '2' }]), options: {},
      expect: { ok: false, codes: ['ARCHIVE_UNSAFE'] } },
    { id: 'invalid-duplicate-entry', comment: 'a chain entry repeated', result: 'invalid', bytes: pack([ce[0], ce[1], ce[1], ...ce.slice(2)]), options: {},
      expect: { ok: false, codes: ['ARCHIVE_UNSAFE'] } },
    { id: 'invalid-traversal', comment: 'an entry named ../manifest.json', result: 'invalid', bytes: pack([{ name: '../manifest.json', data: ce[0].data }]), options: {},
      expect: { ok: false, codes: ['ARCHIVE_UNSAFE'] } },
    ...(await secondRound({ key, j, complete, partial, gz, ce, pe, head, tampered })),
  ];
  return {
    'receipts.json': {
      format: 'stepchain-vectors/v1',
      kind: 'receipts',
      description: 'Receipts (spec/RECEIPT.md) with the verifier options to use and the report expected: ok, the problem codes in order, and receipt facts. base64 is the whole archive.',
      cases: cases.map(({ bytes, ...c }) => ({ id: c.id, comment: c.comment, result: c.result, options: c.options, base64: Buffer.from(bytes).toString('base64'), expect: c.expect })),
    },
  };
}
