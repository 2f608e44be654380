/** Shared by the v3 publication tests and attacks: a v3 journal, its publication, and an outsider's re-forged receipt. */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { concatBytes } from '../../src/bytes.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { planV3Publication, type V3Publication } from '../../src/redact/v3-publish.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Journal } from '../../src/store/index.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';

export const EMAIL = 'alice.liddell+test@example.org';
export const API_KEY = 'k-live-0123456789abcdef';

/** Four steps: a payment, a prompt message list, a long note with an e-mail inside, low-entropy values (a PIN, yes/no). */
export function v3Steps(): Array<Record<string, unknown>> {
  return [
    {
      step_id: 's0',
      ts: '2026-01-01T00:00:00.000Z',
      model: 'm',
      prompt: 'Pay the invoice.',
      tool_call: { name: 'pay', arguments: { to: 'alice', amount: 10 } },
      result: { ok: true },
    },
    {
      step_id: 's1',
      ts: '2026-01-01T00:00:01.000Z',
      model: 'm',
      prompt: [
        { role: 'system', content: 'Keep secrets.' },
        { role: 'user', content: 'My PIN is 4711, approve it.' },
      ],
      tool_call: { name: 'http', arguments: { api_key: API_KEY, url: 'https://api.example.com/v1' } },
      result: { status: 200 },
    },
    {
      step_id: 's2',
      ts: '2026-01-01T00:00:02.000Z',
      model: 'm',
      prompt: 'Summarise.',
      input: {
        note: `Please contact ${EMAIL} about the overdue invoice INV-9 before Friday.`,
        pin: '4711',
        approved: true,
      },
      result: { price: 59, contact: 'bob@example.com' },
      meta: { operator: 'ops' },
    },
    { step_id: 's3', ts: '2026-01-01T00:00:03.000Z', model: 'm', prompt: 'Done.', result: 'ok' },
  ];
}

export const V3_POLICY = compilePolicy({
  rules: [
    { id: 'pin', paths: ['/input/pin', '/input/approved'] },
    { id: 'user-msg', paths: ['/prompt/1'] },
    { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
    { id: 'meta', paths: ['/meta'] },
    { id: 'secrets', detectors: ['email', 'api-key'] },
  ],
});

export async function v3Journal(steps = v3Steps()): Promise<Journal> {
  const store = new MemoryStore();
  const j = await store.create('j', {
    journalId: 'v3-publication',
    createdAt: '2026-01-01T00:00:00.000Z',
    format: 'stepchain/v3',
  } as never);
  for (const s of steps) await j.append(s as never);
  return j;
}

export async function bytesOf(plan: V3Publication['plan']): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

export async function published(
  j?: Journal,
  policy = V3_POLICY,
): Promise<{ j: Journal; pub: V3Publication; bytes: Uint8Array; head: string }> {
  const journal = j ?? (await v3Journal());
  const pub = await planV3Publication(journal, { policy });
  return { j: journal, pub, bytes: await bytesOf(pub.plan), head: (await journal.head())!.step_hash };
}

const sha = (b: Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

/**
 * What an outsider holding the unsigned public receipt can do: edit the public lines (and the manifest's
 * members), then recompute every manifest entry's digest, size and count, so that the archive is consistent.
 */
export function reforge(
  bytes: Uint8Array,
  edit: (lines: string[], manifest: Record<string, unknown>) => void,
): Uint8Array {
  const entries = entriesOf(bytes);
  const manifest = JSON.parse(Buffer.from(entries[0]!.data).toString('utf8')) as Record<string, unknown> & {
    chain: Array<{ name: string; digest: string; size: number; steps: number }>;
  };
  const chain = entries.filter((e) => e.name.startsWith('chain/'));
  const lines = chain.flatMap((e) =>
    Buffer.from(e.data)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.length > 0),
  );
  const counts = chain.map(
    (e) =>
      Buffer.from(e.data)
        .toString('utf8')
        .split('\n')
        .filter((l) => l.length > 0).length,
  );
  edit(lines, manifest);
  let at = 0;
  const rebuilt = chain.map((e, i) => {
    // A line may be raw bytes (a Uint8Array in place of the string), for byte-level edits.
    const data = new Uint8Array(
      Buffer.concat(
        lines
          .slice(at, (at += counts[i]!))
          .map((l) =>
            Buffer.concat([
              typeof l === 'string' ? Buffer.from(l, 'utf8') : Buffer.from(l as Uint8Array),
              Buffer.from('\n'),
            ]),
          ),
      ),
    );
    const m = manifest.chain[i]!;
    m.digest = sha(data);
    m.size = data.length;
    return { ...e, data };
  });
  const out = entries
    .filter((e) => e.name !== 'manifest.sig.json')
    .map((e) =>
      e.name === 'manifest.json'
        ? { ...e, data: text(canonicalJson(manifest, { refuseReserved: false })) }
        : e.name.startsWith('chain/')
          ? rebuilt[chain.indexOf(e)]!
          : e,
    );
  return tarOf(out);
}

/** Edits one public record (parsed) at seq `seq`. */
export function editRecord(lines: string[], seq: number, edit: (r: Record<string, any>) => void): void {
  const r = JSON.parse(lines[seq]!) as Record<string, any>;
  edit(r);
  lines[seq] = canonicalJson(r, { refuseReserved: false });
}
