/**
 * Properties (fast-check): for generated steps with planted secrets of every detector kind at random
 * depths (strings, member names, values big enough to be blobs), none survives publishing — searched in
 * the raw archive — and every value that no rule selects is unchanged.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import type { Json } from '../../src/record/index.js';
import {
  DETECTOR_IDS,
  findSecrets,
  preparePublication,
  publicationBytes,
  verifyPublishedReceipt,
} from '../../src/redact/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { archiveText, CREATED_AT, ts } from './helpers.js';

const MARKER = '$stepchain:redacted';
const alnum = (min: number, max: number): fc.Arbitrary<string> =>
  fc.stringMatching(new RegExp(`^[A-Za-z0-9]{${min},${max}}$`));
const upperDigits = fc.stringMatching(/^[A-Z0-9]{16}$/);
const b64url = (min: number, max: number): fc.Arbitrary<string> =>
  fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{${min},${max}}$`));

/** One secret of each kind, with random bodies. */
const secretArb: fc.Arbitrary<{ kind: string; value: string }> = fc.oneof(
  fc
    .oneof(
      alnum(20, 40).map((b) => 'sk-' + b),
      alnum(20, 30).map((b) => 'sk-proj-' + b),
      alnum(36, 40).map((b) => 'ghp_' + b),
      alnum(35, 35).map((b) => 'AIza' + b),
    )
    .map((value) => ({ kind: 'api-key', value })),
  fc.tuple(fc.constantFrom('AKIA', 'ASIA'), upperDigits).map(([p, b]) => ({ kind: 'aws-access-key', value: p + b })),
  alnum(8, 40).map((b) => ({ kind: 'bearer-token', value: 'Bearer ' + b })),
  fc
    .tuple(b64url(4, 30), b64url(4, 30), b64url(4, 40))
    .map(([a, b, c]) => ({ kind: 'jwt', value: `eyJ${a}.${b}.${c}` })),
  fc.array(fc.stringMatching(/^[A-Za-z0-9+/]{8,64}$/), { minLength: 1, maxLength: 4 }).map((ls) => ({
    kind: 'private-key',
    value: `-----BEGIN PRIVATE KEY-----\n${ls.join('\n')}\n-----END PRIVATE KEY-----`,
  })),
  fc
    .tuple(
      fc.stringMatching(/^[a-z][a-z0-9._+-]{0,12}[a-z0-9]$/),
      fc.stringMatching(/^[a-z0-9]{1,10}$/),
      fc.stringMatching(/^[a-z]{2,6}$/),
    )
    .map(([l, d, t]) => ({ kind: 'email', value: `${l}@${d}.${t}` })),
);

const filler = fc.string({ maxLength: 30, unit: 'grapheme' });
const bigFiller = fc.constantFrom('', 'x'.repeat(1200));

interface Planted {
  value: Json;
  secrets: string[];
}

/** A JSON tree with secrets planted in strings (with space separators) and sometimes as member names. */
const tree: fc.Arbitrary<Planted> = fc.letrec<{ node: Planted }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .oneof(fc.integer(), fc.boolean(), fc.constant(null), filler)
      .map((value) => ({ value: value as Json, secrets: [] })),
    fc
      .tuple(filler, secretArb, filler, bigFiller, fc.array(fc.boolean(), { maxLength: 60 }))
      .map(([a, s, b, big, wraps]) => {
        // Planted at a random depth: up to 60 levels of arrays and objects around the string.
        let value: Json = `${a} ${s.value} ${b}${big}`;
        for (const w of wraps) value = w ? [value] : { d: value };
        return { value, secrets: [s.value] };
      }),
    fc
      .array(tie('node'), { maxLength: 4 })
      .map((xs) => ({ value: xs.map((x) => x.value), secrets: xs.flatMap((x) => x.secrets) })),
    fc
      .array(
        fc.tuple(
          fc.oneof(
            fc.stringMatching(/^[a-z_]{1,8}$/),
            secretArb.map((s) => s.value),
          ),
          tie('node'),
        ),
        { maxLength: 4 },
      )
      .map((entries) => {
        const o: Record<string, Json> = {};
        const secrets: string[] = [];
        for (const [k, v] of entries) {
          if (k in o) continue;
          o[k] = v.value;
          secrets.push(...v.secrets);
          if (findSecrets(k, DETECTOR_IDS).length > 0) secrets.push(k);
        }
        return { value: o, secrets };
      }),
  ),
})).node;

