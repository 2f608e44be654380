/** A v3 chat journal with parts, shared by the v3 parts publication tests and attacks. */
import { compilePolicy } from '../../src/redact/policy.js';
import { MemoryStore, type StepInput } from '../../src/store/index.js';
import type { Journal } from '../../src/store/index.js';
import { EMAIL } from './v3-helpers.js';

export const SECRET_MSG =
  `Please write to ${EMAIL} with the summary. ` + 'Padding words to make this message long. '.repeat(30);
export const IMAGE = Buffer.from(Uint8Array.from({ length: 1500 }, (_, i) => (i * 7) % 256)).toString('base64');

export async function chatJournal(): Promise<Journal> {
  const store = new MemoryStore();
  const j = await store.create('chat', {
    journalId: 'v3-parts-publication',
    createdAt: '2026-01-01T00:00:00.000Z',
    format: 'stepchain/v3',
  } as never);
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful agent. '.repeat(12) }];
  const steps: StepInput[] = [];
  for (let t = 0; t < 4; t++) {
    const user = t === 1 ? SECRET_MSG : `turn ${t}: ` + 'read the next page please. '.repeat(12);
    messages.push({
      role: 'user',
      content: user,
      ...(t === 2 ? { image: { mediaType: 'image/png', data: IMAGE } } : {}),
    });
    steps.push({ step_id: `p${t}`, ts: `2026-01-01T00:00:0${t}.000Z`, model: 'm', prompt: [...messages] } as StepInput);
    const page = `page ${t} ` + `text${t} `.repeat(200);
    steps.push({
      step_id: `r${t}`,
      ts: `2026-01-01T00:00:1${t}.000Z`,
      tool_call: { name: 'fetch', arguments: { url: `https://example.com/${t}` } },
      result: { text: page },
    } as StepInput);
    messages.push({ role: 'tool', content: page });
  }
  for (const s of steps) await j.append(s);
  return j;
}

export const CHAT_POLICY = compilePolicy({
  rules: [
    { id: 'secrets', detectors: ['email'] },
    { id: 'pages', paths: ['/result/text'], seq: { from: 7, to: 7 } },
  ],
});
