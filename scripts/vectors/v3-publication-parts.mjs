// Published stepchain/v3 vectors with parts (spec/REDACTION.md §13.10): a four-turn chat whose prompts are list
// parts on a shared base chain, whose pages are value parts, and one user message (a string part) holding an
// e-mail address, published with the e-mail detector against its original head (valid); and mutation-derived
// negatives — each a consistent receipt (every manifest digest and part listing recomputed) with one thing of a
// public part or reference changed, pinned to the original head, with the verifier's expected codes.
// Deterministic: the record seeds are fixed, and so, while this generator runs, is the CSPRNG the part writer
// draws part seeds and the part key from (restored afterwards). Built from dist/.
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestBytes, digestUtf8 } from '../../dist/canonical/sha256.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { writeReceipt } from '../../dist/receipt/writer.js';
import { ustarHeader } from '../../dist/receipt/tar.js';
import { compilePolicy } from '../../dist/redact/policy.js';
import { planV3Publication } from '../../dist/redact/v3-publish.js';
import { verifyPublishedReceipt } from '../../dist/redact/verify.js';
import { MemoryStore } from '../../dist/store/memory.js';

const EXPORTER = 'stepchain v3 publication parts vectors';
const seedOf = (name) => digestUtf8(name).slice(7);
const EMAIL = 'alice.liddell+test@example.org';

/** A deterministic stand-in for crypto.getRandomValues: SHA-256 of a counter. */
function fixedRandom() {
  let n = 0;
  return (buf) => {
    const out = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    for (let at = 0; at < out.length; at += 32) {
      const block = Buffer.from(digestUtf8(`stepchain v3 parts vectors random ${n++}`).slice(7), 'hex');
      out.set(block.subarray(0, Math.min(32, out.length - at)), at);
    }
    return buf;
  };
}

