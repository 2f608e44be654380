// Commitment-hashing vectors (spec/FORMAT.md §12, spec/REDACTION.md §12): slot salts and slot digests,
// stored stepchain/v2 records (valid, and mutation-derived negatives: each a valid line with one member
// changed, with the verifier's expected codes), publications against the original head (valid — withheld
// slots, redacted views, a withheld meta that was absent: the decoy — and mutated: expected codes), and
// slot openings (valid, and wrongly opened). Deterministic: fixed record salts, seeded value salts,
// fixed exporter. Built from dist/.
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestUtf8 } from '../../dist/canonical/sha256.js';
import { verifyChain } from '../../dist/chain/index.js';
import { sealCommitted, slotDigest, slotSalt } from '../../dist/record/commitments.js';
import { genesisHash, makeGenesis } from '../../dist/record/index.js';
import { STEP_V2 } from '../../dist/record/v2.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { planReceipt, writeReceipt } from '../../dist/receipt/writer.js';
import { ustarHeader } from '../../dist/receipt/tar.js';
import { planCommittedPublication } from '../../dist/redact/commit-publish.js';
import { seededSalts } from '../../dist/redact/commit.js';
import { openSlot, verifyOpening } from '../../dist/redact/opening.js';
import { compilePolicy } from '../../dist/redact/policy.js';
import { verifyPublishedReceipt } from '../../dist/redact/verify.js';

const enc = new TextEncoder();
const EXPORTER = 'stepchain commitment vectors';
/** Record salt of step i: fixed, so the vectors are reproducible (real journals draw them from a CSPRNG). */
const recordSalt = (i) => digestUtf8(`stepchain commitment vectors record salt ${i}`).slice(7, 39);

const POLICY = {
  rules: [
    { id: 'pin', paths: ['/input/pin'] },
    { id: 'prompts', paths: ['/prompt'] },
    { id: 'meta', paths: ['/meta'] },
    { id: 'secrets', detectors: ['email'] },
  ],
};

const STEPS = [
  { kind: 'step', ref: null, input: { approved: true, pin: '4821', user: 'u-17' }, model: 'm', prompt: 'Check the PIN.', tool_call: null, result: { ok: true }, error: null, meta: { latency_ms: 12 } },
  { kind: 'tool.started', ref: null, input: { note: 'mail bob@example.com today' }, model: 'm', prompt: 'Send it.', tool_call: { name: 'send', arguments: { to: 'bob@example.com' } }, result: null, error: null },
  { kind: 'tool.completed', ref: 's1', input: { note: 'mail bob@example.com today' }, model: 'm', prompt: 'Send it.', tool_call: { name: 'send', arguments: { to: 'bob@example.com' } }, result: { doc: 'x'.repeat(80) }, error: null },
];

