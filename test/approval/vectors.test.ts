/**
 * vectors/approvals.json (spec/APPROVALS.md) against this repository's verifier — through the chain
 * verifier of src/, as the CLI, the receipts and the page use it — and the statement case checked
 * independently with node:crypto: the digest, the JCS payload, the PAE bytes and the Ed25519 signature.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { verifyChain } from '../../src/chain/files.js';
import { genesisHash, type Genesis } from '../../src/record/formats.js';
import { loadVectors } from '../helpers/vectors.js';

interface ChainCase {
  id: string;
  kind: 'chain';
  result: 'valid' | 'invalid';
  genesis: Genesis;
  lines: string[];
  approvers: Array<{ name: string; public_key: string }>;
  expect: {
    ok: boolean;
    problems: Array<{ code: string; seq?: number; field?: string }>;
    notices: Array<{ code: string; seq?: number }>;
    approvals: unknown[];
  };
}
interface StatementCase {
  id: string;
  kind: 'statement';
  presented: { name: string; arguments: unknown };
  /** v1: the presented call's unsalted digest, which the statement names. */
  digest?: string;
  /** v2: the request's input (no digest) and its stored line, whose step hash the statement binds. */
  request_input?: Record<string, unknown>;
  request_line?: string;
  genesis_hash: string;
  statement: Record<string, unknown>;
  payload: string;
  pae: string;
  public_key: string;
  keyid: string;
  signature: string;
}

const doc = loadVectors<ChainCase | StatementCase>('approvals.json');
const chains = doc.cases.filter((c): c is ChainCase => c.kind === 'chain');
const statements = doc.cases.filter((c): c is StatementCase => c.kind === 'statement');
const sha = (text: string | Uint8Array): string => 'sha256:' + createHash('sha256').update(text).digest('hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

describe('vectors/approvals.json', () => {
  test('covers the cases issue 39 asks for', () => {
    const ids = doc.cases.map((c) => c.id);
    for (const id of [
      'valid',
      'wrong-signer',
      'altered-presentation',
      'denied-then-executed',
      'expired-then-executed',
      'signature-replayed-other-request',
      'two-decisions',
      'v2-statement-bytes',
      'v2-valid',
      'v1-statement-on-v2-request',
      'v2-signature-relabelled-v1',
      'v2-statement-without-request-hash',
      'call-before-request',
    ])
      expect(ids).toContain(id);
  });

  test.each(statements.map((c) => [c.id, c] as const))(
    '%s: digest, payload, PAE and signature recomputed with node:crypto',
    (_id, c) => {
      if (c.statement.type === 'stepchain-approval/v1') {
        expect(sha(canonicalJson({ arguments: c.presented.arguments, name: c.presented.name }))).toBe(c.digest);
        expect(c.statement.digest).toBe(c.digest);
      } else {
        // v2: nothing unsalted about the call anywhere; the statement binds the request record's step hash,
        // recomputed here from its line (FORMAT.md §14.5: B over the line without step_hash, then the nine members).
        expect(c.statement.type).toBe('stepchain-approval/v2');
        expect('digest' in c.statement || c.digest !== undefined || 'digest' in c.request_input!).toBe(false);
        const rec = JSON.parse(c.request_line!) as Record<string, unknown>;
        expect(rec.input).toEqual(c.request_input);
        expect(rec.input).toEqual({ expires_at: null, presented: c.presented });
        const bind = sha(c.request_line!.replace(/,"step_hash":"sha256:[0-9a-f]{64}"/, ''));
        const nine = { bind, kind: rec.kind, prev_hash: rec.prev_hash, ref: rec.ref, root: rec.root, seq: rec.seq };
        const preimage = { ...nine, step_id: rec.step_id, ts: rec.ts, v: rec.v };
        expect(sha(canonicalJson(preimage))).toBe(rec.step_hash);
        expect(c.statement.request_hash).toBe(rec.step_hash);
        expect(c.statement.request_seq).toBe(rec.seq);
        expect(c.statement.request).toBe(rec.step_id);
        expect(c.statement.genesis_hash).toBe(c.genesis_hash);
      }
      expect(canonicalJson(c.statement)).toBe(c.payload);
      const type = 'application/vnd.stepchain.approval+json';
      const pae = `DSSEv1 ${Buffer.byteLength(type)} ${type} ${Buffer.byteLength(c.payload)} ${c.payload}`;
      expect(pae).toBe(c.pae);
      const raw = Buffer.from(c.public_key, 'base64');
      expect(sha(raw)).toBe(c.keyid);
      const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
      expect(verify(null, Buffer.from(c.pae), key, Buffer.from(c.signature, 'base64'))).toBe(true);
      // One byte of the decision changed: the signature no longer holds (a denial cannot be read as a grant).
      const flipped = c.pae.replace('"decision":"granted"', '"decision":"denied"');
      expect(
        verify(
          null,
          Buffer.from(flipped.replace(/ (\d+) \{/, (_m, n: string) => ` ${Number(n) - 1} {`)),
          key,
          Buffer.from(c.signature, 'base64'),
        ),
      ).toBe(false);
    },
  );

  test.each(chains.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const approvers = c.approvers.map((p) => ({
      key: new Uint8Array(Buffer.from(p.public_key, 'base64')),
      name: p.name,
    }));
    const r = verifyChain({
      genesis: c.genesis,
      storedOnly: true,
      files: [
        { name: '0000000000000000.jsonl', bytes: new TextEncoder().encode(c.lines.map((l) => l + '\n').join('')) },
      ],
      ...(approvers.length ? { approvers } : {}),
    });
    expect(r.ok).toBe(c.expect.ok);
    expect(c.result).toBe(c.expect.ok ? 'valid' : 'invalid');
    expect(
      r.problems.map((p) => ({
        code: p.code,
        ...(p.location.seq === undefined ? {} : { seq: p.location.seq }),
        ...(p.location.field === undefined ? {} : { field: p.location.field }),
      })),
    ).toEqual(c.expect.problems);
    expect(
      r.warnings.map((w) => ({ code: w.code, ...(w.location.seq === undefined ? {} : { seq: w.location.seq }) })),
    ).toEqual(c.expect.notices);
    expect(r.approvals ?? []).toEqual(c.expect.approvals);
    expect(genesisHash(c.genesis)).toMatch(/^sha256:/);
  });
});
