/**
 * A reader guessing redacted values (issues 8 and 14, docs/threat-model.md §2.4, spec/REDACTION.md §6.5): a
 * published receipt must not let a reader link equal values or test guesses. Each redaction gets its own
 * fresh 32-byte salt (§5.3), the salts never appear in the public bytes, and — the attack of issue 14 —
 * no unsalted hash over a redacted value is published: an attacker who rebuilds a redacted record from
 * guesses and compares its hash with every digest in the receipt recovers nothing. The same attacker, given
 * a hash the public receipt does not carry (the original head from elsewhere, a whole-step proof, or the
 * step hashes a version-1 anchor listed), does recover values: exactly the residual risk docs/threat-model.md states.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import type { StepInput } from '../../src/record/index.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import {
  commitment,
  discloseStepFromSecrets,
  preparePublication,
  publicationBytes,
  saltToHex,
  secretsFile,
  verifyPublishedReceipt,
  type Publication,
} from '../../src/redact/index.js';
import { FileStore, MemoryStore, type Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { archiveText, CREATED_AT, ts } from '../redact/helpers.js';

const root = tempDir('stepchain-redaction-');
const MARKER = '$stepchain:redacted';
const sha = (text: string): string => 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');

/** The values the attacker wants, and the candidate lists an attacker would try. */
const EMAILS = [
  'alice@example.org',
  'bob@example.org',
  'carol@example.org',
  'dave@example.net',
  'erin@example.com',
  'frank@example.com',
];
const CANDIDATES: Record<string, unknown[]> = {
  '/result/approved': [true, false, null, 'yes', 'no'],
  '/input/pin': Array.from({ length: 10_000 }, (_, i) => String(i).padStart(4, '0')),
  '/result/email': EMAILS,
  '/input/note': EMAILS, // substring-redacted: the attacker fills the placeholder of the marker's text
};
const TRUTH = {
  '/result/approved': true,
  '/input/pin': '4821',
  '/result/email': 'carol@example.org',
  '/input/note': 'forward to dave@example.net today',
};

const POLICY = {
  rules: [
    { id: 'answers', paths: ['/result/approved', '/input/pin', '/result/email'] },
    { id: 'mail', detectors: ['email'], paths: ['/input/note'] },
  ],
};

function attackSteps(): StepInput[] {
  return [
    { step_id: 'a-0', ts: ts(0), model: 'm', input: { question: 'hello' }, result: { greeting: 'hi' } }, // nothing redacted
    { step_id: 'a-1', ts: ts(1), model: 'm', input: { question: 'approve the refund?' }, result: { approved: true } },
    { step_id: 'a-2', ts: ts(2), model: 'm', input: { pin: '4821' }, result: 'unlocked' },
    {
      step_id: 'a-3',
      ts: ts(3),
      model: 'm',
      input: { who: 'the on-call engineer' },
      result: { email: 'carol@example.org' },
    },
    { step_id: 'a-4', ts: ts(4), model: 'm', input: { note: 'forward to dave@example.net today' }, result: 'done' },
  ];
}

async function journalOf(steps: StepInput[]): Promise<Journal> {
  const j = await new MemoryStore().create('attack', { journalId: 'attack', createdAt: CREATED_AT });
  for (const s of steps) await j.append(s);
  return j;
}

/**
 * The attacker of issue 14, holding only `bytes` (and optionally hashes obtained elsewhere): for every
 * redacted location, rebuild its step with each candidate in place of the marker and every known digest as
 * prev_hash, and compare the record's hash with every digest known; also compare unsalted hashes of each
 * candidate with every digest. Returns what it recovered, by "seq path".
 */
async function attack(bytes: Uint8Array, extraKnown: readonly string[] = []): Promise<Map<string, unknown>> {
  const lines: string[] = [];
  const receipt = await verifyReceipt(bytes, {
    extensions: { anchor: () => null, redactions: () => null },
    onLine: (l) => void lines.push(l.text),
  });
  const known = new Set([...archiveText(bytes).matchAll(/sha256:[0-9a-f]{64}/g)].map((m) => m[0]));
  for (const h of extraKnown) known.add(h);
  const declarations = receipt.manifest!.redactions as Array<{ seq: number; path: string }>;
  const recovered = new Map<string, unknown>();
  const PREV = 'sha256:' + 'f'.repeat(64);
  const SENTINEL = '\u0001candidate\u0001';
  for (const { seq, path } of declarations) {
    const record = JSON.parse(lines[seq]!) as Record<string, unknown>;
    const tokens = path.slice(1).split('/');
    let parent = record as Record<string, unknown>;
    for (const t of tokens.slice(0, -1)) parent = parent[t] as Record<string, unknown>;
    const marker = (parent[tokens[tokens.length - 1]!] as Record<string, { text?: string }>)[MARKER]!;
    const guesses = CANDIDATES[path]!.map((c) =>
      marker.text !== undefined ? marker.text.replace(/\[REDACTED:[a-z-]+\]/, String(c)) : c,
    );
    const prevs = new Set([record.prev_hash as string, ...known]);
    // JCS orders members by name, so the record's text is fixed around the value: substitute into it.
    parent[tokens[tokens.length - 1]!] = SENTINEL;
    record.prev_hash = PREV;
    delete record.step_hash;
    const [before, after] = canonicalJson(record).split(JSON.stringify(SENTINEL)) as [string, string];
    for (const guess of guesses) {
      const value = canonicalJson(guess);
      if (known.has(sha(value))) recovered.set(`${seq} ${path}`, guess);
      for (const prev of prevs) {
        if (known.has(sha((before + value + after).replace(PREV, prev)))) recovered.set(`${seq} ${path}`, guess);
      }
    }
  }
  return recovered;
}

