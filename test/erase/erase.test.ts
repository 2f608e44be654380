/**
 * Erasure of a value in a stepchain/v3 journal (spec/ERASURE.md), through the library on a real file store:
 * the value and its salt are gone from every file of the journal directory, the head is unchanged, verify
 * reports the value erased (fast and deep); a writer that had the journal open keeps appending after the
 * bucket it was appending to was replaced; erasure records that lie, sealed records nobody recorded, and
 * edits of what a sealed record keeps are refused; erasure across a store finds every match.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { FileStore } from '../../src/store/index.js';
import { eraseMatching, eraseValue, erasureStepId } from '../../src/erase/file.js';
import { b64u, eraseUnit, unitAt } from '../../src/record/v3/erasure.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-erase-');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const EMAIL = 'alice.liddell+gdpr@example.org';
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}
/** Every file of the directory that holds any of the needles (as bytes). */
function holders(dir: string, needles: Array<string | Uint8Array>): string[] {
  return filesUnder(dir).filter((f) => {
    const bytes = readFileSync(f);
    return needles.some((n) => bytes.includes(typeof n === 'string' ? Buffer.from(n) : Buffer.from(n)));
  });
}
const bucketOf = (store: FileStore, id: string): string => join(store.root, id, 'buckets', '0000000000000000.jsonl');
const lineAt = (store: FileStore, id: string, seq: number): Record<string, unknown> =>
  JSON.parse(readFileSync(bucketOf(store, id), 'utf8').split('\n')[seq]!);

async function journalWith(store: FileStore, id: string): Promise<void> {
  const j = await store.create(id, { format: 'stepchain/v3' } as never);
  await j.append({
    input: { customer: { email: EMAIL, id: 'c-17' } },
    tool_call: { name: 'lookup', arguments: { q: EMAIL } },
    result: { email: EMAIL, plan: 'pro', notes: ['vip', EMAIL] },
  } as never);
  await j.append({ input: { q: 'next' }, result: { ok: true } } as never);
  await j.close();
}

