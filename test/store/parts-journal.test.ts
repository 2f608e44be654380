/**
 * Parts through a journal (spec/PARTS.md): a stepchain/v3 journal in the file store and in memory stores a
 * conversation's growing prompts as list parts with bases and each long message once, reads every step back
 * exactly, and verifies.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, MemoryStore, type StepInput, type Store } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-parts-journal-');
const pg = await postgresHarness('partsj', 2);

function chat(turns: number): StepInput[] {
  const messages: Array<{ role: string; content: string }> = [{ role: 'user', content: 'Research the topic.' }];
  const steps: StepInput[] = [];
  for (let t = 0; t < turns; t++) {
    steps.push({ input: { turn: t }, prompt: [...messages] });
    const page = `page ${t}: ` + `word${t} `.repeat(2000);
    steps.push({ input: { turn: t, tool: 'fetch' }, result: { text: page } });
    messages.push({ role: 'assistant', content: `fetch ${t}` }, { role: 'tool', content: page });
  }
  return steps;
}

function bytesUnder(path: string): number {
  let n = 0;
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

describe.each([
  ['file', (): Store => new FileStore(join(dir, 'file'), { fsync: 'none' })],
  ['memory', (): Store => new MemoryStore()],
  ['sqlite', (): Store => new SqliteStore(join(dir, 'db.sqlite'))],
  ['postgres', (): Store => pg.store()],
] as const)('a stepchain/v3 journal with parts: %s store', (name, make) => {
  test('a growing conversation reads back exactly and verifies; each page is stored once', async () => {
    const store = make();
    const j = await store.create('chat', { format: 'stepchain/v3' });
    const steps = chat(8);
    for (const s of steps) await j.append(s);
    const back = [];
    for await (const r of j.read()) back.push(r);
    expect(back.map((r) => ({ input: r.input, prompt: r.prompt, result: r.result }))).toEqual(
      steps.map((s) => ({ input: s.input, prompt: s.prompt ?? null, result: s.result ?? null })),
    );
    const report = await j.verify();
    expect(report.problems).toEqual([]);
    if (name === 'file') {
      // 8 distinct pages of ~16 KB: stored once each, however many prompts repeat them.
      const total = bytesUnder(join(dir, 'file', 'chat'));
      expect(total).toBeLessThan(8 * 16_500 * 1.3 + 60_000);
    }
    await j.close();
  });
});

test('verify of a v3 journal directory finds a changed byte or a missing part, with the record and the reference', async () => {
  const store = new FileStore(join(dir, 'damaged'), { fsync: 'none' });
  const j = await store.create('chat', { format: 'stepchain/v3' });
  for (const s of chat(3)) await j.append(s);
  await j.close();
  const partsDir = join(dir, 'damaged', 'chat', 'parts');
  const files = readdirSync(partsDir)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(partsDir, d)).map((f) => join(partsDir, d, f)));
  // The part that holds page 1 is referenced first by seq 3 (the tool result), then by later prompts.
  const page = files.find((f) => readFileSync(f, 'utf8').includes('"page 1: '))!;
  const bytes = readFileSync(page);
  bytes[bytes.length - 5]! ^= 1;
  writeFileSync(page, bytes);
  const opened = await store.open('chat', { readOnly: true });
  const report = await opened.verify();
  expect(report.ok).toBe(false);
  expect(report.problems).toEqual([
    expect.objectContaining({
      code: 'PART_CORRUPT',
      location: { seq: 3, path: '/result/text', file: expect.stringMatching(/^parts\/[0-9a-f]{2}\/[0-9a-f]{62}$/) },
    }),
  ]);
  rmSync(page);
  const again = await opened.verify();
  expect(again.problems).toEqual([
    expect.objectContaining({
      code: 'PART_MISSING',
      location: expect.objectContaining({ seq: 3, path: '/result/text' }),
    }),
  ]);
  await opened.close();
});

test('verify finds a missing part first referenced in a later bucket; a journal without parts verifies clean', async () => {
  // The chain's pass notes the first bucket whose lines hold a part reference; the parts step starts there.
  const store = new FileStore(join(dir, 'buckets'), { fsync: 'none', segmentBytes: 4096 });
  const plain = await store.create('plain', { format: 'stepchain/v3' });
  for (let i = 0; i < 30; i++) await plain.append({ input: { i, pad: 'p'.repeat(200) } });
  await plain.close();
  const later = await store.create('later', { format: 'stepchain/v3' });
  for (let i = 0; i < 30; i++) await later.append({ input: { i, pad: 'p'.repeat(200) } });
  await later.append({ input: { i: 30, page: 'page 30: ' + 'word '.repeat(400) } });
  await later.close();
  expect(readdirSync(join(dir, 'buckets', 'later', 'buckets')).length).toBeGreaterThan(2);
  const plainReport = await (await store.open('plain', { readOnly: true })).verify();
  expect(plainReport.problems).toEqual([]);
  const partsDir = join(dir, 'buckets', 'later', 'parts');
  const files = readdirSync(partsDir)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(partsDir, d)).map((f) => join(partsDir, d, f)));
  expect(files.length).toBe(1);
  rmSync(files[0]!);
  const opened = await store.open('later', { readOnly: true });
  const report = await opened.verify();
  expect(report.problems).toEqual([
    expect.objectContaining({
      code: 'PART_MISSING',
      location: expect.objectContaining({ seq: 30, path: '/input/page' }),
    }),
  ]);
  await opened.close();
});

test('a torn last line does not hide a missing part: verify still checks every reference before it', async () => {
  const store = new FileStore(join(dir, 'torn'), { fsync: 'none' });
  const j = await store.create('chat', { format: 'stepchain/v3' });
  for (const s of chat(2)) await j.append(s);
  await j.close();
  const journalDir = join(dir, 'torn', 'chat');
  const buckets = join(journalDir, 'buckets');
  const bucket = join(
    buckets,
    readdirSync(buckets)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .at(-1)!,
  );
  writeFileSync(bucket, readFileSync(bucket, 'utf8') + '{"v":3,"seq":4,"step_id":"torn');
  const partsDir = join(journalDir, 'parts');
  const files = readdirSync(partsDir)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(partsDir, d)).map((f) => join(partsDir, d, f)));
  rmSync(files.find((f) => readFileSync(f, 'utf8').includes('"page 0: '))!);
  const opened = await store.open('chat', { readOnly: true });
  const report = await opened.verify();
  expect(report.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'TRUNCATED_LINE' })]));
  expect(report.ok).toBe(false);
  expect(report.problems).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        code: 'PART_MISSING',
        location: expect.objectContaining({ seq: 1, path: '/result/text' }),
      }),
    ]),
  );
  await opened.close();
});

test('a receipt of a v3 journal carries each part once and verifies; a part entry changed or left out is found at its record', async () => {
  const { receiptBytes } = await import('../../src/receipt/node.js');
  const { verifyReceipt } = await import('../../src/receipt/verify.js');
  const { ustarHeader } = await import('../../src/receipt/tar.js');
  void ustarHeader;
  const store = new MemoryStore();
  const j = await store.create('chat', { format: 'stepchain/v3' });
  for (const s of chat(4)) await j.append(s);
  const bytes = await receiptBytes(j);
  const report = await verifyReceipt(bytes);
  expect(report.problems).toEqual([]);
  expect(report.verdict).toBe('intact');
  const manifest = report.manifest as unknown as { parts: Array<{ address: string; size: number }> };
  // Four pages and the prompts' lists, each once.
  expect(manifest.parts.length).toBeGreaterThanOrEqual(4);
  expect(new Set(manifest.parts.map((p) => p.address)).size).toBe(manifest.parts.length);
  // One byte of a page's entry changed: the tar still reads; the part is corrupt and the record that needs it is named.
  const text = Buffer.from(bytes).toString('latin1');
  const at = text.indexOf('"page 2: ');
  const damaged = Uint8Array.from(bytes);
  damaged[at + 20]! ^= 1;
  const bad = await verifyReceipt(damaged);
  expect(bad.verdict).toBe('invalid');
  expect(bad.problems).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        code: 'PART_CORRUPT',
        location: expect.objectContaining({ file: expect.stringMatching(/^parts\//) }),
      }),
      expect.objectContaining({
        code: 'PART_MISSING',
        location: expect.objectContaining({ seq: 5, path: '/result/text' }),
      }),
    ]),
  );
  await j.close();
});

test.each([
  ['file', (): Store => new FileStore(join(dir, 'forks'), { fsync: 'none' })],
  ['memory', (): Store => new MemoryStore()],
  ['sqlite', (): Store => new SqliteStore(join(dir, 'forks.sqlite'))],
  ['postgres', (): Store => pg.store()],
] as const)(
  'a fork of a v3 journal (%s store) carries the parts its steps reach, and reads back',
  async (_name, make) => {
    const store = make();
    const parent = await store.create('parent', { format: 'stepchain/v3' });
    const steps = chat(4);
    for (const s of steps) await parent.append(s);
    const fork = await store.fork(parent, { fromStep: 5, to: 'fork' });
    const back = [];
    for await (const r of fork.read()) back.push({ input: r.input, prompt: r.prompt, result: r.result });
    expect(back).toEqual(
      steps.slice(0, 6).map((s) => ({ input: s.input, prompt: s.prompt ?? null, result: s.result ?? null })),
    );
    expect((await fork.verify()).problems).toEqual([]);
    // The fork appends on: its new prompt extends the copied ones.
    await fork.append(steps[6]!);
    expect((await fork.get(6))?.prompt).toEqual(steps[6]!.prompt);
    await fork.close();
    await parent.close();
  },
);
