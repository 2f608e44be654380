/**
 * Issue 35 through the built CLI (dist/, child processes): three verdicts — authenticated, intact but not
 * authenticated, invalid — for receipts and journals, in --json and on the first line, and --require-pin
 * (item 1); the witness policy applied to a journal's --checkpoint (item 2); a pinned checkpoint of the
 * receipt's own size needs no proof, and another root at that size is FORKED (item 3); `prove` refuses a
 * forked --old (item 5); checkpoint, proof and key files read bounded, a FIFO refused (item 6). Then the
 * attacks an outsider would try: a forged receipt re-signed with the attacker's key, wrong pins.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { noteSigner, parseCheckpoint, parseNote, signCheckpoint } from '../../src/proofs/index.js';
import { readKeyFile } from '../../src/receipt/node.js';
import { cliIn, codesOf, json, witnessedJournal, type Run } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-verdicts-');
const cliDir = cliIn(dir, {}, { inProcess: true });
const { run, ok, append } = cliDir;
const firstLine = (r: Run): string => r.stderr.split('\n')[0]!;

let logKey: string;
let w1: string;
let head: string;

beforeAll(async () => {
  for (const k of ['log', 'w1', 'alice', 'mallory']) await ok('keygen', '-o', `${k}.key`);
  ({ logKey, w1 } = await witnessedJournal(cliDir));
  head = json(await ok('verify', 'j', '--json')).report.head as string;
  await ok('export', 'j', '-o', 'plain.tar');
  await ok('export', 'j', '--sign', 'alice.key', '-o', 'signed.tar.gz');
  await ok('export', 'j', '--from', '10', '--to', '20', '--checkpoint', 'a.checkpoint', '-o', 'partial.tar');
  // The attacker's journal: the same id, other steps, exported and signed with the attacker's own key.
  mkdirSync(join(dir, 'evil'));
  await ok('init', 'evil/j');
  await append('evil/j', 0, 40, 'forged');
  await ok('export', 'evil/j', '--sign', 'mallory.key', '-o', 'forged.tar.gz');
  // A checkpoint of j's origin and size with another root, signed by the log key: the log forked.
  const note = readFileSync(join(dir, 'a.checkpoint'), 'utf8');
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.note.text) : null;
  if (!cp?.ok) throw new Error('a.checkpoint does not parse');
  const seed = await readKeyFile(join(dir, 'log.key'));
  writeFileSync(
    join(dir, 'forked.checkpoint'),
    signCheckpoint({ ...cp.checkpoint, root: new Uint8Array(32).fill(7) }, noteSigner(cp.checkpoint.origin, seed)),
  );
}, 240_000);

describe('three verdicts (item 1)', () => {
  test('an unpinned receipt is intact but NOT authenticated: exit 0, amber first line naming what to pin, authenticated false beside ok', async () => {
    const r = await ok('verify', 'plain.tar', '--json');
    expect(json(r)).toMatchObject({ ok: true, authenticated: false, verdict: 'intact' });
    expect(json(r).report).toMatchObject({ verdict: 'intact', authenticated: false, authenticated_by: [] });
    const text = await ok('verify', 'plain.tar');
    expect(firstLine(text)).toMatch(
      /^⚠ intact, NOT authenticated receipt plain\.tar: 40 steps, head sha256:[0-9a-f]{64} \(seq 39\); nothing ties it to anyone \(pin --pubkey, --head, or --log-key\)$/,
    );
    expect(text.stderr).not.toMatch(/✔/);
    // The proves / does not prove sentences stay.
    expect(text.stderr).toMatch(/proves {3}Steps 0–39 of journal \S+ \(created /);
    expect(text.stderr).toMatch(/does not prove Who produced the receipt/);
  });

  test.each([
    [
      "the signer's key",
      ['signed.tar.gz', '--pubkey', 'alice.key.pub'],
      /the manifest is signed with the Ed25519 key you pinned/,
    ],
    ['the head', ['plain.tar', '--head', '<head>'], /the chain ends at the head you pinned/],
    [
      'the log key that signed the carried checkpoint',
      ['partial.tar', '--log-key', '<log>'],
      /steps 10\.\.20 are in the checkpoint of .* signed by the log key you pinned/,
    ],
  ])('a receipt pinned by %s is authenticated, and says by what', async (_what, args, by) => {
    const a = args.map((x) => (x === '<head>' ? head : x === '<log>' ? logKey : x));
    const r = await ok('verify', ...a, '--json');
    expect(json(r)).toMatchObject({ ok: true, authenticated: true, verdict: 'authenticated' });
    expect((json(r).report.authenticated_by as string[]).join('\n')).toMatch(by);
    const text = await ok('verify', ...a, '--require-pin');
    expect(firstLine(text)).toMatch(/^✔ authenticated receipt /);
  });

  test('a signed receipt with no key pinned is not authenticated: a signature proves only that some key signed', async () => {
    const r = await ok('verify', 'signed.tar.gz', '--json');
    expect(json(r)).toMatchObject({ ok: true, authenticated: false });
  });

  test('--require-pin: intact but not authenticated exits 1; invalid stays 1; authenticated 0', async () => {
    const r = await run('verify', 'plain.tar', '--require-pin', '--json');
    expect(r.code).toBe(1);
    expect(json(r)).toMatchObject({ ok: true, authenticated: false });
    expect(r.stderr).toMatch(/--require-pin: not authenticated/);
    expect((await run('verify', 'j', '--require-pin')).code).toBe(1);
  });

  test('a journal: intact unpinned; authenticated by a pinned head or a log-key-verified checkpoint; a checkpoint without its log key ties it to no one', async () => {
    const plain = await ok('verify', 'j', '--json');
    expect(json(plain)).toMatchObject({ ok: true, authenticated: false, verdict: 'intact' });
    expect(firstLine(await ok('verify', 'j'))).toMatch(
      /^⚠ intact, NOT authenticated journal j: 40 steps, .*\(pin --head, or --checkpoint with --log-key\)$/,
    );
    expect(json(await ok('verify', 'j', '--head', head, '--json'))).toMatchObject({ authenticated: true });
    expect(json(await ok('verify', 'j', '--checkpoint', 'a.checkpoint', '--json'))).toMatchObject({
      ok: true,
      authenticated: false,
    });
    const signed = await ok(
      'verify',
      'j',
      '--checkpoint',
      'a.checkpoint',
      '--log-key',
      logKey,
      '--require-pin',
      '--json',
    );
    expect(json(signed)).toMatchObject({ ok: true, authenticated: true });
    expect(json(signed).report.authenticated_by.join('\n')).toMatch(
      /steps 0\.\.39 have the root of the earlier checkpoint you pinned/,
    );
  });
});

describe("the witness policy applies to a journal's --checkpoint (item 2)", () => {
  test('a checkpoint no witness cosigned is refused under --witness W --quorum 1; the cosigned one passes', async () => {
    const r = await run(
      'verify',
      'j',
      '--checkpoint',
      'a.checkpoint',
      '--log-key',
      logKey,
      '--witness',
      w1,
      '--quorum',
      '1',
      '--json',
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/QUORUM_NOT_MET/);
    const cosigned = await ok(
      'verify',
      'j',
      '--checkpoint',
      'a.w1',
      '--log-key',
      logKey,
      '--witness',
      w1,
      '--quorum',
      '1',
      '--json',
    );
    expect(json(cosigned)).toMatchObject({ ok: true, authenticated: true });
    expect(json(cosigned).report.authenticated_by.join('\n')).toMatch(/cosigned by at least 1 pinned witnesses/);
  });
});

describe('equal sizes (item 3)', () => {
  test('pinning the very checkpoint a partial receipt carries verifies: the same size and root need no proof', async () => {
    const r = await run('verify', 'partial.tar', '--checkpoint', 'a.checkpoint', '--log-key', logKey, '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(json(r).report.tlog.extends).toMatchObject({ size: 40 });
    expect(json(r)).toMatchObject({ authenticated: true });
  });

  test('another root at the same size is FORKED, for a partial receipt, a complete one and a journal', async () => {
    const partial = await run(
      'verify',
      'partial.tar',
      '--checkpoint',
      'forked.checkpoint',
      '--log-key',
      logKey,
      '--json',
    );
    expect(partial.code).toBe(1);
    expect(codesOf(partial)).toEqual(['FORKED']);
    const complete = await run(
      'verify',
      'plain.tar',
      '--checkpoint',
      'forked.checkpoint',
      '--log-key',
      logKey,
      '--json',
    );
    expect(codesOf(complete)).toEqual(['FORKED']);
    const journal = await run('verify', 'j', '--checkpoint', 'forked.checkpoint', '--log-key', logKey, '--json');
    expect(journal.code).toBe(1);
    expect(codesOf(journal)).toEqual(['FORKED']);
  });
});

describe('prove refuses a forked --old (item 5)', () => {
  test('an --old of the same size with another root: FORKED, exit 1, no proof written', async () => {
    const r = await run(
      'prove',
      'j',
      '--checkpoint',
      'a.checkpoint',
      '--old',
      'forked.checkpoint',
      '-o',
      'forked.proof',
      '--json',
    );
    expect(r.code).toBe(1);
    expect(json(r)).toMatchObject({ ok: false, error: { code: 'FORKED' } });
    expect(() => readFileSync(join(dir, 'forked.proof'))).toThrow();
  });
});

describe('small input files are read bounded, and only regular files (item 6)', () => {
  const fifo = (name: string): string => {
    const p = join(dir, name);
    execFileSync('mkfifo', [p]);
    return name;
  };

  test('a FIFO as --checkpoint, --log-key file, --proof or witness input is refused (exit 2), never waited on', async () => {
    const cp = fifo('cp.fifo');
    const r = await run('verify', 'j', '--checkpoint', cp);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot read checkpoint cp\.fifo: it is a FIFO, not a regular file/);
    expect((await run('verify', 'j', '--checkpoint', 'a.checkpoint', '--log-key', fifo('key.fifo'))).code).toBe(2);
    expect(
      (
        await run(
          'verify',
          'partial.tar',
          '--checkpoint',
          'a.checkpoint',
          '--log-key',
          logKey,
          '--proof',
          fifo('proof.fifo'),
        )
      ).code,
    ).toBe(2);
    const w = await run(
      'witness',
      cp,
      '--key',
      'w1.key',
      '--name',
      'witness.example/w1',
      '--state',
      'w1-state',
      '--log-key',
      logKey,
    );
    expect(w.code).toBe(2);
    expect(w.stderr).toMatch(/FIFO/);
  }, 120_000);

  test('a FIFO as a signing key (witness --key, checkpoint --sign) is refused, never waited on', async () => {
    const key = fifo('sign.fifo');
    const w = await run(
      'witness',
      'a.checkpoint',
      '--key',
      key,
      '--name',
      'witness.example/w1',
      '--state',
      'w1-state',
      '--log-key',
      logKey,
    );
    expect(w.code).not.toBe(0);
    expect(w.stderr).toMatch(/cannot read key file sign\.fifo: it is not a regular file/);
    const c = await run('checkpoint', 'j', '--sign', key, '-o', 'never.checkpoint');
    expect(c.code).not.toBe(0);
    expect(c.stderr).toMatch(/not a regular file/);
  }, 120_000);

  test('an 8 GiB (sparse) proof file is LIMIT_EXCEEDED after reading 4 MiB, not read whole', async () => {
    const p = join(dir, 'huge.proof');
    const fd = openSync(p, 'w');
    closeSync(fd);
    execFileSync('truncate', ['-s', '8G', p]);
    const r = await run('verify', '--proof', 'huge.proof', '--log-key', logKey, '--json');
    expect(r.code, r.stderr).toBe(1);
    expect(codesOf(r)).toEqual(['LIMIT_EXCEEDED']);
  }, 120_000);
});

describe('attacks', () => {
  test('a proof file is checked against a pinned log key, so a valid one is authenticated; a forged checkpoint in it is invalid', async () => {
    await ok('prove', 'j', '--checkpoint', 'a.checkpoint', '--from', '3', '--to', '5', '-o', 'incl.proof');
    const r = await ok('verify', '--proof', 'incl.proof', '--log-key', logKey, '--json');
    expect(json(r)).toMatchObject({ ok: true, authenticated: true, verdict: 'authenticated' });
    expect(firstLine(await ok('verify', '--proof', 'incl.proof', '--log-key', logKey))).toMatch(
      /^✔ authenticated proof incl\.proof: steps 3\.\.5 are in /,
    );
  });

  test('problem codes are not repeated inside their messages', async () => {
    const r = await run('verify', 'partial.tar', '--checkpoint', 'forked.checkpoint', '--log-key', logKey);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^ {2}FORKED /m);
    expect(r.stderr).not.toMatch(/FORKED: /);
  });

  test("a forged receipt re-chained and re-signed with the attacker's key: intact at best, never authenticated; any right pin refuses it", async () => {
    const unpinned = await ok('verify', 'forged.tar.gz', '--json');
    expect(json(unpinned)).toMatchObject({ ok: true, authenticated: false, verdict: 'intact' });
    expect((await run('verify', 'forged.tar.gz', '--require-pin')).code).toBe(1);
    const key = await run('verify', 'forged.tar.gz', '--pubkey', 'alice.key.pub', '--json');
    expect(key.code).toBe(1);
    expect(json(key)).toMatchObject({ ok: false, authenticated: false, verdict: 'invalid' });
    expect(codesOf(key)).toContain('KEY_MISMATCH');
    const pinnedHead = await run('verify', 'forged.tar.gz', '--head', head, '--json');
    expect(codesOf(pinnedHead)).toContain('HEAD_MISMATCH');
    const cp = await run('verify', 'forged.tar.gz', '--checkpoint', 'a.checkpoint', '--log-key', logKey, '--json');
    expect(cp.code).toBe(1);
    expect(json(cp).authenticated).toBe(false);
  });

  test("wrong pins: a log key that did not sign the carried checkpoint, the attacker's own key as --log-key for the genuine receipt", async () => {
    const mallory = json(
      await ok(
        'checkpoint',
        'evil/j',
        '--sign',
        'mallory.key',
        '--authority',
        'agents.example.com',
        '-o',
        'evil.checkpoint',
        '--json',
      ),
    ).vkey as string;
    const r = await run('verify', 'partial.tar', '--log-key', mallory, '--json');
    expect(r.code).toBe(1);
    expect(json(r)).toMatchObject({ ok: false, authenticated: false });
    // A correct head pinned on the wrong receipt, and a signed receipt pinned to the attacker's key.
    expect(json(await run('verify', 'signed.tar.gz', '--pubkey', 'mallory.key.pub', '--json'))).toMatchObject({
      ok: false,
      authenticated: false,
    });
  });
});
