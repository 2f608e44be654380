// The file store's side of `npm run bench:proofs`: appends with and without the Merkle tree (paired runs,
// so the ratio compares runs that shared the machine's load), the tree of an existing 1M-step journal
// computed on open, and proofs generated from the tiles on disk and verified, per proof.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileStore } from '../../dist/store/index.js';
import { genesisHash } from '../../dist/record/index.js';
import {
  proveConsistency,
  proveInclusion,
  stepLeafHash,
  treeRoot,
  verifyConsistency,
  verifyRange,
} from '../../dist/proofs/index.js';
import { fastFill } from './fast-journal.mjs';
import { makeStep } from './steps.mjs';
import { median } from './stats.mjs';

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const us = (ms, n) => `${((ms * 1000) / n).toFixed(1)} µs`;
const spread = (xs, f) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

/**
 * CPU time (user + system, µs) per step of `count` appends in batches of `batch`, fsync none: on a shared
 * machine wall time mostly measures the other processes, and an append without fsync is CPU work (and the
 * system calls it makes, which CPU time includes).
 */
async function appendCost(root, tree, count, batch, run) {
  const store = new FileStore(join(root, `${tree ? 't' : 'n'}${run}`), { fsync: 'none', merkleTree: tree });
  const j = await store.create('a');
  const steps = Array.from({ length: count }, (_, i) => makeStep(i));
  const t = cpuMs();
  for (let i = 0; i < count; i += batch) {
    if (batch === 1) await j.append(steps[i]);
    else await j.appendMany(steps.slice(i, i + batch));
  }
  await j.close();
  return ((cpuMs() - t) * 1000) / count;
}

export async function storeFigures(N) {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-proofs-'));
  const rows = [];
  try {
    for (const [label, count, batch] of [
      ['appendMany, batches of 256', 20_000, 256],
      ['append, one step per commit', 2_000, 1],
    ]) {
      const withTree = [];
      const without = [];
      const ratios = [];
      for (let r = 0; r < 5; r++) {
        // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
        const first = r % 2 === 0;
        const a1 = first ? await appendCost(root, false, count, batch, `${label.length}-${r}`) : null;
        const b = await appendCost(root, true, count, batch, `${label.length}-${r}`);
        const a = a1 ?? (await appendCost(root, false, count, batch, `${label.length}-${r}`));
        without.push(a);
        withTree.push(b);
        ratios.push(b / a);
      }
      const sorted = (xs) => [...xs].sort((x, y) => x - y);
      const f1 = (x) => x.toFixed(1);
      rows.push(
        `| ${label}, fsync none, without the tree: CPU per step | ${f1(median(sorted(without)))} µs | ${spread(without, f1)} µs | ${count} steps, 5 runs |`,
      );
      rows.push(
        `| ${label}, fsync none, tree kept on every commit: CPU per step | ${f1(median(sorted(withTree)))} µs | ${spread(withTree, f1)} µs | **${median(sorted(ratios)).toFixed(2)}×** the CPU without (paired runs, ${spread(ratios, (x) => x.toFixed(2))}) |`,
      );
    }

    // An existing journal of N steps (built without the tree), opened by a store that keeps one.
    const plain = new FileStore(join(root, 'big'), { fsync: 'none', merkleTree: false });
    await fastFill(plain, 'j', N, { genesisHash });
    const store = new FileStore(join(root, 'big'), { fsync: 'none' });
    let t = performance.now();
    const c0 = cpuMs();
    const journal = await store.open('j');
    const openCpu = cpuMs() - c0;
    const openWall = performance.now() - t;
    rows.push(
      `| tree of an existing ${N}-step journal, computed on open | ${(openWall / 1000).toFixed(1)} s (wall) | – | ${(openCpu / 1000).toFixed(1)} s CPU, ${us(openWall, N)} per step: one pass over the lines, no line rewritten |`,
    );
    const view = await journal.treeView();
    const hashes = [];
    for await (const l of journal.lines({ from: 0, to: 1999 })) hashes.push(JSON.parse(l.text).step_hash);
    const picks = Array.from({ length: 200 }, (_, i) => (i * 7919 * 104729) % (N - 21));
    const leavesOf = async (from, to) => {
      const out = [];
      for await (const l of journal.lines({ from, to })) out.push(stepLeafHash(JSON.parse(l.text).step_hash));
      return out;
    };
    // Cold: a fresh tile reader per proof, as one `stepchain prove` run; warm: one reader for all.
    for (const [kind, readerFor] of [
      [
        'cold reader per proof',
        () =>
          store
            .open('j', { readOnly: true })
            .then((r) => r.treeView())
            .then((v) => v.reader),
      ],
      ['warm reader', async () => view.reader],
    ]) {
      const ms = [];
      for (let r = 0; r < 3; r++) {
        const reader = kind === 'warm reader' ? view.reader : null;
        let spent = 0;
        for (const i of picks.slice(0, 100)) {
          const rd = reader ?? (await readerFor());
          const c = cpuMs();
          await proveInclusion(rd, i, i + 20, N);
          spent += cpuMs() - c;
        }
        ms.push(spent);
      }
      rows.push(
        `| inclusion proof of 21 steps from the tiles on disk, ${kind} | ${us(median([...ms].sort((a, b) => a - b)), 100)} | ${spread(
          ms.map((m) => (m * 1000) / 100),
          (x) => x.toFixed(0),
        )} µs | tree of ${N} |`,
      );
    }
    const cms = cpuMs();
    const cons = [];
    for (const i of picks.slice(0, 100)) cons.push(await proveConsistency(view.reader, Math.max(1, i), N));
    rows.push(
      `| consistency proof from the tiles on disk, warm reader | ${us(cpuMs() - cms, 100)} | – | ${cons[0].length} hashes |`,
    );
    // Verification per proof: the 21 leaves and the proof, against the root.
    const proofs = [];
    for (const i of picks.slice(0, 50))
      proofs.push({
        from: i,
        to: i + 20,
        leaves: await leavesOf(i, i + 20),
        proof: await proveInclusion(view.reader, i, i + 20, N),
      });
    const vms = cpuMs();
    for (let r = 0; r < 20; r++)
      for (const p of proofs)
        if (!verifyRange({ ...p, size: N, root: view.root }).ok) throw new Error('range proof did not verify');
    rows.push(
      `| inclusion proof verification, 21 steps | ${us(cpuMs() - vms, 20 * proofs.length)} | – | ${proofs[0].proof.length} hashes |`,
    );
    const olds = await Promise.all(
      picks
        .slice(0, 50)
        .map(async (i) => ({ oldSize: Math.max(1, i), oldRoot: await treeRoot(view.reader, Math.max(1, i)) })),
    );
    const cvs = cpuMs();
    for (let r = 0; r < 20; r++)
      for (const [k, o] of olds.entries())
        if (!verifyConsistency({ ...o, size: N, root: view.root, proof: cons[k] }).ok)
          throw new Error('consistency proof did not verify');
    rows.push(`| consistency proof verification | ${us(cpuMs() - cvs, 20 * olds.length)} | – | |`);
    await journal.close();
    void hashes;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { rows };
}