const stepArb = fc.record({ input: tree, result: tree, prompt: tree, meta: tree });

/** Walks original and published together: markers only where a detector matches, everything else equal. */
function compare(orig: Json, pub: Json, path: string, problems: string[]): void {
  if (pub !== null && typeof pub === 'object' && !Array.isArray(pub) && MARKER in pub) {
    const selected =
      typeof orig === 'string'
        ? findSecrets(orig, DETECTOR_IDS).length > 0
        : orig !== null &&
          typeof orig === 'object' &&
          !Array.isArray(orig) &&
          Object.keys(orig).some((k) => findSecrets(k, DETECTOR_IDS).length > 0);
    if (!selected) problems.push(`${path}: redacted though no detector matches`);
    return;
  }
  if (orig === null || typeof orig !== 'object') {
    if (orig !== pub) problems.push(`${path}: changed`);
    return;
  }
  if (Array.isArray(orig)) {
    if (!Array.isArray(pub) || pub.length !== orig.length) return void problems.push(`${path}: array changed`);
    orig.forEach((x, i) => compare(x, pub[i]!, `${path}/${i}`, problems));
    return;
  }
  if (pub === null || typeof pub !== 'object' || Array.isArray(pub))
    return void problems.push(`${path}: object changed`);
  if (Object.keys(orig).sort().join('\0') !== Object.keys(pub).sort().join('\0'))
    return void problems.push(`${path}: members changed`);
  for (const k of Object.keys(orig)) compare(orig[k]!, pub[k]!, `${path}/${k}`, problems);
}

const POLICY = { rules: [{ id: 'secrets', detectors: [...DETECTOR_IDS] }] };

test('planted secrets never survive; unselected values are unchanged; the result verifies', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 3 }), async (steps) => {
      const store = new MemoryStore({ blobThreshold: 1024 });
      const j = await store.create('p', { journalId: 'prop', createdAt: CREATED_AT });
      for (const [i, s] of steps.entries()) {
        const meta =
          s.meta.value !== null && typeof s.meta.value === 'object' && !Array.isArray(s.meta.value)
            ? s.meta.value
            : { m: s.meta.value };
        await j.append({
          step_id: `s-${i}`,
          ts: ts(i),
          model: 'm',
          tool_call: null,
          input: s.input.value,
          result: s.result.value,
          prompt: s.prompt.value,
          meta,
        });
      }
      const pub = await preparePublication(j, { policy: POLICY, optIn: true });
      const bytes = await publicationBytes(pub);
      const text = archiveText(bytes);
      for (const s of steps.flatMap((x) => [
        ...x.input.secrets,
        ...x.result.secrets,
        ...x.prompt.secrets,
        ...x.meta.secrets,
      ])) {
        expect(text.includes(s)).toBe(false);
        expect(text.includes(JSON.stringify(s).slice(1, -1))).toBe(false);
      }
      const problems: string[] = [];
      for await (const rec of j.read()) {
        const p = JSON.parse(pub.lines[rec.seq]!);
        for (const f of ['input', 'result', 'prompt', 'meta'] as const)
          compare(rec[f] as Json, p[f], `${rec.seq}/${f}`, problems);
      }
      expect(problems).toEqual([]);
      const report = await verifyPublishedReceipt(bytes);
      expect(report.problems).toEqual([]);
    }),
    { numRuns: Number(process.env.RUNS ?? 200) },
  );
});

