/**
 * The publisher's guarantees (issue 6, spec/REDACTION.md): opt-in, no matched string anywhere in the
 * archive's raw bytes, the journal untouched byte for byte, the published receipt verifies, same salts
 * give the same bytes, disclosure proofs hold and forgeries do not, blobs redacted and left out.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { keyPairFromSeed, receiptBytes } from '../../src/receipt/index.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import {
  RedactError,
  compareAnchor,
  publishedReceiptHooks,
  fixedSalts,
  discloseStep,
  discloseStepFromSecrets,
  verifyStepDisclosure,
  disclose,
  discloseFromSecrets,
  preparePublication,
  publicationBytes,
  publish,
  seededSalts,
  verifyDisclosure,
  verifyDisclosureFiles,
  verifyPublishedFile,
  verifyPublishedReceipt,
  escapedForms,
  MAX_ESCAPE_DEPTH,
  type SecretsFile,
} from '../../src/redact/index.js';
import type { JsonObject, StepInput } from '../../src/record/index.js';
import { FileStore, MemoryStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CREATED_AT, SAMPLE_POLICY, SECRETS, archiveText, memoryJournal, sampleSteps, ts } from './helpers.js';

/** A scale case, not a rule: `npm test` runs it; `npm run mutate` leaves it out (test/mutation/vitest.config.ts). */
const scale = process.env.STEPCHAIN_MUTATION ? test.skip : test;

const dir = tempDir('stepchain-redact-');
const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 3));

/** Every file under a directory: relative path → bytes. */
function snapshot(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(relative(root, p), readFileSync(p));
    }
  };
  walk(root);
  return out;
}

async function fileJournal(name: string) {
  const store = new FileStore(join(dir, name));
  const j = await store.create('run', { journalId: `redact-${name}`, createdAt: CREATED_AT, blobThreshold: 1024 });
  for (const s of sampleSteps()) await j.append(s);
  await j.close();
  return { store, root: join(dir, name, 'run') };
}

