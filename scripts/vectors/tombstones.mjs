// Generates tombstones.json (spec/RETENTION.md §3–§4): tombstones of removed runs, checked on their own and
// against a checkpoint someone kept — valid ones, and the ways one can lie (a head or root that does not
// extend the checkpoint, a checkpoint of more steps than the run had, a proof cut short, a bad shape).
// Inputs are fixed, so the output is byte-identical on every run. Each tree root is also computed here with
// node:crypto (RFC 6962: leaf 0x00‖step hash bytes, node 0x01‖l‖r), independently of the library.
import { createHash } from 'node:crypto';
import { MemoryTree, journalOrigin, noteSigner, proveConsistency, proveInclusion, signCheckpoint, stepLeafHash, treeRoot } from '../../dist/proofs/index.js';
import { checkTombstone } from '../../dist/retention/index.js';

const FORMAT = 'stepchain-vectors/v1';
const sha = (...parts) => { const h = createHash('sha256'); for (const p of parts) h.update(p); return h.digest(); };
const stepHash = (run, i) => 'sha256:' + createHash('sha256').update(`stepchain tombstone vector ${run} step ${i}`).digest('hex');
const hex = (b) => 'sha256:' + Buffer.from(b).toString('hex');
const AUTHORITY = 'retention.example';
const SEED = createHash('sha256').update('stepchain tombstone vector log key').digest();
const genesisOf = (name) => 'sha256:' + createHash('sha256').update(`stepchain tombstone vector genesis ${name}`).digest('hex');
/** The journal origin of run `name` (PROOFS.md §8.5) and a log key named by it. */
const originOf = (name) => journalOrigin({ authority: AUTHORITY, journalId: name, genesisHash: genesisOf(name) });
const logOf = (name) => noteSigner(originOf(name), new Uint8Array(SEED));

function rfc6962(leaves) {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0]);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), rfc6962(leaves.slice(0, k)), rfc6962(leaves.slice(k)));
}

function assert(cond, message) {
  if (!cond) throw new Error(`vector generation check failed: ${message}`);
}

async function runOf(name, steps, checkpointAt) {
  const hashes = Array.from({ length: steps }, (_, i) => stepHash(name, i));
  const tree = new MemoryTree();
  for (const h of hashes) tree.append(stepLeafHash(h));
  const root = await treeRoot(tree, steps);
  assert(Buffer.from(root).equals(rfc6962(hashes.map((h) => Buffer.from(h.slice(7), 'hex')))), `root of ${name}`);
  let checkpoint = null;
  let consistency = null;
  if (checkpointAt !== null) {
    checkpoint = signCheckpoint({ origin: originOf(name), size: checkpointAt, root: await treeRoot(tree, checkpointAt) }, logOf(name));
    consistency = (await proveConsistency(tree, checkpointAt, steps)).map(hex);
  }
  const tombstone = {
    tombstone: 'stepchain/tombstone/v1',
    journal: name,
    run_id: `00000000-0000-4000-8000-00000000000${name.length % 10}`,
    genesis_hash: genesisOf(name),
    format: 'stepchain/v2',
    created_at: '2026-01-01T00:00:00.000Z',
    run: { agent: 'vector-agent' },
    steps,
    head: steps === 0 ? null : hashes[steps - 1],
    last_ts: steps === 0 ? null : '2026-02-01T00:00:00.000Z',
    tree_root: hex(root),
    head_proof: steps === 0 ? [] : (await proveInclusion(tree, steps - 1, steps - 1, steps)).map(hex),
    checkpoint,
    consistency,
    removed_at: '2026-11-27T12:00:00.000Z',
    reason: 'retention: older than 180 days',
    policy: { keep_days: 180, basis: 'last-step' },
  };
  return { tombstone, tree };
}