/** A reference matcher for pointer patterns: `*` one token, `**` any number (spec/REDACTION.md §3.2). */
function patternMatches(pattern: string[], path: string[]): boolean {
  if (pattern.length === 0) return path.length === 0;
  const [p, ...rest] = pattern;
  if (p === '**') return patternMatches(rest, path) || (path.length > 0 && patternMatches(pattern, path.slice(1)));
  return path.length > 0 && (p === '*' || p === path[0]) && patternMatches(rest, path.slice(1));
}

const keyTree: fc.Arbitrary<Json> = fc.letrec<{ node: Json }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.integer(), fc.constantFrom('x', 'yes', ''), fc.constant(null)),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }),
  ),
})).node;

const PATTERNS = [
  '/input',
  '/input/a',
  '/result/**/b',
  '/**/c',
  '/meta/*',
  '/prompt/*/a',
  '/result/a/**',
  '/tool_call/arguments/a',
];
const ruleArb = fc.record({
  paths: fc.subarray(PATTERNS, { minLength: 1, maxLength: 3 }),
  tools: fc.option(fc.constant(['http']), { nil: undefined }),
  seq: fc.option(fc.record({ from: fc.integer({ min: 0, max: 2 }), to: fc.integer({ min: 2, max: 3 }) }), {
    nil: undefined,
  }),
});

test('path rules (with tools and seq ranges) redact exactly the first selected node on each path; nothing else changes', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
      fc.array(
        fc.record({
          input: keyTree,
          result: keyTree,
          prompt: keyTree,
          meta: fc.dictionary(fc.constantFrom('a', 'b', 'c'), keyTree, { maxKeys: 3 }),
          tool: fc.constantFrom('http', 'ftp'),
          args: keyTree,
        }),
        { minLength: 1, maxLength: 4 },
      ),
      async (rawRules, steps) => {
        const rules = rawRules.map((r, i) =>
          Object.fromEntries(Object.entries({ id: `r${i}`, ...r }).filter(([, v]) => v !== undefined)),
        );
        const store = new MemoryStore({ blobThreshold: 1024 });
        const j = await store.create('p', { journalId: 'prop-paths', createdAt: CREATED_AT });
        for (const [i, s] of steps.entries()) {
          await j.append({
            step_id: `s-${i}`,
            ts: ts(i),
            model: 'm',
            input: s.input,
            result: s.result,
            prompt: s.prompt,
            meta: s.meta,
            tool_call: { arguments: s.args, name: s.tool },
          });
        }
        // Generated strings are shorter than 8 characters, so the leak sweep never refuses here.
        const pub = await preparePublication(j, { policy: { rules: rules as never }, optIn: true });
        const problems: string[] = [];
        for await (const rec of j.read()) {
          const p = JSON.parse(pub.lines[rec.seq]!);
          const applicable = rawRules
            .map((r, i) => ({ r, i }))
            .filter(
              ({ r }) =>
                (!r.seq || (rec.seq >= r.seq.from && rec.seq <= r.seq.to)) &&
                (!r.tools || (rec.tool_call as { name: string }).name === 'http'),
            );
          const ruleAt = (tokens: string[]): string | null => {
            for (const { r, i } of applicable)
              if (r.paths.some((pt) => patternMatches(pt.slice(1).split('/'), tokens))) return `r${i}`;
            return null;
          };
          const walk = (orig: Json, out: Json, tokens: string[]): void => {
            const rule = ruleAt(tokens);
            const isMarker = out !== null && typeof out === 'object' && !Array.isArray(out) && MARKER in out;
            if (rule) {
              if (!isMarker) problems.push(`/${tokens.join('/')}: selected by ${rule} but not redacted`);
              else if ((out as { [MARKER]: { rule: string } })[MARKER].rule !== rule)
                problems.push(`/${tokens.join('/')}: wrong rule`);
              return;
            }
            if (isMarker) return void problems.push(`/${tokens.join('/')}: redacted but not selected`);
            if (orig === null || typeof orig !== 'object') {
              if (orig !== out) problems.push(`/${tokens.join('/')}: changed`);
              return;
            }
            if (Array.isArray(orig)) {
              if (!Array.isArray(out) || out.length !== orig.length)
                return void problems.push(`/${tokens.join('/')}: array changed`);
              orig.forEach((x, k) => walk(x, out[k]!, [...tokens, String(k)]));
              return;
            }
            const o = out as Record<string, Json>;
            if (Object.keys(orig).sort().join() !== Object.keys(o).sort().join())
              return void problems.push(`/${tokens.join('/')}: members changed`);
            for (const k of Object.keys(orig)) walk(orig[k]!, o[k]!, [...tokens, k]);
          };
          for (const f of ['input', 'result', 'prompt', 'meta', 'tool_call'] as const) walk(rec[f] as Json, p[f], [f]);
        }
        expect(problems).toEqual([]);
        expect(
          (pub.plan.manifest.redactions as Array<{ seq: number; path: string }>).map((d) => `${d.seq} ${d.path}`),
        ).toEqual(pub.redactions.map((r) => `${r.seq} ${r.path}`));
        const report = await verifyPublishedReceipt(await publicationBytes(pub));
        expect(report.problems).toEqual([]);
      },
    ),
    { numRuns: Number(process.env.RUNS ?? 200) },
  );
});

