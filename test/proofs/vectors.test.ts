/**
 * The committed proof vectors (scripts/vectors/proofs.mjs, spec/PROOFS.md §12): every case gives its
 * expected result through src/, and the fixed keys re-sign the valid notes byte for byte (Ed25519 is
 * deterministic, so an implementation can check its signer too).
 */
import { describe, expect, test } from 'vitest';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';
import {
  SIG_COSIGNATURE_V1,
  TreeFrontier,
  checkWitnessUpdate,
  journalOrigin,
  noteSigner,
  openNote,
  parseNote,
  parseVerifierKey,
  signCheckpoint,
  signNote,
  stepLeafHash,
  verifierKey,
  verifyCheckpoint,
  verifyConsistency,
  verifyProofDocument,
  verifyRange,
  cosignCheckpoint,
  type CheckpointPolicy,
  type TreeHead,
} from '../../src/proofs/index.js';

type Head = { origin: string; size: number; root: string };
interface ProofCase {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  kind: string;
  [member: string]: unknown;
}
interface Key {
  role: string;
  name: string;
  seed: string;
  vkey: string;
  cosigns_at?: number;
}

const vectors = loadVectors<ProofCase>('proofs.json');
const keys = vectors.keys as Key[];
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
const policyOf = (p: { log: string; witnesses: string[]; quorum: number }): CheckpointPolicy => ({
  log: parseVerifierKey(p.log),
  witnesses: p.witnesses.map(parseVerifierKey),
  quorum: p.quorum,
});
const headOf = (h: Head | null): TreeHead | null => h && { origin: h.origin, size: h.size, root: unb64(h.root) };
const verdict = (v: { ok: boolean; problem?: { code: string } }) =>
  v.ok ? { ok: true } : { ok: false, code: v.problem!.code };

function run(c: ProofCase): unknown {
  const x = c as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  switch (c.kind) {
    case 'roots': {
      const t = new TreeFrontier();
      const roots = [b64(t.root())];
      for (const s of x.steps as string[]) {
        t.append(stepLeafHash(s)!);
        roots.push(b64(t.root()));
      }
      expect((x.steps as string[]).map((s) => b64(stepLeafHash(s)!))).toEqual(x.leaf_hashes);
      expect(roots).toEqual(x.roots);
      return undefined;
    }
    case 'inclusion': {
      const leaves = (x.steps as string[]).map(stepLeafHash);
      if (leaves.some((l) => l === null)) return { ok: false, code: 'PROOF_MALFORMED' };
      return verdict(
        verifyRange({
          from: x.from,
          to: x.to,
          size: x.size,
          leaves: leaves as Uint8Array[],
          proof: x.hashes.map(unb64),
          root: unb64(x.root),
        }),
      );
    }
    case 'consistency':
      return verdict(
        verifyConsistency({
          oldSize: x.old_size,
          oldRoot: unb64(x.old_root),
          size: x.size,
          root: unb64(x.root),
          proof: x.hashes.map(unb64),
        }),
      );
    case 'tree-state':
      try {
        const t = TreeFrontier.parse(x.state);
        return { ok: true, size: t.size, root: b64(t.root()) };
      } catch (e) {
        return { ok: false, error: (e as { code: string }).code };
      }
    case 'vkey':
      try {
        const v = parseVerifierKey(x.vkey);
        return {
          name: v.name,
          key_id: v.keyId.toString(16).padStart(8, '0'),
          type: v.type,
          public_key: b64(v.publicKey),
        };
      } catch (e) {
        return { error: (e as { code: string }).code };
      }
    case 'note': {
      const r = openNote(x.text, (x.vkeys as string[]).map(parseVerifierKey));
      return r.ok
        ? { ok: true, codes: [], verified: r.verifiedBy.map((v) => v.name), text: r.note!.text }
        : { ok: false, codes: r.problems.map((p) => p.code) };
    }
    case 'checkpoint': {
      const r = verifyCheckpoint(x.text, policyOf(x.policy));
      return {
        ok: r.ok,
        codes: r.problems.map((p) => p.code),
        checkpoint: r.checkpoint && {
          origin: r.checkpoint.origin,
          size: r.checkpoint.size,
          root: b64(r.checkpoint.root),
        },
        cosignatures: r.cosignatures.map((s) => ({ name: s.name, timestamp: s.timestamp })),
      };
    }
    case 'witness':
      return verdict(
        checkWitnessUpdate({
          last: headOf(x.last),
          next: headOf(x.next)!,
          proof: x.hashes.map(unb64),
          ...(x.old_size === undefined ? {} : { oldSize: x.old_size }),
        }),
      );
    case 'proof-file': {
      const r = verifyProofDocument(
        x.text ?? vectorBytes(x),
        policyOf(x.policy),
        x.trusted ? { trusted: headOf(x.trusted)! } : {},
      );
      return {
        ok: r.ok,
        codes: r.problems.map((p) => p.code),
        type: r.type,
        ...(x.expect.from !== undefined ? { from: r.from, to: r.to } : {}),
      };
    }
    case 'origin':
      try {
        return {
          origin: journalOrigin({
            authority: x.parts.authority,
            journalId: x.parts.journal_id,
            genesisHash: x.parts.genesis_hash,
          }),
        };
      } catch (e) {
        return { error: (e as { code: string }).code };
      }
    default:
      throw new Error(`unknown kind ${c.kind}`);
  }
}

