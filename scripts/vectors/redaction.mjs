// Redaction vectors (spec/REDACTION.md, version 2): policies valid and invalid, value and step commitments,
// the redaction of single steps, a whole publication reproduced from its journal and seed, published
// receipts (valid, and with broken declarations or anchor, in the problem order of §7; with an object that
// holds the marker name but is no valid marker; a listed blob no step references), a withdrawn version-1
// anchor, and disclosure proofs of values, whole steps and step hashes (valid and forged). Every published
// case is verified here and refused if its codes are not the ones the case expects.
// Deterministic: fixed journal, timestamps, exporter and seeded salts. Built from dist/.
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestBytes, digestUtf8 } from '../../dist/canonical/sha256.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/record/index.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { blobEntryName, MANIFEST_NAME } from '../../dist/receipt/manifest.js';
import { planReceipt, writeReceipt } from '../../dist/receipt/writer.js';
import { BLOCK, paddedSize, ustarHeader } from '../../dist/receipt/tar.js';
import { commitment, saltToHex, seededSalts, stepCommitment } from '../../dist/redact/commit.js';
import { discloseFromSecrets, secretsFile } from '../../dist/redact/disclose.js';
import { discloseHashFromSecrets } from '../../dist/redact/disclose-hash.js';
import { discloseStepFromSecrets } from '../../dist/redact/disclose-step.js';
import { compilePolicy } from '../../dist/redact/policy.js';
import { planPublication } from '../../dist/redact/publish.js';
import { redactStep } from '../../dist/redact/redact.js';
import { verifyPublishedReceipt } from '../../dist/redact/verify.js';

const enc = new TextEncoder();
const S = {
  apiKey: 'sk-' + 'proj-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4',
  aws: 'AKIA' + 'IOSFODNN7EXAMPLE',
  bearer: 'Bearer ' + 'abc.DEF-ghi_JKL~mno+pqr/stu=',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  pem: '-----BEGIN ' + 'PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ' + 'PRIVATE KEY-----',
  email: 'alice.liddell+test@example.org',
};

const POLICY = {
  rules: [
    { id: 'prompts', paths: ['/prompt'] },
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'secrets', detectors: ['api-key', 'aws-access-key', 'bearer-token', 'jwt', 'private-key', 'email'] },
  ],
};

/** The publication policy: the issue's, with prompts redacted from step 1 on (so step 0 is published unchanged), and two low-entropy answers. */
const PUB_POLICY = { rules: [{ ...POLICY.rules[0], seq: { from: 1 } }, POLICY.rules[1], POLICY.rules[2], { id: 'answers', paths: ['/input/approved', '/input/pin'] }] };
const EXPORTER = 'stepchain redaction vectors';