test('no hash over a redacted value is published: the original step hashes from redacted_from on (the head among them) and the digests of redacted blobs appear nowhere, in hex or base64; earlier steps keep their original hashes', async () => {
  const hashForms = (h: string): string[] => [
    h.slice(7),
    Buffer.from(h.slice(7), 'hex').toString('base64'),
    Buffer.from(h.slice(7), 'hex').toString('base64url'),
  ];
  await fc.assert(
    fc.asyncProperty(
      fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
      fc.array(
        fc.record({
          input: keyTree,
          result: keyTree,
          tool: fc.constantFrom('http', 'ftp'),
          args: keyTree,
          big: fc.boolean(),
        }),
        { minLength: 1, maxLength: 5 },
      ),
      async (rawRules, steps) => {
        const rules = rawRules.map((r, i) =>
          Object.fromEntries(Object.entries({ id: `r${i}`, ...r }).filter(([, v]) => v !== undefined)),
        );
        const store = new MemoryStore({ blobThreshold: 1024 });
        const j = await store.create('p', { journalId: 'prop-oracle', createdAt: CREATED_AT });
        for (const [i, s] of steps.entries()) {
          // A big result is stored as a blob; the policy may redact inside it, all of it, or nothing.
          const result = s.big ? { a: s.result, pad: 'p'.repeat(1100) } : s.result;
          await j.append({
            step_id: `s-${i}`,
            ts: ts(i),
            model: 'm',
            input: s.input,
            result,
            tool_call: { arguments: s.args, name: s.tool },
          });
        }
        const pub = await preparePublication(j, { policy: { rules: rules as never }, optIn: true });
        const text = archiveText(await publicationBytes(pub));
        const k = pub.anchor.redacted_from;
        const listed = new Set(pub.plan.manifest.blobs.map((b) => b.digest));
        const leaked: string[] = [];
        for await (const line of j.lines()) {
          const hash = (JSON.parse(line.text) as { step_hash: string }).step_hash;
          if (line.seq < k) {
            if ((JSON.parse(pub.lines[line.seq]!) as { step_hash: string }).step_hash !== hash)
              leaked.push(`step ${line.seq}: not published unchanged`);
          } else {
            for (const f of hashForms(hash)) if (text.includes(f)) leaked.push(`step ${line.seq}'s original hash`);
          }
          for (const m of line.text.matchAll(/"digest":"(sha256:[0-9a-f]{64})"/g)) {
            if (!listed.has(m[1]!))
              for (const f of hashForms(m[1]!))
                if (text.includes(f)) leaked.push(`the digest of redacted blob ${m[1]}`);
          }
        }
        expect(leaked).toEqual([]);
        expect(k).toBe(pub.redactions.length > 0 ? pub.redactions[0]!.seq : steps.length);
        expect(pub.anchor.commitments.length).toBe(steps.length - k);
      },
    ),
    { numRuns: Number(process.env.RUNS ?? 150) },
  );
});
