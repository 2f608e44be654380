import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { concatBytes } from '../../src/bytes.js';
import { slotDigest, slotSalt } from '../../src/record/commitments.js';
import { STEP_V2 } from '../../src/record/v2.js';
import { planReceipt, writeReceipt } from '../../src/receipt/writer.js';
import { planCommittedPublication, type CommittedPublication } from '../../src/redact/commit-publish.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { openSlot, verifyOpening } from '../../src/redact/opening.js';
import { seededSalts } from '../../src/redact/commit.js';
import type { Journal } from '../../src/store/index.js';
import type { Json } from '../../src/record/index.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { SAMPLE_POLICY, SECRETS, archiveText, memoryJournal, sampleSteps, ts } from './helpers.js';

const POLICY = compilePolicy({ rules: [...SAMPLE_POLICY.rules, { id: 'meta', paths: ['/meta'], seq: { from: 2 } }] });

async function bytesOf(plan: CommittedPublication['plan']): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

async function published(
  j: Journal = undefined as never,
): Promise<{ j: Journal; pub: CommittedPublication; bytes: Uint8Array }> {
  const journal = j ?? (await memoryJournal(sampleSteps(), 1024, 'stepchain/v2'));
  const pub = await planCommittedPublication(journal, { policy: POLICY, salts: seededSalts('committed') });
  return { j: journal, pub, bytes: await bytesOf(pub.plan) };
}

/** A receipt of edited public lines, with the publication's own manifest members (unsigned). */
async function rebuilt(
  j: Journal,
  pub: CommittedPublication,
  edit: (lines: string[], extra: Record<string, Json>) => void,
): Promise<Uint8Array> {
  const lines = pub.lines.slice();
  const extra = JSON.parse(JSON.stringify({ publication: pub.publication, redactions: pub.declarations })) as Record<
    string,
    Json
  >;
  edit(lines, extra);
  if (lines.some((l, i) => l !== pub.lines[i])) {
    // The writer refuses a chain that does not verify: splice the edited lines into the published archive.
    const entries = entriesOf(await bytesOf(pub.plan)).map((e) =>
      e.name.startsWith('chain/') ? { ...e, data: text(lines.map((l) => l + '\n').join('')) } : e,
    );
    return tarOf(entries);
  }
  const plan = await planReceipt({
    genesis: j.genesis,
    from: 0,
    to: lines.length - 1,
    blob: async (d) => j.blob(d),
    extra,
    lines: async function* () {
      for (let i = 0; i < lines.length; i++) yield { segment: '0000000000000000', seq: i, text: lines[i]! };
    },
  });
  return bytesOf(plan as CommittedPublication['plan']);
}

describe('a published v2 receipt verifies against the original head (REDACTION §12)', () => {
  test('valid, with the original head, and the journal head is the published head', async () => {
    const { j, pub, bytes } = await published();
    const head = (await j.head())!;
    const report = await verifyPublishedReceipt(bytes, { expectHead: head.step_hash });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.head).toBe(head.step_hash);
    expect(report.publication).toEqual(pub.publication);
    expect(report.anchor).toBeNull();
    // Whole slots (prompt everywhere, meta from seq 2 on — present or not), views (detector substrings), and path values inside a view.
    expect(pub.declarations).toContainEqual({ seq: 0, path: '/prompt', rule: 'prompts' });
    expect(pub.declarations).toContainEqual({ seq: 3, path: '/meta', rule: 'meta' });
    expect(pub.declarations).toContainEqual({ seq: 1, path: '/tool_call/arguments/api_key', rule: 'tool-secrets' });
    expect(pub.declarations).toContainEqual({ seq: 1, path: '/input/note', rule: 'secrets' });
    expect(report.redactions).toBe(pub.declarations.length);
    // The pin is really compared: another head fails.
    const other = await verifyPublishedReceipt(bytes, { expectHead: 'sha256:' + '0'.repeat(64) });
    expect(other.problems.map((p) => p.code)).toContain('HEAD_MISMATCH');
  });

  test('nothing withheld, and neither a record salt nor a withheld slot salt, is anywhere in the public bytes', async () => {
    const { j, bytes } = await published();
    const text = archiveText(bytes);
    for (const s of Object.values(SECRETS)) expect(text).not.toContain(JSON.stringify(s).slice(1, -1));
    expect(text).not.toContain('k-live-0123456789abcdef');
    expect(text).not.toContain('Keep secrets');
    for await (const l of j.lines()) {
      const r = JSON.parse(l.text) as Record<string, string>;
      expect(text).not.toContain(r.salt);
      expect(text).not.toContain(slotSalt(r.salt!, 'prompt', STEP_V2.redactable));
    }
  });

  test.each([
    [
      'a declaration removed',
      (_l: string[], e: Record<string, Json>) => void (e.redactions as Json[]).splice(0, 1),
      'REDACTION_UNDECLARED',
    ],
    [
      'a declaration added',
      (_l: string[], e: Record<string, Json>) =>
        void (e.redactions as Json[]).push({ path: '/tool_call', rule: 'x', seq: 3 }),
      'REDACTION_MISSING',
    ],
    ['a disclosed value altered', (l: string[]) => void (l[0] = l[0]!.replace('Paris?', 'Rome?')), 'HASH_MISMATCH'],
    [
      'a slot salt dropped',
      (l: string[]) => void (l[0] = l[0]!.replace(/"model":"[0-9a-f]{32}",?/, '')),
      'HASH_MISMATCH',
    ],
    [
      'a withheld digest swapped',
      (l: string[]) =>
        void (l[0] = l[0]!.replace(
          /"prompt":\{"\$stepchain:redacted":\{"commitment":"sha256:[0-9a-f]/,
          (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'),
        )),
      'HASH_MISMATCH',
    ],
    [
      'the publication block removed',
      (_l: string[], e: Record<string, Json>) => void delete e.publication,
      'ANCHOR_INVALID',
    ],
  ])('%s is reported (%s)', async (_what, edit, code) => {
    const { j, pub } = await published();
    const bytes = await rebuilt(j, pub, edit);
    const report = await verifyPublishedReceipt(bytes);
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code)).toContain(code);
  });

  test('a stored record in a publication is SALT_PUBLISHED', async () => {
    const { j, pub } = await published();
    const stored: string[] = [];
    for await (const l of j.lines()) stored.push(l.text);
    const bytes = await rebuilt(j, pub, (l) => void (l[3] = stored[3]!));
    const report = await verifyPublishedReceipt(bytes);
    expect(report.problems.map((p) => p.code)).toContain('SALT_PUBLISHED');
  });

  test('a v1 journal is refused: its step hashes cover raw values', async () => {
    const j = await memoryJournal(sampleSteps(), 1024);
    await expect(planCommittedPublication(j, { policy: POLICY })).rejects.toMatchObject({ code: 'SOURCE_INVALID' });
  });
});

