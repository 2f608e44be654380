/**
 * fast-check: for any record and any member or element of it, erasing (once, then again elsewhere) keeps
 * the root and the step hash, leaves no salt of an erased unit in the line, and the chain of the record and
 * its erasure records verifies with each value reported erased; changing any kept byte of the sealed line
 * (other than its step_hash) is refused.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { ChainVerifier } from '../../src/chain/verifier.js';
import { genesisHash } from '../../src/record/formats.js';
import { sealV3 } from '../../src/record/v3.js';
import { b64u, eraseUnit, unitAt } from '../../src/record/v3/erasure.js';

const GENESIS = {
  created_at: '2026-11-27T09:00:00.000Z',
  format: 'stepchain/v3',
  journal_id: 'p',
  run: { agent: 'p' },
} as const;
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 80 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    tie('obj'),
    tie('arr'),
  ),
  obj: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 6 }).filter((k) => !k.startsWith('$stepchain:')),
    tie('value'),
    { maxKeys: 4 },
  ),
  arr: fc.array(tie('value'), { maxLength: 4 }),
})).value;

function chainOf(
  result: unknown,
  erasures: Array<{ target: number; path: string; digest: string; id: string }>,
): string[] {
  let prev = genesisHash(GENESIS as never);
  const out: string[] = [];
  const contents = [
    { result },
    ...erasures.map((e) => ({
      kind: 'erasure',
      step_id: e.id,
      input: { by: null, digest: e.digest, path: e.path, reason: 'p', target: e.target },
    })),
  ];
  contents.forEach((c, seq) => {
    const t: Record<string, string> = {
      error: 'null',
      input: 'null',
      kind: '"step"',
      model: 'null',
      prompt: 'null',
      ref: 'null',
      result: 'null',
      tool_call: 'null',
    };
    for (const [k, v] of Object.entries(c)) if (k !== 'step_id') t[k] = canonicalJsonTrusted(v as never);
    const s = sealV3(
      t as never,
      {
        seq,
        stepId: (c as { step_id?: string }).step_id ?? `s${seq}`,
        ts: '2026-11-27T10:00:00.000Z',
        prevHash: prev,
        seed: (seq + 17).toString(16).padStart(2, '0').repeat(32),
      } as never,
    );
    prev = s.stepHash;
    out.push(s.line.slice(0, -1));
  });
  return out;
}

function pointers(v: unknown, at: string, out: string[]): void {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push(`${at}/${i}`), pointers(x, `${at}/${i}`, out)));
  else if (v !== null && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) {
      const p = `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      out.push(p);
      pointers(x, p, out);
    }
}

describe('erasure properties', () => {
  it('erasing any unit keeps root and step hash, leaves no erased salt, and verifies', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 6 }).filter((k) => !k.startsWith('$stepchain:')),
          json,
          { minKeys: 1, maxKeys: 4 },
        ),
        fc.nat(),
        fc.nat(),
        (result, a, b) => {
          const paths: string[] = [];
          pointers(result, '/result', paths);
          const first = paths[a % paths.length]!;
          const second = paths.filter((p) => p !== first && !p.startsWith(first + '/') && !first.startsWith(p + '/'))[
            b % Math.max(1, paths.length)
          ];
          const targets = second === undefined ? [first] : [first, second];
          let lines = chainOf(result, []);
          let rec = JSON.parse(lines[0]!) as Record<string, unknown>;
          const erasures: Array<{ target: number; path: string; digest: string; id: string }> = [];
          const salts: Uint8Array[] = [];
          for (const [i, p] of targets.entries()) {
            const u = unitAt(rec, p).unit;
            salts.push(u.salt.slice());
            const digest = 'sha256:' + Buffer.from(u.digest).toString('hex');
            erasures.push({ target: 0, path: p, digest, id: `erasure:${i}` });
            rec = eraseUnit(rec, p, `erasure:${i}`, digest).record;
          }
          const original = JSON.parse(lines[0]!) as Record<string, unknown>;
          expect(rec.root).toBe(original.root);
          expect(rec.step_hash).toBe(original.step_hash);
          lines = chainOf(result, erasures);
          lines[0] = canonicalJsonTrusted(rec as never);
          for (const s of salts) expect(lines[0]).not.toContain(b64u(s).slice(0, 20));
          const v = new ChainVerifier({ genesis: GENESIS });
          for (const l of lines) v.line(l, true);
          const r = v.finish();
          expect(r.problems).toEqual([]);
          expect(r.warnings.filter((w) => w.code === 'VALUE_ERASED').length).toBe(targets.length);
          // Any one character of the sealed line changed (its step_hash aside) is refused.
          const line = lines[0]!;
          const hashAt = line.indexOf('"step_hash":');
          let at = (a * 7919 + b) % line.length;
          if (at >= hashAt && at < hashAt + 84) at = (at + 84) % line.length;
          const c = line[at]!;
          const mutated =
            line.slice(0, at) +
            (c === 'a' ? 'b' : c === '0' ? '1' : c === 'A' ? 'B' : c === '1' ? '2' : 'a') +
            line.slice(at + 1);
          const w = new ChainVerifier({ genesis: GENESIS });
          w.line(mutated, true);
          for (const l of lines.slice(1)) w.line(l, true);
          expect(w.finish().ok).toBe(false);
        },
      ),
      { numRuns: 60 },
    );
  });
});
