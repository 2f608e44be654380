// The worked example of docs/design/format-v3.md §1, computed exactly as the design's §4–§7 specify (seed
// fixed so the output is reproducible; a writer draws it from the CSPRNG): slot keys and salts (§5.1), units
// and their preimages (§4.1, chunks over the escaped text §4.2), R, the private line, B and the step hash
// (§4.3); then the public form of §7.1 with its secrets (§5.3), and a small verifier of that public form
// (§14.3 steps 3–5) that recomputes R and the step hash from what the publication shows — and refuses the
// two attacks of issue 32. A seed for the vectors generator of the implementation; not a benchmark.
// Run: node bench/v3-example.mjs
import { createHash } from 'node:crypto';

const enc = new TextEncoder();
const sha = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
const hex = (b) => Buffer.from(b).toString('hex');
const b64u = (b) => Buffer.from(b).toString('base64url');
const jcs = (v) => {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return (
    '{' +
    Object.keys(v)
      .sort()
      .map((k) => JSON.stringify(k) + ':' + jcs(v[k]))
      .join(',') +
    '}'
  );
};
const cmp = (a, b) => {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
};
const u32be = (n) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);

const SLOTS = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'];
const T = { m: 0x6d, e: 0x65, c: 0x63, r: 0x72 };
const MAX = 64;

// §5.1
const slotKey = (seed, j) => sha(Uint8Array.of(0x6b), seed, Uint8Array.of(j)).subarray(0, 16);
const saltOf = (key, i) => sha(Uint8Array.of(0x73), key, u32be(i >>> 1)).subarray(16 * (i & 1), 16 * (i & 1) + 16);

// §4.2: chunks of the escaped text (the JCS literal without its quotes), never inside an escape or a UTF-8
// sequence, cut after the last space in the second half of the window.
function chunks(str) {
  const lit = enc.encode(JSON.stringify(str));
  const text = lit.subarray(1, lit.length - 1);
  const max = text.length > 4096 ? 256 : MAX;
  if (text.length <= MAX) return null;
  const starts = new Set([0]);
  // positions where a cut may fall: not after a lone backslash of an escape, not inside a UTF-8 sequence
  const ok = new Array(text.length + 1).fill(true);
  for (let i = 0; i < text.length; i++) {
    if (text[i] === 0x5c) {
      const len = text[i + 1] === 0x75 ? 6 : 2;
      for (let k = 1; k < len; k++) ok[i + k] = false;
      i += len - 1;
      continue;
    }
    if ((text[i] & 0xc0) === 0x80) ok[i] = false;
  }
  const out = [];
  let s = 0;
  while (s < text.length) {
    let e = Math.min(s + max, text.length);
    if (e < text.length) {
      let cut = -1;
      for (let k = e; k > s + (max >> 1); k--)
        if (text[k - 1] === 0x20 && ok[k]) {
          cut = k;
          break;
        }
      if (cut > 0) e = cut;
      else while (e > s && !ok[e]) e--;
    }
    out.push(text.subarray(s, e));
    starts.add(e);
    s = e;
  }
  return out;
}

/**
 * The units of one slot of a private record: returns the slot digest and a list of units (index, kind,
 * path, digest) in preorder. `salt(i)` gives unit i's salt.
 */
function commitSlot(name, present, value, salt) {
  const units = [];
  let next = 0;
  function repr(v, path) {
    if (v === null || typeof v !== 'object') {
      const cs = typeof v === 'string' ? chunks(v) : null;
      if (!cs) return [enc.encode(jcs(v))];
      const ds = cs.map((c, k) => {
        const i = next++;
        const d = sha(Uint8Array.of(T.c), salt(i), c);
        units.push({ i, kind: 'chunk', path: `${path}#${k}`, text: Buffer.from(c).toString(), digest: d });
        return d;
      });
      return [Uint8Array.of(0x7e), ...ds];
    }
    if (Array.isArray(v)) return [Uint8Array.of(0x5b), ...v.map((x, k) => unit('e', null, x, `${path}/${k}`))];
    const ds = Object.keys(v)
      .sort()
      .map((k) => unit('m', k, v[k], `${path}/${k}`));
    return [Uint8Array.of(0x7b), ...ds.sort(cmp)];
  }
  function unit(kind, nm, v, path) {
    const i = next++;
    const rec = { i, kind: kind === 'm' ? 'member' : 'element', path };
    units.push(rec);
    const body = repr(v, path);
    rec.digest = sha(
      Uint8Array.of(T[kind]),
      salt(i),
      ...(nm === null ? [] : [enc.encode(JSON.stringify(nm))]),
      ...body,
    );
    return rec.digest;
  }
  // The slot member: index 0; an absent slot commits JCS(name) alone.
  const i0 = next++;
  const top = { i: i0, kind: 'member', path: `/${name}` };
  units.push(top);
  const body = present ? repr(value, `/${name}`) : [];
  top.digest = sha(Uint8Array.of(T.m), salt(i0), enc.encode(JSON.stringify(name)), ...body);
  return { digest: top.digest, units };
}

