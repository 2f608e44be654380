// Benchmark of transparency proofs (spec/PROOFS.md) at 1 000 000 steps. The file store: appends with the
// Merkle tree kept on every commit against the same appends without it (paired runs, the overhead ratio);
// the tree of an existing journal computed on open; proof generation from the store's tiles on disk and
// verification, per proof. Then the core alone: tree maintenance per step against the SHA-256 of one
// stored line (the baseline, same run), the tree and its tiles in memory, proofs from memory and tiles,
// checkpoint signing and verification. Writes its section of bench/RESULTS.md (between the markers);
// prints it too. Not part of `npm test`.
//
//   npm run bench:proofs                        # 1 000 000 steps, writes bench/RESULTS.md
//   node bench/proofs.mjs --n=100000 --no-write # after npm run build
// In Node the library hashes with node:crypto; the internal module lets the bench measure @noble/hashes too.
import { setSha256Backend, nobleBackend, sha256Backend } from '../dist/canonical/sha256.js';
import {
  MemoryTree,
  SIG_COSIGNATURE_V1,
  TreeFrontier,
  addSignatures,
  cosignCheckpoint,
  inclusionSpans,
  noteSigner,
  noteVerifier,
  proveConsistency,
  proveInclusion,
  signCheckpoint,
  stepLeafHash,
  tileReader,
  treeRoot,
  verifyCheckpoint,
  verifyConsistency,
  verifyInclusion,
  verifyRange,
} from '../dist/proofs/index.js';
import { median } from './lib/stats.mjs';
import { storeFigures } from './lib/proofs-store.mjs';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 1_000_000);
const enc = new TextEncoder();
const line = enc.encode(JSON.stringify({ input: 'x'.repeat(1400), seq: 0 })); // ~1.5 KB, a typical stored line
const stepHashes = Array.from(
  { length: N },
  (_, i) => 'sha256:' + Buffer.from(sha256Backend().bytes(enc.encode(`step ${i}`))).toString('hex'),
);

// CPU time (user + system) of this process, in ms: on a shared machine wall time mostly measures the
// other processes (bench/README.md, "Profiling"). Every timed body is synchronous work or awaits only
// already-resolved promises, so CPU time is its cost.
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
function time(fn, reps = 5) {
  const ms = [];
  for (let r = 0; r < reps; r++) {
    const t = cpuMs();
    fn();
    ms.push(cpuMs() - t);
  }
  return median([...ms].sort((a, b) => a - b));
}
async function timeAsync(fn, reps = 5) {
  const ms = [];
  for (let r = 0; r < reps; r++) {
    const t = cpuMs();
    await fn();
    ms.push(cpuMs() - t);
  }
  return median([...ms].sort((a, b) => a - b));
}
const us = (ms, n) => ((ms * 1000) / n).toFixed(2) + ' µs';
const rows = [];
const row = (what, value, note = '') => rows.push(`| ${what} | ${value} | ${note} |`);

// Per-step tree maintenance vs the line hash an append already computes.
const M = Math.min(N, 200_000);
const baseline = time(() => {
  for (let i = 0; i < M; i++) sha256Backend().bytes(line);
});
const maintain = time(() => {
  const f = new TreeFrontier();
  for (let i = 0; i < M; i++) f.append(stepLeafHash(stepHashes[i]));
});
row('SHA-256 of a 1.5 KB line (baseline, per step)', us(baseline, M));
row(
  'tree maintenance per step (leaf hash + frontier append)',
  us(maintain, M),
  `${(maintain / baseline).toFixed(2)}× the baseline`,
);

// The whole tree, once, as a store opening an existing journal would; and its tiles.
let tree;
const buildMs = time(() => {
  tree = new MemoryTree();
  for (const s of stepHashes) tree.append(stepLeafHash(s));
}, 1);
row(`MemoryTree of ${N} steps (every node kept)`, `${(buildMs / 1000).toFixed(2)} s`, us(buildMs, N) + ' per step');
const tiles = new Map();
const tileMs = time(() => {
  const f = new TreeFrontier();
  for (const s of stepHashes)
    f.append(stepLeafHash(s), (level, index, h) => {
      if (level % 8 !== 0) return;
      const key = `${level / 8}/${Math.floor(index / 256)}`;
      let t = tiles.get(key);
      if (!t) tiles.set(key, (t = new Uint8Array(256 * 32)));
      t.set(h, (index % 256) * 32);
    });
}, 1);
let tileBytes = 0;
for (const t of tiles.values()) tileBytes += t.length;
row(
  `frontier + tlog-tiles of ${N} steps`,
  `${(tileMs / 1000).toFixed(2)} s`,
  `${tiles.size} tiles, ${(tileBytes / 2 ** 20).toFixed(1)} MiB`,
);
let fetches = 0;
const fetchTile = (level, index, width) => {
  fetches++;
  return tiles.get(`${level}/${index}`).subarray(0, Math.max(width, 1) * 32);
};
const tilesReader = tileReader(fetchTile);

