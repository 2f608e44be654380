/**
 * The file store keeps the journal's Merkle tree (spec/FILE-STORE.md §16, spec/PROOFS.md §5–§6): followed on
 * every commit, persisted beside head.json, computed for an existing journal on open without rewriting a
 * line, rebuilt when it no longer matches the chain; and the checkpoints it signs are kept and never
 * inconsistent (§8.6). Real files, no mocks.
 */
import { existsSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  noteSigner,
  noteVerifier,
  parseCheckpoint,
  parseNote,
  proveConsistency,
  proveInclusion,
  rootOfLeaves,
  stepLeafHash,
  verifyConsistency,
  verifyRange,
  SIG_ED25519,
} from '../../src/proofs/index.js';
import { FileStore, type Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-tree-');
let n = 0;
function fresh(): { store: FileStore; dir: (id: string) => string } {
  const r = join(root, `s${n++}`);
  return { store: new FileStore(r, { fsync: 'none' }), dir: (id) => join(r, id) };
}

async function stepHashes(j: Journal): Promise<string[]> {
  const out: string[] = [];
  for await (const l of j.lines()) out.push((JSON.parse(l.text) as { step_hash: string }).step_hash);
  return out;
}

const rootOf = (hashes: readonly string[]): Uint8Array => rootOfLeaves(hashes.map((h) => stepLeafHash(h)!));
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const stateOf = (dir: string): { step_hash: string | null; tree: { size: number; nodes: string[] } } =>
  JSON.parse(readFileSync(join(dir, 'tree', 'state.json'), 'utf8'));
const seed = new Uint8Array(32).fill(7);

function bucketBytes(dir: string): string {
  return readdirSync(join(dir, 'buckets'))
    .sort()
    .map((f) => readFileSync(join(dir, 'buckets', f), 'latin1'))
    .join('|');
}

describe('the tree follows appends', () => {
  test('after each batch the persisted root is the RFC 6962 root of the step hashes, and proofs from the tiles verify', async () => {
    const { store, dir } = fresh();
    const j = await store.create('a');
    for (let batch = 0; batch < 7; batch++)
      await j.appendMany(Array.from({ length: 41 + batch * 17 }, (_, i) => ({ input: { batch, i } })));
    await j.close();
    const hashes = await stepHashes(j);
    const state = stateOf(dir('a'));
    expect(state.tree.size).toBe(hashes.length);
    expect(state.step_hash).toBe(hashes.at(-1));
    const view = await (await store.open('a', { readOnly: true })).treeView();
    expect(b64(view.root)).toBe(b64(rootOf(hashes)));
    // Tile level 0 holds every leaf hash; level 1 every completed subtree of 256 leaves.
    expect(readFileSync(join(dir('a'), 'tree', 'tiles-0')).length).toBe(32 * hashes.length);
    expect(readFileSync(join(dir('a'), 'tree', 'tiles-1')).length).toBe(32 * Math.floor(hashes.length / 256));
    for (const [from, to] of [
      [0, 0],
      [255, 256],
      [300, 420],
      [hashes.length - 1, hashes.length - 1],
    ] as const) {
      const proof = await proveInclusion(view.reader, from, to, view.size);
      const leaves = hashes.slice(from, to + 1).map((h) => stepLeafHash(h)!);
      expect(verifyRange({ from, to, size: view.size, leaves, proof, root: view.root })).toEqual({ ok: true });
    }
    const old = rootOf(hashes.slice(0, 300));
    expect(
      verifyConsistency({
        oldSize: 300,
        oldRoot: old,
        size: view.size,
        root: view.root,
        proof: await proveConsistency(view.reader, 300, view.size),
      }),
    ).toEqual({ ok: true });
  });

  test('an existing journal without a tree gets it computed on open, and no line is rewritten', async () => {
    const { store, dir } = fresh();
    const j = await store.create('old');
    await j.appendMany(Array.from({ length: 600 }, (_, i) => ({ input: { i } })));
    await j.close();
    rmSync(join(dir('old'), 'tree'), { recursive: true });
    const before = bucketBytes(dir('old'));
    // A read-only open computes nothing on disk: it builds the tree in memory for its proofs.
    const ro = await store.open('old', { readOnly: true });
    const memoryView = await ro.treeView();
    expect(existsSync(join(dir('old'), 'tree'))).toBe(false);
    const j2 = await store.open('old');
    await j2.close();
    expect(bucketBytes(dir('old'))).toBe(before);
    const hashes = await stepHashes(j2);
    expect(stateOf(dir('old')).tree.size).toBe(600);
    expect(b64(memoryView.root)).toBe(b64(rootOf(hashes)));
    expect(b64((await (await store.open('old', { readOnly: true })).treeView()).root)).toBe(b64(rootOf(hashes)));
  });

  test.each([
    ['state.json removed', (d: string) => rmSync(join(d, 'tree', 'state.json'))],
    ['state.json garbage', (d: string) => writeFileSync(join(d, 'tree', 'state.json'), '{"nope":1}')],
    [
      'tiles cut short (a crash lost unsynced hashes)',
      (d: string) => truncateSync(join(d, 'tree', 'tiles-0'), 32 * 100),
    ],
    [
      'extra tile hashes past the state (a crash between tiles and state)',
      (d: string) => writeFileSync(join(d, 'tree', 'tiles-0'), Buffer.alloc(32 * 5, 9), { flag: 'a' }),
    ],
    [
      'a state from another chain',
      (d: string) => {
        const s = stateOf(d);
        s.step_hash = 'sha256:' + '0'.repeat(64);
        writeFileSync(join(d, 'tree', 'state.json'), JSON.stringify(s));
      },
    ],
  ])('a tree that does not match the chain is rebuilt: %s', async (_name, damage) => {
    const { store, dir } = fresh();
    const j = await store.create('d');
    await j.appendMany(Array.from({ length: 300 }, (_, i) => ({ input: { i } })));
    await j.close();
    damage(dir('d'));
    const j2 = await store.open('d');
    await j2.appendMany(Array.from({ length: 20 }, (_, i) => ({ input: { more: i } })));
    await j2.close();
    const hashes = await stepHashes(j2);
    expect(readFileSync(join(dir('d'), 'tree', 'tiles-0')).length).toBe(32 * 320);
    const view = await (await store.open('d', { readOnly: true })).treeView();
    expect(b64(view.root)).toBe(b64(rootOf(hashes)));
    const proof = await proveInclusion(view.reader, 10, 12, view.size);
    expect(
      verifyRange({
        from: 10,
        to: 12,
        size: 320,
        leaves: hashes.slice(10, 13).map((h) => stepLeafHash(h)!),
        proof,
        root: view.root,
      }).ok,
    ).toBe(true);
  });

  test('merkleTree: false leaves the tree alone on commits; a checkpoint catches up and signs the right root', async () => {
    const r = join(root, `s${n++}`);
    const lazy = new FileStore(r, { fsync: 'none', merkleTree: false });
    const j = await lazy.create('lazy');
    await j.appendMany(Array.from({ length: 300 }, (_, i) => ({ input: { i } })));
    expect(existsSync(join(r, 'lazy', 'tree'))).toBe(false);
    const signed = await j.checkpoint(noteSigner('example.com/lazy/x', seed));
    await j.close();
    expect(b64(signed.checkpoint.root)).toBe(b64(rootOf(await stepHashes(j))));
    expect(stateOf(join(r, 'lazy')).tree.size).toBe(300);
  });

  test('the journal directory with its tree and checkpoints verifies', async () => {
    const { store } = fresh();
    const j = await store.create('v');
    await j.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: { i } })));
    await j.checkpoint(noteSigner('example.com/v/x', seed));
    await j.close();
    const report = await store.verify('v');
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});

