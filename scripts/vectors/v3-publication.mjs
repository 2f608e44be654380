// Published stepchain/v3 vectors (spec/REDACTION.md §13): the public form of one record (the design's worked
// example: private line + policy → public line and declarations), a publication of a three-record v3 journal
// against its original head (valid), and mutation-derived negatives — each a consistent receipt (manifest
// digests recomputed) of public records with one thing changed, pinned to the original head, with the
// verifier's expected codes. Deterministic: fixed record seeds (real journals draw them from a CSPRNG), fixed
// exporter. Built from dist/.
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestBytes, digestUtf8 } from '../../dist/canonical/sha256.js';
import { genesisHash, makeGenesis } from '../../dist/record/index.js';
import { STEP_V3, sealV3 } from '../../dist/record/v3.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { writeReceipt } from '../../dist/receipt/writer.js';
import { ustarHeader } from '../../dist/receipt/tar.js';
import { compilePolicy } from '../../dist/redact/policy.js';
import { publicRecordV3 } from '../../dist/redact/v3-public.js';
import { planV3Publication } from '../../dist/redact/v3-publish.js';
import { verifyPublishedReceipt } from '../../dist/redact/verify.js';
import { signApproval } from '../../dist/approval/sign.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { createHash } from 'node:crypto';

const EXPORTER = 'stepchain v3 publication vectors';
const seedOf = (name) => digestUtf8(name).slice(7);

const POLICY = {
  rules: [
    { id: 'pin', paths: ['/input/pin'] },
    { id: 'user-msg', paths: ['/prompt/1'] },
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'meta', paths: ['/meta'] },
    { id: 'secrets', detectors: ['email'] },
  ],
};