describe('a reader guessing redacted values', () => {
  test('commitments to one low-entropy value under fresh salts are all different, and the salts appear nowhere in the published bytes', async () => {
    const j = await new FileStore(root, { fsync: 'none' }).create('answers');
    for (let i = 0; i < 12; i++) await j.append({ input: { question: `q${i}` }, result: { consent: 'yes' } });
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'consent', paths: ['/result/consent'] }] },
      optIn: true,
    });
    const bytes = await publicationBytes(pub);
    await j.close();

    expect(pub.redactions.length).toBe(12);
    const commitments = pub.redactions.map((r) => r.commitment);
    expect(new Set(commitments).size).toBe(12);
    const salts = [...pub.redactions.map((r) => saltToHex(r.salt)), ...pub.steps.map((o) => o.salt)];
    expect(new Set(salts).size).toBe(24);

    const text = Buffer.from(bytes).toString('latin1');
    for (const s of salts) {
      expect(text).not.toContain(s);
      expect(text).not.toContain(Buffer.from(s, 'hex').toString('base64'));
    }
    expect(text).not.toContain('"yes"');

    // A dictionary of guesses with any salt the reader could know (none, zeros, the step's own hashes)
    // matches no published commitment; the true salt does.
    const guesses = ['yes', 'no', 'true', 'false', '', 'y', 'n'];
    const knowable = [new Uint8Array(32), new Uint8Array(32).fill(0xff)];
    for (const g of guesses) for (const s of knowable) expect(commitments).not.toContain(commitment(s, g));
    pub.redactions.forEach((r) => expect(commitment(r.salt, 'yes')).toBe(r.commitment));

    const report = await verifyPublishedReceipt(bytes);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  test('an attacker holding only the public receipt recovers nothing: a boolean, a 4-digit PIN, an e-mail from a list, a substring-redacted value', async () => {
    const j = await journalOf(attackSteps());
    const pub = await preparePublication(j, { policy: POLICY, optIn: true });
    const bytes = await publicationBytes(pub);
    expect((await verifyPublishedReceipt(bytes)).ok).toBe(true);
    expect(pub.redactions.map((r) => `${r.seq} ${r.path}`)).toEqual([
      '1 /result/approved',
      '2 /input/pin',
      '3 /result/email',
      '4 /input/note',
    ]);
    expect(pub.anchor.redacted_from).toBe(1);
    expect([...(await attack(bytes))]).toEqual([]);
  });

  test('the same attacker, given the step hashes a version-1 anchor listed unsalted, recovers all four (the oracle this version closes)', async () => {
    const j = await journalOf(attackSteps());
    const bytes = await publicationBytes(await preparePublication(j, { policy: POLICY, optIn: true }));
    const v1AnchorSteps: string[] = [];
    for await (const rec of j.read()) v1AnchorSteps.push(rec.step_hash);
    const recovered = await attack(bytes, v1AnchorSteps);
    expect(Object.fromEntries([...recovered].map(([k, v]) => [k.split(' ')[1]!, v]))).toEqual(TRUTH);
  });

  test('who can still test guesses: whoever holds the original head (of a run whose only redaction is in its last step), or a whole-step proof of a later step', async () => {
    // The original head from elsewhere: an earlier receipt, a log. docs/threat-model.md §2.4 says so.
    const j = await journalOf([attackSteps()[0]!, attackSteps()[2]!]);
    const pub = await preparePublication(j, { policy: POLICY, optIn: true });
    const bytes = await publicationBytes(pub);
    expect([...(await attack(bytes))]).toEqual([]);
    const head = (await j.head())!.step_hash;
    expect(Object.fromEntries(await attack(bytes, [head]))).toEqual({ '1 /input/pin': '4821' });

    // A whole-step proof of step 2 opens the original hash of step 1 (its prev_hash): its holder can test step 1's boolean.
    const full = await journalOf(attackSteps());
    const p: Publication = await preparePublication(full, { policy: POLICY, optIn: true });
    const fullBytes = await publicationBytes(p);
    const secrets = secretsFile(p.plan.manifestDigest, p.redactions, p.unblobbed, p.steps);
    const proof = discloseStepFromSecrets(secrets, 2);
    const fromProof = await attack(fullBytes, [proof.prev!.step_hash]);
    expect(Object.fromEntries(fromProof)).toEqual({ '1 /result/approved': true }); // later steps stay out of reach
  });
});