describe('publish', () => {
  test('refuses without optIn: a clear error, nothing read or written', async () => {
    const j = await memoryJournal();
    const out = join(dir, 'never.tar.gz');
    for (const options of [{}, { optIn: false }, { optIn: 'yes' }, { optIn: 1 }]) {
      const err = await publish(j, {
        policy: SAMPLE_POLICY,
        out,
        secretsOut: join(dir, 'never.json'),
        ...options,
      } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedactError);
      expect((err as RedactError).code).toBe('OPT_IN_REQUIRED');
      expect((err as Error).message).toMatch(/optIn: true/);
    }
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, 'never.json'))).toBe(false);
  });

  test('a file journal: the published .tar.gz holds no matched string, the journal is byte-identical, the receipt verifies', async () => {
    const { store, root } = await fileJournal('guarantees');
    const before = snapshot(root);
    const journal = await store.open('run', { readOnly: true });
    const out = join(dir, 'public.tar.gz');
    const secretsOut = join(dir, 'secrets.json');
    const result = await publish(journal, {
      policy: SAMPLE_POLICY,
      optIn: true,
      out,
      secretsOut,
      sign: key.privateKey,
    });
    await journal.close();

    // The journal: every file, byte for byte.
    const after = snapshot(root);
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [name, bytes] of before) expect(after.get(name)!.equals(bytes), name).toBe(true);

    // Raw archive bytes, decompressed: manifest, signature, chain entries, blobs, headers and padding.
    const raw = readFileSync(out);
    expect(raw[0]).toBe(0x1f);
    const text = archiveText(raw);
    const escaped = (s: string): string => JSON.stringify(s).slice(1, -1);
    for (const [kind, secret] of Object.entries(SECRETS)) {
      expect(text.includes(secret), kind).toBe(false);
      expect(text.includes(escaped(secret)), kind).toBe(false);
    }
    for (const s of [
      'k-live-0123456789abcdef',
      'You are a careful assistant. Keep secrets.',
      'Call the API.',
      'Summarise.',
    ])
      expect(text.includes(s), s).toBe(false);
    // ...and the base64 payload of the signature decodes only to the manifest, which holds none either.
    const sigPayload = /"payload":"([^"]+)"/.exec(text)![1]!;
    const manifest = Buffer.from(sigPayload, 'base64').toString('utf8');
    for (const secret of Object.values(SECRETS)) expect(manifest.includes(escaped(secret))).toBe(false);

    // Verifies, signed, anchored to the original head.
    const report = await verifyPublishedFile(out, { publicKey: key.publicKey });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.signed_by).toBe(key.keyId);
    const reopened = await store.open('run', { readOnly: true });
    const head = (await reopened.head())!;
    expect(result.original_head).toEqual(head);
    expect(report.anchor!.length).toBe(head.seq + 1);
    expect(report.redactions).toBe(result.redactions);
    // The secrets file: private, and never overwritten; its openings make the anchor comparable with the journal.
    expect(statSync(secretsOut).mode & 0o777).toBe(0o600);
    const secrets = JSON.parse(readFileSync(secretsOut, 'utf8')) as SecretsFile;
    expect(await compareAnchor(reopened, report.anchor!, secrets.steps)).toEqual([]);
    expect(secrets.steps.at(-1)).toMatchObject({ seq: head.seq, step_hash: head.step_hash });
    expect(text.includes(head.step_hash)).toBe(false);
    const wrongSalts = secrets.steps.map((o) => ({ ...o, salt: 'ab'.repeat(32) }));
    expect((await compareAnchor(reopened, report.anchor!, wrongSalts)).length).toBeGreaterThan(0);
    await reopened.close();

    expect(secrets.manifest_digest).toBe(result.manifest_digest);
    expect(secrets.redactions).toHaveLength(result.redactions);
    const again = await store.open('run', { readOnly: true });
    const err = await publish(again, {
      policy: SAMPLE_POLICY,
      optIn: true,
      out: join(dir, 'other.tar'),
      secretsOut,
    }).catch((e: unknown) => e);
    await again.close();
    expect((err as RedactError).code).toBe('OUTPUT_EXISTS');
    expect(existsSync(join(dir, 'other.tar'))).toBe(false);
    expect(JSON.parse(readFileSync(secretsOut, 'utf8'))).toEqual(secrets);
  });

  test('the published receipt verifies with the ordinary receipt verifier given the redaction hooks, and is refused without them', async () => {
    const j = await memoryJournal();
    const bytes = await publicationBytes(await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true }));
    const plain = await verifyReceipt(bytes);
    expect(plain.ok).toBe(false);
    expect(plain.problems.map((p) => p.code)).toEqual(['MANIFEST_INVALID']); // one problem, then stop (RECEIPT.md §7 step 5)
    expect(plain.problems[0]!.message).toMatch(/1 more problem/);
    const r = await verifyPublishedReceipt(bytes);
    expect(r.problems).toEqual([]);
    expect(r.scope).toBe('complete');
    expect(r.proves.join(' ')).toMatch(/every declared redaction/);
    expect(r.does_not_prove.join(' ')).toMatch(/anchor is the publisher's/);
    expect(r.does_not_prove.join(' ')).toMatch(/only as salted commitments/);
  });

  test('publishedReceiptHooks: one verifier call accepts ordinary and published receipts (for the CLI verify verb)', async () => {
    const j = await memoryJournal();
    const published = await publicationBytes(await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true }));
    const ordinary = await receiptBytes(j);
    for (const [bytes, isPublished] of [
      [published, true],
      [ordinary, false],
    ] as const) {
      const hooks = publishedReceiptHooks();
      const r = await verifyReceipt(bytes, hooks.options); // the hooks' finish is part of their options
      expect(r.problems).toEqual([]);
      expect(hooks.finishIfPublished(r)).toBe(r); // finishing again changes nothing
      expect('anchor' in r).toBe(isPublished);
    }
  });

  test('same salts, same key: byte-identical receipts; fresh random salts: different commitments', async () => {
    const a = await publicationBytes(
      await preparePublication(await memoryJournal(), {
        policy: SAMPLE_POLICY,
        optIn: true,
        salts: seededSalts('s'),
        sign: key.privateKey,
      }),
    );
    const b = await publicationBytes(
      await preparePublication(await memoryJournal(), {
        policy: SAMPLE_POLICY,
        optIn: true,
        salts: seededSalts('s'),
        sign: key.privateKey,
      }),
    );
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const out1 = join(dir, 'same1.tar.gz');
    const out2 = join(dir, 'same2.tar.gz');
    await publish(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true, salts: seededSalts('t'), out: out1 });
    await publish(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true, salts: seededSalts('t'), out: out2 });
    expect(readFileSync(out1).equals(readFileSync(out2))).toBe(true);
    const r1 = await preparePublication(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true });
    const r2 = await preparePublication(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true });
    const c1 = new Set(r1.redactions.map((r) => r.commitment));
    for (const r of r2.redactions) expect(c1.has(r.commitment)).toBe(false);
    const salts = new Set(r1.redactions.map((r) => Buffer.from(r.salt).toString('hex')));
    expect(salts.size).toBe(r1.redactions.length);
  });

  test('blobs: a blob redacted whole is left out; a partly redacted one is inlined; an untouched one is kept', async () => {
    const j = await memoryJournal();
    // Step 2's input (2000+ bytes, holds an api key) and result (holds a PEM) are blobs; step 3's input is an untouched blob.
    const originals = new Map<string, string>();
    for await (const l of j.lines()) originals.set(String(l.seq), l.text);
    const blobDigests = [...originals.values()].flatMap((t) =>
      [...t.matchAll(/"digest":"(sha256:[0-9a-f]{64})"/g)].map((m) => m[1]!),
    );
    expect(blobDigests.length).toBe(3);
    const policy = {
      rules: [
        { id: 'results', paths: ['/result'], seq: { from: 2, to: 2 } },
        { id: 'secrets', detectors: ['api-key'] },
      ],
    };
    const pub = await preparePublication(j, { policy, optIn: true });
    const m = pub.plan.manifest;
    const step2 = JSON.parse(pub.lines[2]!);
    expect(step2.result['$stepchain:redacted'].rule).toBe('results');
    expect(step2.input.doc['$stepchain:redacted'].text).toMatch(/key \[REDACTED:api-key\] end$/);
    const step3 = JSON.parse(pub.lines[3]!);
    expect(step3.input['$stepchain:blob']).toBeDefined();
    expect(m.blobs.map((b) => b.digest)).toEqual([step3.input['$stepchain:blob'].digest]);
    const text = archiveText(await publicationBytes(pub));
    expect(text.includes(SECRETS['private-key'])).toBe(false);
    expect(text.includes(SECRETS['api-key'])).toBe(false);
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).ok).toBe(true);
  });

  test('values no rule selects are unchanged, and envelope members (but prev_hash and step_hash) are copied', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true });
    let seq = 0;
    for await (const line of j.lines()) {
      const o = JSON.parse(line.text);
      const p = JSON.parse(pub.lines[seq]!);
      for (const k of ['v', 'seq', 'step_id', 'ts', 'model']) expect(p[k]).toEqual(o[k]);
      seq++;
    }
    const s0 = JSON.parse(pub.lines[0]!);
    expect(s0.input).toEqual({ question: 'What is the weather in Paris?' });
    expect(s0.tool_call).toEqual({ arguments: { city: 'Paris' }, name: 'get_weather' });
    const s1 = JSON.parse(pub.lines[1]!);
    expect(s1.tool_call.arguments.url).toBe('https://api.example.com/v1');
    expect(s1.meta.latency_ms).toBe(412);
    expect(s1.result.status).toBe(200);
  });

  test('a secret selected in one place but not another is a leak: publishing refuses and names the rule, not the secret', async () => {
    const steps = sampleSteps();
    steps[0]!.input = { echo: 'k-live-0123456789abcdef' }; // the tool-scoped api_key value, unselected elsewhere
    const j = await memoryJournal(steps);
    const out = join(dir, 'leak.tar');
    const err = await publish(j, { policy: SAMPLE_POLICY, optIn: true, out }).catch((e: unknown) => e);
    expect((err as RedactError).code).toBe('LEAK_DETECTED');
    expect((err as Error).message).toMatch(/tool-secrets/);
    expect((err as Error).message).toMatch(/step 0/);
    expect((err as Error).message).not.toMatch(/k-live/);
    expect(existsSync(out)).toBe(false);
  });

  test('a tool-scoped rule over a whole tool_call is not a leak because unselected calls share member names', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'http-calls', paths: ['/tool_call'], tools: ['http'] }, SAMPLE_POLICY.rules[2]!] },
      optIn: true,
    });
    expect(JSON.parse(pub.lines[1]!).tool_call['$stepchain:redacted'].rule).toBe('http-calls');
    expect(JSON.parse(pub.lines[0]!).tool_call).toEqual({ arguments: { city: 'Paris' }, name: 'get_weather' });
  });

  scale(
    'a step with 130 000 redactions (near the 16 MiB line limit) publishes and verifies: no array is spread into a call',
    async () => {
      // `redactions.push(...found)` overflowed the stack from about 130 000 values (measured); issue 15 item 2.
      const store = new MemoryStore();
      const j = await store.create('j', { journalId: 'many', createdAt: CREATED_AT });
      await j.append({ step_id: 'many-0', ts: ts(0), model: 'm', input: Array.from({ length: 130_000 }, (_, i) => i) });
      const pub = await preparePublication(j, { policy: { rules: [{ id: 'r', paths: ['/input/*'] }] }, optIn: true });
      expect(pub.redactions.length).toBe(130_000);
      const r = await verifyPublishedReceipt(await publicationBytes(pub));
      expect(r.problems).toEqual([]);
      expect(r.redactions).toBe(130_000);
    },
    120_000,
  );

  test('a bad salt source is an argument error, not a crash', async () => {
    const j = await memoryJournal();
    for (const salts of [
      () => new Uint8Array(16),
      () => {
        throw new Error('no entropy');
      },
      fixedSalts([]),
    ]) {
      const e = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true, salts: salts as never }).catch(
        (x: unknown) => x,
      );
      expect((e as RedactError).code).toBe('ARGUMENT_INVALID');
    }
  });

  test('a string value that merely names the marker is data, not a marker', async () => {
    const steps = sampleSteps();
    steps[3]!.result = '$stepchain:redacted';
    const pub = await preparePublication(await memoryJournal(steps), { policy: SAMPLE_POLICY, optIn: true });
    expect(JSON.parse(pub.lines[3]!).result).toBe('$stepchain:redacted');
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).ok).toBe(true);
  });

  test('a journal that does not verify, or already holds redaction markers, is not published', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true });
    const lines = pub.lines.map((text, seq) => ({ segment: '0000000000000000.jsonl', seq, text }));
    const last = JSON.parse(lines[lines.length - 1]!.text);
    const fake = {
      genesis: j.genesis,
      head: async () => ({ seq: last.seq, step_hash: last.step_hash }),
      lines: async function* () {
        yield* lines;
      },
      blob: (d: string) => j.blob(d),
    };
    const e1 = await preparePublication(fake, { policy: SAMPLE_POLICY, optIn: true }).catch((e: unknown) => e);
    expect((e1 as RedactError).code).toBe('SOURCE_INVALID');
    expect((e1 as Error).message).toMatch(/already holds a redaction marker/);
    const broken = {
      ...fake,
      lines: async function* () {
        yield* lines.map((l, i) => (i === 1 ? { ...l, text: l.text.replace('"gpt-4o"', '"gpt-4X"') } : l));
      },
    };
    const e2 = await preparePublication(broken, { policy: SAMPLE_POLICY, optIn: true }).catch((e: unknown) => e);
    expect((e2 as RedactError).code).toBe('SOURCE_INVALID');
    expect((e2 as Error).message).toMatch(/HASH_MISMATCH/);
  });
});

