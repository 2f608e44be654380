// stepchain/v3 vectors (spec/FORMAT.md §14): unit preimages, chunking, derived keys and salts, slot digests
// and roots (fixed seeds, so every byte is reproducible; a writer draws seeds from the CSPRNG); a chain of
// five private records checked fast and deep; and mutation-derived negatives — each valid line with one
// byte of one member changed, a root that does not commit to the values (fast: valid; deep: ROOT_MISMATCH),
// markers of a publication in a stored line, a public-form line among stored records, an unknown kind (a
// notice). Expected outcomes are what the verifier of this repository reports; the unit cases are computed
// by an independent re-implementation of §14.2–§14.5 below (node:crypto only), checked against dist/.
// Built from dist/.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/jcs.js';
import { verifyChain } from '../../dist/chain/index.js';
import { genesisHash, makeGenesis } from '../../dist/record/index.js';
import { STEP_V3 } from '../../dist/record/v3.js';
import { commitRecord } from '../../dist/record/v3/commit.js';

const enc = new TextEncoder();
const sha = (...parts) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return new Uint8Array(h.digest()); };
const hex = (b) => Buffer.from(b).toString('hex');
const seedOf = (label) => sha(enc.encode(`stepchain v3 vectors seed ${label}`));
const u32be = (n) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
const SLOTS = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'];

// ---- An independent reference of §14.2–§14.5 (not the library's code) ----
const slotKey = (seed, j) => sha(Uint8Array.of(0x6b), seed, Uint8Array.of(j)).subarray(0, 16);
const saltOf = (key, i) => sha(Uint8Array.of(0x73), key, u32be(i >>> 1)).subarray(16 * (i & 1), 16 * (i & 1) + 16);
const cmp = (a, b) => { for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return a[i] - b[i]; return 0; };
function chunks(str) {
  const lit = enc.encode(JSON.stringify(str));
  const text = lit.subarray(1, lit.length - 1);
  if (text.length <= 64) return null;
  const max = text.length > 4096 ? 256 : 64;
  const ok = new Array(text.length + 1).fill(true);
  for (let i = 0; i < text.length; i++) {
    if (text[i] === 0x5c) { const len = text[i + 1] === 0x75 ? 6 : 2; for (let k = 1; k < len; k++) ok[i + k] = false; i += len - 1; continue; }
    if ((text[i] & 0xc0) === 0x80) ok[i] = false;
  }
  const out = [];
  let s = 0;
  while (s < text.length) {
    let e = Math.min(s + max, text.length);
    if (e < text.length) {
      let cut = -1;
      for (let k = e; k > s + (max >> 1); k--) if (text[k - 1] === 0x20 && ok[k]) { cut = k; break; }
      if (cut > 0) e = cut; else while (e > s && !ok[e]) e--;
    }
    out.push(text.subarray(s, e)); s = e;
  }
  return out;
}
function commitSlotRef(name, present, value, key) {
  const units = [];
  let next = 0;
  const esc = (k) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  function repr(v, path) {
    if (v === null || typeof v !== 'object') {
      const cs = typeof v === 'string' ? chunks(v) : null;
      if (!cs) return [enc.encode(canonicalJson(v))];
      return [Uint8Array.of(0x7e), ...cs.map((c, k) => {
        const i = next++; const salt = saltOf(key, i);
        const rec = { index: i, kind: 'chunk', path: `${path}#${k}`, salt: hex(salt), text: Buffer.from(c).toString('utf8') };
        units.push(rec);
        const d = sha(Uint8Array.of(0x63), salt, c); rec.digest = hex(d); return d;
      })];
    }
    if (Array.isArray(v)) return [Uint8Array.of(0x5b), ...v.map((x, k) => unit(0x65, 'element', null, x, `${path}/${k}`))];
    const ds = Object.keys(v).sort().map((k) => unit(0x6d, 'member', k, v[k], `${path}/${esc(k)}`));
    return [Uint8Array.of(0x7b), ...ds.sort(cmp)];
  }
  function unit(tag, kind, nm, v, path, here = true) {
    const i = next++; const salt = saltOf(key, i);
    const rec = { index: i, kind, path, salt: hex(salt) };
    units.push(rec);
    const body = here ? repr(v, path) : [];
    const d = sha(Uint8Array.of(tag), salt, ...(nm === null ? [] : [enc.encode(JSON.stringify(nm))]), ...body);
    rec.digest = hex(d);
    return d;
  }
  const digest = unit(0x6d, 'member', name, value, `/${esc(name)}`, present);
  return { digest, units };
}
function commitRef(values, seed) {
  const slots = SLOTS.map((name, j) => ({ name, key: slotKey(seed, j), ...commitSlotRef(name, name in values, values[name], slotKey(seed, j)) }));
  const root = sha(Uint8Array.of(0x72), ...slots.map((s) => s.digest));
  return { root: 'sha256:' + hex(root), slots };
}

