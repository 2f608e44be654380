// Generates vectors/journals.json (spec/FILE-STORE.md §13): journal directories, valid and damaged, with the
// report a verifier of a journal directory must give. Inputs are fixed, so the output is byte-identical on
// every run.
//
// Each case names the damage it holds and the problem codes that damage is meant to cause; the generator
// builds the directory on disk, runs the store's verifier over it, and refuses to write a vector whose
// report disagrees. Blob digests are computed with node:crypto, not the library.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { canonicalJson } from '../../dist/canonical/index.js';
import { genesisHash, makeGenesis, sealRecord } from '../../dist/record/index.js';
import { FileStore } from '../../dist/store/index.js';

const FORMAT = 'stepchain-vectors/v1';
const sha = (s) => 'sha256:' + createHash('sha256').update(s, 'utf8').digest('hex');

function assert(cond, message) {
  if (!cond) throw new Error(`vector generation check failed: ${message}`);
}

const GENESIS = makeGenesis({ journalId: '5d0c2a9e-1b7f-4c3a-8e6d-9f4b2c1a7e30', createdAt: '2026-11-22T10:00:00.000Z' });
const B = (seq) => `buckets/${String(seq).padStart(16, '0')}.jsonl`;
const metaOf = (extra = {}) => ({ config: { blob_threshold: 1024, bucket_bytes: 4096 }, format: 'stepchain-journal/v1', genesis: GENESIS, lineage: null, ...extra });
const META = canonicalJson(metaOf()) + '\n';

/** Steps 0..n-1; `fields(i)` may replace content fields (a blob reference, a marker). */
function chain(n, fields = () => ({})) {
  const records = [];
  let prev = genesisHash(GENESIS);
  for (let i = 0; i < n; i++) {
    const unsealed = {
      v: 1, seq: i, step_id: `step-${i}`, ts: new Date(Date.UTC(2026, 10, 22, 10, 0, i)).toISOString(), prev_hash: prev,
      input: { i }, model: 'm', prompt: 'p', tool_call: null, result: 'ok', ...fields(i),
    };
    const { record, line } = sealRecord(unsealed);
    assert(record.step_hash === sha(canonicalJson(unsealed, { refuseReserved: false, maxDepth: 128 })), `step ${i} hash`);
    records.push({ record, line });
    prev = record.step_hash;
  }
  return records;
}
const lines = (steps) => steps.map((s) => s.line).join('');
const headOf = (steps) => { const r = steps[steps.length - 1].record; return `{"seq":${r.seq},"step_hash":"${r.step_hash}"}\n`; };

/** A blob file and the reference to it. */
function blob(value) {
  const text = canonicalJson(value, { refuseReserved: false });
  const digest = sha(text);
  return { path: `blobs/sha256/${digest.slice(7)}`, text, ref: { '$stepchain:blob': { digest, size: Buffer.byteLength(text) } } };
}

const STD_DIRS = ['buckets', 'blobs/sha256'];
const three = chain(3);
const five = chain(5);

