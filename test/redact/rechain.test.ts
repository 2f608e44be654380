/**
 * The publisher's walk over the journal (src/redact/rechain.ts, spec/REDACTION.md §5.4, §6.1): only a
 * journal that verifies in full, with every blob it references, is published (SOURCE_INVALID otherwise);
 * the published chain keeps the original's segments; a blob is published while any step still references
 * it unredacted, and each step records which of its fields stopped being blobs.
 */
import { describe, expect, test } from 'vitest';
import type { ChainSource, StoredLine } from '../../src/chain/source.js';
import { RedactError, preparePublication, publicationBytes, verifyPublishedReceipt } from '../../src/redact/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { CREATED_AT, SAMPLE_POLICY, memoryJournal, sampleSteps, ts } from './helpers.js';

/** The journal as a ChainSource whose lines or blobs a test changes. */
async function sourceOf(
  change: {
    lines?: (ls: StoredLine[]) => StoredLine[];
    blob?: (d: string, b: Uint8Array | null) => Uint8Array | null;
  } = {},
): Promise<ChainSource> {
  const j = await memoryJournal();
  const lines: StoredLine[] = [];
  for await (const l of j.lines()) lines.push(l);
  const shown = change.lines ? change.lines(lines) : lines;
  return {
    genesis: j.genesis,
    head: () => j.head(),
    lines: async function* () {
      yield* shown;
    },
    blob: async (d) => (change.blob ? change.blob(d, await j.blob(d)) : j.blob(d)),
  };
}