function journal() {
  const genesis = makeGenesis({ journalId: 'redaction-vectors', createdAt: '2026-01-01T00:00:00.000Z' });
  const steps = [
    { prompt: 'You are careful.', input: { q: 'weather in Paris?' }, model: 'm', tool_call: { name: 'get_weather', arguments: { city: 'Paris' } }, result: { t: 18.5 } },
    { prompt: 'Call the API.', input: { note: `mail ${S.email} now` }, model: 'm', tool_call: { name: 'http', arguments: { api_key: 'k-live-0123456789abcdef', headers: { Authorization: S.bearer } } }, result: { token: S.jwt }, meta: { op: S.email } },
    { prompt: 'Store.', input: { doc: `key ${S.apiKey} and ${S.aws}` }, model: 'm', tool_call: null, result: { pem: S.pem, note: 'kept as it is' } },
    { prompt: 'Done.', input: { approved: true, pin: 4821 }, model: 'm', tool_call: null, result: 'ok' },
  ];
  let prev = genesisHash(genesis);
  const stored = [];
  const blobs = new Map();
  steps.forEach((s, seq) => {
    let result = s.result;
    if (seq === 2) {
      const text = canonicalJson(result);
      blobs.set(digestUtf8(text), enc.encode(text));
      result = { '$stepchain:blob': { digest: digestUtf8(text), size: enc.encode(text).length } };
    }
    const { record, line } = sealRecord({ v: 1, seq, step_id: `step-${seq}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), prev_hash: prev, ...s, result });
    prev = record.step_hash;
    stored.push({ segment: '0000000000000000.jsonl', seq, text: line.slice(0, -1), step_hash: record.step_hash });
  });
  return {
    genesis,
    stored,
    blobs,
    async head() { const l = stored[stored.length - 1]; return { seq: l.seq, step_hash: l.step_hash }; },
    async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { segment: l.segment, seq: l.seq, text: l.text }; } },
    async blob(d) { return blobs.get(d) ?? null; },
  };
}

async function tarOf(plan) {
  const parts = [];
  for await (const c of writeReceipt(plan)) parts.push(Uint8Array.from(c));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

const b64 = (bytes) => Buffer.from(bytes).toString('base64');
const MARKER = '$stepchain:redacted';

/** Replaces one entry's data (same length) in a ustar stream: headers stay valid, digests and signatures do not. */
function replaceEntry(tar, name, edit) {
  const out = Uint8Array.from(tar);
  for (let o = 0; o + 512 <= out.length;) {
    const h = out.subarray(o, o + 512);
    if (h.every((b) => b === 0)) break;
    let n = '';
    for (let i = 0; i < 100 && h[i] !== 0; i++) n += String.fromCharCode(h[i]);
    const size = parseInt(new TextDecoder().decode(h.subarray(124, 135)), 8);
    if (n === name) {
      const data = enc.encode(edit(new TextDecoder().decode(out.subarray(o + 512, o + 512 + size))));
      if (data.length !== size) throw new Error('replaceEntry must keep the size');
      if (ustarHeader(n, size).some((b, i) => b !== h[i])) throw new Error('unexpected header');
      out.set(data, o + 512);
    }
    o += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** A ustar stream in the receipt writer's form (RECEIPT §3): each entry's header, its data padded to a block, then two zero blocks. */
function tarFrom(entries) {
  const out = new Uint8Array(entries.reduce((n, e) => n + BLOCK + paddedSize(e.data.length), 2 * BLOCK));
  let o = 0;
  for (const { name, data } of entries) {
    out.set(ustarHeader(name, data.length), o);
    out.set(data, o + BLOCK);
    o += BLOCK + paddedSize(data.length);
  }
  return out;
}

/**
 * A receipt the writer refuses to make (its chain does not verify, or it lists a blob no step references),
 * made by hand from a publication's stored lines and manifest: `edit` changes a step's record (it gets the
 * parsed record without step_hash and returns the record to seal), every line is sealed afresh on its
 * predecessor, and the manifest takes the new chain entry and head, the listed `blobs` and the `extra` members.
 */
function handMade(pub, { edit = (r) => r, extra = {}, blobs = [] } = {}) {
  const m = pub.plan.manifest;
  if (m.chain.length !== 1 || m.range.from !== 0 || m.blobs.length > 0) throw new Error('handMade: a publication of one chain entry from seq 0, without blobs, expected');
  let prev = m.range.prev_hash;
  const lines = pub.lines.map((text) => {
    const { step_hash: _old, ...record } = JSON.parse(text);
    const { record: sealed, line } = sealRecord(edit({ ...record, prev_hash: prev }));
    prev = sealed.step_hash;
    return line;
  });
  const chain = enc.encode(lines.join(''));
  const name = m.chain[0].name;
  const listed = blobs.map((b) => ({ digest: digestBytes(b), size: b.length, bytes: b })).sort((a, b) => (a.digest < b.digest ? -1 : 1));
  const manifest = {
    ...m,
    blobs: listed.map(({ digest, size }) => ({ digest, size })),
    chain: [{ digest: digestBytes(chain), name, size: chain.length, steps: lines.length }],
    head: { seq: m.head.seq, step_hash: prev },
    ...extra,
  };
  return tarFrom([
    { name: MANIFEST_NAME, data: enc.encode(canonicalJson(manifest)) },
    { name, data: chain },
    ...listed.map((b) => ({ name: blobEntryName(b.digest), data: b.bytes })),
  ]);
}

/** A copy of `value` with the member at `path` (a list of names) replaced by `replace(old)`. */
function replaceAt(value, [first, ...rest], replace) {
  return { ...value, [first]: rest.length === 0 ? replace(value[first]) : replaceAt(value[first], rest, replace) };
}

export async function generate() {
  const cases = [];

  // Policies.
  const policyCase = (id, comment, policy, code) => {
    let got = null;
    try { compilePolicy(policy); } catch (e) { got = e.code; }
    if (got !== code) throw new Error(`policy vector ${id}: expected ${code}, got ${got}`);
    cases.push({ id, comment, kind: 'policy', result: code ? 'invalid' : 'valid', policy, ...(code ? { error: code } : { digest: compilePolicy(policy).digest }) });
  };
  policyCase('policy-issue-example', 'the policy of the issue', POLICY, null);
  policyCase('policy-all-members', 'every rule member', { format: 'stepchain-redaction-policy/v1', rules: [{ id: 'r', paths: ['/result/**/email'], detectors: ['email'], tools: ['crm'], seq: { from: 2, to: 9 }, mode: 'value' }] }, null);
  policyCase('policy-typo-member', 'a misspelt member ("path") is an error, not an ignored member', { rules: [{ id: 'r', path: ['/prompt'] }] }, 'UNKNOWN_MEMBER');
  policyCase('policy-duplicate-id', 'two rules with one id', { rules: [{ id: 'r', paths: ['/prompt'] }, { id: 'r', detectors: ['jwt'] }] }, 'RULE_ID_DUPLICATE');
  policyCase('policy-bad-id', 'an id with a space', { rules: [{ id: 'my rule', paths: ['/prompt'] }] }, 'RULE_ID_INVALID');
  policyCase('policy-unknown-detector', 'a detector that is not built in', { rules: [{ id: 'r', detectors: ['ssn'] }] }, 'DETECTOR_UNKNOWN');
  policyCase('policy-envelope-path', 'envelope members are never redacted', { rules: [{ id: 'r', paths: ['/step_id'] }] }, 'PATH_INVALID');
  policyCase('policy-selects-nothing', 'a rule with neither paths nor detectors', { rules: [{ id: 'r', tools: ['http'] }] }, 'RULE_INVALID');
  policyCase('policy-substring-without-detectors', 'substring mode needs detectors', { rules: [{ id: 'r', paths: ['/prompt'], mode: 'substring' }] }, 'RULE_INVALID');
  policyCase('policy-empty', 'no rules', { rules: [] }, 'POLICY_INVALID');

  // Commitments.
  const salt = Uint8Array.from({ length: 32 }, (_, i) => i);
  for (const [id, value] of [['commitment-string', 'yes'], ['commitment-object', { b: [1, 2.5, null], a: 'é' }], ['commitment-null', null]]) {
    cases.push({ id, comment: 'SHA-256 over the tag, the 32-byte salt and JCS(value)', kind: 'commitment', result: 'valid', salt: saltToHex(salt), value, commitment: commitment(salt, value) });
  }

  // Single steps.
  const policy = compilePolicy(POLICY);
  const redactCase = (id, comment, seq, fields, pol = policy, polDoc = POLICY) => {
    const { fields: out, redactions } = redactStep(pol, seq, fields, seededSalts(id));
    cases.push({
      id, comment, kind: 'redact', result: 'valid', policy: polDoc, seq, seed: id, fields, expect: out,
      redactions: redactions.map((r) => ({ path: r.path, rule: r.rule, salt: saltToHex(r.salt), commitment: r.commitment })),
    });
  };
  redactCase('redact-paths-and-tools', 'a path rule, a tool-scoped path rule and substring detectors', 1, {
    prompt: 'Call the API.', input: { note: `mail ${S.email} now` }, tool_call: { name: 'http', arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://x.example' } }, result: { ok: true },
  });
  redactCase('redact-tool-not-listed', 'the tool-scoped rule does not apply to another tool', 0, {
    prompt: null, tool_call: { name: 'ftp', arguments: { api_key: 'k-live-0123456789abcdef' } },
  });
  redactCase('redact-every-detector', 'one secret of each kind, at several depths', 2, {
    input: [S.apiKey, { deep: { deeper: [S.aws, `Authorization: ${S.bearer}`] } }], result: { jwt: S.jwt, pem: S.pem, who: S.email }, meta: { n: 1 },
  });
  redactCase('redact-member-name', 'a secret used as a member name redacts its object', 0, { result: { keys: { [S.aws]: 'active' }, other: 1 } });
  const vp = { rules: [{ id: 'whole', detectors: ['email'], mode: 'value' }, { id: 'meta', paths: ['/meta'] }] };
  redactCase('redact-value-mode-and-meta', 'value mode redacts the whole string; a path may take all of meta', 3, { input: `write to ${S.email}`, meta: { op: 'x' } }, compilePolicy(vp), vp);
  const sp = { rules: [{ id: 'late', paths: ['/input'], seq: { from: 5 } }] };
  redactCase('redact-seq-range', 'a rule limited to seq ≥ 5 leaves step 4 alone', 4, { input: 'visible' }, compilePolicy(sp), sp);

  const wp = { rules: [{ id: 'items', paths: ['/input/*'] }] };
  redactCase('redact-walk-order', 'salts are drawn in walk order (elements 0, 1, …, 10), not in declaration order ("/input/10" sorts before "/input/2")', 0,
    { input: Array.from({ length: 11 }, (_, i) => `item-${i}`) }, compilePolicy(wp), wp);

  // Step commitments.
  cases.push({ id: 'step-commitment', comment: 'SHA-256 over the tag "stepchain-redaction/v2 step\\n", the 32-byte salt and the step hash as text', kind: 'step-commitment', result: 'valid', salt: saltToHex(salt), step_hash: digestUtf8('a step'), commitment: stepCommitment(salt, digestUtf8('a step')) });

  // Published receipts.
  const pubPolicy = compilePolicy(PUB_POLICY);
  const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 7));
  const pub = await planPublication(journal(), { policy: pubPolicy, salts: seededSalts('published'), sign: key.privateKey, exporter: EXPORTER });
  const signed = await tarOf(pub.plan);
  const unsignedPub = await planPublication(journal(), { policy: pubPolicy, salts: seededSalts('published'), exporter: EXPORTER });
  const unsigned = await tarOf(unsignedPub.plan);
  const m = unsignedPub.plan.manifest;
  const replan = async (extra) => tarOf(await planReceipt({ genesis: m.genesis, lines: async function* () { for (const [i, text] of unsignedPub.lines.entries()) yield { segment: '0000000000000000.jsonl', seq: i, text }; }, from: 0, to: m.head.seq, blob: async (d) => (await journal().blob(d)), extra, exporter: EXPORTER }));
  const j0 = journal();
  cases.push({
    id: 'publish-reproduce', kind: 'publish', result: 'valid',
    comment: 'the original journal (stored lines and blobs), the policy and the seed: publishing with seededSalts(seed) and this exporter gives the published-unsigned receipt byte for byte (salt numbering of §5.3, step commitments included)',
    journal: { genesis: j0.genesis, lines: j0.stored.map((l) => l.text), blobs: [...j0.blobs].map(([digest, bytes]) => ({ digest, base64: b64(bytes) })) },
    policy: PUB_POLICY, seed: 'published', exporter: EXPORTER,
    expect: { receipt: 'published-unsigned', original_head: unsignedPub.originalHead.step_hash, steps: unsignedPub.steps },
  });
  const validExpect = (p) => ({ ok: true, codes: [], redactions: p.redactions.length, anchor: p.anchor });
  cases.push({ id: 'published-signed', comment: 'a signed published receipt of a 4-step journal: step 0 unchanged (redacted_from 1), one blob left out, redacted whole', kind: 'published', result: 'valid', base64: b64(signed), publicKey: base64Encode(key.publicKey), expect: validExpect(pub) });
  cases.push({ id: 'published-unsigned', comment: 'the same, unsigned (same seed: same chain and manifest)', kind: 'published', result: 'valid', base64: b64(unsigned), expect: validExpect(unsignedPub) });
  const nonePolicy = { rules: [{ id: 'none', paths: ['/meta/none'] }] };
  const nonePub = await planPublication(journal(), { policy: compilePolicy(nonePolicy), salts: seededSalts('none'), exporter: EXPORTER });
  cases.push({ id: 'published-nothing-redacted', comment: 'a policy that matches nothing: no declarations, redacted_from = length, no commitments; the published head is the original head', kind: 'published', result: 'valid', base64: b64(await tarOf(nonePub.plan)), expect: { ...validExpect(nonePub), original_head: nonePub.originalHead.step_hash } });
  const forgedCommitment = replaceEntry(signed, 'manifest.json', (t) => t.replace(pub.anchor.commitments[0], pub.anchor.commitments[1]));
  cases.push({ id: 'published-signed-anchor-edited', comment: "a commitment in the signed manifest's anchor replaced (same length): the signature no longer verifies", kind: 'published', result: 'invalid', base64: b64(forgedCommitment), publicKey: base64Encode(key.publicKey), expect: { ok: false, codes: ['SIGNATURE_INVALID'] } });
  const drop = { anchor: m.anchor, redactions: m.redactions.filter((_, i) => i !== 1) };
  cases.push({ id: 'published-undeclared', comment: 'a declaration removed (and the manifest re-made): the marker is undeclared', kind: 'published', result: 'invalid', base64: b64(await replan(drop)), expect: { ok: false, codes: ['REDACTION_UNDECLARED'] } });
  const more = { anchor: m.anchor, redactions: [...m.redactions, { path: '/result/t', rule: 'secrets', seq: 3 }] };
  cases.push({ id: 'published-missing', comment: 'a declaration with no marker: something declared was left in', kind: 'published', result: 'invalid', base64: b64(await replan(more)), expect: { ok: false, codes: ['REDACTION_MISSING'] } });
  const badAnchor = { anchor: { ...m.anchor, genesis_hash: digestUtf8('another genesis') }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-genesis', comment: "the anchor's genesis hash is not the manifest genesis's (another manifest member: ANCHOR_INVALID)", kind: 'published', result: 'invalid', base64: b64(await replan(badAnchor)), expect: { ok: false, codes: ['ANCHOR_INVALID'] } });
  const longer = { anchor: { ...m.anchor, length: m.anchor.length + 1, commitments: [...m.anchor.commitments, digestUtf8('one more')] }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-length', comment: 'an anchor consistent in itself that counts one step more than the published chain: ANCHOR_INVALID', kind: 'published', result: 'invalid', base64: b64(await replan(longer)), expect: { ok: false, codes: ['ANCHOR_INVALID'] } });
  const earlier = { anchor: { ...m.anchor, redacted_from: 0, commitments: [digestUtf8('step 0'), ...m.anchor.commitments] }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-redacted-from', comment: 'redacted_from 0 while the first declaration is at seq 1 (the anchor alone is consistent: ANCHOR_INVALID, not MANIFEST_INVALID)', kind: 'published', result: 'invalid', base64: b64(await replan(earlier)), expect: { ok: false, codes: ['ANCHOR_INVALID'] } });
  const short = { anchor: { ...m.anchor, commitments: m.anchor.commitments.slice(1) }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-shape', comment: 'one commitment fewer than length − redacted_from: decidable from the anchor alone, so MANIFEST_INVALID, which ends verification', kind: 'published', result: 'invalid', base64: b64(await replan(short)), expect: { ok: false, codes: ['MANIFEST_INVALID'] } });
  const v1 = { anchor: { format: 'stepchain-redaction/v1', genesis_hash: m.anchor.genesis_hash, head: unsignedPub.originalHead, length: m.anchor.length, policy_digest: m.anchor.policy_digest, steps: j0.stored.map((l) => l.step_hash) }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-v1', comment: 'a version-1 anchor (unsalted original step hashes, an oracle for the redacted values): withdrawn, MANIFEST_INVALID', kind: 'published', result: 'invalid', base64: b64(await replan(v1)), expect: { ok: false, codes: ['MANIFEST_INVALID'] } });
  cases.push({ id: 'published-no-anchor', comment: 'an ordinary receipt (no anchor, no declarations) of the redacted chain: every marker undeclared, and not a published receipt', kind: 'published', result: 'invalid', base64: b64(await replan(undefined)), expect: { ok: false, codes: [...unsignedPub.redactions.map(() => 'REDACTION_UNDECLARED'), 'ANCHOR_INVALID', 'ANCHOR_INVALID'] } });
  const wrongRule = { anchor: m.anchor, redactions: m.redactions.map((d, i) => (i === 0 ? { ...d, rule: 'other' } : d)) };
  cases.push({ id: 'published-rule-mismatch', comment: 'a declaration naming another rule than its marker', kind: 'published', result: 'invalid', base64: b64(await replan(wrongRule)), expect: { ok: false, codes: ['REDACTION_UNDECLARED'] } });
  const all3 = { anchor: { ...m.anchor, genesis_hash: digestUtf8('another genesis') }, redactions: [...m.redactions.filter((_, i) => i !== 1), { path: '/result/t', rule: 'secrets', seq: 3 }] };
  cases.push({ id: 'published-problem-order', comment: 'an undeclared marker, a wrong anchor and a missing marker at once: REDACTION_UNDECLARED (archive order), then ANCHOR_INVALID, then REDACTION_MISSING (declaration order)', kind: 'published', result: 'invalid', base64: b64(await replan(all3)), expect: { ok: false, codes: ['REDACTION_UNDECLARED', 'ANCHOR_INVALID', 'REDACTION_MISSING'] } });

  // Objects that hold the marker name but are no valid redaction marker (FORMAT §3.5): the chain's
  // MARKER_INVALID only, never REDACTION_UNDECLARED; declared at their place, the declaration has no marker
  // (REDACTION §7 step 2, step 4). The writer refuses such a chain, so these are made by hand: the last step's
  // marker at /input/approved changed, the step sealed afresh.
  if (b64(handMade(unsignedPub)) !== b64(unsigned)) throw new Error('handMade must reproduce published-unsigned byte for byte when nothing changes');
  const atApproved = (replace) => ({ edit: (r) => (r.seq === 3 ? replaceAt(r, ['input', 'approved'], replace) : r) });
  const notDigest = (marker) => ({ [MARKER]: { ...marker[MARKER], commitment: 'sha256:' + 'x'.repeat(64) } });
  const besideName = (marker) => ({ ...marker, note: 'beside the marker' });
  const withoutApproved = { anchor: m.anchor, redactions: m.redactions.filter((d) => !(d.seq === 3 && d.path === '/input/approved')) };
  if (withoutApproved.redactions.length !== m.redactions.length - 1) throw new Error('the declaration of /input/approved at seq 3 was expected');
  cases.push({ id: 'published-marker-invalid-declared', comment: 'a marker whose commitment is not a digest, declared at its place: the chain\'s MARKER_INVALID, then REDACTION_MISSING (an invalid marker counts as none), never REDACTION_UNDECLARED', kind: 'published', result: 'invalid', base64: b64(handMade(unsignedPub, atApproved(notDigest))), expect: { ok: false, codes: ['MARKER_INVALID', 'REDACTION_MISSING'] } });
  cases.push({ id: 'published-marker-invalid-undeclared', comment: 'the same object, its declaration removed: MARKER_INVALID alone (only a valid marker is undeclared)', kind: 'published', result: 'invalid', base64: b64(handMade(unsignedPub, { ...atApproved(notDigest), extra: withoutApproved })), expect: { ok: false, codes: ['MARKER_INVALID'] } });
  cases.push({ id: 'published-marker-member-beside-declared', comment: 'a valid marker body with a second member beside the marker name, declared at its place: MARKER_INVALID, then REDACTION_MISSING', kind: 'published', result: 'invalid', base64: b64(handMade(unsignedPub, atApproved(besideName))), expect: { ok: false, codes: ['MARKER_INVALID', 'REDACTION_MISSING'] } });
  cases.push({ id: 'published-marker-member-beside-undeclared', comment: 'the same object, its declaration removed: MARKER_INVALID alone', kind: 'published', result: 'invalid', base64: b64(handMade(unsignedPub, { ...atApproved(besideName), extra: withoutApproved })), expect: { ok: false, codes: ['MARKER_INVALID'] } });
  // A listed blob no step references is RECEIPT §7 step 7's ENTRY_UNEXPECTED, which stops nothing: every
  // line was read, so a declaration without its marker is still REDACTION_MISSING (REDACTION §7 step 4).
  const unreferenced = enc.encode('{"note":"listed in the manifest, referenced by no step"}');
  cases.push({ id: 'published-missing-unreferenced-blob', comment: 'published-missing with a listed blob no step references: ENTRY_UNEXPECTED (not a stop), then REDACTION_MISSING', kind: 'published', result: 'invalid', base64: b64(handMade(unsignedPub, { extra: more, blobs: [unreferenced] })), expect: { ok: false, codes: ['ENTRY_UNEXPECTED', 'REDACTION_MISSING'] } });

  // Disclosure proofs against the signed receipt.
  const secrets = secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed, pub.steps);
  const target = pub.redactions.find((r) => r.path === '/tool_call/arguments/api_key');
  const proof = discloseFromSecrets(secrets, target.seq, target.path);
  const sub = pub.redactions.find((r) => r.path === '/input/note');
  const proofSub = discloseFromSecrets(secrets, sub.seq, sub.path);
  const d = (id, comment, p, code) => cases.push({ id, comment, kind: 'disclosure', result: code ? 'invalid' : 'valid', receipt: 'published-signed', proof: p, expect: code ? { ok: false, code } : { ok: true, value: p.value } });
  d('disclose-valid', 'the value of a whole-value redaction', proof, null);
  d('disclose-valid-substring', 'the value of a substring redaction (its text fits)', proofSub, null);
  d('disclose-forged-value', 'another value with the same salt', { ...proof, value: 'k-live-guess' }, 'COMMITMENT_MISMATCH');
  d('disclose-forged-salt', 'the right value, another salt', { ...proof, salt: '00'.repeat(32) }, 'COMMITMENT_MISMATCH');
  d('disclose-wrong-path', 'a location that holds no marker', { ...proof, path: '/tool_call/name' }, 'NOT_REDACTED');
  d('disclose-wrong-manifest', 'a proof for another receipt', { ...proof, manifest_digest: digestUtf8('x') }, 'MANIFEST_MISMATCH');
  d('disclose-wrong-rule', 'the marker names another rule', { ...proof, rule: 'prompts' }, 'MARKER_MISMATCH');
  d('disclose-extra-member', 'a proof with a member the format does not define', { ...proof, note: 'x' }, 'PROOF_INVALID');
  d('disclose-text-mismatch-commitment', 'a substring marker with a different value', { ...proofSub, value: 'something else entirely' }, 'COMMITMENT_MISMATCH');

  // Whole-step proofs: every redaction of a step, re-deriving its original step hash and opening the anchor's commitment.
  const original = j0.stored.map((l) => l.step_hash);
  const st = (id, comment, p, code) => cases.push({ id, comment, kind: 'step-disclosure', result: code ? 'invalid' : 'valid', receipt: 'published-signed', proof: p, expect: code ? { ok: false, code } : { ok: true, step_hash: original[p.seq] } });
  const step1 = discloseStepFromSecrets(secrets, 1);
  const step2 = discloseStepFromSecrets(secrets, 2);
  const step3 = discloseStepFromSecrets(secrets, 3);
  st('step-valid-unredacted', 'step 0, before the first redaction: no values, no openings; it hashes to its published step hash', discloseStepFromSecrets(secrets, 0), null);
  st('step-valid-first', 'step 1, the first redaction (redacted_from): its prev_hash is public, so prev is null; salt opens its commitment. Paths, a tool-scoped path, substrings in input, meta, tool_call and result', step1, null);
  st('step-valid-blobs', 'step 2: prev opens step 1\'s commitment; two blob fields redacted (one whole, one by substring) and re-blobbed', step2, null);
  st('step-valid-head', 'step 3, the last: a boolean and a number; its re-derived hash is the original head', step3, null);
  st('step-incomplete', 'one redaction of the step left out', { ...step2, values: step2.values.slice(1) }, 'INCOMPLETE_DISCLOSURE');
  st('step-wrong-blob-fields', 'blob_fields not as in the original: another step hash, which does not open the commitment', { ...step2, blob_fields: ['input'] }, 'ANCHOR_MISMATCH');
  st('step-missing-prev', 'a step after the first redaction without the opening of the step before', { ...step2, prev: null }, 'INCOMPLETE_DISCLOSURE');
  st('step-missing-salt', 'a committed step without its own salt', { ...step1, salt: null }, 'INCOMPLETE_DISCLOSURE');
  st('step-superfluous-prev', 'the first redacted step with a prev opening, which it cannot need', { ...step1, prev: step2.prev }, 'PROOF_INVALID');
  st('step-wrong-prev', 'prev claims the published (not the original) hash of step 1', { ...step2, prev: { ...step2.prev, step_hash: JSON.parse(pub.lines[1]).step_hash } }, 'ANCHOR_MISMATCH');
  st('step-wrong-salt', 'the right values with another salt for the step commitment', { ...step3, salt: '00'.repeat(32) }, 'ANCHOR_MISMATCH');
  st('step-v1-withdrawn', 'a version-1 whole-step proof: the format is withdrawn with its anchor', { blob_fields: step2.blob_fields, format: 'stepchain-step-disclosure/v1', manifest_digest: step2.manifest_digest, seq: 2, values: step2.values }, 'PROOF_INVALID');

  // Hash disclosures: one original step hash opened, no value.
  const h = (id, comment, p, code) => cases.push({ id, comment, kind: 'hash-disclosure', result: code ? 'invalid' : 'valid', receipt: 'published-signed', proof: p, expect: code ? { ok: false, code } : { ok: true, step_hash: original[p.seq], head: p.seq === original.length - 1 } });
  const head = discloseHashFromSecrets(secrets);
  h('hash-valid-head', 'the original head (the default: the last committed step)', head, null);
  h('hash-valid-step', 'the original hash of step 1, the first redacted step', discloseHashFromSecrets(secrets, 1), null);
  h('hash-wrong-hash', 'a guessed head: without the salt it matches, the commitment does not open', { ...head, step_hash: original[2] }, 'ANCHOR_MISMATCH');
  h('hash-before-redaction', 'step 0 has no commitment: its original hash is its published hash', { ...head, seq: 0, step_hash: original[0] }, 'NOT_REDACTED');
  h('hash-wrong-manifest', 'a proof for another receipt', { ...head, manifest_digest: digestUtf8('x') }, 'MANIFEST_MISMATCH');
  h('hash-extra-member', 'a member the format does not define', { ...head, value: 1 }, 'PROOF_INVALID');

  // Every published case, verified: a vector whose codes this verifier does not give is not written.
  for (const c of cases.filter((x) => x.kind === 'published')) {
    const r = await verifyPublishedReceipt(Buffer.from(c.base64, 'base64'), c.publicKey ? { publicKey: c.publicKey } : {});
    const codes = r.problems.map((p) => p.code);
    if (JSON.stringify(codes) !== JSON.stringify(c.expect.codes) || r.ok !== c.expect.ok) throw new Error(`published vector ${c.id}: expected ${c.expect.codes.join(', ') || 'no problem'}, got ${codes.join(', ') || 'no problem'}`);
  }

  return {
    'redaction.json': {
      format: 'stepchain-vectors/v1',
      kind: 'redaction',
      description: 'spec/REDACTION.md, version 2: policies (valid and invalid, with the PolicyError code), value commitments and step commitments (salt and value or step hash to digest), single-step redactions with seeded salts (seededSalts(seed), salts consumed in walk order), a publication reproduced from its journal, policy and seed, published receipts (base64 tar; valid with their anchor, and with broken declarations or anchor, or a withdrawn version-1 anchor: the expected problem codes in order), disclosure proofs against the published-signed receipt (valid and forged: expected code), whole-step disclosures (expected: ok with the re-derived original step_hash, or the code) and hash disclosures (expected: ok with the opened step_hash, or the code).',
      cases,
    },
  };
}
