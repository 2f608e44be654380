/**
 * `copyJournal` of a stepchain/v3 journal with parts (issue 33's copy item; PARTS.md §6–§7): every part is
 * copied once, byte for byte, and found by the target's own writer through the target's private index, so
 * the copy's lines are the source's and it verifies (deep tier included). An interrupted copy resumes; a
 * damaged part in the source stops the copy before the step that needs it.
 */
import { describe, expect, it } from 'vitest';
import { copyJournal } from '../../src/store/copy.js';
import { FileStore, MemoryStore, type StepInput } from '../../src/store/index.js';
import type { Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const IMAGE = Buffer.from(Uint8Array.from({ length: 2000 }, (_, i) => (i * 13) % 256)).toString('base64');

function chatSteps(turns: number): StepInput[] {
  const messages: unknown[] = [{ role: 'system', content: 'Be careful. '.repeat(40) }];
  const steps: StepInput[] = [];
  for (let t = 0; t < turns; t++) {
    messages.push({
      role: 'user',
      content: `turn ${t} ` + 'next page please '.repeat(30),
      ...(t % 2 === 0 ? { image: { mediaType: 'image/png', data: IMAGE } } : {}),
    });
    steps.push({ model: 'm', prompt: messages.map((m) => ({ ...(m as object) })) } as StepInput);
    const page = `page ${t} ` + 'words on a page '.repeat(100);
    steps.push({
      tool_call: { name: 'fetch', arguments: { url: `https://e.com/${t}` } },
      result: { text: page },
    } as StepInput);
    messages.push({ role: 'tool', content: page });
  }
  return steps;
}

async function lines(j: Journal): Promise<string[]> {
  const out: string[] = [];
  const h = await j.head();
  if (h === null) return out;
  for await (const l of j.lines({ from: 0, to: h.seq })) out.push(l.text);
  return out;
}

async function partsOf(j: Journal): Promise<string[]> {
  const out: string[] = [];
  for await (const a of (j as unknown as { parts: { store: { list(): AsyncIterable<string> } } }).parts.store.list())
    out.push(a);
  return out.sort();
}

describe('copying a v3 journal with parts', () => {
  it('memory to a file store and back: same lines, every part once, verifies deep; resumes when interrupted', async () => {
    const src = await new MemoryStore().create('c', { format: 'stepchain/v3' });
    const steps = chatSteps(4);
    await src.appendMany(steps.slice(0, 5));
    const dir = tempDir('stepchain-parts-copy-');
    const files = new FileStore(dir);
    const first = await copyJournal(src, files, 'c');
    expect(first.copied).toBe(5);
    await src.appendMany(steps.slice(5));
    const again = await copyJournal(src, files, 'c');
    expect(again).toMatchObject({ already: 5, copied: steps.length - 5 });
    const copy = await files.open('c');
    expect(await lines(copy)).toEqual(await lines(src));
    expect(await partsOf(copy)).toEqual(await partsOf(src));
    expect((await copy.verify({ deep: true })).ok).toBe(true);
    // And back into another memory store.
    const back = new MemoryStore();
    await copyJournal(copy, back, 'd');
    const d = await back.open('d');
    expect(await lines(d)).toEqual(await lines(src));
    const read: unknown[] = [];
    for await (const r of d.read()) read.push(r);
    const orig: unknown[] = [];
    for await (const r of src.read()) orig.push(r);
    expect(read).toEqual(orig);
    await copy.close();
  });

  it('a damaged part in the source stops the copy before the step that needs it (the target keeps an identical prefix)', async () => {
    const dir = tempDir('stepchain-parts-copy-src-');
    const fs = new FileStore(dir, { fsync: 'none' });
    const src = await fs.create('c', { format: 'stepchain/v3' });
    await src.appendMany(chatSteps(2));
    const victim = (await partsOf(src))[0]!;
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const file = join(dir, 'c', 'parts', victim.slice(7, 9), victim.slice(9));
    const bytes = readFileSync(file);
    bytes[bytes.length - 2] = bytes[bytes.length - 2]! ^ 1;
    writeFileSync(file, bytes);
    const target = new MemoryStore();
    await expect(copyJournal(src, target, 'd')).rejects.toMatchObject({
      code: expect.stringMatching(/PART_CORRUPT|JOURNAL_CORRUPT/),
    });
    const d = await target.open('d');
    expect((await d.verify()).ok).toBe(true);
    await src.close();
  });
});
