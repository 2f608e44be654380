/** Properties of the diff engine over generated runs and replay variants (spec/DIFF.md §5, §8). */
import { describe, expect, test } from 'vitest';
import * as fc from 'fast-check';
import { diff, patternFor, type ChangedStep } from '../../src/diff/index.js';
import { replayVariant, run, sealRun, steps, jsonValue } from '../../src/testing/index.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import type { StepRecord } from '../../src/record/index.js';
import type { ChainSource } from '../../src/chain/source.js';

const runs = { numRuns: 100 };

describe('properties', () => {
  test('diff(x, x) is same, whatever the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(steps({ maxLength: 8 }), async (c) => {
        const a = sealRun(c, { journalId: 'x' });
        const b = sealRun(c, { journalId: 'y', start: '2030-01-01T00:00:00.000Z' });
        const r = await diff(a, b, { all: true });
        expect(r).toMatchObject({
          same: true,
          divergences: [],
          complete: true,
          compared: { a: c.length, b: c.length },
        });
        expect(r.prefix).toBeUndefined();
        // With the envelope compared, the same records are still the same.
        expect((await diff(a, a, { envelope: true })).same).toBe(true);
      }),
      runs,
    );
  });

  test('a replay variant is reported exactly: the first divergence, the count, the prefix', async () => {
    await fc.assert(
      fc.asyncProperty(replayVariant({ maxLength: 8 }), async (v) => {
        const first = await diff(v.a, v.b);
        const all = await diff(v.a, v.b, { all: true });
        expect(first.same).toBe(v.expected === null);
        expect(all.divergences).toHaveLength(v.count);
        expect(first.prefix).toBe(v.prefix);
        expect(all.prefix).toBe(v.prefix);
        if (v.expected === null) return;
        expect(first.divergences).toHaveLength(1);
        expect(first.divergences[0]).toMatchObject(v.expected);
        expect(all.divergences[0]).toEqual(first.divergences[0]);
      }),
      { numRuns: 200 },
    );
  });

  test('a single mutation at step k, path p is reported at exactly k and p, and nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(replayVariant({ kinds: ['changed'], minLength: 1 }), async (v) => {
        const r = await diff(v.a, v.b, { all: true });
        expect(r.divergences).toEqual([v.expected]);
      }),
      runs,
    );
  });

  test('one inserted step is one insertion and nothing else; one dropped step one deletion', async () => {
    await fc.assert(
      fc.asyncProperty(replayVariant({ kinds: ['inserted', 'deleted'], minLength: 1 }), async (v) => {
        const r = await diff(v.a, v.b, { all: true });
        expect(r.divergences).toHaveLength(1);
        expect(r.divergences[0]).toMatchObject(v.expected!);
        // The reported step is the one that is only in one run.
        const d = r.divergences[0]!;
        const only = d.kind === 'inserted' ? v.b[d.seq_b]! : v.a[(d as { seq_a: number }).seq_a]!;
        expect(canonicalJson(d.kind === 'changed' ? null : d.step)).toBe(
          canonicalJson({
            input: only.input,
            model: only.model,
            prompt: only.prompt,
            tool_call: only.tool_call,
            result: only.result,
            ...(only.meta ? { meta: only.meta } : {}),
          }),
        );
      }),
      runs,
    );
  });

  test('ignoring a path hides exactly the differences under it', async () => {
    await fc.assert(
      fc.asyncProperty(
        replayVariant({ kinds: ['changed'], minLength: 1 }),
        jsonValue({ maxDepth: 1 }),
        async (v, _noise) => {
          const changed = v.expected as ChangedStep;
          const path = changed.fields[0]!.path;
          const all = await diff(v.a, v.b, { all: true });
          // Ignoring the changed path (or its parent's subtree) hides the difference: the runs are the same.
          expect((await diff(v.a, v.b, { all: true, ignore: [patternFor(path)] })).same).toBe(true);
          const parent = path.slice(0, path.lastIndexOf('/'));
          if (parent !== '') expect((await diff(v.a, v.b, { ignore: [`${patternFor(parent)}/**`] })).same).toBe(true);
          // Ignoring a sibling path that does not cover it changes nothing.
          const other = path.startsWith('/meta') ? '/input/**' : '/meta/**';
          expect(await diff(v.a, v.b, { all: true, ignore: [other] })).toEqual({ ...all, ignore: [other] });
        },
      ),
      runs,
    );
  });

  test('an ignore pattern hides the same differences from diff and from the comparison of each field', async () => {
    // Two independent runs: the set of reported paths with ignore = the unignored paths without it.
    await fc.assert(
      fc.asyncProperty(
        run({ minLength: 1, maxLength: 3 }),
        run({ minLength: 1, maxLength: 3 }),
        fc.constantFrom('/result/**', '/tool_call/arguments/*', '/*/0', '/**/id', '/prompt/*/content'),
        async (a, b, pattern) => {
          const seqs = (r: Awaited<ReturnType<typeof diff>>) =>
            r.divergences.map((d) => d.kind + ('seq_a' in d ? d.seq_a : '') + ('seq_b' in d ? d.seq_b : ''));
          const plain = await diff(a, b, { all: true, window: 1 });
          const ignored = await diff(a, b, { all: true, window: 1, ignore: [pattern] });
          // With window 1 the pairing is positional, so the two reports list the same steps (bar those that became equal).
          const re = new RegExp(
            '^' +
              pattern
                .split('/')
                .map((t) => (t === '**' ? '.*' : t === '*' ? '[^/]+' : t))
                .join('/')
                .replace('/.*', '(/.*)?') +
              '(/.*)?$',
          );
          const expectedPaths = plain.divergences.flatMap((d) =>
            d.kind === 'changed'
              ? d.fields.map((f) => `${d.seq_a}${f.path}`).filter((p) => !re.test(p.slice(p.indexOf('/'))))
              : [],
          );
          const gotPaths = ignored.divergences.flatMap((d) =>
            d.kind === 'changed' ? d.fields.map((f) => `${d.seq_a}${f.path}`) : [],
          );
          expect(gotPaths).toEqual(expectedPaths);
          expect(seqs(ignored).every((s) => seqs(plain).includes(s))).toBe(true);
        },
      ),
      runs,
    );
  });

  test('prefix: a run against any extension of it', async () => {
    await fc.assert(
      fc.asyncProperty(steps({ maxLength: 6 }), steps({ minLength: 1, maxLength: 3 }), async (c, more) => {
        const a = sealRun(c, { journalId: 'a' });
        const b = sealRun([...c, ...more], { journalId: 'b' });
        const r = await diff(a, b, { all: true });
        expect(r.prefix).toBe('a');
        expect(r.divergences.map((d) => d.kind)).toEqual(more.map(() => 'inserted'));
        expect((await diff(b, a)).prefix).toBe('b');
      }),
      runs,
    );
  });

  test('a window of 2 is enough for one change, insertion or deletion, in longer runs', async () => {
    await fc.assert(
      fc.asyncProperty(
        replayVariant({ kinds: ['changed', 'inserted', 'deleted'], minLength: 1, maxLength: 20 }),
        async (v) => {
          const r = await diff(v.a, v.b, { all: true, window: 2 });
          expect(r.divergences).toHaveLength(1);
          expect(r.divergences[0]).toMatchObject(v.expected!);
        },
      ),
      { numRuns: 60 },
    );
  });

  test('a ChainSource of stored lines gives the same report as the records', async () => {
    const src = (records: StepRecord[]): ChainSource => ({
      genesis: { format: 'stepchain/v1', journal_id: 'x', created_at: '2026-01-01T00:00:00.000Z' },
      head: async () => null,
      lines: async function* () {
        for (const r of records) yield { segment: '0000000000000000.jsonl', seq: r.seq, text: canonicalJson(r) };
      },
      blob: async () => null,
    });
    await fc.assert(
      fc.asyncProperty(replayVariant({ maxLength: 6 }), fc.boolean(), async (v, all) => {
        expect(await diff(src(v.a), src(v.b), { all })).toEqual(await diff(v.a, v.b, { all }));
      }),
      { numRuns: 60 },
    );
  });

  test('the report is symmetric: swapping the runs swaps a and b', async () => {
    await fc.assert(
      fc.asyncProperty(replayVariant({ maxLength: 6 }), async (v) => {
        const ab = await diff(v.a, v.b, { all: true });
        const ba = await diff(v.b, v.a, { all: true });
        expect(ba.same).toBe(ab.same);
        expect(ba.compared).toEqual({ a: ab.compared.b, b: ab.compared.a });
        expect(ba.divergences.map((d) => d.kind)).toEqual(
          ab.divergences.map((d) => ({ changed: 'changed', inserted: 'deleted', deleted: 'inserted' })[d.kind]),
        );
      }),
      runs,
    );
  });
});