describe('no oracle: the attacker with the original head and the public receipt recovers nothing', () => {
  const PINS = Array.from({ length: 10_000 }, (_, i) => String(i).padStart(4, '0'));
  const steps = [
    {
      step_id: 's0',
      ts: ts(0),
      model: 'm',
      prompt: 'enter the PIN',
      input: { pin: '4821', approved: true, email: 'bob@example.com' },
      tool_call: null,
      result: null,
    },
  ];
  const policy = compilePolicy({ rules: [{ id: 'pii', paths: ['/input'] }] });
  const EMAILS = ['alice@example.com', 'bob@example.com', 'carol@example.com'];

  /** Every candidate input the attacker can enumerate: 10 000 PINs × yes/no × a short list of addresses. */
  function* candidates(): Generator<Json> {
    for (const pin of PINS)
      for (const approved of [true, false]) for (const email of EMAILS) yield { pin, approved, email };
  }

  test('with every salt in the receipt, no candidate opens the withheld digest; with the slot salt, the same search finds it', async () => {
    const j = await memoryJournal(steps as never, 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, { policy });
    const bytes = await bytesOf(pub.plan);
    const head = (await j.head())!.step_hash;
    expect((await verifyPublishedReceipt(bytes, { expectHead: head })).ok).toBe(true);

    const line = JSON.parse(pub.lines[0]!) as {
      input: { '$stepchain:redacted': { commitment: string } };
      salts: Record<string, string>;
    };
    const target = line.input['$stepchain:redacted'].commitment;
    // The attacker's salts: everything salt-shaped in the public bytes (the disclosed slots' salts).
    const publicSalts = [...new Set(archiveText(bytes).match(/[0-9a-f]{32}/g) ?? [])];
    expect(publicSalts.length).toBeGreaterThan(0);
    const trySalt = (salt: string): Json | null => {
      for (const c of candidates()) if (slotDigest(salt, 'input', canonicalJson(c)) === target) return c;
      return null;
    };
    for (const salt of Object.values(line.salts)) expect(trySalt(salt)).toBeNull();
    // Control: the search is sound — given the slot salt (which only the journal holds) it recovers the value.
    let record: { salt: string } | null = null;
    for await (const l of j.lines()) record = JSON.parse(l.text) as { salt: string };
    expect(trySalt(slotSalt(record!.salt, 'input', STEP_V2.redactable))).toEqual(steps[0]!.input);
  }, 120_000);
});

describe('disclosure is the opening of a slot digest (REDACTION §12.6)', () => {
  test('a withheld slot, an absent meta and a blob-stored view open from the journal; wrong openings are refused', async () => {
    const { j, pub, bytes } = await published();
    const md = pub.plan.manifestDigest;
    const prompt = await openSlot(j, 0, 'prompt', md);
    const ok = await verifyOpening(bytes, prompt);
    expect(ok).toMatchObject({ ok: true, present: true, value: sampleSteps()[0]!.prompt });

    const meta = await openSlot(j, 3, 'meta', md);
    expect('value' in meta).toBe(false);
    expect(await verifyOpening(bytes, meta)).toMatchObject({ ok: true, present: false, value: null });

    const input = await openSlot(j, 2, 'input', md);
    expect(input.blob).toEqual(sampleSteps()[2]!.input);
    expect(await verifyOpening(bytes, input)).toMatchObject({ ok: true, value: sampleSteps()[2]!.input });

    const cases: Array<[unknown, string]> = [
      [{ ...prompt, value: 'You are a careless assistant.' }, 'COMMITMENT_MISMATCH'],
      [{ ...prompt, salt: '0'.repeat(32) }, 'COMMITMENT_MISMATCH'],
      [{ ...meta, value: {} }, 'COMMITMENT_MISMATCH'],
      [{ ...input, blob: { doc: 'other' } }, 'COMMITMENT_MISMATCH'],
      [{ ...prompt, slot: 'model' }, 'NOT_REDACTED'],
      [{ ...prompt, manifest_digest: 'sha256:' + 'a'.repeat(64) }, 'MANIFEST_MISMATCH'],
      [{ ...prompt, extra: 1 }, 'PROOF_INVALID'],
      [{ ...prompt, salt: 'XYZ' }, 'PROOF_INVALID'],
    ];
    for (const [proof, code] of cases) {
      const r = await verifyOpening(bytes, proof);
      expect(r.ok, code).toBe(false);
      expect(r.problems[0]!.code).toBe(code);
    }
  });
});