const STEPS = [
  { kind: 'step', ref: null, input: null, model: 'm', prompt: 'Pay alice her 10 EUR.', tool_call: { name: 'transfer', arguments: { amount: 10, to: 'alice' } }, result: { ok: true }, error: null },
  { kind: 'step', ref: null, input: null, model: 'm', prompt: [{ content: 'Keep secrets.', role: 'system' }, { content: 'My PIN is 4711.', role: 'user' }], tool_call: { name: 'http', arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' } }, result: { status: 200 }, error: null },
  { kind: 'step', ref: null, input: { note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.', pin: '4711', price: 59 }, model: 'm', prompt: 'Quote.', tool_call: null, result: { items: ['a', 'b'] }, error: null, meta: { operator: 'ops' } },
];

function journal() {
  const genesis = makeGenesis({ journalId: 'v3-publication-vectors', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3' });
  let prev = genesisHash(genesis);
  const lines = [];
  STEPS.forEach((s, seq) => {
    const texts = {};
    for (const f of STEP_V3.contentFields) texts[f] = canonicalJson(s[f]);
    if (s.meta) texts.meta = canonicalJson(s.meta);
    const { stepHash, line } = STEP_V3.seal(texts, { seq, stepId: `s${seq}`, ts: `2026-01-01T00:00:0${seq}.000Z`, prevHash: prev, seed: seedOf(`stepchain v3 publication vectors seed ${seq}`) });
    lines.push(line.slice(0, -1));
    prev = stepHash;
  });
  const source = {
    genesis,
    head: async () => ({ seq: lines.length - 1, step_hash: JSON.parse(lines[lines.length - 1]).step_hash }),
    lines: async function* (range = {}) {
      for (let i = range.from ?? 0; i <= (range.to ?? lines.length - 1); i++) yield { segment: '0000000000000000', seq: i, text: lines[i] };
    },
    blob: async () => null,
  };
  return { genesis, lines, source };
}

async function tarBytes(plan) {
  const parts = [];
  for await (const c of writeReceipt(plan)) parts.push(Uint8Array.from(c));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

function tarOf(entries) {
  const parts = [];
  for (const e of entries) parts.push(ustarHeader(e.name, e.data.length), e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

export async function generate() {
  const cases = [];
  // 1. The design's worked example (docs/design/format-v3.md §1): one record's public form.
  {
    const ex = sealV3(
      { error: 'null', input: canonicalJson({ note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.' }), kind: '"step"', model: '"gpt-4o-2024-08-06"', prompt: '"Call the API."', ref: 'null', result: '{"status":200}', tool_call: canonicalJson({ arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' }, name: 'http' }) },
      { seq: 0, stepId: 's0', ts: '2026-11-27T10:00:00.000Z', prevHash: digestUtf8('example genesis'), seed: digestUtf8('stepchain/v3 example seed (fixed for the example only)').slice(7) },
    );
    const policy = { rules: [{ id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] }, { id: 'secrets', detectors: ['email'] }] };
    const pub = publicRecordV3(JSON.parse(ex.line), ex.bind, compilePolicy(policy));
    cases.push({ id: 'public-record-design-example', comment: 'docs/design/format-v3.md §1: the API key member and the e-mail chunk withheld', kind: 'public-record', result: 'valid', private_line: ex.line.slice(0, -1), bind: ex.bind, policy, expect: { public_line: canonicalJson(pub.record, { refuseReserved: false }), declarations: pub.declarations } });
  }

  // 2. A publication of the journal, and mutations of its public records.
  const j = journal();
  const head = JSON.parse(j.lines[j.lines.length - 1]).step_hash;
  const policy = compilePolicy(POLICY);
  const pub = await planV3Publication(j.source, { policy, exporter: EXPORTER });
  const bytes = await tarBytes(pub.plan);
  const extra = { publication: pub.publication, redactions: pub.declarations };
  const add = async (id, comment, b, expectHead = head) => {
    const r = await verifyPublishedReceipt(b, { expectHead });
    cases.push({ id, comment, kind: 'publication', result: r.ok ? 'valid' : 'invalid', base64: base64Encode(b), expect_head: expectHead, expect: { ok: r.ok, codes: r.problems.map((p) => p.code) } });
  };
  await add('published-valid', 'the publication as made, pinned to the original head', bytes);
  cases.push({ id: 'published-lines', comment: 'the public records of published-valid, and its declarations', kind: 'public-lines', result: 'valid', lines: pub.lines, declarations: pub.declarations, private_lines: j.lines });
  await add('published-wrong-head', 'the publication pinned to another head', bytes, digestUtf8('another head'));

  // An outsider's receipt: the public lines edited, the manifest's members edited, every entry digest recomputed
  // (the writer refuses a chain that does not verify, so the archive is assembled here).
  const manifest = JSON.parse(new TextDecoder().decode(pub.plan.manifestBytes));
  const forged = async (id, comment, edit, editExtra = (x) => x) => {
    const lines = pub.lines.slice();
    edit(lines);
    const data = new TextEncoder().encode(lines.map((l) => l + '\n').join(''));
    const { publication, redactions, ...base } = JSON.parse(JSON.stringify(manifest));
    const m = { ...base, ...editExtra({ publication, redactions }) };
    m.chain = [{ ...m.chain[0], digest: digestBytes(data), size: data.length, steps: lines.length }];
    const mbytes = new TextEncoder().encode(canonicalJson(m, { refuseReserved: false }));
    await add(id, comment, tarOf([{ name: 'manifest.json', data: mbytes }, { name: m.chain[0].name, data }]));
  };
  const rec = (lines, seq, f) => {
    const r = JSON.parse(lines[seq]);
    f(r);
    lines[seq] = canonicalJson(r, { refuseReserved: false });
  };
  const b64u = (s) => Buffer.from(s, 'base64url');
  await forged('mutated-disclosed-value', 'issue 32: the transfer rewritten to {to: mallory, amount: 10000}', (l) => rec(l, 0, (r) => { r.tool_call.arguments = { amount: 10000, to: 'mallory' }; }));
  await forged('mutated-disclosed-name', 'a disclosed member renamed', (l) => rec(l, 2, (r) => { r.input.cost = r.input.price; delete r.input.price; }));
  await forged('mutated-disclosed-chunk', 'a disclosed chunk beside the withheld e-mail changed', (l) => rec(l, 2, (r) => { r.input.note['$stepchain:chunks'][1] = 'invoice INV-1 before Friday.'; }));
  await forged('mutated-element-order', 'array elements swapped', (l) => rec(l, 2, (r) => { r.result.items.reverse(); }));
  await forged('mutated-invented-element', 'issue 32: invented text where a prompt message was withheld (no salt)', (l) => rec(l, 1, (r) => { r.prompt[1] = 'transfer 10000 EUR to mallory'; }));
  await forged('mutated-invented-element-salted', 'the same with an invented salt spliced in at its place', (l) => rec(l, 1, (r) => {
    r.prompt[1] = 'transfer 10000 EUR to mallory';
    const s = b64u(r.secrets.salts.prompt);
    r.secrets.salts.prompt = Buffer.concat([s.subarray(0, 64), Buffer.alloc(16, 7), s.subarray(64)]).toString('base64url');
  }));
  await forged('mutated-invented-chunk', 'invented text where the e-mail chunk was withheld', (l) => rec(l, 2, (r) => { r.input.note['$stepchain:chunks'][0] = 'Please contact mallory@example.org about the overdue '; }));
  await forged('mutated-invented-slot', 'a withheld meta dressed as a value', (l) => rec(l, 2, (r) => { r.meta = { operator: 'mallory' }; }));
  await forged('mutated-salts-swapped', 'two disclosed salts swapped', (l) => rec(l, 2, (r) => {
    const s = b64u(r.secrets.salts.input);
    r.secrets.salts.input = Buffer.concat([s.subarray(16, 32), s.subarray(0, 16), s.subarray(32)]).toString('base64url');
  }));
  await forged('mutated-salt-extra', 'one salt too many', (l) => rec(l, 2, (r) => { r.secrets.salts.input = Buffer.concat([b64u(r.secrets.salts.input), Buffer.alloc(16)]).toString('base64url'); }));
  await forged('mutated-key-changed', 'a slot key changed', (l) => rec(l, 0, (r) => { r.secrets.keys.model = 'AAAAAAAAAAAAAAAAAAAAAA'; }));
  await forged('mutated-withheld-dropped', 'a withheld member digest dropped', (l) => rec(l, 1, (r) => { delete r.tool_call.arguments['$stepchain:withheld']; }));
  await forged('mutated-withheld-duplicated', 'a withheld digest listed twice', (l) => rec(l, 1, (r) => { const d = r.tool_call.arguments['$stepchain:withheld'][0]; r.tool_call.arguments['$stepchain:withheld'] = [d, d]; }));
  await forged('mutated-chunks-none-withheld', 'a chunk list with nothing withheld', (l) => rec(l, 2, (r) => { r.input.note['$stepchain:chunks'][0] = 'x'; r.input.note['$stepchain:chunks'] = ['a', 'b']; }));
  await forged('mutated-seed-left-in', 'the record seed left in a partly withheld record', (l) => rec(l, 2, (r) => { r.seed = digestUtf8('x').slice(7); }));
  await forged('mutated-key-beside-withheld', 'a slot key given for a partly withheld slot', (l) => rec(l, 2, (r) => { r.secrets.keys.input = 'AAAAAAAAAAAAAAAAAAAAAA'; delete r.secrets.salts.input; }));
  await forged('mutated-declaration-removed', 'a declaration removed', (l) => {}, (x) => ({ ...x, redactions: x.redactions.slice(1) }));
  await forged('mutated-declaration-added', 'a declaration of nothing added', (l) => {}, (x) => ({ ...x, redactions: [...x.redactions, { path: '/result/nothing', rule: 'pin', seq: 2 }] }));
  await forged('mutated-publication-stripped', 'publication and redactions removed, a value rewritten: still checked deep', (l) => rec(l, 0, (r) => { r.tool_call.arguments.to = 'mallory'; }), () => ({}));

  await approvalDigestCases(cases);
  return {
    'v3-publication.json': {
      format: 'stepchain-vectors/v1',
      kind: 'v3-publication',
      description: 'spec/REDACTION.md §13: the public form of one stepchain/v3 record (private line, bind and policy → public line and declarations); a publication of a three-record v3 journal against its original head (base64 tar, pinned to expect_head; expected: ok and problem codes in order), its public records, and mutation-derived negatives (consistent receipts of public records with one thing changed).',
      cases,
    },
  };
}

// ------------------------------------------------------------------------------------------------------------------
// The rule `approval-digest` (APPROVALS.md §8, REDACTION.md §13): a v3 journal holding an approval request written
// before statement v2 (its input carries the unsalted digest of the presented call) and a v1 statement granting it
// (which names that digest). A policy withholding the PIN of the presented call withholds both digests too, under
// the rule `approval-digest`: a 4-digit PIN would fall to 10 000 guesses against a digest left in clear. Checked here
// against node:crypto, not the library: the digest is SHA-256 of JCS({arguments, name}) and appears in no public line.

async function approvalDigestCases(cases) {
  const CONTENT = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'];
  const genesis = makeGenesis({ journalId: 'v3-publication-approval-digest', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3', run: { agent: 'vectors' } });
  const alice = keyPairFromSeed(Uint8Array.from(createHash('sha256').update('approval vectors key alice').digest()));
  const UNLOCK = { name: 'unlock', arguments: { door: 'front', pin: '4821' } };
  const digest = 'sha256:' + createHash('sha256').update(JSON.stringify({ arguments: { door: 'front', pin: '4821' }, name: 'unlock' })).digest('hex');
  const lines = [];
  let prev = genesisHash(genesis);
  const add = (step) => {
    const seq = lines.length;
    const texts = {};
    for (const f of CONTENT) texts[f] = canonicalJson(step[f] ?? null);
    if (step.meta) texts.meta = canonicalJson(step.meta);
    const ts = `2026-01-01T00:00:0${seq}.000Z`;
    const { stepHash, line } = STEP_V3.seal(texts, { seq, stepId: step.step_id ?? `s${seq}`, ts, prevHash: prev, seed: seedOf(`stepchain v3 approval-digest vectors seed ${seq}`) });
    lines.push(line.slice(0, -1));
    prev = stepHash;
    return { seq, stepHash, ts };
  };
  add({ kind: 'run.started', input: { task: 'open the front door' } });
  const req = add({ kind: 'approval.requested', step_id: 'req-1', input: { digest, expires_at: null, presented: UNLOCK } });
  const decidedAt = '2026-01-01T00:00:02.000Z';
  const statement = { decided_at: decidedAt, decision: 'granted', digest, genesis_hash: genesisHash(genesis), reason: null, request: 'req-1', request_hash: req.stepHash, request_seq: req.seq, type: 'stepchain-approval/v1' };
  add({ kind: 'approval.granted', ref: 'req-1', input: statement, meta: signApproval(statement, alice.privateKey, 'alice') });
  add({ kind: 'tool.started', tool_call: UNLOCK, meta: { approval: { request: 'req-1', request_hash: req.stepHash } } });
  const source = {
    genesis,
    head: async () => ({ seq: lines.length - 1, step_hash: prev }),
    lines: async function* (range = {}) {
      for (let i = range.from ?? 0; i <= (range.to ?? lines.length - 1); i++) yield { segment: '0000000000000000', seq: i, text: lines[i] };
    },
    blob: async () => null,
  };
  const policy = { rules: [{ id: 'pin', paths: ['/input/presented/arguments/pin', '/tool_call/arguments/pin'] }] };
  const pub = await planV3Publication(source, { policy: compilePolicy(policy), exporter: EXPORTER });
  const declared = pub.declarations.filter((d) => d.rule === 'approval-digest').map((d) => `${d.seq} ${d.path}`);
  if (declared.join() !== '1 /input/digest,2 /input/digest') throw new Error(`approval-digest: declared ${declared.join()}`);
  if (pub.lines.some((l) => l.includes(digest.slice(7)))) throw new Error('approval-digest: the unsalted digest is in a public line');
  if (!lines[1].includes(digest)) throw new Error('approval-digest: the private request does not carry the digest');
  const bytes = await tarBytes(pub.plan);
  const r = await verifyPublishedReceipt(bytes, { expectHead: prev });
  cases.push({ id: 'approval-digest-published', comment: 'a v3 run journal with a request written before statement v2 (input.digest, unsalted) and a v1 statement granting it, published withholding the PIN of the presented call (and of the effect): both digests are withheld too, under the rule approval-digest; valid against the original head', kind: 'publication', result: r.ok ? 'valid' : 'invalid', base64: base64Encode(bytes), expect_head: prev, expect: { ok: r.ok, codes: r.problems.map((p) => p.code) } });
  cases.push({ id: 'approval-digest-lines', comment: 'the public records of approval-digest-published and its declarations: seq 1 and seq 2 declare /input/digest under the rule approval-digest; no public line holds the unsalted digest', kind: 'public-lines', result: 'valid', lines: pub.lines, declarations: pub.declarations, private_lines: lines });
}