describe('the leak sweep (spec/REDACTION.md §5.5)', () => {
  const PW = 'hunter"2-correct-horse'; // holds a quote: every level of JSON escaping changes it
  const PEM = SECRETS['private-key'];
  const CARD = 4111111111111111;
  /** Step 0 carries each value where a tool-scoped path rule selects it; step 1 repeats it elsewhere, unselected. */
  const leakSteps = (elsewhere: JsonObject): StepInput[] => [
    {
      step_id: 's-0',
      ts: ts(0),
      model: 'm',
      tool_call: { name: 'vault', arguments: { password: PW, key: PEM, card: CARD } },
      result: 'stored',
    },
    {
      step_id: 's-1',
      ts: ts(1),
      model: 'm',
      tool_call: { name: 'http', arguments: { url: 'https://x.example' } },
      result: elsewhere,
    },
  ];
  const policy = {
    rules: [
      {
        id: 'vault',
        paths: ['/tool_call/arguments/password', '/tool_call/arguments/key', '/tool_call/arguments/card'],
        tools: ['vault'],
      },
    ],
  };
  const quoted = (v: unknown, times: number): string => {
    let s = JSON.stringify(v);
    for (let i = 1; i < times; i++) s = JSON.stringify(s);
    return s;
  };

  test.each([
    [
      'a password with a quote, in a JSON body a tool result quotes (escaped twice in the line)',
      { body: JSON.stringify({ password: PW }) },
    ],
    [
      'the same, one document deeper (escaped three times)',
      { log: quoted({ body: JSON.stringify({ password: PW }) }, 1) },
    ],
    ['the same, at the deepest level searched (escaped five times)', { log: quoted({ password: PW }, 4) }],
    ['a PEM key that reappears with its newlines written as \\n', { config: `key = "${PEM.replaceAll('\n', '\\n')}"` }],
    ['a card number redacted from a number field, in text', { text: `charged card ${CARD} for 12 EUR` }],
    ['a card number redacted from a number field, as a string member', { card: String(CARD) }],
    ['the password as it is, in a longer text', { text: `the password is ${PW}, keep it` }],
  ])('%s: LEAK_DETECTED, naming the rule and the step but not the value', async (_what, elsewhere) => {
    const err = await preparePublication(await memoryJournal(leakSteps(elsewhere as JsonObject)), {
      policy,
      optIn: true,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedactError);
    expect((err as RedactError).code).toBe('LEAK_DETECTED');
    expect((err as Error).message).toMatch(/rule "vault".*step 1/);
    for (const s of [PW, JSON.stringify(PW).slice(1, -1), String(CARD), 'MIIEvQ'])
      expect((err as Error).message).not.toContain(s);
  });

  test('an unselected copy of a secret in a blob is found there (the sweep reads blobs too)', async () => {
    const steps = leakSteps({ ok: true });
    steps.push({ step_id: 's-2', ts: ts(2), model: 'm', result: { dump: 'x'.repeat(1500) + ` ${PW} ` } }); // over the threshold: a blob
    const j = await memoryJournal(steps);
    let blobs = 0;
    for await (const l of j.lines()) if (l.text.includes('$stepchain:blob')) blobs++;
    expect(blobs).toBe(1);
    const err = await preparePublication(j, { policy, optIn: true }).catch((e: unknown) => e);
    expect((err as RedactError).code).toBe('LEAK_DETECTED');
    expect((err as Error).message).toMatch(/appears in blob sha256:[0-9a-f]{64}/);
  });

  test('no false alarm: the same values selected everywhere they occur, and short values, publish', async () => {
    const steps = leakSteps({ body: JSON.stringify({ password: 'other' }), n: 4821, flag: true });
    const everywhere = {
      rules: [
        {
          id: 'vault',
          paths: [
            '/tool_call/arguments/password',
            '/tool_call/arguments/key',
            '/tool_call/arguments/card',
            '/result/pin',
          ],
        },
      ],
    };
    steps[1]!.result = { pin: 4821, note: 'nothing secret here' };
    steps[0]!.tool_call = { name: 'vault', arguments: { password: PW, key: PEM, card: CARD, pin: 4821 } };
    const pub = await preparePublication(await memoryJournal(steps), { policy: everywhere, optIn: true });
    expect(pub.redactions.length).toBe(4);
    expect((await verifyPublishedReceipt(await publicationBytes(pub))).ok).toBe(true);
  });

  test('escapedForms: the value, then each JSON escaping, up to MAX_ESCAPE_DEPTH; one form when nothing needs escaping', () => {
    expect(escapedForms('plain-text-123')).toEqual(['plain-text-123']);
    const forms = escapedForms('a"b');
    expect(forms).toEqual(['a"b', 'a\\"b', 'a\\\\\\"b', ...forms.slice(3)]);
    expect(forms.length).toBe(MAX_ESCAPE_DEPTH + 1);
    forms.slice(1).forEach((f, i) => expect(JSON.parse(`"${f}"`)).toBe(forms[i]));
  });
});

describe('envelope members are never redacted (spec/REDACTION.md §5.6)', () => {
  test.each([
    [
      'a token-shaped step_id',
      (s: StepInput[]) => {
        s[1]!.step_id = SECRETS['api-key'];
      },
      'api-key',
      /step 1's step_id/,
      { seq: 1, field: 'step_id' },
    ],
    [
      'a JWT as step_id',
      (s: StepInput[]) => {
        s[2]!.step_id = SECRETS.jwt;
      },
      'jwt',
      /step 2's step_id/,
      { seq: 2, field: 'step_id' },
    ],
  ])('%s: ENVELOPE_SECRET naming the member, not the secret', async (_what, plant, detector, where, location) => {
    const steps = sampleSteps();
    plant(steps);
    const err = await preparePublication(await memoryJournal(steps), { policy: SAMPLE_POLICY, optIn: true }).catch(
      (e: unknown) => e,
    );
    expect((err as RedactError).code).toBe('ENVELOPE_SECRET');
    expect((err as Error).message).toMatch(where);
    expect((err as Error).message).toContain(detector);
    expect((err as RedactError).location).toMatchObject(location);
    expect((err as Error).message).not.toContain(SECRETS['api-key']);
    expect((err as Error).message).not.toContain(SECRETS.jwt);
  });

  test('a journal id an AWS key detector matches: ENVELOPE_SECRET naming the genesis member', async () => {
    const store = new MemoryStore();
    const j = await store.create('j', { journalId: SECRETS['aws-access-key'], createdAt: CREATED_AT });
    await j.append(sampleSteps()[0]!);
    const err = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true }).catch((e: unknown) => e);
    expect((err as RedactError).code).toBe('ENVELOPE_SECRET');
    expect((err as Error).message).toMatch(
      /the genesis\/journal_id matches the aws-access-key detector \(rule "secrets"\)/,
    );
    expect((err as Error).message).not.toContain(SECRETS['aws-access-key']);
  });

  test('only the detectors the policy names run over the envelope: a path-only policy publishes a token-shaped step_id', async () => {
    const steps = sampleSteps();
    steps[1]!.step_id = SECRETS['api-key'];
    const pub = await preparePublication(await memoryJournal(steps), {
      policy: { rules: [{ id: 'prompts', paths: ['/prompt'] }] },
      optIn: true,
    });
    expect(JSON.parse(pub.lines[1]!).step_id).toBe(SECRETS['api-key']);
  });
});