async function refusal(source: ChainSource, policy: unknown = SAMPLE_POLICY): Promise<RedactError> {
  const e = await preparePublication(source, { policy: policy as never, optIn: true }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(RedactError);
  return e as RedactError;
}

describe('only a journal that verifies in full is published (SOURCE_INVALID)', () => {
  test('a blob the journal does not hold', async () => {
    const e = await refusal(await sourceOf({ blob: () => null }));
    expect(e.code).toBe('SOURCE_INVALID');
    expect(e.message).toMatch(/step 2 references blob sha256:[0-9a-f]{64} in input, which the journal does not hold/);
  });

  test('a blob whose bytes do not match its digest', async () => {
    const e = await refusal(
      await sourceOf({ blob: (_d, b) => (b === null ? null : Uint8Array.from(b, (x, i) => (i === 5 ? x ^ 1 : x))) }),
    );
    expect(e.code).toBe('SOURCE_INVALID');
    expect(e.message).toMatch(/blob sha256:[0-9a-f]{64} \(step 2, input\)/);
  });

  test.each([
    ['stops before its head', (ls: StoredLine[]) => ls.slice(0, -1)],
    ['repeats a line', (ls: StoredLine[]) => [...ls.slice(0, 2), ls[1]!, ...ls.slice(2)]],
    [
      'holds a line that is not JSON',
      (ls: StoredLine[]) => ls.map((l) => (l.seq === 1 ? { ...l, text: l.text.slice(0, -1) } : l)),
    ],
  ])('a source that %s', async (_what, lines) => {
    expect((await refusal(await sourceOf({ lines }))).code).toBe('SOURCE_INVALID');
  });

  test('the refusal says what to do', async () => {
    expect((await refusal(await sourceOf({ blob: () => null }))).hint).toMatch(/stepchain verify/);
  });

  test('an empty journal: nothing to publish', async () => {
    const j = await new MemoryStore().create('empty', { journalId: 'empty', createdAt: CREATED_AT });
    expect((await refusal(j)).code).toBe('SOURCE_INVALID');
  });
});

describe('what the published chain keeps (§5.4, §6.1)', () => {
  test("the original's segments: one chain entry per segment, starting at the same seqs", async () => {
    const store = new MemoryStore({ blobThreshold: 1024 });
    const j = await store.create('segs', { journalId: 'segs', createdAt: CREATED_AT, segmentBytes: 4096 });
    for (let i = 0; i < 12; i++)
      await j.append({ step_id: `s-${i}`, ts: ts(i), model: 'm', prompt: `${i}:${'p'.repeat(600)}`, input: { i } });
    const firsts = new Map<string, number>();
    for await (const l of j.lines()) if (!firsts.has(l.segment)) firsts.set(l.segment, l.seq);
    expect(firsts.size).toBeGreaterThan(1);
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'prompts', paths: ['/prompt'], seq: { from: 5 } }] },
      optIn: true,
    });
    expect(pub.plan.manifest.chain.map((c) => c.name)).toEqual(
      [...firsts.values()].map((s) => `chain/${String(s).padStart(16, '0')}.jsonl`),
    );
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).problems).toEqual([]);
  });

  test('a blob two steps share is published while one of them still references it unredacted', async () => {
    // Leaves too short for the sweep to search (booleans), so the unredacted copy is no leak (§5.5).
    const big = Array.from({ length: 300 }, (_, k) => k % 3 === 0);
    const steps = [0, 1].map((i) => ({ step_id: `s-${i}`, ts: ts(i), model: 'm', input: big, result: i }));
    const policy = { rules: [{ id: 'first', paths: ['/input'], seq: { to: 0 } }] };
    const pub = await preparePublication(await memoryJournal(steps), { policy, optIn: true });
    const digest = JSON.parse(pub.lines[1]!).input['$stepchain:blob'].digest as string;
    expect(JSON.parse(pub.lines[0]!).input['$stepchain:redacted'].rule).toBe('first');
    expect(pub.plan.manifest.blobs.map((b) => b.digest)).toEqual([digest]);
    expect(pub.unblobbed).toEqual([{ seq: 0, fields: ['input'] }]);
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).problems).toEqual([]);
  });

  test('fields that stopped being blobs are listed per step, in field order, one entry per step', async () => {
    const steps = sampleSteps();
    steps[3]!.result = { log: 'r'.repeat(1500) };
    const policy = { rules: [{ id: 'inputs', paths: ['/input', '/result'], seq: { from: 2 } }] };
    const pub = await preparePublication(await memoryJournal(steps), { policy, optIn: true });
    expect(pub.unblobbed).toEqual([
      { seq: 2, fields: ['input', 'result'] },
      { seq: 3, fields: ['input', 'result'] },
    ]);
    expect(pub.plan.manifest.blobs).toEqual([]);
  });

  test('the declarations of a step are in manifest order (by path as text: /input/10 before /input/2), and the receipt verifies', async () => {
    const steps = [{ step_id: 's-0', ts: ts(0), model: 'm', input: Array.from({ length: 12 }, (_, i) => `v${i}`) }];
    const pub = await preparePublication(await memoryJournal(steps), {
      policy: { rules: [{ id: 'each', paths: ['/input/*'] }] },
      optIn: true,
    });
    const paths = (pub.plan.manifest.redactions as Array<{ path: string }>).map((d) => d.path);
    expect(paths.slice(0, 4)).toEqual(['/input/0', '/input/1', '/input/10', '/input/11']);
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).problems).toEqual([]);
  });

  test('a partly redacted value is stored inline: a line of exactly 16 MiB is published, one byte more is LIMIT_EXCEEDED (§5.4)', async () => {
    const policy = { rules: [{ id: 'mail', detectors: ['email'] }] };
    const publishPad = async (pad: number) =>
      preparePublication(
        await memoryJournal([{ step_id: 's-0', ts: ts(0), model: 'm', result: 'x'.repeat(pad) + ' mail a@b.co' }]),
        { policy, optIn: true },
      );
    // The line grows one byte per character of padding; measure it once small, then aim at the limit.
    const small = (await publishPad(2000)).lines[0]!;
    const pad = 2000 + (16 * 1024 * 1024 - 1 - Buffer.byteLength(small));
    const at = await publishPad(pad);
    expect(Buffer.byteLength(at.lines[0]!) + 1).toBe(16 * 1024 * 1024);
    const e = await publishPad(pad + 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RedactError);
    expect([(e as RedactError).code, (e as RedactError).location]).toEqual(['LIMIT_EXCEEDED', { seq: 0 }]);
    expect((e as RedactError).hint).toMatch(/redacts the whole field/);
  }, 60_000);

  test('steps before the first redaction are published unchanged, line for line; from it on, re-chained', async () => {
    const j = await memoryJournal();
    const original: string[] = [];
    for await (const l of j.lines()) original.push(l.text);
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'late', paths: ['/prompt'], seq: { from: 2 } }] },
      optIn: true,
    });
    expect(pub.lines.slice(0, 2)).toEqual(original.slice(0, 2));
    expect(pub.anchor.redacted_from).toBe(2);
    expect(JSON.parse(pub.lines[3]!).prev_hash).toBe(JSON.parse(pub.lines[2]!).step_hash);
    expect(JSON.parse(pub.lines[2]!).step_hash).not.toBe(JSON.parse(original[2]!).step_hash);
    expect(pub.steps.map((s) => s.seq)).toEqual([2, 3]);
  });
});