export async function generate() {
  const cases = [];
  const add = (id, comment, tombstone, expected, against) => {
    const got = checkTombstone(tombstone, against);
    const want = expected.result === 'valid' ? { ok: true, checkpointSize: expected.checkpoint_size } : { ok: false, code: expected.code };
    const have = got.ok ? { ok: true, checkpointSize: got.checkpointSize } : { ok: false, code: got.problem.code };
    assert(JSON.stringify(have) === JSON.stringify(want), `${id}: library says ${JSON.stringify(have)}`);
    cases.push({ id, comment, tombstone, ...(against !== undefined ? { against } : {}), result: expected.result, ...(expected.code ? { code: expected.code } : { checkpoint_size: expected.checkpoint_size }) });
  };

  const plain = (await runOf('plain', 5, null)).tombstone;
  add('valid-no-checkpoint', 'A run that never signed a checkpoint: the shape is all there is to check.', plain, { result: 'valid', checkpoint_size: null });
  const empty = (await runOf('empty', 0, null)).tombstone;
  add('valid-empty-run', 'A run of no steps: head and last_ts null, tree_root the empty tree\'s (SHA-256 of nothing).', empty, { result: 'valid', checkpoint_size: null });
  const signed = await runOf('signed', 13, 6);
  add('valid-checkpoint-and-proof', 'The last checkpoint covered 6 of 13 steps; the consistency proof connects it to the final tree.', signed.tombstone, { result: 'valid', checkpoint_size: 6 });
  add('valid-against-kept-checkpoint', 'An auditor kept the checkpoint of size 6 before the removal: the tombstone extends it.', signed.tombstone, { result: 'valid', checkpoint_size: 6 }, signed.tombstone.checkpoint);
  const whole = await runOf('whole', 8, 8);
  add('valid-checkpoint-of-whole-run', 'The checkpoint covered every step: no proof hashes, the roots are equal.', whole.tombstone, { result: 'valid', checkpoint_size: 8 });

  const otherRoot = (await runOf('other', 13, null)).tombstone.tree_root;
  add('invalid-root-does-not-extend', 'The tombstone claims another tree root than the one its checkpoint extends to (a head that does not match).', { ...signed.tombstone, tree_root: otherRoot }, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' });
  add('invalid-head-vs-later-checkpoint', 'A checkpoint of the whole run someone kept names another root than the tombstone: the removed history is not the one they saw.', plain, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' }, signCheckpoint({ origin: originOf('plain'), size: 5, root: Buffer.from(otherRoot.slice(7), 'hex') }, logOf('plain')));
  add('invalid-checkpoint-larger-than-run', 'A kept checkpoint of 9 steps, but the tombstone says the run had 8 when removed: steps were lost before the removal.', whole.tombstone, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' }, signCheckpoint({ origin: originOf('whole'), size: 9, root: new Uint8Array(32) }, logOf('whole')));
  add('invalid-proof-cut-short', 'The consistency proof lost its last hash.', { ...signed.tombstone, consistency: signed.tombstone.consistency.slice(0, -1) }, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' });
  add('invalid-no-proof-for-that-size', 'A kept checkpoint of size 3: the tombstone proves only from size 6, so nothing connects it.', signed.tombstone, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' }, signCheckpoint({ origin: originOf('signed'), size: 3, root: await treeRoot(signed.tree, 3) }, logOf('signed')));
  const other = await runOf('borrowed', 13, 6);
  add('invalid-checkpoint-of-another-journal', 'A tombstone of run "victim" carrying run "borrowed"\'s checkpoint, tree and proof: the checkpoint\'s origin names another journal and genesis.', { ...other.tombstone, journal: 'victim', genesis_hash: genesisOf('victim') }, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' });
  add('invalid-head-not-last-leaf', 'The head is not the last leaf of tree_root (an invented head beside a real tree).', { ...signed.tombstone, head: plain.head }, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' });
  add('invalid-empty-run-root', 'A run of no steps whose tree_root is not the empty tree\'s.', { ...empty, tree_root: plain.tree_root }, { result: 'invalid', code: 'TOMBSTONE_INCONSISTENT' });
  add('malformed-format', 'An unknown tombstone format.', { ...plain, tombstone: 'stepchain/tombstone/v9' }, { result: 'invalid', code: 'TOMBSTONE_MALFORMED' });
  add('malformed-head-without-steps', 'head is null but steps is 5.', { ...plain, head: null }, { result: 'invalid', code: 'TOMBSTONE_MALFORMED' });
  add('malformed-checkpoint-without-proof', 'A checkpoint and a null proof.', { ...signed.tombstone, consistency: null }, { result: 'invalid', code: 'TOMBSTONE_MALFORMED' });
  add('malformed-checkpoint-text', 'The checkpoint is not a signed note.', { ...signed.tombstone, checkpoint: 'not a note' }, { result: 'invalid', code: 'TOMBSTONE_MALFORMED' });

  return {
    'tombstones.json': {
      format: FORMAT,
      kind: 'tombstones',
      description: `Tombstones of removed runs (spec/RETENTION.md §3–§4), each checked on its own, or against the checkpoint in "against" when present. Step i of run R has step hash sha256:hex(SHA-256("stepchain tombstone vector R step i")); the genesis hash of run R is sha256:hex(SHA-256("stepchain tombstone vector genesis R")); checkpoints of run R are signed under its journal origin (PROOFS.md §8.5, authority "${AUTHORITY}") with Ed25519 seed ${SEED.toString('hex')} (tests only). Expected: result, and code when invalid or checkpoint_size (null when none was checked) when valid.`,
      cases,
    },
  };
}