async function journalVectors() {
  const cases = [];
  const root = mkdtempSync(join(tmpdir(), 'stepchain-vectors-'));
  /** intended: problem codes in report order; warnings: warning codes. Checked against the store's verifier. */
  const add = async (id, comment, { dirs = STD_DIRS, files, intended, warnings = [] }) => {
    const dir = join(root, id);
    for (const d of dirs) mkdirSync(join(dir, d), { recursive: true });
    for (const f of files) {
      mkdirSync(dirname(join(dir, f.path)), { recursive: true });
      writeFileSync(join(dir, f.path), f.text);
    }
    const report = await new FileStore(root).verify(id);
    const codes = report.problems.map((p) => p.code);
    const warned = report.warnings.map((p) => p.code);
    assert(JSON.stringify(codes) === JSON.stringify(intended), `journal ${id}: verifier reports [${codes}], intended [${intended}]`);
    assert(JSON.stringify(warned) === JSON.stringify(warnings), `journal ${id}: verifier warns [${warned}], intended [${warnings}]`);
    const loc = (p) => {
      const { file, line, seq, field } = p.location;
      return { code: p.code, ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}), ...(seq !== undefined ? { seq } : {}), ...(field !== undefined ? { field } : {}) };
    };
    cases.push({
      id, comment, result: intended.length === 0 ? 'valid' : 'invalid',
      dirs, files,
      expect: { ok: report.ok, head: report.head, head_seq: report.head_seq, steps: report.steps, problems: report.problems.map(loc), warnings: report.warnings.map((w) => ({ code: w.code })) },
    });
  };
  const std = (extra = []) => [{ path: 'journal.json', text: META }, { path: B(0), text: lines(three) }, { path: 'head.json', text: headOf(three) }, ...extra];

  // ---- valid directories
  await add('valid', 'three steps, one bucket, the head cache naming the last', { files: std(), intended: [] });
  await add('valid-empty', 'a journal with no step: an empty first bucket, no head cache', { files: [{ path: 'journal.json', text: META }, { path: B(0), text: '' }], intended: [] });
  {
    const b = blob({ report: 'x'.repeat(40) });
    const steps = chain(4, (i) => (i === 3 ? { result: b.ref } : {}));
    await add('valid-buckets-and-blob', 'steps 0..1 and 2..3 in two buckets; step 3\'s result is a blob', {
      files: [{ path: 'journal.json', text: META }, { path: B(0), text: lines(steps.slice(0, 2)) }, { path: B(2), text: lines(steps.slice(2)) }, { path: b.path, text: b.text }, { path: 'head.json', text: headOf(steps) }],
      intended: [],
    });
  }
  await add('valid-empty-last-bucket', 'the last bucket is empty and named for the next seq (a writer crashed before its first line was whole)', {
    files: std([{ path: B(3), text: '' }]), intended: [],
  });
  await add('valid-ignored-names', 'a quarantine file and names beginning with "." are ignored, in the directory and in buckets/ and blobs/', {
    files: std([{ path: `${B(0)}.quarantine-1`, text: '{"torn' }, { path: '.staging-1/x', text: 'x' }, { path: 'buckets/.tmp-1', text: 'x' }, { path: 'blobs/sha256/.tmp-2', text: 'x' }, { path: 'journal.lock.waiting', text: 'nonce' }]),
    intended: [],
  });
  await add('valid-torn-tail', 'the last bucket ends inside a line: an uncommitted write, a warning', {
    files: std().map((f) => (f.path === B(0) ? { path: B(0), text: lines(three) + five[3].line.slice(0, 40) } : f)),
    intended: [], warnings: ['TRUNCATED_LINE'],
  });

  // ---- the head cache (FILE-STORE.md §7): warnings only
  await add('head-cache-stale', 'head.json names an earlier step', { files: std().map((f) => (f.path === 'head.json' ? { path: f.path, text: headOf(three.slice(0, 2)) } : f)), intended: [], warnings: ['HEAD_CACHE_STALE'] });
  await add('head-cache-missing', 'steps exist but head.json does not', { files: std().filter((f) => f.path !== 'head.json'), intended: [], warnings: ['HEAD_CACHE_STALE'] });
  await add('head-cache-noncanonical', 'head.json names the head, but not in its exact form', {
    files: std().map((f) => (f.path === 'head.json' ? { path: f.path, text: f.text.replace(':', ': ') } : f)), intended: [], warnings: ['HEAD_CACHE_STALE'],
  });

  // ---- the metadata file (FILE-STORE.md §4, §11): verification stops at it
  const withMeta = (text) => std().map((f) => (f.path === 'journal.json' ? { path: f.path, text } : f));
  await add('meta-extra-member', 'journal.json with a member the format does not define', { files: withMeta(canonicalJson(metaOf({ extra: 1 })) + '\n'), intended: ['JOURNAL_INVALID'] });
  await add('meta-proto-member', 'journal.json with a "__proto__" member, which a JSON parser may hide', { files: withMeta(META.replace('"format"', '"__proto__":{},"format"')), intended: ['JOURNAL_INVALID'] });
  await add('meta-missing-lineage', 'journal.json without its lineage member', { files: withMeta(META.replace(',"lineage":null', '')), intended: ['JOURNAL_INVALID'] });
  await add('meta-noncanonical', 'journal.json pretty-printed: the right members, not JCS', { files: withMeta(JSON.stringify(metaOf(), null, 2) + '\n'), intended: ['JOURNAL_INVALID'] });
  await add('meta-no-newline', 'journal.json without its final newline', { files: withMeta(META.slice(0, -1)), intended: ['JOURNAL_INVALID'] });
  await add('meta-duplicate-member', 'journal.json naming format twice', { files: withMeta(META.replace('"format"', '"format":"x","format"')), intended: ['JOURNAL_INVALID'] });
  await add('meta-config-extra', 'config with a third member', { files: withMeta(canonicalJson(metaOf({ config: { blob_threshold: 1024, bucket_bytes: 4096, fsync: 'always' } })) + '\n'), intended: ['JOURNAL_INVALID'] });
  const lineage = { from_step: 2, parent_genesis_hash: genesisHash(GENESIS), parent_journal: 'parent', parent_step_hash: three[2].record.step_hash };
  await add('valid-fork', 'a fork of parent at step 2: the lineage matches the shared prefix', { files: withMeta(canonicalJson(metaOf({ lineage })) + '\n'), intended: [] });
  await add('lineage-extra-member', 'a lineage with a member §8.11 does not define', { files: withMeta(canonicalJson(metaOf({ lineage: { ...lineage, note: 'x' } })) + '\n'), intended: ['JOURNAL_INVALID'] });
  await add('lineage-parent-path', 'a lineage whose parent_journal is a path, not a journal id', { files: withMeta(canonicalJson(metaOf({ lineage: { ...lineage, parent_journal: '../x' } })) + '\n'), intended: ['JOURNAL_INVALID'] });
  await add('lineage-missing-member', 'a lineage without from_step', { files: withMeta(canonicalJson(metaOf({ lineage: { parent_genesis_hash: lineage.parent_genesis_hash, parent_journal: 'parent', parent_step_hash: lineage.parent_step_hash } })) + '\n'), intended: ['JOURNAL_INVALID'] });
  await add('lineage-mismatch', 'a well-formed lineage whose parent_step_hash is not this journal\'s step 2', {
    files: withMeta(canonicalJson(metaOf({ lineage: { ...lineage, parent_step_hash: three[1].record.step_hash } })) + '\n'), intended: ['JOURNAL_INVALID'],
  });

  // ---- entries and names (FILE-STORE.md §3, §5, §6)
  await add('unexpected-entry', 'a file the layout does not list, beside the journal\'s own', { files: std([{ path: 'notes.txt', text: 'x' }]), intended: ['JOURNAL_INVALID'] });
  await add('entry-wrong-kind', 'head.json is a directory', { dirs: [...STD_DIRS, 'head.json'], files: std().filter((f) => f.path !== 'head.json'), intended: ['JOURNAL_INVALID'] });
  await add('buckets-missing', 'no buckets/ directory', { dirs: ['blobs/sha256'], files: [{ path: 'journal.json', text: META }], intended: ['JOURNAL_INVALID'] });
  await add('blobs-unexpected', 'blobs/ holds md5/ beside sha256/, and sha256/ a name that is not a digest', {
    dirs: [...STD_DIRS, 'blobs/md5'], files: std([{ path: 'blobs/sha256/not-a-digest', text: 'x' }]), intended: ['JOURNAL_INVALID', 'JOURNAL_INVALID'],
  });
  await add('bucket-unexpected-name', 'a file in buckets/ that is neither a bucket nor a quarantine file', { files: std([{ path: 'buckets/notes.jsonl', text: 'x\n' }]), intended: ['JOURNAL_INVALID'] });
  await add('bucket-name-above-2p53', 'a copy of the first bucket named 9999999999999999.jsonl: sixteen digits above 2^53 - 1 name no seq, so it is not a bucket', {
    files: std([{ path: 'buckets/9999999999999999.jsonl', text: lines(three) }]), intended: ['JOURNAL_INVALID'],
  });
  await add('empty-bucket-not-last', 'an empty bucket between two others: a reader of steps 1.. would start there', {
    files: [{ path: 'journal.json', text: META }, { path: B(0), text: lines(five.slice(0, 3)) }, { path: B(1), text: '' }, { path: B(3), text: lines(five.slice(3)) }, { path: 'head.json', text: headOf(five) }],
    intended: ['JOURNAL_INVALID'],
  });
  await add('empty-last-bucket-misnamed', 'the empty last bucket is not named for the next seq (3)', { files: std([{ path: B(7), text: '' }]), intended: ['JOURNAL_INVALID'] });

  // ---- blobs (FORMAT.md §7, FILE-STORE.md §6)
  {
    const marked = blob({ '$stepchain:redacted': { commitment: 'sha256:' + 'b'.repeat(64), rule: 'pii' } });
    const steps = chain(2, (i) => (i === 1 ? { result: marked.ref } : {}));
    await add('blob-holds-marker', 'a blob whose value is a marker (digest and size correct, the chain rehashed): no writer stores a reserved name in a blob', {
      files: [{ path: 'journal.json', text: META }, { path: B(0), text: lines(steps) }, { path: marked.path, text: marked.text }, { path: 'head.json', text: headOf(steps) }],
      intended: ['BLOB_CORRUPT'],
    });
    const b = blob({ report: 'y'.repeat(40) });
    const short = { '$stepchain:blob': { ...b.ref['$stepchain:blob'], size: 3 } };
    const wrongSize = chain(2, (i) => (i === 1 ? { input: short } : {}));
    await add('blob-size-mismatch', 'the reference says 3 bytes; the file holds more (found before reading it)', {
      files: [{ path: 'journal.json', text: META }, { path: B(0), text: lines(wrongSize) }, { path: b.path, text: b.text }, { path: 'head.json', text: headOf(wrongSize) }],
      intended: ['BLOB_CORRUPT'],
    });
    const missing = chain(2, (i) => (i === 1 ? { result: b.ref } : {}));
    await add('blob-missing', 'a referenced blob is not in blobs/sha256/', {
      files: [{ path: 'journal.json', text: META }, { path: B(0), text: lines(missing) }, { path: 'head.json', text: headOf(missing) }],
      intended: ['BLOB_MISSING'],
    });
  }
  await add('problems-in-step-order', 'an unexpected entry (step 2), an edited step (step 3), an empty bucket not last (step 5), a missing blob (step 6): reported in the order of §8.13\'s steps', (() => {
    const b = blob({ z: 'z'.repeat(30) });
    const steps = chain(4, (i) => (i === 3 ? { result: b.ref } : {}));
    const edited = steps[1].line.replace('"result":"ok"', '"result":"OK"');
    return {
      files: [{ path: 'journal.json', text: META }, { path: B(0), text: steps[0].line + edited + steps[2].line }, { path: B(2), text: '' }, { path: B(3), text: steps[3].line }, { path: 'head.json', text: headOf(steps) }, { path: 'stray', text: '' }],
      intended: ['JOURNAL_INVALID', 'HASH_MISMATCH', 'JOURNAL_INVALID', 'BLOB_MISSING'],
    };
  })());

  rmSync(root, { recursive: true, force: true });
  return {
    format: FORMAT,
    kind: 'journals',
    description: 'Journal directories to verify per spec/FORMAT.md §8.13. Each case: dirs (directories to create, relative to the journal directory) and files (path relative to it, and UTF-8 text); expect: the report — ok, head, head_seq, steps, problems in report order ({code, file?, line?, seq?, field?}; messages are informative and not given), warnings ({code}).',
    genesis: GENESIS,
    genesis_hash: genesisHash(GENESIS),
    cases,
  };
}

export async function generate() {
  return { 'journals.json': await journalVectors() };
}
