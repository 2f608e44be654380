/**
 * Checkpoints, the witness policy, the witness's consistency check and the journal origin (spec/PROOFS.md
 * §8.2–§8.5, §9.4, §9.5): a checkpoint signed by a key outside the policy fails, a forged cosignature
 * fails, a quorum is counted per distinct witness, and a truncated-then-extended or rewritten journal
 * fails consistency against the checkpoint taken before.
 */
import { describe, expect, test } from 'vitest';
import {
  EMPTY_ROOT,
  MemoryTree,
  SIG_COSIGNATURE_V1,
  addSignatures,
  checkWitnessUpdate,
  cosignCheckpoint,
  formatCheckpoint,
  journalOrigin,
  noteSigner,
  noteVerifier,
  parseCheckpoint,
  parseJournalOrigin,
  proveConsistency,
  signCheckpoint,
  signNote,
  stepLeafHash,
  treeRoot,
  verifyCheckpoint,
  type CheckpointPolicy,
} from '../../src/proofs/index.js';
import { sha } from './reference.js';

const seed = (n: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i * 13 + n) & 255);
const ORIGIN = journalOrigin({
  authority: 'agents.example.com',
  journalId: 'support-bot',
  genesisHash: 'sha256:' + 'c6'.repeat(32),
});
const log = noteSigner(ORIGIN, seed(1));
const witnesses = [1, 2, 3].map((i) =>
  noteSigner(`witness.example/w${i}`, seed(10 + i), SIG_COSIGNATURE_V1, () => 1_800_000_000 + i),
);
const policy = (quorum: number, ws = witnesses): CheckpointPolicy => ({
  log: noteVerifier(log.name, log.publicKey),
  witnesses: ws.map((w) => noteVerifier(w.name, w.publicKey, SIG_COSIGNATURE_V1)),
  quorum,
});
const root = sha(new TextEncoder().encode('root'));
const signed = signCheckpoint({ origin: ORIGIN, size: 42, root }, log);
const cosigned = (note: string, ws = witnesses): string =>
  addSignatures(note, ws.map((w) => cosignCheckpoint(note, w)).join(''));
const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);

describe('checkpoints', () => {
  test('the note text is origin, size and base64 root, one per line', () => {
    expect(signed.split('\n\n')[0] + '\n').toBe(`${ORIGIN}\n42\n${Buffer.from(root).toString('base64')}\n`);
    const r = verifyCheckpoint(signed, policy(0));
    expect(r).toMatchObject({ ok: true, problems: [], cosignatures: [] });
    expect(r.checkpoint).toMatchObject({ origin: ORIGIN, size: 42, extensions: [] });
  });

  test.each([
    ['two lines', 'o\n1\n', 'CHECKPOINT_MALFORMED'],
    ['an empty origin', `\n1\n${Buffer.from(root).toString('base64')}\n`, 'CHECKPOINT_MALFORMED'],
    ['a leading zero', `o\n01\n${Buffer.from(root).toString('base64')}\n`, 'CHECKPOINT_MALFORMED'],
    ['a sign', `o\n+1\n${Buffer.from(root).toString('base64')}\n`, 'CHECKPOINT_MALFORMED'],
    ['a size past 2^53 − 1', `o\n9007199254740992\n${Buffer.from(root).toString('base64')}\n`, 'LIMIT_EXCEEDED'],
    ['a 2^64 size', `o\n18446744073709551616\n${Buffer.from(root).toString('base64')}\n`, 'LIMIT_EXCEEDED'],
    ['a 31-byte root', `o\n1\n${Buffer.from(root.subarray(1)).toString('base64')}\n`, 'CHECKPOINT_MALFORMED'],
    ['a hex root', `o\n1\n${Buffer.from(root).toString('hex')}\n`, 'CHECKPOINT_MALFORMED'],
    [
      'size 0 with a root other than the empty hash',
      `o\n0\n${Buffer.from(root).toString('base64')}\n`,
      'CHECKPOINT_MALFORMED',
    ],
    ['an empty extension line', `o\n1\n${Buffer.from(root).toString('base64')}\n\next\n`, 'CHECKPOINT_MALFORMED'],
    ['no final newline', `o\n1\n${Buffer.from(root).toString('base64')}`, 'CHECKPOINT_MALFORMED'],
  ])('a checkpoint with %s is refused', (_, text, code) => {
    const r = parseCheckpoint(text);
    expect(r.ok ? 'OK' : r.problem.code).toBe(code);
  });

  test('the empty tree and extension lines parse', () => {
    expect(parseCheckpoint(`o\n0\n${Buffer.from(EMPTY_ROOT).toString('base64')}\n`)).toMatchObject({
      ok: true,
      checkpoint: { size: 0 },
    });
    expect(parseCheckpoint(`o\n1\n${Buffer.from(root).toString('base64')}\next one\next two\n`)).toMatchObject({
      ok: true,
      checkpoint: { extensions: ['ext one', 'ext two'] },
    });
    expect(parseCheckpoint('o\n9007199254740991\n' + Buffer.from(root).toString('base64') + '\n')).toMatchObject({
      ok: true,
      checkpoint: { size: Number.MAX_SAFE_INTEGER },
    });
  });

  test('a log key must be named for the origin, and a checkpoint must format back', () => {
    expect(() => signCheckpoint({ origin: 'example.com/other', size: 1, root }, log)).toThrow(
      expect.objectContaining({ code: 'KEY_INVALID' }),
    );
    expect(() => formatCheckpoint({ origin: 'a\nb', size: 1, root })).toThrow(
      expect.objectContaining({ code: 'NOTE_INVALID' }),
    );
    expect(() => formatCheckpoint({ origin: 'o', size: 1.5, root })).toThrow(
      expect.objectContaining({ code: 'NOTE_INVALID' }),
    );
  });
});

