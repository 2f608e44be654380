/**
 * Receipts for the page tests, made by the library's own exporter and publisher from the demo's travel
 * agent run (realistic steps: prompts, tool calls, a 100 KB tool result stored as a blob, a planted API
 * key that the publisher redacts), plus a large synthetic run for the 100 000-step test.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { genesisHash, makeGenesis, sealRecord, type Genesis } from '../../src/record/index.js';
import type { ChainSource, StoredLine } from '../../src/chain/source.js';
import { agentRun, DEMO_POLICY } from '../../examples/demo/agent.js';
import { exportReceipt, keygen } from '../../src/receipt/index.js';
import { disclose, publish } from '../../src/redact/index.js';
import { MemoryStore } from '../../src/store/index.js';

// The fixtures are made in Node, where the library hashes with node:crypto (the page, in the browser, uses @noble/hashes).

export interface AgentReceipts {
  /** A signed, complete receipt (.tar.gz) and the signer's keyfile.pub. */
  signed: string;
  publicKey: string;
  /** Another key's keyfile.pub. */
  otherKey: string;
  /** The same run, unsigned, as a bare tar. */
  unsigned: string;
  /** The unsigned tar with one character of step 0's tool result changed ("sunny" → "snowy"). */
  tampered: string;
  /** The published (redacted, signed) receipt, and a disclosure proof of its redacted API key. */
  published: string;
  proof: string;
  head: string;
  steps: number;
}

export async function agentReceipts(dir: string): Promise<AgentReceipts> {
  const store = new MemoryStore();
  const journal = await store.create('trip');
  await journal.appendMany(agentRun());
  const head = (await journal.head())!;
  const keys = await keygen(join(dir, 'alice.key'));
  const other = await keygen(join(dir, 'mallory.key'));
  const signed = join(dir, 'trip.tar.gz');
  await exportReceipt(journal, { out: signed, sign: { keyFile: keys.keyFile } });
  const unsigned = join(dir, 'trip.tar');
  await exportReceipt(journal, { out: unsigned });
  const tar = await readFile(unsigned);
  const at = tar.indexOf('"forecast":"sunny"');
  if (at < 0) throw new Error('the fixture run has no forecast to tamper with');
  const tampered = join(dir, 'trip-tampered.tar');
  const copy = Buffer.from(tar);
  copy.write('"forecast":"snowy"', at, 'latin1');
  await writeFile(tampered, copy);
  const published = join(dir, 'trip-public.tar.gz');
  const secrets = join(dir, 'trip-public.secrets.json');
  const result = await publish(journal, {
    policy: DEMO_POLICY,
    optIn: true,
    out: published,
    sign: { keyFile: keys.keyFile },
    secretsOut: secrets,
  });
  if (result.redactions === 0) throw new Error('the demo policy redacted nothing');
  const secretsDoc = JSON.parse(await readFile(secrets, 'utf8')) as {
    redactions: Array<{ seq: number; path: string }>;
  };
  const first = secretsDoc.redactions[0]!;
  const proof = join(dir, 'proof.json');
  await disclose(published, { secrets, seq: first.seq, path: first.path, out: proof });
  await journal.close();
  return {
    signed,
    publicKey: keys.publicKeyFile,
    otherKey: other.publicKeyFile,
    unsigned,
    tampered,
    published,
    proof,
    head: head.step_hash,
    steps: head.seq + 1,
  };
}

/**
 * A run of `steps` agent-like steps (every 50th result a blob) as a ChainSource, built directly from
 * sealed records: a store would spend most of the test's time on its own checks.
 */
export function largeRun(steps: number): ChainSource {
  const genesis: Genesis = makeGenesis({ journalId: 'large-run', createdAt: '2026-01-01T00:00:00.000Z' });
  const lines: StoredLine[] = [];
  const blobs = new Map<string, Uint8Array>();
  const enc = new TextEncoder();
  let prev = genesisHash(genesis);
  const tools = ['search', 'read_file', 'http', 'calculator'];
  for (let seq = 0; seq < steps; seq++) {
    let result: unknown = { ok: true, items: [seq % 97, seq % 13], note: `result of step ${seq}` };
    if (seq % 50 === 49) {
      const text = canonicalJson({ page: seq, rows: Array.from({ length: 20 }, (_, i) => `row ${i} of page ${seq}`) });
      const digest = digestUtf8(text);
      blobs.set(digest, enc.encode(text));
      result = { '$stepchain:blob': { digest, size: enc.encode(text).length } };
    }
    const { record, line } = sealRecord({
      v: 1,
      seq,
      step_id: `s-${seq}`,
      ts: new Date(Date.UTC(2026, 0, 1) + seq * 250).toISOString(),
      prev_hash: prev,
      input: { task: `task ${Math.floor(seq / 10)}`, turn: seq % 10 },
      model: 'gpt-4o-mini',
      prompt: `Step ${seq}: decide the next action for task ${Math.floor(seq / 10)}.`,
      tool_call: { name: tools[seq % tools.length]!, arguments: { q: `query ${seq}` } },
      result: result as never,
    });
    prev = record.step_hash;
    const first = Math.floor(seq / 25_000) * 25_000;
    lines.push({ segment: `${String(first).padStart(16, '0')}.jsonl`, seq, text: line.slice(0, -1) });
  }
  return {
    genesis,
    head: async () => ({ seq: steps - 1, step_hash: prev }),
    async *lines(range) {
      for (const l of lines.slice(range?.from ?? 0, (range?.to ?? steps - 1) + 1)) yield l;
    },
    blob: async (digest) => blobs.get(digest) ?? null,
  };
}
