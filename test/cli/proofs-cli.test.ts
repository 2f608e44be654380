/**
 * The transparency verbs of the built CLI as an operator, a witness and an auditor use them (spec/PROOFS.md):
 * checkpoint → prove → verify --proof; verify <journal> --checkpoint refusing a truncated, rewritten or
 * forked-and-rewritten journal with exit 1 and the code; a pinned checkpoint that cannot be used is exit 2,
 * never "unpinned"; the witness cosigns only what extends its last checkpoint, and its policy counts.
 */
import { cpSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { cliIn, codesOf, json } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-proofs-cli-');
const { run, append } = cliIn(dir, {}, { inProcess: true });

/** Keeps the first `keep` lines of a single-bucket journal (an operator cutting history). */
function truncate(journal: string, keep: number): void {
  const buckets = join(dir, journal, 'buckets');
  const [first, ...rest] = readdirSync(buckets).sort();
  const lines = readFileSync(join(buckets, first!), 'utf8').split('\n').slice(0, keep);
  writeFileSync(join(buckets, first!), lines.join('\n') + '\n');
  for (const f of rest) rmSync(join(buckets, f));
  // A deliberate rewrite drops the head cache too: a writer refuses a cache naming steps past the chain's end
  // (FILE-STORE.md §7), so the rewrite below goes through and only the checkpoint can tell.
  rmSync(join(dir, journal, 'head.json'), { force: true });
}

let logKey: string;
let w1: string;
let w2: string;

beforeAll(async () => {
  for (const k of ['log', 'w1', 'w2', 'stranger']) expect((await run('keygen', '-o', `${k}.key`)).code).toBe(0);
  expect((await run('init', 'j')).code).toBe(0);
  await append('j', 0, 40);
  const cp = await run(
    'checkpoint',
    'j',
    '--sign',
    'log.key',
    '--authority',
    'agents.example.com',
    '-o',
    'a.checkpoint',
    '--json',
  );
  expect(cp.code, cp.stderr).toBe(0);
  logKey = json(cp).vkey as string;
  expect(json(cp).checkpoint.size).toBe(40);
  w1 = (await run('witness', '--key', 'w1.key', '--name', 'witness.example/w1')).stdout.trim();
  w2 = (await run('witness', '--key', 'w2.key', '--name', 'witness.example/w2')).stdout.trim();
  await append('j', 40, 25);
  expect((await run('checkpoint', 'j', '--sign', 'log.key', '-o', 'b.checkpoint')).code).toBe(0);
}, 120_000);

describe('operator and auditor', () => {
  test('prove writes inclusion and consistency proofs that verify --proof checks against the log key', async () => {
    expect(
      (await run('prove', 'j', '--checkpoint', 'b.checkpoint', '--from', '3', '--to', '9', '-o', 'incl.proof')).code,
    ).toBe(0);
    expect(
      (await run('prove', 'j', '--checkpoint', 'b.checkpoint', '--old', 'a.checkpoint', '-o', 'cons.proof')).code,
    ).toBe(0);
    const incl = await run('verify', '--proof', 'incl.proof', '--log-key', logKey, '--json');
    expect(incl.code, incl.stderr).toBe(0);
    expect(json(incl).report).toMatchObject({ ok: true, type: 'inclusion', from: 3, to: 9, checkpoint: { size: 65 } });
    const cons = await run(
      'verify',
      '--proof',
      'cons.proof',
      '--log-key',
      logKey,
      '--checkpoint',
      'a.checkpoint',
      '--json',
    );
    expect(cons.code, cons.stderr).toBe(0);
    // A tampered proof hash fails (exit 1) with its code.
    const doc = JSON.parse(readFileSync(join(dir, 'incl.proof'), 'utf8')) as { hashes: string[] };
    doc.hashes[0] = Buffer.alloc(32, 3).toString('base64');
    writeFileSync(join(dir, 'bad.proof'), JSON.stringify(doc, Object.keys(doc).sort()) + '\n');
    const bad = await run('verify', '--proof', 'bad.proof', '--log-key', logKey, '--json');
    expect(bad.code).toBe(1);
    expect(codesOf(bad)).toEqual(['ROOT_MISMATCH']);
    // --proof without a log key is a usage error: nothing is trusted.
    expect((await run('verify', '--proof', 'incl.proof')).code).toBe(2);
  });

  test('the journal extends its earlier checkpoint: exit 0', async () => {
    const r = await run('verify', 'j', '--checkpoint', 'a.checkpoint', '--log-key', logKey, '--json');
    expect(r.code, r.stderr).toBe(0);
  });

  test.each([
    ['truncated', 'SIZE_DECREASED', (j: string) => truncate(j, 30), true],
    [
      'rewritten',
      'INCONSISTENT',
      async (j: string) => {
        truncate(j, 30);
        await append(j, 30, 20, 'rewrite');
      },
      true,
    ],
    // The fork keeps the genesis and the id once it replaces the journal: the same origin, another tree.
    // Its directory has none of the original's checkpoints, so only an auditor or a witness can catch it.
    [
      'forked-and-rewritten',
      'INCONSISTENT',
      async (j: string) => {
        expect((await run('fork', j, '--from-step', '19', `${j}-fork`)).code).toBe(0);
        await append(`${j}-fork`, 20, 30, 'fork');
        rmSync(join(dir, j), { recursive: true });
        renameSync(join(dir, `${j}-fork`), join(dir, j));
      },
      false,
    ],
  ])('verify --checkpoint on a %s journal: exit 1 with %s', async (name, code, damage, keepsCheckpoints) => {
    const j = `own-${name}`;
    expect((await run('init', j)).code).toBe(0);
    await append(j, 0, 40, name);
    const first = await run(
      'checkpoint',
      j,
      '--sign',
      'log.key',
      '--authority',
      'agents.example.com',
      '-o',
      `${j}.checkpoint`,
      '--json',
    );
    const key = json(first).vkey as string;
    await damage(j);
    const r = await run('verify', j, '--checkpoint', `${j}.checkpoint`, '--log-key', key, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual([code]);
    if (keepsCheckpoints) {
      const again = await run('checkpoint', j, '--sign', 'log.key', '-o', `${j}.again`, '--json');
      expect(again.code).toBe(1);
      expect(json(again).error.code).toBe('CHECKPOINT_REFUSED');
    }
  });

  test('a copy under another name is another journal to a checkpoint (ORIGIN_MISMATCH), and the message says so', async () => {
    // A directory journal's id is its name, and a checkpoint's origin names the id (PROOFS.md §8.5).
    cpSync(join(dir, 'j'), join(dir, 'j-copy'), { recursive: true });
    const r = await run('verify', 'j-copy', '--checkpoint', 'a.checkpoint', '--log-key', logKey, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['ORIGIN_MISMATCH']);
    const human = await run('verify', 'j-copy', '--checkpoint', 'a.checkpoint', '--log-key', logKey);
    expect(human.stderr).toMatch(
      /only the id differs: if this is a copy of journal "j" under another name, check it under that name/,
    );
    // Another journal altogether (its own genesis): no such advice.
    expect((await run('init', 'other')).code).toBe(0);
    const other = await run('verify', 'other', '--checkpoint', 'a.checkpoint', '--log-key', logKey);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/ORIGIN_MISMATCH/);
    expect(other.stderr).not.toMatch(/only the id differs/);
  });

  test('a pinned checkpoint that cannot be used is exit 2, never unpinned', async () => {
    writeFileSync(join(dir, 'garbage.checkpoint'), 'not a note\n');
    expect((await run('verify', 'j', '--checkpoint', 'garbage.checkpoint')).code).toBe(2);
    expect((await run('verify', 'j', '--checkpoint', 'missing.checkpoint')).code).toBe(2);
    // Signed, but not by the pinned log key.
    const stranger = await run('checkpoint', 'j', '--sign', 'stranger.key', '-o', 'stranger.checkpoint', '--json');
    expect(stranger.code).toBe(0);
    expect((await run('verify', 'j', '--checkpoint', 'stranger.checkpoint', '--log-key', logKey)).code).toBe(2);
  });
});

describe('witnesses and the policy', () => {
  test('a witness cosigns the first checkpoint, refuses a later one without a consistency proof, cosigns it with one', async () => {
    const base = ['--key', 'w1.key', '--name', 'witness.example/w1', '--state', 'w1-state', '--log-key', logKey];
    expect((await run('witness', 'a.checkpoint', ...base, '-o', 'a.w1')).code).toBe(0);
    const without = await run('witness', 'b.checkpoint', ...base, '-o', 'b.w1', '--json');
    expect(without.code).toBe(1);
    const withProof = await run('witness', 'b.checkpoint', ...base, '--proof', 'cons.proof', '-o', 'b.w1', '--json');
    expect(withProof.code, withProof.stderr).toBe(0);
    expect(json(withProof)).toMatchObject({ ok: true, extends: 40, checkpoint: { size: 65 } });
    // The old checkpoint again: smaller than the last cosigned.
    const back = await run('witness', 'a.checkpoint', ...base, '--json');
    expect(back.code).toBe(1);
    expect(json(back).error.code).toBe('SIZE_DECREASED');
  });

  test("log key + 1 of 2 witnesses: met by w1's cosignature; a forged one fails; a quorum of 2 is not met", async () => {
    expect((await run('prove', 'j', '--checkpoint', 'b.w1', '--from', '50', '--to', '52', '-o', 'w.proof')).code).toBe(
      0,
    );
    const ok = await run(
      'verify',
      '--proof',
      'w.proof',
      '--log-key',
      logKey,
      '--witness',
      w1,
      '--witness',
      w2,
      '--quorum',
      '1',
      '--json',
    );
    expect(ok.code, ok.stdout).toBe(0);
    const two = await run(
      'verify',
      '--proof',
      'w.proof',
      '--log-key',
      logKey,
      '--witness',
      w1,
      '--witness',
      w2,
      '--json',
    );
    expect(two.code).toBe(1);
    expect(codesOf(two)).toEqual(['QUORUM_NOT_MET']);
    const doc = JSON.parse(readFileSync(join(dir, 'w.proof'), 'utf8')) as Record<string, unknown> & {
      checkpoint: string;
    };
    doc.checkpoint = doc.checkpoint.replace(/(— witness\.example\/w1 )(\S+)/, (_s, h: string, b: string) => {
      const sig = Buffer.from(b, 'base64');
      sig[sig.length - 1]! ^= 1;
      return h + sig.toString('base64');
    });
    writeFileSync(join(dir, 'forged.proof'), JSON.stringify(doc, Object.keys(doc).sort()) + '\n');
    const forged = await run(
      'verify',
      '--proof',
      'forged.proof',
      '--log-key',
      logKey,
      '--witness',
      w1,
      '--quorum',
      '1',
      '--json',
    );
    expect(forged.code).toBe(1);
    expect(codesOf(forged)).toEqual(['COSIGNATURE_INVALID', 'QUORUM_NOT_MET']);
  });

  test('a checkpoint signed by a key not in the policy fails', async () => {
    expect((await run('prove', 'j', '--checkpoint', 'stranger.checkpoint', '--from', '1', '-o', 's.proof')).code).toBe(
      0,
    );
    const r = await run('verify', '--proof', 's.proof', '--log-key', logKey, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['SIGNATURE_MISSING']);
  });

  test('a partial receipt with the checkpoint verifies against the policy; --help names the verbs', async () => {
    const ex = await run('export', 'j', '--from', '50', '--to', '55', '--checkpoint', 'b.w1', '-o', 'r.tar');
    expect(ex.code, ex.stderr).toBe(0);
    const r = await run('verify', 'r.tar', '--log-key', logKey, '--witness', w1, '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(json(r).report.tlog).toMatchObject({ pinned: true, checkpoint: { size: 65 } });
    const help = await run('--help');
    for (const verb of ['checkpoint', 'prove', 'witness']) expect(help.stdout).toContain(verb);
  });
});