describe('disclosure', () => {
  test('a proof made from the secrets file verifies; forged ones do not', async () => {
    const j = await memoryJournal();
    const out = join(dir, 'disclose.tar.gz');
    const secretsOut = join(dir, 'disclose-secrets.json');
    await publish(j, { policy: SAMPLE_POLICY, optIn: true, out, secretsOut, sign: key.privateKey });
    const proofOut = join(dir, 'proof.json');
    const { proof } = await disclose(out, {
      secrets: secretsOut,
      seq: 1,
      path: '/tool_call/arguments/api_key',
      out: proofOut,
    });
    expect(proof.value).toBe('k-live-0123456789abcdef');
    expect(Object.keys(JSON.parse(readFileSync(proofOut, 'utf8'))).sort()).toEqual([
      'commitment',
      'format',
      'manifest_digest',
      'path',
      'rule',
      'salt',
      'seq',
      'value',
    ]);
    const ok = await verifyDisclosureFiles(out, proofOut, { publicKey: key.publicKey });
    expect(ok.problems).toEqual([]);
    expect(ok.ok).toBe(true);
    expect('value' in ok && ok.value).toBe('k-live-0123456789abcdef');

    const bytes = new Uint8Array(readFileSync(out));
    const forged: Array<[string, object, string]> = [
      ['another value', { ...proof, value: 'k-live-guess' }, 'COMMITMENT_MISMATCH'],
      ['another salt', { ...proof, salt: 'ab'.repeat(32) }, 'COMMITMENT_MISMATCH'],
      ['another location', { ...proof, path: '/prompt' }, 'MARKER_MISMATCH'],
      ['no marker there', { ...proof, path: '/tool_call/arguments/url' }, 'NOT_REDACTED'],
      ['another receipt', { ...proof, manifest_digest: 'sha256:' + '1'.repeat(64) }, 'MANIFEST_MISMATCH'],
      ['not a proof', { ...proof, salt: 'short' }, 'PROOF_INVALID'],
    ];
    for (const [what, p, code] of forged) {
      const r = await verifyDisclosure(bytes, p);
      expect(r.ok, what).toBe(false);
      expect(r.problems[0]!.code, what).toBe(code);
      expect(r.value).toBeNull();
    }
    // A substring redaction: the value is the whole original string; its text must fit.
    const secrets = JSON.parse(readFileSync(secretsOut, 'utf8'));
    const sub = discloseFromSecrets(secrets, 1, '/input/note');
    expect(sub.value).toBe(`contact ${SECRETS.email} about it`);
    expect((await verifyDisclosure(bytes, sub)).ok).toBe(true);
    // A tampered receipt fails the proof even if the proof is right.
    const other = join(dir, 'other-disclose.tar');
    await publish(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true, out: other });
    const wrong = await verifyDisclosure(new Uint8Array(readFileSync(other)), proof);
    expect(wrong.problems[0]!.code).toBe('MANIFEST_MISMATCH');
    // Disclosing a location that was not redacted is an error that lists what was.
    const e = await disclose(out, { secrets: secretsOut, seq: 1, path: '/tool_call/name' }).catch((x: unknown) => x);
    expect((e as RedactError).code).toBe('NOT_REDACTED');
    expect((e as Error).message).toMatch(/\/tool_call\/arguments\/api_key/);
    // The proof file is never overwritten.
    writeFileSync(join(dir, 'taken.json'), 'x');
    const e2 = await disclose(out, {
      secrets: secretsOut,
      seq: 1,
      path: '/prompt',
      out: join(dir, 'taken.json'),
    }).catch((x: unknown) => x);
    expect((e2 as RedactError).code).toBe('OUTPUT_EXISTS');
  });
});

