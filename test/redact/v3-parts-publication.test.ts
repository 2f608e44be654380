/**
 * Publishing a stepchain/v3 journal whose records reference parts (REDACTION.md §13.10): a chat whose prompt
 * lists grow turn by turn (list parts on a shared base chain), a long tool result stored once, an image sent
 * twice. A secret inside one message is withheld in that message's unit only, every other message proven;
 * each needed part is carried once as its public file; verification against the original head passes.
 */
import { describe, expect, it } from 'vitest';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { MemoryStore, type StepInput } from '../../src/store/index.js';
import type { Journal } from '../../src/store/index.js';
import { entriesOf } from '../receipt/craft.js';
import { EMAIL, published } from './v3-helpers.js';

export const SECRET_MSG = `Please write to ${EMAIL} with the summary. ` + 'Padding words to make this message long. '.repeat(30);
export const IMAGE = Buffer.from(Uint8Array.from({ length: 1500 }, (_, i) => (i * 7) % 256)).toString('base64');

export async function chatJournal(): Promise<Journal> {
  const store = new MemoryStore();
  const j = await store.create('chat', { journalId: 'v3-parts-publication', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v3' } as never);
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful agent. '.repeat(12) }];
  const steps: StepInput[] = [];
  for (let t = 0; t < 4; t++) {
    const user = t === 1 ? SECRET_MSG : `turn ${t}: ` + 'read the next page please. '.repeat(12);
    messages.push({ role: 'user', content: user, ...(t === 2 ? { image: { mediaType: 'image/png', data: IMAGE } } : {}) });
    steps.push({ step_id: `p${t}`, ts: `2026-01-01T00:00:0${t}.000Z`, model: 'm', prompt: [...messages] } as StepInput);
    const page = `page ${t} ` + `text${t} `.repeat(200);
    steps.push({ step_id: `r${t}`, ts: `2026-01-01T00:00:1${t}.000Z`, tool_call: { name: 'fetch', arguments: { url: `https://example.com/${t}` } }, result: { text: page } } as StepInput);
    messages.push({ role: 'tool', content: page });
  }
  for (const s of steps) await j.append(s);
  return j;
}

export const CHAT_POLICY = compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }, { id: 'pages', paths: ['/result/text'], seq: { from: 7, to: 7 } }] });

describe('v3 publication of a journal with parts', () => {
  it('withholds the secret inside one message only, carries each part once, and verifies against the original head', async () => {
    const j = await chatJournal();
    const { pub, bytes, head } = await published(j, compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }));
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