describe('the witness policy (PROOFS.md §8.4)', () => {
  test('the log key and 2 of 3 witnesses: met with 2 or 3 cosignatures, not with 1', () => {
    expect(verifyCheckpoint(cosigned(signed), policy(2))).toMatchObject({ ok: true });
    expect(verifyCheckpoint(cosigned(signed), policy(2)).cosignatures.map((c) => [c.name, c.timestamp])).toEqual([
      ['witness.example/w1', 1_800_000_001],
      ['witness.example/w2', 1_800_000_002],
      ['witness.example/w3', 1_800_000_003],
    ]);
    expect(verifyCheckpoint(cosigned(signed, witnesses.slice(1)), policy(2)).ok).toBe(true);
    expect(codes(verifyCheckpoint(cosigned(signed, witnesses.slice(2)), policy(2)))).toEqual(['QUORUM_NOT_MET']);
  });

  test('one witness cosigning twice counts once', () => {
    const twice = addSignatures(
      signed,
      cosignCheckpoint(signed, witnesses[0]!) + cosignCheckpoint(signed, witnesses[0]!),
    );
    expect(codes(verifyCheckpoint(twice, policy(2)))).toEqual(['QUORUM_NOT_MET']);
  });

  test('a forged cosignature fails the checkpoint, even with the quorum met by others', () => {
    const line = cosignCheckpoint(signed, witnesses[0]!);
    const b = Buffer.from(line.slice(line.lastIndexOf(' ') + 1, -1), 'base64');
    b[40]! ^= 0x20;
    const forged = line.slice(0, line.lastIndexOf(' ') + 1) + b.toString('base64') + '\n';
    const note = addSignatures(
      signed,
      forged +
        witnesses
          .slice(1)
          .map((w) => cosignCheckpoint(signed, w))
          .join(''),
    );
    expect(codes(verifyCheckpoint(note, policy(2)))).toEqual(['COSIGNATURE_INVALID']);
    // A cosignature by a witness key over another checkpoint is a forgery for this one.
    const otherCheckpoint = signCheckpoint({ origin: ORIGIN, size: 43, root }, log);
    expect(
      codes(verifyCheckpoint(addSignatures(signed, cosignCheckpoint(otherCheckpoint, witnesses[0]!)), policy(1))),
    ).toEqual(['COSIGNATURE_INVALID', 'QUORUM_NOT_MET']);
  });

  test('cosignatures by witnesses outside the policy are ignored, and do not count', () => {
    const stranger = noteSigner('witness.example/stranger', seed(99), SIG_COSIGNATURE_V1);
    expect(codes(verifyCheckpoint(cosigned(signed, [stranger]), policy(1)))).toEqual(['QUORUM_NOT_MET']);
  });

  test('a checkpoint signed by a key not in the policy fails', () => {
    const impostor = noteSigner(ORIGIN, seed(66));
    const note = cosigned(signCheckpoint({ origin: ORIGIN, size: 42, root }, impostor));
    expect(codes(verifyCheckpoint(note, policy(2)))).toEqual(['SIGNATURE_MISSING']);
  });

  test('a log signature that does not verify fails the checkpoint', () => {
    const altered = signed.replace('\n42\n', '\n43\n');
    expect(codes(verifyCheckpoint(altered, policy(0)))).toEqual(['SIGNATURE_INVALID']);
  });

  test('a checkpoint of another origin fails, whoever signed it', () => {
    const elsewhere = noteSigner('agents.example.com/other/' + 'c6'.repeat(32), seed(1));
    expect(
      codes(verifyCheckpoint(signCheckpoint({ origin: elsewhere.name, size: 42, root }, elsewhere), policy(0))),
    ).toEqual(['ORIGIN_MISMATCH']);
  });

  test('a plain Ed25519 signature by a witness key is not a cosignature: the type 0x04 key id differs', () => {
    const plain = signNote(signed.split('\n\n')[0] + '\n', [log, noteSigner('witness.example/w1', seed(11))]);
    expect(codes(verifyCheckpoint(plain, policy(1)))).toEqual(['QUORUM_NOT_MET']);
  });

  test.each([
    ['a quorum above the witness count', { ...policy(0), quorum: 4 }],
    ['a negative quorum', { ...policy(0), quorum: -1 }],
    [
      'a witness key given as a log-type key',
      { ...policy(0), witnesses: [noteVerifier('w', witnesses[0]!.publicKey)] },
    ],
    [
      'a log key of the cosignature type',
      { ...policy(0), log: noteVerifier(ORIGIN, log.publicKey, SIG_COSIGNATURE_V1) },
    ],
    [
      'one witness key twice',
      {
        ...policy(0),
        witnesses: [
          ...policy(0).witnesses!,
          noteVerifier('witness.example/again', witnesses[0]!.publicKey, SIG_COSIGNATURE_V1),
        ],
      },
    ],
    ['the log key as a witness', { ...policy(0), witnesses: [noteVerifier('w', log.publicKey, SIG_COSIGNATURE_V1)] }],
    ['no log key', { witnesses: [] } as unknown as CheckpointPolicy],
    [
      'a witness that is not a key',
      { ...policy(0), witnesses: [{ type: SIG_COSIGNATURE_V1 }] } as unknown as CheckpointPolicy,
    ],
    ['no policy at all', null as unknown as CheckpointPolicy],
    // A quorum that is not an integer is a defect, never 0 (PROOFS.md §8.4): only an absent one defaults.
    ['a null quorum', { ...policy(0), quorum: null } as unknown as CheckpointPolicy],
    ['an empty-string quorum', { ...policy(0), quorum: '' } as unknown as CheckpointPolicy],
    ['a string quorum', { ...policy(0), quorum: '1' } as unknown as CheckpointPolicy],
    ['a fractional quorum', { ...policy(0), quorum: 0.5 }],
    ['a NaN quorum', { ...policy(0), quorum: Number.NaN }],
  ])('a policy with %s is POLICY_INVALID', (_, p) => {
    expect(codes(verifyCheckpoint(signed, p))).toEqual(['POLICY_INVALID']);
  });
});

