/**
 * Publishing a stepchain/v3 journal whose records reference parts (REDACTION.md §13.10): a chat whose prompt
 * lists grow turn by turn (list parts on a shared base chain), a long tool result stored once, an image sent
 * twice. A secret inside one message is withheld in that message's unit only, every other message proven;
 * each needed part is carried once as its public file; verification against the original head passes.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { MemoryStore, type StepInput } from '../../src/store/index.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { EMAIL, published, reforge } from './v3-helpers.js';
import { chatJournal } from './v3-parts-helpers.js';

describe('v3 publication of a journal with parts', () => {
  it('withholds the secret inside one message only, carries each part once, and verifies against the original head', async () => {
    const j = await chatJournal();
    const { pub, bytes, head } = await published(
      j,
      compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }),
    );
    const report = await verifyPublishedReceipt(bytes, { expectHead: head });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    const all = Buffer.from(bytes).toString('latin1');
    expect(all).not.toContain(EMAIL);
    // The withheld chunk is in the message's part (or list part), declared once for the part, not per record.
    expect(pub.declarations.length).toBeGreaterThan(0);
    expect(pub.declarations.every((d) => 'part' in d)).toBe(true);
    // Each part once.
    const entries = entriesOf(bytes).filter((e) => e.name.startsWith('parts/'));
    expect(new Set(entries.map((e) => e.name)).size).toBe(entries.length);
    expect(entries.length).toBe(pub.parts.size);
    // No part seed and no withheld salt anywhere.
    for (const w of pub.withheld) {
      expect(all).not.toContain(Buffer.from(w.salt).toString('base64url'));
      expect(all).not.toContain(Buffer.from(w.salt).toString('hex'));
    }
    // The rest of the secret message is shown (proven): its padding words are in a public file.
    expect(all).toContain('Padding words to make this message long.');
  });
});

const word = fc.constantFrom(
  'alice',
  'bob',
  'pay',
  'yes',
  '4711',
  'carol@example.com',
  'note',
  'a "quoted" word',
  'ünïcödé ✓',
);
const long = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => `${w.join(' ')} `.repeat(40));
const turn = fc.record({ user: long, tool: fc.option(long, { nil: undefined }), edit: fc.boolean() });
const PART_POLICIES = [
  { rules: [{ id: 'secrets', detectors: ['email'] }] },
  { rules: [{ id: 'first-user', paths: ['/prompt/1'] }] },
  {
    rules: [
      { id: 'contents', paths: ['/prompt/*/content'], seq: { from: 1 } },
      { id: 'results', paths: ['/result/text'] },
    ],
  },
  { rules: [{ id: 'none', paths: ['/input/nothing'] }] },
].map((p) => compilePolicy(p));

describe('v3 publication of journals with parts: properties', () => {
  it('for conversations with repeated and edited messages, any policy: round trips, and any single changed byte of a public record or part fails', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turn, { minLength: 1, maxLength: 4 }),
        fc.nat(PART_POLICIES.length - 1),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        async (turns, p, which, at, delta) => {
          const store = new MemoryStore();
          const j = await store.create('c', {
            journalId: 'v3-parts-property',
            createdAt: '2026-01-01T00:00:00.000Z',
            format: 'stepchain/v3',
          } as never);
          const messages: Array<{ role: string; content: string }> = [
            { role: 'system', content: 'Be brief. '.repeat(40) },
          ];
          let seq = 0;
          for (const t of turns) {
            // An edited conversation: the last message rewritten, so the new list does not extend the previous one.
            if (t.edit && messages.length > 1)
              messages[messages.length - 1] = {
                ...messages[messages.length - 1]!,
                content: `edited ${messages[messages.length - 1]!.content}`,
              };
            messages.push({ role: 'user', content: t.user });
            await j.append({
              step_id: `s${seq}`,
              ts: `2026-01-01T00:00:${String(seq++).padStart(2, '0')}.000Z`,
              model: 'm',
              prompt: messages.map((m) => ({ ...m })),
            } as StepInput);
            if (t.tool !== undefined) {
              await j.append({
                step_id: `s${seq}`,
                ts: `2026-01-01T00:00:${String(seq++).padStart(2, '0')}.000Z`,
                result: { text: t.tool },
              } as StepInput);
              messages.push({ role: 'tool', content: t.tool });
            }
          }
          let made: Awaited<ReturnType<typeof published>>;
          try {
            made = await published(j, PART_POLICIES[p]!);
          } catch (e) {
            // A policy that selects a value in one place and shows it in another is refused, never published.
            if ((e as { code?: string }).code === 'LEAK_DETECTED') return;
            throw e;
          }
          const { pub, bytes, head } = made;
          expect((await verifyPublishedReceipt(bytes, { expectHead: head })).problems).toEqual([]);
          const all = Buffer.from(bytes).toString('latin1');
          for (const w of pub.withheld) expect(all).not.toContain(Buffer.from(w.salt).toString('base64url'));
          // One byte of one public record or one public part file.
          const targets = [
            ...pub.lines.map((l, i) => ({ line: i, bytes: Buffer.from(l, 'utf8') })),
            ...[...pub.parts].map(([a, b]) => ({ part: a, bytes: Buffer.from(b) })),
          ];
          const target = targets[which % targets.length]!;
          const b = Buffer.from(target.bytes);
          const pos = at % b.length;
          b[pos] = (b[pos]! + delta) % 256;
          const forged =
            'line' in target
              ? reforge(bytes, (lines) => {
                  lines[target.line!] = b as unknown as string;
                })
              : reforgePart(bytes, target.part!, b);
          expect((await verifyPublishedReceipt(forged, { expectHead: head })).ok).toBe(false);
        },
      ),
      { numRuns: Number(process.env.V3_PROPERTY_RUNS ?? 25) },
    );
  });
});

/** The receipt with one part entry replaced and its manifest listing made to match. */
function reforgePart(bytes: Uint8Array, address: string, data: Uint8Array): Uint8Array {
  const entries = entriesOf(bytes);
  const manifest = JSON.parse(Buffer.from(entries[0]!.data).toString('utf8')) as {
    parts: Array<{ address: string; digest: string; size: number }>;
  };
  const p = manifest.parts.find((x) => x.address === address)!;
  p.digest = 'sha256:' + createHash('sha256').update(data).digest('hex');
  p.size = data.length;
  const name = `parts/${address.slice(7)}`;
  return tarOf(
    entries.map((e) =>
      e.name === 'manifest.json'
        ? { ...e, data: text(canonicalJson(manifest, { refuseReserved: false })) }
        : e.name === name
          ? { ...e, data: Uint8Array.from(data) }
          : e,
    ),
  );
}