describe('erase one value (file store)', { timeout: 120_000 }, () => {
  it('erases the value and its salt from every file, keeps the head, and verify reports it erased (fast and deep)', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    await journalWith(store, 'r');
    const before = lineAt(store, 'r', 0);
    const { unit } = unitAt(before, '/result/email');
    const salt = unit.salt.slice();
    const headBefore = (await store.verify('r')).head;

    const o = await eraseValue(store, 'r', {
      seq: 0,
      path: '/result/email',
      reason: 'GDPR Art. 17 request #118',
      by: 'dpo@example.org',
    });
    expect(o.digest).toBe('sha256:' + hex(unit.digest));
    expect(o.erasure.step_id).toBe(erasureStepId(0, o.digest));

    // The other occurrences are other units: erase them too, then nothing of the address is left.
    await eraseValue(store, 'r', { seq: 0, path: '/result/notes/1', reason: 'GDPR Art. 17 request #118' });
    await eraseValue(store, 'r', { seq: 0, path: '/input/customer/email', reason: 'GDPR Art. 17 request #118' });
    await eraseValue(store, 'r', { seq: 0, path: '/tool_call/arguments/q', reason: 'GDPR Art. 17 request #118' });
    const dir = join(store.root, 'r');
    expect(holders(dir, [EMAIL, JSON.stringify(EMAIL).slice(1, -1), salt, hex(salt), b64u(salt)])).toEqual([]);
    const after = lineAt(store, 'r', 0);
    expect(after.seed).toBeUndefined();
    expect(after.step_hash).toBe(before.step_hash);
    expect(after.root).toBe(before.root);
    expect(Object.keys(after.keys as object).sort()).toEqual(['error', 'meta', 'model', 'prompt']);

    for (const deep of [false, true]) {
      const report = await store.verify('r', { deep } as never);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      // The head moved by the four erasure records only: the chain up to seq 1 is the one signed before.
      expect(report.head_seq).toBe(5);
      const erased = report.warnings.filter((w) => w.code === 'VALUE_ERASED');
      expect(erased.map((w) => w.location.path).sort()).toEqual([
        '/input/customer/email',
        '/result/email',
        '/result/notes/1',
        '/tool_call/arguments/q',
      ]);
    }
    // The step hashes of the records before the erasure records are those signed before: the old head is seq 1's.
    const j = await store.open('r');
    expect((await j.get(1))!.step_hash).toBe(headBefore);
    await j.close();
  });

  it('a writer that holds the journal open keeps appending after the bucket it appends to was replaced', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    await journalWith(store, 'w');
    const writer = await store.open('w');
    await writer.append({ input: { n: 1 } } as never);
    const ino = statSync(bucketOf(store, 'w')).ino;
    await eraseValue(store, 'w', { seq: 0, path: '/result/email', reason: 'test' });
    expect(statSync(bucketOf(store, 'w')).ino).not.toBe(ino);
    await writer.append({ input: { n: 2 } } as never);
    await writer.close();
    const report = await store.verify('w');
    expect(report.problems).toEqual([]);
    expect(report.head_seq).toBe(4);
  });

  it('refuses a lying erasure record, a sealed record no erasure record names, and edits of what a sealed record keeps', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    await journalWith(store, 'l');
    const target = lineAt(store, 'l', 0);
    const real = unitAt(target, '/result/email').unit;
    // An erasure record that names another digest than the value it erased (written as a writer with access could).
    const j = await store.open('l');
    const liar = await j.append({
      [ERASURE_WRITER]: true,
      step_id: 'erasure:lie',
      kind: 'erasure',
      input: { target: 0, path: '/result/email', digest: 'sha256:' + '0'.repeat(64), reason: 'cover-up', by: null },
    } as never);
    await j.close();
    const sealed = eraseUnit(target, '/result/email', liar.step_id);
    const lines = readFileSync(bucketOf(store, 'l'), 'utf8').split('\n');
    lines[0] = sealed.line.slice(0, -1);
    writeFileSync(bucketOf(store, 'l'), lines.join('\n'));
    let report = await store.verify('l');
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code).sort()).toEqual(['ERASURE_MISMATCH', 'ERASURE_UNRECORDED']);
    expect(report.problems.find((p) => p.code === 'ERASURE_UNRECORDED')!.location).toMatchObject({
      seq: 0,
      field: 'result',
    });
    expect(hex(real.digest)).not.toBe('0'.repeat(64));

    // A marker naming an erasure record that does not exist (a value dropped with no record of it).
    const ghost = eraseUnit(target, '/result/email', 'erasure:nobody');
    lines[0] = ghost.line.slice(0, -1);
    writeFileSync(bucketOf(store, 'l'), lines.join('\n'));
    report = await store.verify('l');
    expect(report.problems.map((p) => p.code)).toContain('ERASURE_UNRECORDED');

    // What a sealed record keeps is bound by its root, though its bind is taken as stored.
    const good = eraseUnit(target, '/result/email', liar.step_id);
    const edits: Array<(r: Record<string, unknown>) => void> = [
      (r) => ((r.result as Record<string, unknown>).plan = 'free'),
      (r) => ((r.keys as Record<string, string>).model = b64u(new Uint8Array(16))),
      (r) =>
        ((r.salts as Record<string, string>).result = (r.salts as Record<string, string>).result!.replace(/^./, (c) =>
          c === 'A' ? 'B' : 'A',
        )),
    ];
    for (const edit of edits) {
      const r = JSON.parse(JSON.stringify(good.record)) as Record<string, unknown>;
      edit(r);
      const { canonicalJsonTrusted } = await import('../../src/canonical/jcs.js');
      lines[0] = canonicalJsonTrusted(r as never);
      writeFileSync(bucketOf(store, 'l'), lines.join('\n'));
      report = await store.verify('l');
      expect(report.ok).toBe(false);
      expect(report.problems.map((p) => p.code)).toContain('ROOT_MISMATCH');
    }
  });

  it('a value stored as a part: its part file is deleted with the last record that references it, kept while another does', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    const page = `Customer file of ${EMAIL}: ` + 'the long history of an account, repeated. '.repeat(60);
    const j = await store.create('p', { format: 'stepchain/v3' } as never);
    await j.append({ result: { page } } as never);
    await j.append({ result: { page } } as never);
    await j.close();
    const dir = join(store.root, 'p');
    const partFiles = (): string[] =>
      filesUnder(join(dir, 'parts')).filter((f) => /[0-9a-f]{62}$/.test(f) && !f.includes('index'));
    expect(partFiles().length).toBe(1);
    const first = await eraseValue(store, 'p', { seq: 0, path: '/result/page', reason: 'r' });
    expect(first.parts_deleted).toEqual([]);
    expect(partFiles().length).toBe(1);
    const second = await eraseValue(store, 'p', { seq: 1, path: '/result/page', reason: 'r' });
    expect(second.parts_deleted.length).toBe(1);
    expect(partFiles()).toEqual([]);
    expect(holders(dir, [EMAIL])).toEqual([]);
    const report = await store.verify('p', { deep: true } as never);
    expect(report.problems).toEqual([]);
    expect(report.warnings.filter((w) => w.code === 'VALUE_ERASED').length).toBe(2);
  });

  it('refuses what it cannot erase: a chunk, an erasure record, an absent path, a v2 journal', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    await journalWith(store, 'x');
    await expect(eraseValue(store, 'x', { seq: 0, path: '/result/nope', reason: 'r' })).rejects.toThrow(
      /ERASURE_TARGET_INVALID/,
    );
    await expect(eraseValue(store, 'x', { seq: 0, path: 'result/email', reason: 'r' })).rejects.toThrow(
      /ERASURE_TARGET_INVALID/,
    );
    await eraseValue(store, 'x', { seq: 0, path: '/result/email', reason: 'r' });
    await expect(eraseValue(store, 'x', { seq: 0, path: '/result/email', reason: 'r' })).rejects.toThrow(
      /ERASURE_TARGET_INVALID/,
    );
    await expect(eraseValue(store, 'x', { seq: 2, path: '/input/path', reason: 'r' })).rejects.toThrow(
      /erasure record/,
    );
    const v2 = await store.create('v2', {} as never);
    await v2.append({ input: { a: 1 } } as never);
    await v2.close();
    await expect(eraseValue(store, 'v2', { seq: 0, path: '/input/a', reason: 'r' })).rejects.toThrow(/stepchain\/v3/);
    expect((await store.verify('x')).ok).toBe(true);
  });

  it('erases one subject across a store, with a report, and leaves other journals and values alone', async () => {
    const store = new FileStore(mkdtempSync(join(root, 's-')));
    await journalWith(store, 'a');
    await journalWith(store, 'b');
    const c = await store.create('c', { format: 'stepchain/v3' } as never);
    await c.append({ result: { email: 'bob@example.org' } } as never);
    await c.close();
    const old = await store.create('old', {} as never);
    await old.append({ result: { email: EMAIL } } as never);
    await old.close();
    const report = await eraseMatching(store, {
      matchPath: '/result/email',
      value: EMAIL,
      reason: 'GDPR Art. 17',
      by: 'dpo',
    });
    expect(report.erased.map((e) => `${e.journal}:${e.seq}:${e.path}`).sort()).toEqual([
      'a:0:/result/email',
      'b:0:/result/email',
    ]);
    expect(report.journals_not_v3).toEqual(['old']);
    expect(report.failed).toEqual([]);
    const wild = await eraseMatching(store, { matchPath: '/*/*/email', value: EMAIL, reason: 'GDPR Art. 17' });
    expect(wild.erased.map((e) => `${e.journal}:${e.path}`).sort()).toEqual([
      'a:/input/customer/email',
      'b:/input/customer/email',
    ]);
    for (const id of ['a', 'b', 'c']) expect((await store.verify(id)).ok).toBe(true);
    expect(readFileSync(bucketOf(store, 'c'), 'utf8')).toContain('bob@example.org');
  });
});
