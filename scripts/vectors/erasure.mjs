// Vectors for erasure in stepchain/v3 journals (spec/ERASURE.md): small chains whose records are sealed
// with fixed seeds, values erased (a member, an element, a whole slot, twice in one slot), an erasure
// recorded but not carried out, and mutations that lie (an erasure record naming another digest or path,
// a marker naming no erasure record, kept salts or values edited, a seed deleted with nothing erased).
// Each case: a genesis, the stored lines, and the codes a verifier reports (problems, notices).
// Built from dist/.
import { createHash } from 'node:crypto';
import { canonicalJson, canonicalJsonTrusted } from '../../dist/canonical/jcs.js';
import { genesisHash } from '../../dist/record/formats.js';
import { sealV3 } from '../../dist/record/v3.js';
import { eraseUnit, unitAt } from '../../dist/record/v3/erasure.js';
import { ChainVerifier } from '../../dist/chain/verifier.js';

const sha = (s) => createHash('sha256').update(s).digest('hex');
const GENESIS = { created_at: '2026-11-27T09:00:00.000Z', format: 'stepchain/v3', journal_id: 'erasure-vectors', run: { agent: 'vectors' } };
const EMAIL = 'alice.liddell@example.org';
const STEPS = [
  { input: { customer: { email: EMAIL, id: 'c-17' } }, result: { email: EMAIL, plan: 'pro', tags: ['vip', EMAIL] } },
  { input: { q: 'next' }, result: { ok: true } },
];
const texts = (content) => {
  const t = { error: 'null', input: 'null', kind: '"step"', model: 'null', prompt: 'null', ref: 'null', result: 'null', tool_call: 'null' };
  for (const [k, v] of Object.entries(content)) t[k] = canonicalJson(v);
  return t;
};

/** A chain from contents; `ts` fixed, seeds from labels. */
function chain(label, contents) {
  let prev = genesisHash(GENESIS);
  return contents.map((c, seq) => {
    const sealed = sealV3(texts(c), { seq, stepId: c.step_id ?? `s${seq}`, ts: `2026-11-27T10:00:0${seq}.000Z`, prevHash: prev, seed: sha(`${label}/${seq}`) });
    prev = sealed.stepHash;
    return JSON.parse(sealed.line);
  });
}
const erasureContent = (target, path, digest, id, reason = 'GDPR Art. 17 request #118') => ({ step_id: id, kind: 'erasure', input: { by: 'dpo@example.org', digest, path, reason, target } });
const digestAt = (r, path) => 'sha256:' + Buffer.from(unitAt(r, path).unit.digest).toString('hex');

function verify(lines, start) {
  const v = new ChainVerifier({ genesis: GENESIS, ...(start ? { start } : {}) });
  for (const l of lines) v.line(l, true);
  const r = v.finish();
  return { ok: r.ok, problems: r.problems.map((p) => ({ code: p.code, seq: p.location.seq ?? null })), notices: r.warnings.filter((w) => w.code.startsWith('ERASURE') || w.code === 'VALUE_ERASED').map((w) => ({ code: w.code, seq: w.location.seq ?? null, path: w.location.path ?? null })) };
}

/** Erases `targets` ([seq, path] in order) of the chain built from STEPS, as the library does: records first, then the rewrite. */
function erased(label, targets, { lie, extra = [] } = {}) {
  const base = chain(label, STEPS);
  const contents = [...STEPS];
  const plan = [];
  let current = base.map((r) => ({ ...r }));
  for (const [seq, path] of targets) {
    const digest = digestAt(current[seq], path);
    const id = `erasure:${seq}:${digest.slice(7, 39)}`;
    const named = lie ? lie({ seq, path, digest }) : { seq, path, digest };
    contents.push(erasureContent(named.seq, named.path, named.digest, id));
    plan.push({ seq, path, id });
    // Erase in the record as it stands (a second erasure of one record starts from its sealed form).
    current[seq] = eraseUnit(current[seq], path, id).record;
  }
  contents.push(...extra);
  const sealedChain = chain(label, contents);
  // The erasure records are hashed into the chain; then each target line is replaced by its sealed form.
  let lines = sealedChain.map((r) => canonicalJsonTrusted(r));
  for (const [seq] of targets) lines[seq] = canonicalJsonTrusted(current[seq]);
  return { lines, plan, original: base };
}