describe('whole-step disclosure', () => {
  test('re-derives every original step hash of the anchor (blobs, substrings, meta); forgeries fail', async () => {
    const j = await memoryJournal();
    const out = join(dir, 'steps.tar');
    const secretsOut = join(dir, 'steps-secrets.json');
    await publish(j, { policy: SAMPLE_POLICY, optIn: true, out, secretsOut });
    const secrets = JSON.parse(readFileSync(secretsOut, 'utf8')) as SecretsFile;
    expect(secrets.unblobbed).toEqual([{ fields: ['input', 'result'], seq: 2 }]);
    const bytes = new Uint8Array(readFileSync(out));
    for await (const rec of j.read()) {
      const proof = discloseStepFromSecrets(secrets, rec.seq);
      const r = await verifyStepDisclosure(bytes, proof);
      expect(r.problems, `step ${rec.seq}`).toEqual([]);
      const original = JSON.parse(
        await (async () => {
          for await (const l of j.lines({ from: rec.seq, to: rec.seq })) return l.text;
          return '';
        })(),
      );
      expect(r.record).toEqual(original);
    }
    const p1 = discloseStepFromSecrets(secrets, 1);
    const forged: Array<[string, object, string]> = [
      [
        'a value changed',
        { ...p1, values: p1.values.map((v, i) => (i === 0 ? { ...v, value: 'x' } : v)) },
        'COMMITMENT_MISMATCH',
      ],
      ['a value left out', { ...p1, values: p1.values.slice(1) }, 'INCOMPLETE_DISCLOSURE'],
      ['a blob field claimed that was not one', { ...p1, blob_fields: ['model'] }, 'ANCHOR_MISMATCH'],
      ['another receipt', { ...p1, manifest_digest: 'sha256:' + '2'.repeat(64) }, 'MANIFEST_MISMATCH'],
      [
        'blob fields unsorted',
        { ...discloseStepFromSecrets(secrets, 2), blob_fields: ['result', 'input'] },
        'PROOF_INVALID',
      ],
    ];
    for (const [what, p, code] of forged) {
      const r = await verifyStepDisclosure(bytes, p);
      expect(r.ok, what).toBe(false);
      expect(r.problems[0]!.code, what).toBe(code);
      expect(r.record).toBeNull();
    }
    const viaFile = await discloseStep(out, { secrets: secretsOut, seq: 2, out: join(dir, 'step2.json') });
    expect(viaFile.report.ok).toBe(true);
    const checked = await verifyDisclosureFiles(out, join(dir, 'step2.json'));
    expect(checked.ok).toBe(true);
    expect('record' in checked).toBe(true);
  });
});