async function journal() {
  const store = new MemoryStore();
  const j = await store.create('chat', { journalId: 'v3-publication-parts-vectors', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3' });
  const messages = [{ role: 'system', content: 'You are a careful agent. '.repeat(12) }];
  let seq = 0;
  for (let t = 0; t < 4; t++) {
    const user = t === 1 ? `Please write to ${EMAIL} with the summary. ` + 'Padding words to make this message long. '.repeat(30) : `turn ${t}: ` + 'read the next page please. '.repeat(12);
    messages.push({ role: 'user', content: user });
    await j.append({ step_id: `p${t}`, ts: `2026-01-01T00:00:0${t}.000Z`, model: 'm', prompt: messages.map((m) => ({ ...m })), seed: seedOf(`parts vectors record ${seq++}`) });
    const page = `page ${t} ` + `text${t} `.repeat(200);
    await j.append({ step_id: `r${t}`, ts: `2026-01-01T00:00:1${t}.000Z`, tool_call: { name: 'fetch', arguments: { url: `https://example.com/${t}` } }, result: { text: page }, seed: seedOf(`parts vectors record ${seq++}`) });
    messages.push({ role: 'tool', content: page });
  }
  return j;
}

async function tarBytes(plan) {
  const parts = [];
  for await (const c of writeReceipt(plan)) parts.push(Uint8Array.from(c));
  return concat(parts);
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

function tarOf(entries) {
  const parts = [];
  for (const e of entries) parts.push(ustarHeader(e.name, e.data.length), e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  parts.push(new Uint8Array(1024));
  return concat(parts);
}

export async function generate() {
  const crypto = globalThis.crypto;
  const real = crypto.getRandomValues;
  crypto.getRandomValues = fixedRandom();
  let j;
  try {
    j = await journal();
  } finally {
    crypto.getRandomValues = real;
  }
  const head = (await j.head()).step_hash;
  const pub = await planV3Publication(j, { policy: compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }), exporter: EXPORTER });
  const bytes = await tarBytes(pub.plan);
  const cases = [];
  const add = async (id, comment, b) => {
    const r = await verifyPublishedReceipt(b, { expectHead: head });
    cases.push({ id, comment, kind: 'publication', result: r.ok ? 'valid' : 'invalid', base64: base64Encode(b), expect_head: head, expect: { ok: r.ok, codes: r.problems.map((p) => p.code) } });
  };
  await add('published-parts-valid', 'a chat with list, value and string parts; the e-mail chunk withheld in its message part only', bytes);

  // An outsider's receipt: public lines, part files and manifest members edited, every digest and listing recomputed.
  const manifest = JSON.parse(new TextDecoder().decode(pub.plan.manifestBytes));
  const names = [...pub.parts.keys()].sort();
  const text = (b) => new TextDecoder().decode(b);
  const enc = (s) => new TextEncoder().encode(s);
  const forged = async (id, comment, edit) => {
    const lines = pub.lines.slice();
    const parts = new Map([...pub.parts].map(([a, b]) => [a, b.slice()]));
    const m = JSON.parse(JSON.stringify(manifest));
    edit(lines, parts, m);
    const data = enc(lines.map((l) => l + '\n').join(''));
    m.chain = [{ ...m.chain[0], digest: digestBytes(data), size: data.length, steps: lines.length }];
    m.parts = m.parts.map((p) => ({ ...p, digest: digestBytes(parts.get(p.address)), size: parts.get(p.address).length }));
    const entries = [{ name: 'manifest.json', data: enc(canonicalJson(m, { refuseReserved: false })) }, { name: m.chain[0].name, data }];
    for (const p of m.parts) entries.push({ name: `parts/${p.address.slice(7)}`, data: parts.get(p.address) });
    await add(id, comment, tarOf(entries));
  };
  const secret = names.find((a) => text(pub.parts.get(a)).includes('$stepchain:withheld'));
  const page = names.find((a) => text(pub.parts.get(a)).includes('"page 1 '));
  const editPart = (parts, a, f) => {
    const o = JSON.parse(text(parts.get(a)));
    f(o);
    parts.set(a, enc(canonicalJson(o, { refuseReserved: false })));
  };
  await forged('parts-mutated-page-text', 'a shown page rewritten in its public part file', (l, parts) => parts.set(page, enc(text(parts.get(page)).replace('page 1 ', 'page 9 '))));
  await forged('parts-mutated-swapped', 'two public part files swapped', (l, parts) => {
    const [a, b] = [names[0], names[1]];
    const x = parts.get(a);
    parts.set(a, parts.get(b));
    parts.set(b, x);
  });
  await forged('parts-mutated-invented-chunk', 'invented text where the e-mail chunk was withheld (no salt for it)', (l, parts) => editPart(parts, secret, (o) => { o.value['$stepchain:chunks'][0] = 'Please write to mallory@example.org with the '; }));
  await forged('parts-mutated-invented-chunk-salted', 'the same with an invented salt spliced in first', (l, parts) => editPart(parts, secret, (o) => {
    o.value['$stepchain:chunks'][0] = 'Please write to mallory@example.org with the ';
    const s = Buffer.from(o.secrets.salts, 'base64url');
    o.secrets.salts = Buffer.concat([s.subarray(0, 16), Buffer.alloc(16, 7), s.subarray(16)]).toString('base64url');
  }));
  await forged('parts-mutated-salt-extra', 'one salt too many in a public part', (l, parts) => editPart(parts, secret, (o) => { o.secrets.salts = Buffer.concat([Buffer.from(o.secrets.salts, 'base64url'), Buffer.alloc(16)]).toString('base64url'); }));
  await forged('parts-mutated-key-beside-withheld', 'a key given for a part that withholds a chunk', (l, parts) => editPart(parts, secret, (o) => { o.secrets = { key: 'AAAAAAAAAAAAAAAAAAAAAA' }; }));
  await forged('parts-mutated-declaration-removed', 'the part declaration removed', (l, parts, m) => { m.redactions = m.redactions.filter((d) => !('part' in d)); });
  await forged('parts-mutated-reference-size', 'a public reference given a size beside its digest', (l) => {
    const i = l.findIndex((x) => x.includes('"$stepchain:part"'));
    l[i] = l[i].replace(/\{"\$stepchain:part":\{"digest":("sha256:[0-9a-f]{64}")\}\}/, '{"$stepchain:part":{"digest":$1,"size":12}}');
  });
  await forged('parts-mutated-part-dropped', 'a public part file left out (and unlisted)', (l, parts, m) => { m.parts = m.parts.filter((p) => p.address !== page); });
  return {
    'v3-publication-parts.json': {
      format: 'stepchain-vectors/v1',
      kind: 'v3-publication-parts',
      description: 'spec/REDACTION.md §13.10: a publication of a stepchain/v3 journal with parts (base64 tar, pinned to expect_head; expected: ok and problem codes in order) and mutation-derived negatives of its public part files and references (consistent receipts with one thing changed).',
      cases,
    },
  };
}