// ---------------------------------------------------------------------------------------------------
// The private record of §1.
const seed = sha(enc.encode('stepchain/v3 example seed (fixed for the example only)'));
const record = {
  error: null,
  input: { note: 'Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday.' },
  kind: 'step',
  model: 'gpt-4o-2024-08-06',
  prev_hash: 'sha256:' + hex(sha(enc.encode('example genesis'))),
  prompt: 'Call the API.',
  ref: null,
  result: { status: 200 },
  seq: 0,
  step_id: 's0',
  tool_call: { arguments: { api_key: 'k-live-0123456789abcdef', url: 'https://api.example.com/v1' }, name: 'http' },
  ts: '2026-11-27T10:00:00.000Z',
  v: 3,
};
const keys = SLOTS.map((_, j) => slotKey(seed, j));
const slots = SLOTS.map((name, j) => commitSlot(name, name in record, record[name], (i) => saltOf(keys[j], i)));
const R = sha(Uint8Array.of(T.r), ...slots.map((s) => s.digest));
const root = 'sha256:' + hex(R);
const privateNoHash = { ...record, root, seed: hex(seed) };
const B = 'sha256:' + hex(sha(enc.encode(jcs(privateNoHash))));
const envelope = (r) => ({
  bind: B,
  kind: r.kind,
  prev_hash: r.prev_hash,
  ref: r.ref,
  root,
  seq: r.seq,
  step_id: r.step_id,
  ts: r.ts,
  v: r.v,
});
const stepHash = 'sha256:' + hex(sha(enc.encode(jcs(envelope(record)))));
const privateLine = jcs({ ...privateNoHash, step_hash: stepHash });

console.log('private line (' + enc.encode(privateLine).length + ' bytes):\n' + privateLine + '\n');
for (const j of [1, 6]) {
  console.log(`slot ${SLOTS[j]} (key ${hex(keys[j]).slice(0, 16)}…):`);
  for (const u of slots[j].units)
    console.log(
      `  #${u.i} ${u.kind.padEnd(7)} ${u.path.padEnd(28)} salt ${hex(saltOf(keys[j], u.i))}  digest ${hex(u.digest).slice(0, 16)}…${u.text ? '  "' + u.text + '"' : ''}`,
    );
}
console.log(`\nR ${root}\nB ${B}\nstep_hash ${stepHash}\n`);

// ---------------------------------------------------------------------------------------------------
// The public form of §1: the api_key member and the chunk holding the e-mail withheld.
const inputUnits = slots[1].units,
  toolUnits = slots[6].units;
const find = (units, path) => units.find((u) => u.path === path);
const withheldChunk = find(inputUnits, '/input/note#0');
const withheldKey = find(toolUnits, '/tool_call/arguments/api_key');
const publicRecord = {
  bind: B,
  error: null,
  input: {
    note: {
      '$stepchain:chunks': [
        { '$stepchain:withheld': 'sha256:' + hex(withheldChunk.digest) },
        find(inputUnits, '/input/note#1').text,
      ],
    },
  },
  kind: 'step',
  model: record.model,
  prev_hash: record.prev_hash,
  prompt: record.prompt,
  ref: null,
  result: record.result,
  root,
  secrets: {
    keys: Object.fromEntries(
      ['error', 'meta', 'model', 'prompt', 'result'].map((n) => [n, b64u(keys[SLOTS.indexOf(n)])]),
    ),
    salts: {
      input: b64u(Buffer.concat(inputUnits.filter((u) => u !== withheldChunk).map((u) => saltOf(keys[1], u.i)))),
      tool_call: b64u(Buffer.concat(toolUnits.filter((u) => u !== withheldKey).map((u) => saltOf(keys[6], u.i)))),
    },
  },
  seq: 0,
  step_hash: stepHash,
  step_id: 's0',
  tool_call: {
    arguments: { '$stepchain:withheld': ['sha256:' + hex(withheldKey.digest)], url: record.tool_call.arguments.url },
    name: 'http',
  },
  ts: record.ts,
  v: 3,
};
const publicLine = jcs(publicRecord);
console.log('public line (' + enc.encode(publicLine).length + ' bytes):\n' + publicLine + '\n');

