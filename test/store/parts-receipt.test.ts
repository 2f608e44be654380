/**
 * Attacks on a stepchain/v3 receipt's parts (spec/PARTS.md §8–§9), as an outsider holding the receipt would
 * make them: drop a part entry, swap two, rewrite a part and its manifest listing together, reorder the
 * listing, list a part nobody references. Each is refused with a coded problem that names the record
 * needing the part or the entry concerned; none makes the verifier throw.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { receiptBytes } from '../../src/receipt/node.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import { MemoryStore, type StepInput } from '../../src/store/index.js';
import type { JsonInput } from '../../src/record/input.js';
import { entriesOf, tarOf, text, type RawEntry } from '../receipt/craft.js';

const steps: StepInput[] = [];
const messages: JsonInput[] = [{ role: 'user', content: 'go' }];
for (let t = 0; t < 3; t++) {
  steps.push({ input: { turn: t }, prompt: [...messages] });
  const page = `page ${t} ` + `text${t} `.repeat(400);
  steps.push({ input: { turn: t }, result: { text: page } });
  messages.push({ role: 'tool', content: page });
}
const store = new MemoryStore();
const journal = await store.create('chat', { format: 'stepchain/v3' });
for (const s of steps) await journal.append(s);
const good = await receiptBytes(journal);
const entries = entriesOf(good);
const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as {
  parts: Array<{ address: string; digest: string; size: number }>;
};
const partEntries = entries.filter((e) => e.name.startsWith('parts/'));

/** The receipt with its manifest replaced (unsigned receipts: the manifest is just an entry). */
function withManifest(m: unknown, rest: RawEntry[]): Uint8Array {
  return tarOf([{ name: 'manifest.json', data: text(canonicalJson(m)) }, ...rest]);
}
const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);

describe("a v3 receipt's parts under attack", () => {
  test('the untouched receipt verifies, with every part once', async () => {
    expect((await verifyReceipt(good)).problems).toEqual([]);
    expect(partEntries.length).toBe(manifest.parts.length);
  });

  test('a part entry dropped: ENTRY_MISSING, and PART_MISSING at the record that needs it', async () => {
    const page = partEntries.find((e) => new TextDecoder().decode(e.data).includes('"page 1 '))!;
    const r = await verifyReceipt(tarOf(entries.filter((e) => e !== page)));
    expect(r.verdict).toBe('invalid');
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'ENTRY_MISSING', location: { file: page.name } }),
        expect.objectContaining({
          code: 'PART_MISSING',
          location: expect.objectContaining({ seq: 3, path: '/result/text' }),
        }),
      ]),
    );
  });

  test('two part entries swapped: each is PART_CORRUPT', async () => {
    const [a, b] = [partEntries[0]!, partEntries[1]!];
    const swapped = entries.map((e) => (e === a ? { ...a, data: b.data } : e === b ? { ...b, data: a.data } : e));
    const r = await verifyReceipt(tarOf(swapped));
    expect(codes(r).filter((c) => c === 'PART_CORRUPT').length).toBeGreaterThanOrEqual(2);
  });

  test("a page rewritten with its manifest listing made to match: the record's reference still names the old file", async () => {
    const page = partEntries.find((e) => new TextDecoder().decode(e.data).includes('"page 2 '))!;
    const forged = text(new TextDecoder().decode(page.data).replace('page 2 ', 'page 9 '));
    const address = 'sha256:' + page.name.slice('parts/'.length);
    const m = {
      ...manifest,
      parts: manifest.parts.map((p) =>
        p.address === address ? { ...p, digest: digestBytes(forged), size: forged.length } : p,
      ),
    };
    const r = await verifyReceipt(
      withManifest(
        m,
        entries.slice(1).map((e) => (e === page ? { ...e, data: forged } : e)),
      ),
    );
    expect(r.verdict).toBe('invalid');
    expect(r.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'PART_CORRUPT',
          location: expect.objectContaining({ seq: 5, path: '/result/text' }),
        }),
      ]),
    );
  });

  test('the listing reordered, or a part listed twice: MANIFEST_INVALID', async () => {
    for (const parts of [[...manifest.parts].reverse(), [manifest.parts[0]!, ...manifest.parts]]) {
      const r = await verifyReceipt(withManifest({ ...manifest, parts }, entries.slice(1)));
      expect(codes(r)).toEqual(['MANIFEST_INVALID']);
    }
  });

  test('a part listed and carried that no record reaches: ENTRY_UNEXPECTED', async () => {
    const stray = text(canonicalJson({ seed: '00'.repeat(32), value: 'stray' }));
    const address = 'sha256:' + 'ff'.repeat(32);
    const m = { ...manifest, parts: [...manifest.parts, { address, digest: digestBytes(stray), size: stray.length }] };
    const r = await verifyReceipt(
      withManifest(m, [...entries.slice(1), { name: `parts/${'ff'.repeat(32)}`, data: stray }]),
    );
    expect(r.problems).toEqual([
      expect.objectContaining({ code: 'ENTRY_UNEXPECTED', location: { file: `parts/${'ff'.repeat(32)}` } }),
    ]);
  });

  test('a v2 receipt whose manifest lists parts is refused: parts are a stepchain/v3 member', async () => {
    const v2 = await new MemoryStore().create('old', { format: 'stepchain/v2' });
    await v2.append({ input: { x: 1 } });
    const e = entriesOf(await receiptBytes(v2));
    const m = JSON.parse(new TextDecoder().decode(e[0]!.data)) as Record<string, unknown>;
    const r = await verifyReceipt(withManifest({ ...m, parts: [] }, e.slice(1)));
    expect(codes(r)).toContain('MANIFEST_INVALID');
  });
});