// ---- Cases ----
const UNIT_CASES = [
  ['units-design-example', 'the worked example of docs/design/format-v3.md §1 (seed: SHA-256 of its label there)', sha(enc.encode('stepchain/v3 example seed (fixed for the example only)')), {
    error: null,
    input: { note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.' },
    model: 'gpt-4o-2024-08-06', prompt: 'Call the API.', result: { status: 200 },
    tool_call: { arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' }, name: 'http' },
  }],
  ['units-names-and-scalars', 'member names with escapes and pointer characters, numbers, booleans, null, empty object and array; meta present', seedOf('names'), {
    error: null, input: { 'a"b': 1, 'x/y~z': -2.5, e: 1e21, t: true, f: false, n: null, o: {}, a: [] }, meta: { by: 'vectors' }, model: null, prompt: null, result: [[], {}, [1, [2]]], tool_call: null,
  }],
  ['units-chunk-64-65', 'a string of exactly 64 escaped bytes is one unit; 65 bytes is two chunks (64 + 1)', seedOf('64'), {
    error: null, input: { s64: 'x'.repeat(64), s65: 'y'.repeat(65) }, model: null, prompt: null, result: null, tool_call: null,
  }],
  ['units-chunk-space', 'a chunk ends after the last space among its bytes 33–64', seedOf('space'), {
    error: null, input: null, model: null, prompt: 'The quick brown fox jumps over the lazy dog and keeps on running far away from here.', result: null, tool_call: null,
  }],
  ['units-chunk-escape', 'a cut never splits an escape: the \\n at escaped bytes 63–64 moves the cut back to 63; \\u001f likewise', seedOf('escape'), {
    error: null, input: { nl: 'a'.repeat(63) + '\n' + 'b'.repeat(10), ctl: 'c'.repeat(60) + '\u001f' + 'd'.repeat(10) }, model: null, prompt: null, result: null, tool_call: null,
  }],
  ['units-chunk-utf8', 'a cut never splits a UTF-8 sequence: a 4-byte emoji at escaped bytes 63–66 moves the cut back to 63', seedOf('utf8'), {
    error: null, input: { e: 'a'.repeat(63) + '\u{1F600}' + 'b'.repeat(5) }, model: null, prompt: null, result: null, tool_call: null,
  }],
  ['units-chunk-long', 'an escaped text above 4096 bytes is cut in chunks of at most 256 bytes (4097 bytes: 16 × 256 + 1)', seedOf('long'), {
    error: null, input: null, model: null, prompt: null, result: { text: 'z'.repeat(4097) }, tool_call: null,
  }],
  ['units-meta-absent', 'meta absent is committed as the member unit over its name alone', seedOf('absent'), {
    error: null, input: 1, model: 'm', prompt: 'p', result: 2, tool_call: null,
  }],
];

function unitCase([id, comment, seed, values]) {
  const ref = commitRef(values, seed);
  const lib = commitRecord(values, seed);
  if (lib.root !== ref.root) throw new Error(`${id}: library root ${lib.root} differs from the reference ${ref.root}`);
  return {
    id, comment, kind: 'units', result: 'valid', seed: hex(seed), values,
    expect: {
      root: ref.root,
      slots: ref.slots.map((s) => ({ slot: s.name, key: hex(s.key), digest: hex(s.digest), units: s.units })),
    },
  };
}

const GENESIS = makeGenesis({ journalId: 'v3-vectors', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3', run: { agent: 'vectors' } });
const STEPS = [
  { kind: 'run.started', ref: null, input: { task: 'pay alice' }, model: null, prompt: null, tool_call: null, result: null, error: null },
  { kind: 'model.started', ref: null, input: null, model: 'gpt-4o', prompt: [{ role: 'system', content: 'You are a careful payments agent. Never pay anyone who is not on the approved list.' }, { role: 'user', content: 'Pay alice 10 EUR; her e-mail is alice@example.org.' }], tool_call: null, result: null, error: null, meta: { latency_ms: 12 } },
  { kind: 'model.completed', ref: 's1', input: null, model: 'gpt-4o', prompt: null, tool_call: null, result: { text: 'Calling pay.' }, error: null },
  { kind: 'tool.started', ref: null, input: null, model: null, prompt: null, tool_call: { name: 'pay', arguments: { amount: 10, api_key: 'k-live-0123456789abcdef', to: 'alice' } }, result: null, error: null },
  { kind: 'tool.completed', ref: 's3', input: null, model: null, prompt: null, tool_call: null, result: { ok: true, receipt: 'R-1' }, error: null },
];
const CONTENT = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error'];

function sealAll(steps) {
  let prev = genesisHash(GENESIS);
  return steps.map((s, seq) => {
    const texts = {};
    for (const f of CONTENT) texts[f] = canonicalJson(s[f] ?? null, { refuseReserved: false });
    if (s.meta) texts.meta = canonicalJson(s.meta, { refuseReserved: false });
    const { stepHash, line } = STEP_V3.seal(texts, { seq, stepId: `s${seq}`, ts: `2026-01-01T00:00:0${seq}.000Z`, prevHash: prev, seed: hex(seedOf(`chain ${seq}`)) });
    prev = stepHash;
    return line.slice(0, -1);
  });
}

function chainCase(cases, id, comment, lines, options = {}) {
  const run = (deep) => verifyChain({ genesis: GENESIS, storedOnly: true, deep, files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(lines.map((l) => l + '\n').join('')) }] });
  const fast = run(false);
  const deep = run(true);
  const summary = (r) => ({ ok: r.ok, head: r.head, problems: r.problems.map((p) => ({ code: p.code, ...(p.location.seq === undefined ? {} : { seq: p.location.seq }), ...(p.location.field === undefined ? {} : { field: p.location.field }) })), notices: r.warnings.map((w) => ({ code: w.code, seq: w.location.seq })) });
  cases.push({ id, comment, kind: 'chain', result: deep.ok ? 'valid' : 'invalid', genesis: GENESIS, lines, ...options, expect: { fast: summary(fast), deep: summary(deep) } });
}

/** Recomputes B and the step hash of a private record object (as a writer would), links kept as given. */
function reseal(record) {
  const { step_hash: _h, ...rest } = record;
  const bind = 'sha256:' + hex(sha(enc.encode(canonicalJson(rest, { refuseReserved: false }))));
  const env = { bind, kind: rest.kind, prev_hash: rest.prev_hash, ref: rest.ref, root: rest.root, seq: rest.seq, step_id: rest.step_id, ts: rest.ts, v: rest.v };
  return canonicalJson({ ...rest, step_hash: 'sha256:' + hex(sha(enc.encode(canonicalJson(env)))) }, { refuseReserved: false });
}

export async function generate() {
  const cases = UNIT_CASES.map(unitCase);

  // Derivation alone (§14.4): slot keys of a seed and the first salts of a key.
  const seed = seedOf('derivation');
  cases.push({
    id: 'derive-keys-salts', comment: 'slot keys 0–6 of a seed, and salts 0–4 of slot key 1 (salts 0 and 1 share a SHA-256 block)', kind: 'derive', result: 'valid',
    seed: hex(seed),
    expect: { keys: SLOTS.map((_, j) => hex(slotKey(seed, j))), salts_of_key_1: [0, 1, 2, 3, 4].map((i) => hex(saltOf(slotKey(seed, 1), i))) },
  });

  const lines = sealAll(STEPS);
  chainCase(cases, 'chain-valid', 'five records of a v3 run journal: fast and deep tiers valid', lines);

  // One byte of each member of record 1 changed: the first letter or digit of its value text, replaced by
  // the next one of its class (a literal such as null then stops being JSON: found all the same, at its line).
  const line1 = lines[1];
  for (const m of Object.keys(JSON.parse(line1))) {
    const valueAt = line1.indexOf(`"${m}":`) + m.length + 3;
    let pos = valueAt;
    while (!/[0-9A-Za-z]/.test(line1[pos])) pos++;
    const c = line1[pos];
    const repl = /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : c === 'z' ? 'a' : c === 'Z' ? 'A' : String.fromCharCode(c.charCodeAt(0) + 1);
    const mutated = line1.slice(0, pos) + repl + line1.slice(pos + 1);
    chainCase(cases, `chain-byte-${m}`, `record 1 with byte ${pos + 1} (in "${m}") changed from ${JSON.stringify(c)} to ${JSON.stringify(repl)}: detected and located at record 1`, lines.map((l, i) => (i === 1 ? mutated : l)));
  }

  // The writer seals a root that does not commit to the values (C6): fast valid, deep ROOT_MISMATCH.
  {
    const r = JSON.parse(lines[1]);
    r.prompt[1].content = 'Pay mallory 10000 EUR.';
    const rest = relink([...lines.slice(0, 1), reseal(r), ...lines.slice(2)], 2);
    chainCase(cases, 'chain-root-not-of-values', 'record 1\'s values changed after its root was computed, B and the step hash recomputed by the writer (and the chain after it re-linked): the fast tier cannot see it, the deep tier reports ROOT_MISMATCH at seq 1', rest);
  }
  // A publication's markers in a stored line.
  {
    const r = JSON.parse(lines[3]);
    r.tool_call.arguments = { '$stepchain:withheld': ['sha256:' + '1'.repeat(64)], amount: 10, to: 'alice' };
    chainCase(cases, 'chain-withheld-in-private', 'a withheld-members marker inside a stored (private) record, B and the step hash recomputed and the chain re-linked: MARKER_INVALID at seq 3', relink(lines.map((l, i) => (i === 3 ? reseal(r) : l)), 4));
  }
  // A public-form line among stored records: its bind would be taken as given.
  {
    const r = JSON.parse(lines[3]);
    const { seed: s, step_hash: h, ...rest } = r;
    const bind = 'sha256:' + hex(sha(enc.encode(canonicalJson({ ...rest, seed: s }))));
    rest.tool_call = { name: 'pay', arguments: { amount: 10000, api_key: 'k-live-0123456789abcdef', to: 'mallory' } };
    const line = canonicalJson({ ...rest, bind, secrets: {}, step_hash: h });
    chainCase(cases, 'chain-public-form-in-journal', 'record 3 turned into public form (seed swapped for its bind) and its values rewritten: the step hash still matches, but a journal holds private records only: WITHHELD_IN_JOURNAL', lines.map((l, i) => (i === 3 ? line : l)));
  }
  // Kinds: an unknown vendor kind and a registered kind whose rules this verifier does not check.
  {
    const steps = STEPS.map((s) => ({ ...s }));
    steps.push({ kind: 'x.com.example.audit', ref: null, input: { checked: true }, model: null, prompt: null, tool_call: null, result: null, error: null });
    steps.push({ kind: 'erasure', ref: null, input: { target: 1, path: '/prompt/1/content', reason: 'request' }, model: null, prompt: null, tool_call: null, result: null, error: null });
    chainCase(cases, 'chain-kinds-notices', 'a vendor kind (KIND_UNKNOWN) and a registered but unchecked kind (KIND_UNCHECKED): integrity verified, notices only, valid', sealAll(steps));
    const bad = STEPS.map((s) => ({ ...s }));
    bad[4] = { ...bad[4], kind: 'Tool.Completed' };
    chainCase(cases, 'chain-kind-malformed', 'a kind that is not a dotted lowercase name: FIELD_INVALID at seq 4', sealAll(bad));
  }
  return {
    'v3.json': {
      format: 'stepchain-vectors/v1',
      kind: 'v3',
      description: 'stepchain/v3 records (spec/FORMAT.md §14): units, chunks, derived keys and salts, slot digests and roots from fixed seeds; a five-record chain checked by the fast tier (bind and step hash) and the deep tier (root from the values), and mutation-derived negatives with their expected codes. Built by scripts/vectors/v3.mjs.',
      cases,
    },
  };
}

/** The lines with every record from `from` on re-linked onto the one before it (B and step hash recomputed). */
function relink(lines, from) {
  const out = [...lines];
  for (let i = from; i < out.length; i++) {
    const r = JSON.parse(out[i]);
    r.prev_hash = JSON.parse(out[i - 1]).step_hash;
    out[i] = reseal(r);
  }
  return out;
}