describe('proof vectors', () => {
  test('valid and invalid cases of every kind sit side by side', () => {
    expect(vectors.kind).toBe('proofs');
    const kinds = new Set(vectors.cases.map((c) => c.kind));
    expect([...kinds].sort()).toEqual([
      'checkpoint',
      'consistency',
      'inclusion',
      'note',
      'origin',
      'proof-file',
      'roots',
      'tree-state',
      'vkey',
      'witness',
    ]);
    for (const k of kinds)
      if (k !== 'roots')
        expect(
          vectors.cases
            .filter((c) => c.kind === k)
            .map((c) => c.result)
            .sort(),
          k,
        ).toContain('invalid');
  });

  test.each(vectors.cases)('$id: $comment', (c) => {
    const expected = (c as { expect?: Record<string, unknown> }).expect;
    expect(run(c)).toEqual(expected);
    const valid = !(expected && (expected.ok === false || 'error' in expected));
    expect(c.result).toBe(valid ? 'valid' : 'invalid');
  });

  test('the fixed keys reproduce the signed vectors byte for byte', () => {
    const [log, ...rest] = keys;
    const signer = noteSigner(log!.name, Buffer.from(log!.seed, 'hex'));
    expect(verifierKey(signer)).toBe(log!.vkey);
    const witnesses = rest
      .filter((k) => k.role === 'witness')
      .map((k) => noteSigner(k.name, Buffer.from(k.seed, 'hex'), SIG_COSIGNATURE_V1, () => k.cosigns_at!));
    const one = vectors.cases.find((c) => c.id === 'checkpoint-log-only') as ProofCase & { text: string };
    const parsed = parseNote(one.text);
    expect(parsed.ok).toBe(true);
    const lines = parsed.ok ? parsed.note.text.split('\n') : [];
    const cp = signCheckpoint({ origin: lines[0]!, size: Number(lines[1]), root: unb64(lines[2]!) }, signer);
    expect(cp).toBe(one.text);
    const full = vectors.cases.find((c) => c.id === 'checkpoint-2-of-3') as ProofCase & { text: string };
    expect(cp + witnesses.map((w) => cosignCheckpoint(cp, w)).join('')).toBe(full.text);
    const note = vectors.cases.find((c) => c.id === 'note-signed') as ProofCase & {
      text: string;
      expect: { text: string };
    };
    const stranger = keys.find((k) => k.role === 'stranger')!;
    expect(signNote(note.expect.text, [signer, noteSigner(stranger.name, Buffer.from(stranger.seed, 'hex'))])).toBe(
      note.text,
    );
  });
});
