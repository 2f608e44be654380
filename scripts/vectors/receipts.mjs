// Receipt vectors (spec/RECEIPT.md): small receipts, valid and invalid side by side, with the report a
// verifier must produce. Built deterministically from dist/ (fixed journal, timestamps and key seed).
import { gzipSync } from 'node:zlib';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestUtf8 } from '../../dist/canonical/sha256.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/chain/record.js';
import { receiptBytes } from '../../dist/receipt/node.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { checksum, ustarHeader } from '../../dist/receipt/tar.js';

const enc = new TextEncoder();

function journal(steps) {
  const genesis = makeGenesis({ journalId: 'vector-journal', createdAt: '2026-01-01T00:00:00.000Z' });
  let prev = genesisHash(genesis);
  const stored = [];
  const blobs = new Map();
  for (let seq = 0; seq < steps; seq++) {
    let result = { answer: `result ${seq}` };
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
    stored.push({ bucket: `${String(Math.floor(seq / 2) * 2).padStart(16, '0')}.jsonl`, seq, text: line.slice(0, -1), step_hash: record.step_hash });
  }
  return {
    genesis, stored,
    async head() { const l = stored[stored.length - 1]; return l ? { seq: l.seq, step_hash: l.step_hash } : null; },
    async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { bucket: l.bucket, seq: l.seq, text: l.text }; } },
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