describe('checkpoints the journal signs (PROOFS.md §8.6)', () => {
  test('each one is kept, extends the last, and verifies with the log key', async () => {
    const { store, dir } = fresh();
    const j = await store.create('c');
    const origin = `example.com/c/${j.genesis.journal_id ?? 'g'}`.replace(/[^A-Za-z0-9./_-]/g, '');
    const signer = noteSigner(origin, seed);
    await j.appendMany(Array.from({ length: 5 }, (_, i) => ({ input: { i } })));
    const first = await j.checkpoint(signer);
    await j.appendMany(Array.from({ length: 9 }, (_, i) => ({ input: { j: i } })));
    const second = await j.checkpoint(signer);
    expect(second.previous?.size).toBe(5);
    expect(second.checkpoint.size).toBe(14);
    const kept = await j.checkpoints();
    expect(kept).toEqual([first.note, second.note]);
    const verifier = noteVerifier(origin, signer.publicKey, SIG_ED25519);
    for (const note of kept) {
      const parsed = parseNote(note);
      expect(parsed.ok).toBe(true);
      if (parsed.ok)
        expect(verifier.verify(new TextEncoder().encode(parsed.note.text), parsed.note.signatures[0]!.signature)).toBe(
          true,
        );
    }
    expect(readdirSync(join(dir('c'), 'checkpoints'))).toHaveLength(2);
    await j.close();
  });

  test('a truncated-then-extended journal is refused a new checkpoint: CHECKPOINT_REFUSED, nothing signed', async () => {
    const { store, dir } = fresh();
    const j = await store.create('t');
    const signer = noteSigner('example.com/t/x', seed);
    await j.appendMany(Array.from({ length: 30 }, (_, i) => ({ input: { i } })));
    await j.checkpoint(signer);
    await j.close();
    // Cut the journal back to 20 steps (the bucket's first 20 lines) and extend it with other steps.
    const bucket = join(dir('t'), 'buckets', readdirSync(join(dir('t'), 'buckets'))[0]!);
    const lines = readFileSync(bucket, 'utf8').split('\n').slice(0, 20);
    writeFileSync(bucket, lines.join('\n') + '\n');
    const j2 = await store.open('t');
    await j2.appendMany(Array.from({ length: 15 }, (_, i) => ({ input: { rewritten: i } })));
    const err = await j2.checkpoint(signer).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe('CHECKPOINT_REFUSED');
    expect(err?.message).toMatch(/INCONSISTENT/);
    expect(await j2.checkpoints()).toHaveLength(1);
    // And truncated alone (smaller than the last checkpoint): SIZE_DECREASED.
    writeFileSync(bucket, lines.slice(0, 10).join('\n') + '\n');
    for (const f of readdirSync(join(dir('t'), 'buckets')))
      if (join(dir('t'), 'buckets', f) !== bucket) rmSync(join(dir('t'), 'buckets', f));
    await j2.close();
    const j3 = await store.open('t');
    const err2 = await j3.checkpoint(signer).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err2?.code).toBe('CHECKPOINT_REFUSED');
    expect(err2?.message).toMatch(/SIZE_DECREASED/);
    await j3.close();
  });

  test('a checkpoint that cannot be read stops signing (a log never forgets its last checkpoint)', async () => {
    const { store, dir } = fresh();
    const j = await store.create('k');
    const signer = noteSigner('example.com/k/x', seed);
    await j.append({ input: 1 });
    const first = await j.checkpoint(signer);
    writeFileSync(join(dir('k'), first.kept), 'garbage');
    const err = await j.checkpoint(signer).then(
      () => null,
      (e: unknown) => e as { code: string },
    );
    expect(err?.code).toBe('CHECKPOINT_REFUSED');
    await j.close();
    expect(
      parseCheckpoint(parseNote(first.note).ok ? (parseNote(first.note) as { note: { text: string } }).note.text : '')
        .ok,
    ).toBe(true);
  });
});