describe('the witness check (PROOFS.md §9.5)', () => {
  const steps = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) =>
      stepLeafHash('sha256:' + Buffer.from(sha(new TextEncoder().encode(`${tag} ${i}`))).toString('hex'))!,
    );
  const build = (leaves: Uint8Array[]) => {
    const t = new MemoryTree();
    for (const l of leaves) t.append(l);
    return t;
  };
  const original = build(steps(1000, 'step'));

  test('a journal that grew honestly passes', async () => {
    const grown = build([...steps(1000, 'step'), ...steps(200, 'more')]);
    const last = { origin: ORIGIN, size: 1000, root: await treeRoot(original, 1000) };
    const next = { origin: ORIGIN, size: 1200, root: await treeRoot(grown, 1200) };
    expect(checkWitnessUpdate({ last, next, proof: await proveConsistency(grown, 1000, 1200) })).toEqual({ ok: true });
    expect(checkWitnessUpdate({ last: null, next, proof: [] })).toEqual({ ok: true });
    expect(checkWitnessUpdate({ last, next: last, proof: [] })).toEqual({ ok: true });
  });

  test('a truncated-then-extended journal fails consistency against the earlier checkpoint', async () => {
    const rewritten = build([...steps(900, 'step'), ...steps(300, 'other')]);
    const last = { origin: ORIGIN, size: 1000, root: await treeRoot(original, 1000) };
    const next = { origin: ORIGIN, size: 1200, root: await treeRoot(rewritten, 1200) };
    const verdict = checkWitnessUpdate({ last, next, proof: await proveConsistency(rewritten, 1000, 1200) });
    expect(verdict).toMatchObject({ ok: false, problem: { code: 'INCONSISTENT' } });
  });

  test('a journal rewritten to the same size is a fork', async () => {
    const rewritten = build([...steps(999, 'step'), ...steps(1, 'other')]);
    const last = { origin: ORIGIN, size: 1000, root: await treeRoot(original, 1000) };
    expect(
      checkWitnessUpdate({ last, next: { ...last, root: await treeRoot(rewritten, 1000) }, proof: [] }),
    ).toMatchObject({ problem: { code: 'INCONSISTENT' } });
  });

  test('a truncated journal is SIZE_DECREASED; a stale old size OLD_SIZE_MISMATCH; another origin ORIGIN_MISMATCH', async () => {
    const last = { origin: ORIGIN, size: 1000, root: await treeRoot(original, 1000) };
    const smaller = { origin: ORIGIN, size: 900, root: await treeRoot(original, 900) };
    expect(checkWitnessUpdate({ last, next: smaller, proof: [] })).toMatchObject({
      problem: { code: 'SIZE_DECREASED' },
    });
    expect(checkWitnessUpdate({ last, next: last, oldSize: 900, proof: [] })).toMatchObject({
      problem: { code: 'OLD_SIZE_MISMATCH' },
    });
    expect(checkWitnessUpdate({ last: null, next: last, oldSize: 900, proof: [] })).toMatchObject({
      problem: { code: 'OLD_SIZE_MISMATCH' },
    });
    expect(checkWitnessUpdate({ last, next: { ...last, origin: 'x' }, proof: [] })).toMatchObject({
      problem: { code: 'ORIGIN_MISMATCH' },
    });
    expect(checkWitnessUpdate({ last: null, next: last, proof: [root] })).toMatchObject({
      problem: { code: 'PROOF_LENGTH_INVALID' },
    });
    expect(checkWitnessUpdate(null as never)).toMatchObject({ problem: { code: 'PROOF_MALFORMED' } });
  });
});