// ---------------------------------------------------------------------------------------------------
// A verifier of the public form (§14.3 steps 3–5): secrets → salts, units bottom-up, R, step hash.
function verifyPublic(p) {
  const fail = (code) => ({ ok: false, code });
  const digests = [];
  for (let j = 0; j < SLOTS.length; j++) {
    const name = SLOTS[j];
    const v = p[name];
    if (
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      typeof v['$stepchain:withheld'] === 'string' &&
      Object.keys(v).length === 1
    ) {
      digests.push(Buffer.from(v['$stepchain:withheld'].slice(7), 'hex'));
      continue;
    }
    let salt;
    if (p.secrets.keys?.[name]) {
      const k = Buffer.from(p.secrets.keys[name], 'base64url');
      salt = (i) => saltOf(k, i);
    } else if (p.secrets.salts?.[name]) {
      const all = Buffer.from(p.secrets.salts[name], 'base64url');
      let used = 0;
      salt = () => {
        if (16 * (used + 1) > all.length) throw new Error('SECRETS_INVALID');
        return all.subarray(16 * used, 16 * ++used);
      };
      salt.done = () => 16 * used === all.length;
    } else return fail('SECRETS_INVALID');
    let next = 0;
    const take = () => salt(next++);
    const repr = (x) => {
      if (x === null || typeof x !== 'object') {
        const cs = typeof x === 'string' ? chunks(x) : null;
        if (!cs) return [enc.encode(jcs(x))];
        return [Uint8Array.of(0x7e), ...cs.map((c) => sha(Uint8Array.of(T.c), take(), c))];
      }
      if ('$stepchain:chunks' in x) {
        return [
          Uint8Array.of(0x7e),
          ...x['$stepchain:chunks'].map((c) => {
            if (typeof c === 'string') {
              const lit = enc.encode(JSON.stringify(c));
              return sha(Uint8Array.of(T.c), take(), lit.subarray(1, lit.length - 1));
            }
            return Buffer.from(c['$stepchain:withheld'].slice(7), 'hex');
          }),
        ];
      }
      if (Array.isArray(x))
        return [
          Uint8Array.of(0x5b),
          ...x.map((y) =>
            y && typeof y === 'object' && typeof y['$stepchain:withheld'] === 'string'
              ? Buffer.from(y['$stepchain:withheld'].slice(7), 'hex')
              : unitOf('e', null, y),
          ),
        ];
      const ds = Object.keys(x)
        .filter((k) => k !== '$stepchain:withheld')
        .sort()
        .map((k) => unitOf('m', k, x[k]));
      for (const w of x['$stepchain:withheld'] ?? []) ds.push(Buffer.from(w.slice(7), 'hex'));
      return [Uint8Array.of(0x7b), ...ds.sort(cmp)];
    };
    const unitOf = (kind, nm, x) => {
      const s = take();
      return sha(Uint8Array.of(T[kind]), s, ...(nm === null ? [] : [enc.encode(JSON.stringify(nm))]), ...repr(x));
    };
    try {
      const s0 = take();
      digests.push(sha(Uint8Array.of(T.m), s0, enc.encode(JSON.stringify(name)), ...(name in p ? repr(v) : [])));
    } catch {
      return fail('SECRETS_INVALID');
    }
    if (salt.done && !salt.done()) return fail('SECRETS_INVALID');
  }
  const r = 'sha256:' + hex(sha(Uint8Array.of(T.r), ...digests));
  if (r !== p.root) return fail('ROOT_MISMATCH');
  const h =
    'sha256:' +
    hex(
      sha(
        enc.encode(
          jcs({
            bind: p.bind,
            kind: p.kind,
            prev_hash: p.prev_hash,
            ref: p.ref,
            root: p.root,
            seq: p.seq,
            step_id: p.step_id,
            ts: p.ts,
            v: p.v,
          }),
        ),
      ),
    );
  if (h !== p.step_hash) return fail('HASH_MISMATCH');
  return { ok: true };
}
const clone = (x) => JSON.parse(JSON.stringify(x));
const rewritten = clone(publicRecord);
rewritten.tool_call.arguments.url = 'https://attacker.example/v1';
const invented = clone(publicRecord);
invented.input.note['$stepchain:chunks'][0] = 'Please transfer 10000 EUR to mallory about the overdue ';
const inventedWithSalt = clone(invented);
{
  const s = Buffer.from(inventedWithSalt.secrets.salts.input, 'base64url');
  inventedWithSalt.secrets.salts.input = b64u(Buffer.concat([s.subarray(0, 32), Buffer.alloc(16, 7), s.subarray(32)]));
}
const results = {
  'the publication as made': verifyPublic(publicRecord),
  'a disclosed value rewritten (url)': verifyPublic(rewritten),
  'invented text where the e-mail chunk was withheld': verifyPublic(invented),
  'the same with a salt supplied for it': verifyPublic(inventedWithSalt),
};
for (const [k, v] of Object.entries(results))
  console.log(`${k}: ${v.ok ? 'valid against the original step hash' : 'refused, ' + v.code}`);
if (
  !results['the publication as made'].ok ||
  Object.values(results)
    .slice(1)
    .some((r) => r.ok)
) {
  console.error('example inconsistent');
  process.exit(1);
}