export async function generate() {
  const cases = [];
  const add = (id, comment, result, lines, extra = {}) => {
    const expected = verify(lines, extra.start);
    if ((result === 'valid') !== expected.ok) throw new Error(`erasure vector ${id}: expected ${result}, verifier says ok=${expected.ok} ${JSON.stringify(expected.problems)}`);
    cases.push({ id, comment, result, genesis: GENESIS, lines, expected, ...extra });
  };

  const one = erased('member', [[0, '/result/email'], [0, '/result/tags/1'], [0, '/input/customer/email']]);
  add('erased-member', 'a subject erased from a record: the member /result/email replaced by the $stepchain:erased list beside the remaining members, the element /result/tags/1 and the member /input/customer/email likewise; the record in sealed form (no seed; bind, keys of five slots, the remaining salts of input and result); each erasure record names its unit back. Step hashes are those of the original chain.', 'valid', one.lines, {
    original_lines: one.original.map((r) => canonicalJsonTrusted(r)),
    erased_value: EMAIL,
    erased_salt_hex: Buffer.from(unitAt(one.original[0], '/result/email').unit.salt).toString('hex'),
  });
  add('erased-element', 'an array element erased: {"$stepchain:erased":{digest, erasure}} in its place, the array keeps its length', 'valid', erased('element', [[0, '/result/tags/1']]).lines);
  add('erased-slot', 'a whole slot erased (/input): the slot value is the marker, no salt of it remains (salts.input is empty), the other six keys are kept', 'valid', erased('slot', [[0, '/input']]).lines);
  add('erased-twice', 'two values of one record erased by two erasure records: the second starts from the sealed form (its kept salts, less the second unit\'s)', 'valid', erased('twice', [[0, '/result/email'], [0, '/input/customer/email']]).lines);
  {
    const base = chain('pending', [...STEPS, erasureContent(0, '/result/email', digestAt(chain('pending', STEPS)[0], '/result/email'), 'erasure:pending')]);
    add('erasure-pending', 'an erasure recorded but not carried out (the writer was killed before the rewrite): the chain is valid, the erasure reported pending (a notice), the value still there', 'valid', base.map((r) => canonicalJsonTrusted(r)));
  }
  add('lie-digest', 'the erasure record names another digest than the unit erased: the marker is unrecorded and the erasure record mismatched', 'invalid',
    erased('lie-digest', [[0, '/result/email']], { lie: (t) => ({ ...t, digest: 'sha256:' + sha('another value') }) }).lines);
  add('lie-path', 'the erasure record names another path (a member of input) than the one erased', 'invalid',
    erased('lie-path', [[0, '/result/email']], { lie: (t) => ({ ...t, path: '/input/customer/email' }) }).lines);
  add('lie-target', 'the erasure record names another record (seq 1) than the one erased', 'invalid',
    erased('lie-target', [[0, '/result/email']], { lie: (t) => ({ ...t, seq: 1 }) }).lines);
  {
    const c = erased('unrecorded', [[0, '/result/email']]);
    const r = JSON.parse(c.lines[0]);
    r.result['$stepchain:erased'][0].erasure = 'erasure:nobody';
    const lines = [...c.lines];
    lines[0] = canonicalJsonTrusted(r);
    add('marker-unrecorded', 'a marker names an erasure record the chain does not hold (a value dropped with no record of it); the erasure record is then pending', 'invalid', lines);
  }
  {
    const c = erased('edit-value', [[0, '/result/email']]);
    const r = JSON.parse(c.lines[0]);
    r.result.plan = 'free';
    const lines = [...c.lines];
    lines[0] = canonicalJsonTrusted(r);
    add('sealed-value-edited', 'a remaining value of a sealed record rewritten: its bind is stored, so the fast tier passes, and what remains no longer gives its root', 'invalid', lines);
  }
  {
    const c = erased('edit-salt', [[0, '/result/email']]);
    const r = JSON.parse(c.lines[0]);
    r.keys.model = 'AAAAAAAAAAAAAAAAAAAAAA';
    const lines = [...c.lines];
    lines[0] = canonicalJsonTrusted(r);
    add('sealed-key-edited', 'a kept slot key of a sealed record replaced', 'invalid', lines);
  }
  {
    const base = chain('no-marker', STEPS);
    const r = { ...base[0] };
    const seed = r.seed;
    delete r.seed;
    const { digestUtf8 } = await import('../../dist/canonical/sha256.js');
    const withSeed = { ...base[0] };
    delete withSeed.step_hash;
    r.bind = digestUtf8(canonicalJsonTrusted(withSeed));
    const { slotKey } = await import('../../dist/record/v3/commit.js');
    const { b64u } = await import('../../dist/record/v3/erasure.js');
    const sb = Buffer.from(seed, 'hex');
    r.keys = Object.fromEntries(['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'].map((s, j) => [s, b64u(slotKey(new Uint8Array(sb), j))]).filter(([s]) => s !== 'result'));
    r.salts = { result: '' };
    const lines = base.map((x) => canonicalJsonTrusted(x));
    lines[0] = canonicalJsonTrusted(r);
    add('sealed-without-erasure', 'a record turned to sealed form with nothing erased (its seed dropped): no erasure explains it. (Its result slot, given no salts, does not give the root either.)', 'invalid', lines);
  }
  {
    // Added with the kind checked (spec/ERASURE.md §5): a pending erasure record checked against its sealed target.
    const lying = erased('pending-lie', [[0, '/result/email']], { extra: [erasureContent(0, '/result/plan', 'sha256:' + sha('not the plan'), 'erasure:0:lie')] });
    add('pending-lie-sealed-target', 'an erasure record not carried out that names a unit of a sealed record with another digest than the unit has there: it claims an erasure that cannot be carried out (ERASURE_MISMATCH), besides the real erasure of /result/email', 'invalid', lying.lines);
    const honest = erased('pending-sealed', [[0, '/result/email']], { extra: [erasureContent(0, '/result/plan', digestAt(erased('pending-sealed', [[0, '/result/email']]).lines.map((l) => JSON.parse(l))[0], '/result/plan'), 'erasure:0:plan')] });
    add('pending-sealed-target', 'a second erasure of a sealed record recorded but not carried out: its unit is there with the digest it names, so it is pending (a notice)', 'valid', honest.lines);
    const malformed = chain('malformed', [...STEPS, { step_id: 'erasure:malformed', kind: 'erasure', input: { path: '/result/email', reason: 'request', target: 0 } }]);
    add('erasure-input-malformed', 'an erasure record whose input lacks digest and by, named by no marker: it erased nothing, the journal is valid (the verifier keeps the notice KIND_UNCHECKED it gave before the kind was checked)', 'valid', malformed.map((r) => canonicalJsonTrusted(r)));
  }
  {
    // Added with ranges (spec/ERASURE.md §5 step 4, §6.5): parts of one erased chain, seq 0 erased by seq 2.
    const whole = erased('range', [[0, '/result/email']]).lines;
    const startAt = (seq) => ({ seq, prev_hash: JSON.parse(whole[seq - 1]).step_hash });
    add('erasure-out-of-range', 'a partial range (a receipt of steps 1..2) that holds the erasure record but not its target: whether the erasure was carried out cannot be seen in it, so it is neither pending nor a problem: the notice ERASURE_OUT_OF_RANGE', 'valid', whole.slice(1), { start: startAt(1) });
    add('range-splits-erasure', 'a range (steps 0..1) that holds the erased record but ends before its erasure record: verified alone its marker is unexplained (ERASURE_UNRECORDED), as a silent deletion would be, so a writer refuses to write it (writer_refuses: RANGE_SPLITS_ERASURE, naming the ends that work)', 'invalid', whole.slice(0, 2), { writer_refuses: 'RANGE_SPLITS_ERASURE' });
    add('range-holds-neither-end', 'a range (step 1) between the erased record and its erasure record, holding neither: nothing about that erasure is in it, it verifies, and a writer writes it', 'valid', whole.slice(1, 2), { start: startAt(1) });
  }
  return { 'erasure.json': { format: 'stepchain-vectors/v1', kind: 'erasure', description: 'erasure of values in stepchain/v3 journals (spec/ERASURE.md): sealed records, erased markers and erasure records, with the codes a verifier reports', cases } };
}