describe('journal origins (PROOFS.md §8.5)', () => {
  const g = 'sha256:' + '0a'.repeat(32);
  test('authority / journal id / genesis hex, and back', () => {
    const o = journalOrigin({ authority: 'example.com/team-a', journalId: 'run-7.b', genesisHash: g });
    expect(o).toBe('example.com/team-a/run-7.b/' + '0a'.repeat(32));
    expect(parseJournalOrigin(o)).toEqual({ authority: 'example.com/team-a', journalId: 'run-7.b', genesisHash: g });
    expect(parseJournalOrigin('example.com/behind-the-sofa')).toBeNull();
    expect(parseJournalOrigin('example.com/x/' + '0A'.repeat(32))).toBeNull();
  });

  test.each([
    ['an uppercase host', { authority: 'Example.com', journalId: 'j', genesisHash: g }],
    ['a scheme', { authority: 'https://example.com', journalId: 'j', genesisHash: g }],
    ['a plus', { authority: 'example.com', journalId: 'a+b', genesisHash: g }],
    ['a space', { authority: 'example .com', journalId: 'j', genesisHash: g }],
    ['a dot-dot segment', { authority: 'example.com/..', journalId: 'j', genesisHash: g }],
    ['a hidden journal id', { authority: 'example.com', journalId: '.j', genesisHash: g }],
    ['a journal id with ..', { authority: 'example.com', journalId: 'a..b', genesisHash: g }],
    ['a bad genesis hash', { authority: 'example.com', journalId: 'j', genesisHash: 'sha256:00' }],
    [
      'more than 255 bytes',
      {
        authority: 'a.' + 'b'.repeat(60) + '.' + 'c'.repeat(60) + '.' + 'd'.repeat(60),
        journalId: 'j'.repeat(60),
        genesisHash: g,
      },
    ],
  ])('an origin with %s is ARGUMENT_INVALID', (_, parts) => {
    expect(() => journalOrigin(parts)).toThrow(expect.objectContaining({ code: 'ARGUMENT_INVALID' }));
  });
});