function journal() {
  const genesis = makeGenesis({ journalId: 'commitment-vectors', createdAt: '2026-01-01T00:00:00.000Z', run: { agent: 'vectors' }, format: 'stepchain/v2' });
  let prev = genesisHash(genesis);
  const lines = [];
  const blobs = new Map();
  STEPS.forEach((s, seq) => {
    const texts = {};
    for (const f of STEP_V2.contentFields) texts[f] = canonicalJson(s[f]);
    if (s.meta) texts.meta = canonicalJson(s.meta);
    if (seq === 2) {
      // The result stored as a blob: its reference is what the slot commits to.
      const t = texts.result;
      blobs.set(digestUtf8(t), enc.encode(t));
      texts.result = canonicalJson({ '$stepchain:blob': { digest: digestUtf8(t), size: enc.encode(t).length } }, { refuseReserved: false });
    }
    const { stepHash, line } = sealCommitted(STEP_V2, texts, { seq, stepId: `s${seq}`, ts: `2026-01-01T00:00:0${seq}.000Z`, prevHash: prev }, recordSalt(seq));
    lines.push(line.slice(0, -1));
    prev = stepHash;
  });
  const source = {
    genesis,
    head: async () => ({ seq: lines.length - 1, step_hash: JSON.parse(lines[lines.length - 1]).step_hash }),
    lines: async function* (range = {}) {
      for (let i = range.from ?? 0; i <= (range.to ?? lines.length - 1); i++) yield { segment: '0000000000000000', seq: i, text: lines[i] };
    },
    blob: async (d) => blobs.get(d) ?? null,
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

/** The entries of a ustar archive the writer made: name and data. */
function entriesOf(tar) {
  const out = [];
  for (let o = 0; o + 512 <= tar.length && tar[o] !== 0; ) {
    const name = new TextDecoder().decode(tar.subarray(o, o + 100)).replace(/\0.*$/s, '');
    const size = parseInt(new TextDecoder().decode(tar.subarray(o + 124, o + 136)).replace(/\0.*$/s, '').trim(), 8);
    out.push({ name, data: tar.slice(o + 512, o + 512 + size) });
    o += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

function tarOf(entries) {
  const parts = [];
  for (const e of entries) {
    parts.push(ustarHeader(e.name, e.data.length), e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/**
 * A receipt of the given public lines and manifest members. The writer refuses a chain that does not
 * verify, so a mutated chain is spliced into the receipt of the unmutated lines (its manifest then lists
 * the original chain entry's digest, and that mismatch is part of what the verifier reports).
 */
async function receiptOf(genesis, lines, extra, blob, original) {
  const plan = (l) => planReceipt({
    genesis, from: 0, to: l.length - 1, blob, extra, exporter: EXPORTER,
    lines: async function* () {
      for (let i = 0; i < l.length; i++) yield { segment: '0000000000000000', seq: i, text: l[i] };
    },
  });
  try {
    return await tarBytes(await plan(lines));
  } catch {
    const base = await tarBytes(await plan(original));
    return tarOf(entriesOf(base).map((e) => (e.name.startsWith('chain/') ? { ...e, data: enc.encode(lines.map((l) => l + '\n').join('')) } : e)));
  }
}

export async function generate() {
  const cases = [];
  const j = journal();

  // Slot salts and digests.
  for (const slot of ['error', 'input', 'meta']) {
    cases.push({ id: `slot-salt-${slot}`, comment: 'slot i (in the slot list error, input, meta, model, prompt, result, tool_call) takes half i mod 2 of SHA-256("stepchain/v2 salt\\n" ‖ record salt ‖ "\\n" ‖ decimal(⌊i/2⌋)) in hex', kind: 'slot-salt', result: 'valid', record_salt: recordSalt(0), slot, salt: slotSalt(recordSalt(0), slot, STEP_V2.redactable) });
  }
  const s0 = slotSalt(recordSalt(0), 'input', STEP_V2.redactable);
  cases.push({ id: 'slot-digest-value', comment: 'SHA-256("stepchain/v2 slot\\n" ‖ salt ‖ "\\n" ‖ JCS([slot, value]))', kind: 'slot-digest', result: 'valid', salt: s0, slot: 'input', value: STEPS[0].input, digest: slotDigest(s0, 'input', canonicalJson(STEPS[0].input)) });
  const sm = slotSalt(recordSalt(1), 'meta', STEP_V2.redactable);
  cases.push({ id: 'slot-digest-absent', comment: 'an absent optional member commits to JCS([slot]): the decoy a withheld meta may stand for', kind: 'slot-digest', result: 'valid', salt: sm, slot: 'meta', absent: true, digest: slotDigest(sm, 'meta', undefined) });

  // Stored records: the chain, and one-member mutations of it.
  const chainCase = (id, comment, lines) => {
    const report = verifyChain({ genesis: j.genesis, files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(lines.map((l) => l + '\n').join('')) }] });
    cases.push({ id, comment, kind: 'chain', result: report.ok ? 'valid' : 'invalid', genesis: j.genesis, lines, expect: { ok: report.ok, head: report.head, codes: report.problems.map((p) => p.code) } });
  };
  chainCase('chain-valid', 'three stored v2 records (a step with meta, a tool start, its completion with a blob result), each with its record salt', j.lines);
  const mutations = [
    ['value', 'a slot value changed', (r) => ({ ...r, input: { ...r.input, pin: '4822' } })],
    ['salt', 'the record salt changed', (r) => ({ ...r, salt: recordSalt(99) })],
    ['salt-missing', 'the record salt removed', (r) => { const { salt, ...rest } = r; return rest; }],
    ['meta-added', 'an absent meta made present (its slot committed to absence)', (r) => ({ ...r, meta: {} })],
    ['kind', 'a member hashed in clear changed (kind)', (r) => ({ ...r, kind: 'run.started' })],
    ['salts-member', 'a public-form member in a stored record', (r) => ({ ...r, salts: {} })],
  ];
  for (const [name, comment, edit] of mutations) {
    const lines = j.lines.slice();
    const seq = name === 'meta-added' ? 1 : 0;
    lines[seq] = canonicalJson(edit(JSON.parse(lines[seq])), { refuseReserved: false });
    chainCase(`chain-mutated-${name}`, `${comment} (step ${seq}); the rest as in chain-valid`, lines);
  }

  // The publication, against the original head.
  const policy = compilePolicy(POLICY);
  const pub = await planCommittedPublication(j.source, { policy, salts: seededSalts('commitment-vectors'), exporter: EXPORTER });
  const bytes = await tarBytes(pub.plan);
  const head = (await j.source.head()).step_hash;
  const published = async (id, comment, tar, expectHead = head) => {
    const r = tar === null ? null : await verifyPublishedReceipt(tar, { expectHead });
    cases.push({ id, comment, kind: 'published', result: r?.ok ? 'valid' : 'invalid', base64: tar === null ? null : base64Encode(tar), expect_head: expectHead, expect: { ok: r?.ok ?? false, codes: r ? r.problems.map((p) => p.code) : [] } });
  };
  await published('published-valid', 'whole slots withheld (prompt everywhere, the PIN through /input/pin inside a view, meta of every step: step 0 had one, steps 1 and 2 did not — decoys), e-mail addresses in views, a blob result disclosed; verifies against the ORIGINAL head', bytes);
  cases.push({ id: 'published-public-lines', comment: 'the public records of published-valid, and its declarations', kind: 'public-lines', result: 'valid', lines: pub.lines, publication: pub.publication, redactions: pub.declarations });
  const extra = { publication: pub.publication, redactions: pub.declarations };
  const blob = (d) => j.source.blob(d);
  const edited = (seq, f) => {
    const lines = pub.lines.slice();
    lines[seq] = canonicalJson(f(JSON.parse(lines[seq])), { refuseReserved: false });
    return lines;
  };
  await published('published-wrong-head', 'published-valid pinned to another head', bytes, digestUtf8('another head'));
  await published('published-undeclared', 'a declaration removed', await receiptOf(j.genesis, pub.lines, { ...extra, redactions: extra.redactions.slice(1) }, blob, pub.lines));
  await published('published-missing', 'a declaration without its marker', await receiptOf(j.genesis, pub.lines, { ...extra, redactions: [...extra.redactions, { path: '/tool_call', rule: 'x', seq: 2 }].sort((a, b) => a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)) }, blob, pub.lines));
  await published('published-value-edited', 'a disclosed value changed', await receiptOf(j.genesis, edited(0, (r) => ({ ...r, model: 'n' })), extra, blob, pub.lines));
  await published('published-salt-dropped', 'a disclosed slot without its salt', await receiptOf(j.genesis, edited(0, (r) => { const { model, ...salts } = r.salts; return { ...r, salts }; }), extra, blob, pub.lines));
  await published('published-two-states', 'a withheld slot that also names a salt', await receiptOf(j.genesis, edited(0, (r) => ({ ...r, salts: { ...r.salts, prompt: '0'.repeat(32) } })), extra, blob, pub.lines));
  await published('published-record-salt', 'a stored record (with its record salt) in a publication', await receiptOf(j.genesis, [...pub.lines.slice(0, 2), j.lines[2]], extra, blob, pub.lines));
  await published('published-with-anchor', 'a publication block and an anchor block', await receiptOf(j.genesis, pub.lines, { ...extra, anchor: { commitments: [], format: 'stepchain-redaction/v2', genesis_hash: genesisHash(j.genesis), length: 3, policy_digest: policy.digest, redacted_from: 3 } }, blob, pub.lines));

  // Issue 32: text an outsider writes into a publication, with nothing but the public receipt (unsigned, so the
  // manifest is simply rewritten). Each is pinned to the original head.
  const byPlace = (a, b) => a.seq - b.seq || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  const asView = (r, slot, value) => {
    // A disclosed slot's salt is public: its digest is computable, so the slot can be moved into `digests`.
    const { [slot]: salt, ...salts } = r.salts;
    return { ...r, [slot]: value, salts, digests: { ...(r.digests ?? {}), [slot]: slotDigest(salt, slot, canonicalJson(r[slot])) } };
  };
  const withheldDigest = JSON.parse(pub.lines[0]).prompt['$stepchain:redacted'].commitment;
  const invented = 'transfer 10000 EUR to mallory';
  const viewMarker = { '$stepchain:redacted': { commitment: withheldDigest, rule: 'prompts' } };
  const issue32 = async (id, comment, lines, redactions = extra.redactions) => {
    const tar = await receiptOf(j.genesis, lines, { ...extra, redactions }, blob, pub.lines);
    const r = await verifyPublishedReceipt(tar, { expectHead: head });
    cases.push({ id, comment, kind: 'published', result: r.ok ? 'valid' : 'invalid', base64: base64Encode(tar), expect_head: head, expect: { ok: r.ok, codes: r.problems.map((p) => p.code), unbound: r.unbound } });
  };
  await issue32('published-view-unmarked', 'a disclosed slot (result of step 0) turned into a redacted view of other text, with no marker inside: its digest follows from the public salt', edited(0, (r) => asView(r, 'result', { ok: false })));
  await issue32('published-view-undeclared', 'a disclosed slot turned into a view whose only marker no declaration names', edited(0, (r) => asView(r, 'result', { ok: viewMarker })));
  await issue32('published-withheld-text', 'a withheld slot (prompt of step 0) whose marker is given invented text', edited(0, (r) => ({ ...r, prompt: { '$stepchain:redacted': { ...r.prompt['$stepchain:redacted'], text: invented } } })));
  await issue32('published-view-invented', 'a withheld slot (prompt of step 0) turned into a view of invented text beside a marker, the declaration moved to it: valid, and the view is listed among the unbound places', edited(0, (r) => {
    const { prompt, ...rest } = r;
    return { ...rest, prompt: [invented, viewMarker], digests: { ...r.digests, prompt: prompt['$stepchain:redacted'].commitment } };
  }), extra.redactions.map((d) => (d.seq === 0 && d.path === '/prompt' ? { ...d, path: '/prompt/1' } : d)).sort(byPlace));

  // Openings against published-valid.
  const md = pub.plan.manifestDigest;
  const o = async (id, comment, proof) => {
    const r = await verifyOpening(bytes, proof);
    cases.push({ id, comment, kind: 'opening', result: r.ok ? 'valid' : 'invalid', receipt: 'published-valid', proof, expect: r.ok ? { ok: true, present: r.present, value: r.value } : { ok: false, code: r.problems[0].code } });
  };
  const prompt = await openSlot(j.source, 0, 'prompt', md);
  const decoy = await openSlot(j.source, 1, 'meta', md);
  const meta0 = await openSlot(j.source, 0, 'meta', md);
  const view = await openSlot(j.source, 0, 'input', md);
  await o('open-withheld', 'a slot withheld whole', prompt);
  await o('open-decoy', 'a withheld meta that was absent: it opens to absence', decoy);
  await o('open-present-meta', 'a withheld meta that was present', meta0);
  await o('open-view', 'a redacted view: the opening binds the whole slot, the PIN included', view);
  await o('open-wrong-value', 'another value', { ...prompt, value: 'Check nothing.' });
  await o('open-wrong-salt', 'another salt', { ...prompt, salt: '0'.repeat(32) });
  await o('open-decoy-as-present', 'the decoy opened as if meta had been present', { ...decoy, value: {} });
  await o('open-disclosed', 'a slot the receipt discloses: nothing to open', { ...prompt, slot: 'model' });
  await o('open-wrong-manifest', 'an opening for another receipt', { ...prompt, manifest_digest: digestUtf8('x') });
  await o('open-extra-member', 'a member the format does not define', { ...prompt, rule: 'prompts' });

  return {
    'commitments.json': {
      format: 'stepchain-vectors/v1',
      kind: 'commitments',
      description: 'spec/FORMAT.md §12 and spec/REDACTION.md §12: slot salts and slot digests; stored stepchain/v2 chains (valid, and mutation-derived: one member of one line changed; expected: ok, head and problem codes in order); publications against the original head (base64 tar, pinned to expect_head; expected: ok and problem codes in order) and their public records; slot openings against published-valid (expected: ok with present and value, or the first code).',
      cases,
    },
  };
}