// Proof generation and verification.
const root = await treeRoot(tree, N);
const picks = Array.from({ length: 1000 }, (_, i) => Math.floor((i * 7919 * 104729) % N));
{
  // Cold: a new reader (empty cache) per proof, as a one-off `stepchain prove` would run.
  fetches = 0;
  const ms = await timeAsync(async () => {
    for (const i of picks.slice(0, 200)) await proveInclusion(tileReader(fetchTile), i, i, N);
  });
  row(
    'inclusion proof generation, one step (tiles, cold reader)',
    us(ms, 200),
    `${(fetches / 5 / 200).toFixed(1)} tile reads per proof`,
  );
}
for (const [name, reader] of [
  ['memory', tree],
  ['tiles', tilesReader],
]) {
  fetches = 0;
  const ms = await timeAsync(async () => {
    for (const i of picks) await proveInclusion(reader, i, i, N);
  });
  row(
    `inclusion proof generation, one step (${name})`,
    us(ms, picks.length),
    name === 'tiles' ? `${(fetches / 5 / picks.length).toFixed(1)} tile reads per proof (64-tile cache)` : '',
  );
  const rms = await timeAsync(async () => {
    for (const i of picks.slice(0, 200)) await proveInclusion(reader, Math.min(i, N - 21), Math.min(i, N - 21) + 20, N);
  });
  row(`inclusion proof generation, 21 steps (${name})`, us(rms, 200));
  const cms = await timeAsync(async () => {
    for (const i of picks.slice(0, 200)) await proveConsistency(reader, Math.max(1, i), N);
  });
  row(`consistency proof generation (${name})`, us(cms, 200));
}
const inc = await Promise.all(picks.map((i) => proveInclusion(tree, i, i, N)));
const leaves = picks.map((i) => stepLeafHash(stepHashes[i]));
const rng = await proveInclusion(tree, 500, 520, N);
const rngLeaves = stepHashes.slice(500, 521).map(stepLeafHash);
const con = await proveConsistency(tree, 600_001 % N || 1, N);
const oldRoot = await treeRoot(tree, 600_001 % N || 1);
for (const [backend, install] of [
  ['node:crypto', () => {}],
  ['@noble/hashes (browser)', () => setSha256Backend(nobleBackend)],
]) {
  install();
  const vi = time(() => {
    for (let k = 0; k < picks.length; k++)
      if (!verifyInclusion({ index: picks[k], size: N, leaf: leaves[k], proof: inc[k], root }).ok)
        throw new Error('inclusion');
  });
  row(`inclusion verification, one step, ${backend}`, us(vi, picks.length), `${inc[0].length} hashes`);
  const vr = time(() => {
    for (let k = 0; k < 200; k++)
      if (!verifyRange({ from: 500, to: 520, size: N, leaves: rngLeaves, proof: rng, root }).ok)
        throw new Error('range');
  });
  row(
    `inclusion verification, steps 500–520, ${backend}`,
    us(vr, 200),
    `${rng.length} hashes (${inclusionSpans(500, 520, N).length} by §7.3)`,
  );
  const vc = time(() => {
    for (let k = 0; k < 200; k++)
      if (!verifyConsistency({ oldSize: 600_001 % N || 1, oldRoot, size: N, root, proof: con }).ok)
        throw new Error('consistency');
  });
  row(`consistency verification, ${backend}`, us(vc, 200), `${con.length} hashes`);
}

// Checkpoints (Ed25519 from @noble/curves).
const log = noteSigner('bench.example/journal/' + '00'.repeat(32), new Uint8Array(32).fill(1));
const ws = [1, 2, 3].map((i) => noteSigner(`w${i}.example`, new Uint8Array(32).fill(10 + i), SIG_COSIGNATURE_V1));
let note;
const signMs = time(() => {
  for (let i = 0; i < 50; i++) note = signCheckpoint({ origin: log.name, size: N, root }, log);
});
row('checkpoint signing (Ed25519)', us(signMs, 50));
note = addSignatures(note, ws.map((w) => cosignCheckpoint(note, w)).join(''));
const policy = {
  log: noteVerifier(log.name, log.publicKey),
  witnesses: ws.map((w) => noteVerifier(w.name, w.publicKey, SIG_COSIGNATURE_V1)),
  quorum: 2,
};
const verMs = time(() => {
  for (let i = 0; i < 20; i++) if (!verifyCheckpoint(note, policy).ok) throw new Error('checkpoint');
});
row('checkpoint verification, log + 3 cosignatures', us(verMs, 20));

const store = await storeFigures(N);
const START = '<!-- bench:proofs start -->';
const END = '<!-- bench:proofs end -->';
const section = [
  START,
  `## Transparency proofs (\`npm run bench:proofs\`, ${N} steps)`,
  '',
  `Node ${process.version}, ${new Date().toISOString().slice(0, 10)}, load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')} at the end. Times are CPU time (user + system) of the process unless marked wall; medians.`,
  '',
  '### The file store (spec/FILE-STORE.md §16)',
  '',
  '| figure | median | spread | note |',
  '|---|---:|---|---|',
  ...store.rows,
  '',
  '### The core (src/proofs)',
  '',
  '| figure | median | note |',
  '|---|---:|---|',
  ...rows,
  '',
  `Peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (the 1M-step tree in memory and its tiles included).`,
  END,
].join('\n');
console.log(section);
if (!process.argv.includes('--no-write')) {
  const file = new URL('./RESULTS.md', import.meta.url);
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(START);
  const next =
    at >= 0
      ? text.slice(0, at) + section + text.slice(text.indexOf(END) + END.length)
      : text.trimEnd() + '\n\n' + section + '\n';
  writeFileSync(file, next);
  console.error(`wrote the proofs section of ${file.pathname}`);
}
