// Redaction vectors (spec/REDACTION.md): policies valid and invalid, commitments, the redaction of single
// steps, published receipts (valid, and with broken declarations or anchor), and disclosure proofs
// (valid and forged). Deterministic: fixed journal, timestamps and seeded salts. Built from dist/.
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { digestUtf8 } from '../../dist/canonical/sha256.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/chain/record.js';
import { base64Encode } from '../../dist/receipt/base64.js';
import { keyPairFromSeed } from '../../dist/receipt/keys.js';
import { planReceipt, writeReceipt } from '../../dist/receipt/writer.js';
import { ustarHeader } from '../../dist/receipt/tar.js';
import { commitment, saltToHex, seededSalts } from '../../dist/redact/commit.js';
import { discloseFromSecrets, discloseStepFromSecrets, secretsFile } from '../../dist/redact/disclose.js';
import { compilePolicy } from '../../dist/redact/policy.js';
import { planPublication } from '../../dist/redact/publish.js';
import { redactStep } from '../../dist/redact/redact.js';

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

function journal() {
  const genesis = makeGenesis({ journalId: 'redaction-vectors', createdAt: '2026-01-01T00:00:00.000Z' });
  const steps = [
    { prompt: 'You are careful.', input: { q: 'weather in Paris?' }, model: 'm', tool_call: { name: 'get_weather', arguments: { city: 'Paris' } }, result: { t: 18.5 } },
    { prompt: 'Call the API.', input: { note: `mail ${S.email} now` }, model: 'm', tool_call: { name: 'http', arguments: { api_key: 'k-live-0123456789abcdef', headers: { Authorization: S.bearer } } }, result: { token: S.jwt }, meta: { op: S.email } },
    { prompt: 'Store.', input: { doc: `key ${S.apiKey} and ${S.aws}` }, model: 'm', tool_call: null, result: { pem: S.pem, note: 'kept as it is' } },
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
    stored.push({ bucket: '0000000000000000.jsonl', seq, text: line.slice(0, -1), step_hash: record.step_hash });
  });
  return {
    genesis,
    async head() { const l = stored[stored.length - 1]; return { seq: l.seq, step_hash: l.step_hash }; },
    async *lines(range = {}) { for (const l of stored) { if (l.seq < (range.from ?? 0)) continue; if (range.to !== undefined && l.seq > range.to) return; yield { bucket: l.bucket, seq: l.seq, text: l.text }; } },
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

  // Published receipts.
  const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 7));
  const pub = await planPublication(journal(), { policy, salts: seededSalts('published'), signingKey: key.privateKey });
  const signed = await tarOf(pub.plan);
  const unsignedPub = await planPublication(journal(), { policy, salts: seededSalts('published') });
  const unsigned = await tarOf(unsignedPub.plan);
  const m = unsignedPub.plan.manifest;
  const replan = async (extra) => tarOf(await planReceipt({ genesis: m.genesis, lines: async function* () { for (const [i, text] of unsignedPub.lines.entries()) yield { bucket: '0000000000000000.jsonl', seq: i, text }; }, from: 0, to: m.head.seq, blob: async (d) => (await journal().blob(d)), extra }));
  cases.push({ id: 'published-signed', comment: 'a signed published receipt of a 3-step journal (one blob left out, redacted whole)', kind: 'published', result: 'valid', base64: b64(signed), publicKey: base64Encode(key.publicKey), expect: { ok: true, codes: [], redactions: pub.redactions.length, original_head: pub.anchor.head.step_hash } });
  cases.push({ id: 'published-unsigned', comment: 'the same, unsigned (same seed: same chain and manifest but for nothing)', kind: 'published', result: 'valid', base64: b64(unsigned), expect: { ok: true, codes: [], redactions: unsignedPub.redactions.length, original_head: pub.anchor.head.step_hash } });
  const forgedHead = replaceEntry(signed, 'manifest.json', (t) => t.replace(pub.anchor.head.step_hash, pub.anchor.steps[0]));
  cases.push({ id: 'published-signed-anchor-edited', comment: "the signed manifest's anchor head replaced (same length): the signature no longer verifies", kind: 'published', result: 'invalid', base64: b64(forgedHead), publicKey: base64Encode(key.publicKey), expect: { ok: false, codes: ['SIGNATURE_INVALID'] } });
  const drop = { anchor: m.anchor, redactions: m.redactions.filter((_, i) => i !== 1) };
  cases.push({ id: 'published-undeclared', comment: 'a declaration removed (and the manifest re-made): the marker is undeclared', kind: 'published', result: 'invalid', base64: b64(await replan(drop)), expect: { ok: false, codes: ['REDACTION_UNDECLARED'] } });
  const more = { anchor: m.anchor, redactions: [...m.redactions, { path: '/result/t', rule: 'secrets', seq: 2 }] };
  cases.push({ id: 'published-missing', comment: 'a declaration with no marker: something declared was left in', kind: 'published', result: 'invalid', base64: b64(await replan(more)), expect: { ok: false, codes: ['REDACTION_MISSING'] } });
  const badAnchor = { anchor: { ...m.anchor, genesis_hash: digestUtf8('another genesis') }, redactions: m.redactions };
  cases.push({ id: 'published-anchor-genesis', comment: "the anchor's genesis hash is not the manifest genesis's", kind: 'published', result: 'invalid', base64: b64(await replan(badAnchor)), expect: { ok: false, codes: ['ANCHOR_INVALID'] } });
  cases.push({ id: 'published-no-anchor', comment: 'an ordinary receipt (no anchor, no declarations) of the redacted chain: every marker undeclared, and not a published receipt', kind: 'published', result: 'invalid', base64: b64(await replan(undefined)), expect: { ok: false, codes: [...unsignedPub.redactions.map(() => 'REDACTION_UNDECLARED'), 'ANCHOR_INVALID', 'ANCHOR_INVALID'] } });
  const wrongRule = { anchor: m.anchor, redactions: m.redactions.map((d, i) => (i === 0 ? { ...d, rule: 'other' } : d)) };
  cases.push({ id: 'published-rule-mismatch', comment: 'a declaration naming another rule than its marker', kind: 'published', result: 'invalid', base64: b64(await replan(wrongRule)), expect: { ok: false, codes: ['REDACTION_UNDECLARED'] } });

  // Disclosure proofs against the signed receipt.
  const secrets = secretsFile(pub.plan.manifestDigest, pub.redactions, pub.unblobbed);
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

  // Whole-step proofs: every redaction of a step, re-deriving the anchor's original step hash.
  const st = (id, comment, p, code) => cases.push({ id, comment, kind: 'step-disclosure', result: code ? 'invalid' : 'valid', receipt: 'published-signed', proof: p, expect: code ? { ok: false, code } : { ok: true, step_hash: pub.anchor.steps[p.seq] } });
  const step2 = discloseStepFromSecrets(secrets, 2);
  st('step-valid-blobs', 'step 2: two blob fields redacted (one whole, one by substring) and re-blobbed', step2, null);
  st('step-valid-meta', 'step 1: paths, tool-scoped path, substrings in input, meta, tool_call and result', discloseStepFromSecrets(secrets, 1), null);
  st('step-incomplete', 'one redaction of the step left out', { ...step2, values: step2.values.slice(1) }, 'INCOMPLETE_DISCLOSURE');
  st('step-wrong-blob-fields', 'blob_fields not as in the original: another step hash', { ...step2, blob_fields: ['input'] }, 'ANCHOR_MISMATCH');

  return {
    'redaction.json': {
      format: 'stepchain-vectors/v1',
      kind: 'redaction',
      description: 'spec/REDACTION.md: policies (valid and invalid, with the PolicyError code), commitments (salt and value to digest), single-step redactions with seeded salts (seededSalts(seed), salts consumed in walk order), published receipts (base64 tar; valid, and with broken declarations or anchor: expected problem codes), disclosure proofs against the published-signed receipt (valid and forged: expected code), and whole-step disclosures (expected: ok with the re-derived original step_hash, or the code).',
      cases,
    },
  };
}
