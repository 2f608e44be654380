/**
 * Publishing a v2 journal in public form (src/redact/commit-publish.ts, spec/REDACTION.md §12.2), rules the
 * other suites do not reach: only the original journal is published (a public copy, an empty journal are
 * SOURCE_INVALID), and the leak sweep searches the salts that stay private — the record salt and the salts
 * of withheld and viewed slots — so a value that happens to hold one is refused.
 */
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { keyPairFromSeed } from '../../src/receipt/index.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { slotSalt } from '../../src/record/commitments.js';
import { STEP_V2 } from '../../src/record/v2.js';
import {
  RedactError,
  compilePolicy,
  planCommittedPublication,
  seededSalts,
  verifyPublishedReceipt,
} from '../../src/redact/index.js';
import type { ChainSource } from '../../src/chain/source.js';
import { MemoryStore } from '../../src/store/index.js';
import { CREATED_AT, SAMPLE_POLICY, SECRETS, memoryJournal, sampleSteps, ts } from './helpers.js';

const POLICY = compilePolicy(SAMPLE_POLICY);
const refusal = async (p: Promise<unknown>): Promise<RedactError> => {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(RedactError);
  return e as RedactError;
};

describe('REDACTION §12.2: only the original v2 journal is published', () => {
  test('its public copy is SOURCE_INVALID: its records carry no record salt', async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, { policy: POLICY, salts: seededSalts('c') });
    const copy: ChainSource = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d) => j.blob(d),
      lines: async function* () {
        for (const [seq, text] of pub.lines.entries()) yield { segment: '0000000000000000.jsonl', seq, text };
      },
    };
    const e = await refusal(planCommittedPublication(copy, { policy: POLICY }));
    expect(e.code).toBe('SOURCE_INVALID');
    expect(e.message).toMatch(/step 0 is not a stored stepchain\/v2 record with its salt/);
  });

  test('an empty journal: SOURCE_INVALID', async () => {
    const j = await new MemoryStore().create('e', { journalId: 'e', createdAt: CREATED_AT, format: 'stepchain/v2' });
    expect((await refusal(planCommittedPublication(j, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
  });

  test('a journal whose line is not canonical: SOURCE_INVALID', async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const spaced: ChainSource = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d) => j.blob(d),
      lines: async function* (r) {
        for await (const l of j.lines(r)) yield l.seq === 1 ? { ...l, text: l.text.replace('{', '{ ') } : l;
      },
    };
    expect((await refusal(planCommittedPublication(spaced, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
  });
});

describe('REDACTION §12.2: the salts that stay private are searched ("with the record salts and the salts of withheld and viewed slots")', () => {
  const SALT = '0123456789abcdef0123456789abcdef';
  const journal = async (
    echo: (salts: { record: string; prompt: string; input: string; result: string }) => string,
  ) => {
    const j = await new MemoryStore().create('s', { journalId: 's', createdAt: CREATED_AT, format: 'stepchain/v2' });
    const salts = {
      record: SALT,
      prompt: slotSalt(SALT, 'prompt', STEP_V2.redactable),
      input: slotSalt(SALT, 'input', STEP_V2.redactable),
      result: slotSalt(SALT, 'result', STEP_V2.redactable),
    };
    await j.append({
      step_id: 's-0',
      ts: ts(0),
      model: 'm',
      prompt: 'secret prompt',
      input: { mail: 'write to a@b.co' },
      result: 'ok',
      salt: SALT,
    } as never);
    await j.append({ step_id: 's-1', ts: ts(1), model: 'm', prompt: 'p', input: 'i', result: echo(salts) });
    return j;
  };
  const policy = compilePolicy({
    rules: [
      { id: 'prompts', paths: ['/prompt'], seq: { to: 0 } },
      { id: 'mail', detectors: ['email'] },
    ],
  });

  test.each([
    ['the record salt', (s: { record: string }) => `salt ${s.record}`, /rule "record salt"/],
    ["a withheld slot's salt", (s: { prompt: string }) => `salt ${s.prompt}`, /rule "prompts salt"/],
    ["a viewed slot's salt", (s: { input: string }) => `salt ${s.input}`, /rule "view salt"/],
  ])('%s in a disclosed value: LEAK_DETECTED', async (_what, echo, rule) => {
    const e = await refusal(planCommittedPublication(await journal(echo as never), { policy }));
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(rule);
    expect(e.message).toMatch(/appears in step 1/);
  });

  test("a disclosed slot's salt is public anyway: no refusal", async () => {
    const pub = await planCommittedPublication(await journal((s) => `salt ${s.result}`), { policy });
    expect(JSON.parse(pub.lines[0]!).salts.result).toBe(slotSalt(SALT, 'result', STEP_V2.redactable));
    expect(pub.withheld.map((w) => [w.seq, w.slot, w.rule])).toEqual([[0, 'prompt', 'prompts']]);
  });
});

describe('REDACTION §12.2, §5.5: the leak sweep searches the disclosed blobs and the manifest', () => {
  const SECRET = 'opal-harbor-7731-lantern';
  const steps = () => [
    { step_id: 'b-0', ts: ts(0), model: 'm', prompt: SECRET, input: 'i', tool_call: null, result: 'ok' },
    // Step 1's input is stored as a blob (over the 1024-byte threshold) and no rule selects it.
    {
      step_id: 'b-1',
      ts: ts(1),
      model: 'm',
      prompt: 'p',
      input: { doc: `${'x'.repeat(1500)} ${SECRET} end` },
      tool_call: null,
      result: 'ok',
    },
  ];
  const policy = compilePolicy({ rules: [{ id: 'first-prompt', paths: ['/prompt'], seq: { to: 0 } }] });

  test('a withheld value copied into a disclosed blob: LEAK_DETECTED naming the blob', async () => {
    const j = await memoryJournal(steps(), 1024, 'stepchain/v2');
    const e = await refusal(planCommittedPublication(j, { policy, salts: seededSalts('leak-blob') }));
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(/rule "first-prompt"/);
    expect(e.message).toMatch(/blob sha256:[0-9a-f]{64}/);
  });
});

describe('REDACTION §12.2: the publisher checks the whole journal before it publishes ("only a journal that verifies")', () => {
  test('records that each hash right but do not link (step 1 of another run with the same genesis): SOURCE_INVALID', async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const steps = sampleSteps();
    steps[0]!.prompt = 'another first prompt';
    const other = await memoryJournal(steps, 1024, 'stepchain/v2');
    expect(other.genesis).toEqual(j.genesis);
    const otherLines = new Map<number, { segment: string; seq: number; text: string }>();
    for await (const l of other.lines()) otherLines.set(l.seq, l);
    // Step 0 is this run's, steps 1–3 the other run's: step 1's prev_hash names the other step 0.
    const spliced: ChainSource = {
      genesis: j.genesis,
      head: () => other.head(),
      blob: async (d) => (await j.blob(d)) ?? other.blob(d),
      lines: async function* (r) {
        for await (const l of j.lines(r)) yield l.seq === 0 ? l : otherLines.get(l.seq)!;
      },
    };
    const e = await refusal(planCommittedPublication(spliced, { policy: POLICY, salts: seededSalts('links') }));
    expect(e.code).toBe('SOURCE_INVALID');
    expect(e.message).toMatch(/does not verify/);
    // Each line alone is a good record: the same source with the other run's step 0 publishes.
    const whole: ChainSource = {
      ...spliced,
      lines: async function* () {
        yield* otherLines.values();
      },
    };
    expect((await planCommittedPublication(whole, { policy: POLICY, salts: seededSalts('links') })).lines).toHaveLength(
      4,
    );
  });
});

describe('REDACTION §5.6: envelope members of a v2 step', () => {
  test('a detector match in a step_id: ENVELOPE_SECRET at that step and member, naming neither the value', async () => {
    const steps = sampleSteps();
    steps[1]!.step_id = SECRETS['aws-access-key'];
    const e = await refusal(
      planCommittedPublication(await memoryJournal(steps, 1024, 'stepchain/v2'), { policy: POLICY }),
    );
    expect(e.code).toBe('ENVELOPE_SECRET');
    expect(e.location).toEqual({ seq: 1, field: 'step_id' });
    expect(e.message).not.toContain(SECRETS['aws-access-key']);
  });
});

describe('REDACTION §12.2 step 2: an absent slot is withheld by a rule without detectors whose pattern ends at it', () => {
  // Step 0 has no meta; a rule that applies to it decides whether its meta slot is withheld.
  const metaOf = async (rules: unknown[]) => {
    const j = await memoryJournal(
      [{ step_id: 'a-0', ts: ts(0), model: 'm', prompt: 'p', input: 'write to a@b.co', result: 'ok' }],
      1024,
      'stepchain/v2',
    );
    const pub = await planCommittedPublication(j, { policy: compilePolicy({ rules }), salts: seededSalts('absent') });
    const line = JSON.parse(pub.lines[0]!) as { meta?: unknown; salts: Record<string, string> };
    return { meta: line.meta, salted: 'meta' in line.salts, withheld: pub.withheld.map((w) => [w.slot, w.rule]) };
  };

  test('a path rule ending at /meta: withheld with that rule, the first such rule when two do', async () => {
    expect(
      await metaOf([
        { id: 'm1', paths: ['/meta'] },
        { id: 'm2', paths: ['/meta', '/prompt'] },
      ]),
    ).toEqual({
      meta: { '$stepchain:redacted': { commitment: expect.stringMatching(/^sha256:/), rule: 'm1' } },
      salted: false,
      withheld: [
        ['meta', 'm1'],
        ['prompt', 'm2'],
      ],
    });
  });

  test.each([
    ['a pattern that ends below the slot', [{ id: 'deep', paths: ['/meta/operator'] }]],
    ['a pattern that ends at another slot', [{ id: 'prompts', paths: ['/prompt'] }]],
    [
      'a rule with detectors (it finds nothing in an absent value)',
      [{ id: 'mail', detectors: ['email'], paths: ['/meta'] }],
    ],
    ['a rule that does not apply to the step', [{ id: 'later', paths: ['/meta'], seq: { from: 1 } }]],
  ])('%s: the absent slot is disclosed (its salt published)', async (_what, rules) => {
    const got = await metaOf(rules);
    expect([got.meta, got.salted]).toEqual([undefined, true]);
    expect(got.withheld.filter(([slot]) => slot === 'meta')).toEqual([]);
  });
});

describe('REDACTION §12.2 step 3, §5.4, FORMAT §4.2: a public line is at most 16 MiB (a redacted view of a blob is written inline: LIMIT_EXCEEDED)', () => {
  test('a view of exactly 16 MiB with its newline is published; one byte more is LIMIT_EXCEEDED at its seq', async () => {
    const policy = compilePolicy({ rules: [{ id: 'mail', detectors: ['email'] }] });
    // The input is a blob in the journal (over the threshold); the e-mail inside it makes the slot a view.
    const publishPad = async (pad: number) =>
      planCommittedPublication(
        await memoryJournal(
          [{ step_id: 'v-0', ts: ts(0), model: 'm', input: { doc: 'x'.repeat(pad), mail: 'a@b.co' }, result: 'ok' }],
          1024,
          'stepchain/v2',
        ),
        { policy, salts: seededSalts('limit') },
      );
    const small = (await publishPad(2000)).lines[0]!;
    const pad = 2000 + (16 * 1024 * 1024 - 1 - Buffer.byteLength(small));
    const at = await publishPad(pad);
    expect(Buffer.byteLength(at.lines[0]!) + 1).toBe(16 * 1024 * 1024);
    const e = await refusal(publishPad(pad + 1));
    expect([e.code, e.location]).toEqual(['LIMIT_EXCEEDED', { seq: 0 }]);
    expect(e.hint).toMatch(/withholds the whole field/);
  }, 60_000);
});

describe('REDACTION §12.2, §6.2: what a publication returns, and the snapshot it publishes (the head read first)', () => {
  test('a journal that grows while it is published is published up to the head read at the start; the head returned is that head', async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const first = (await j.get(1))!;
    const growing: ChainSource = {
      genesis: j.genesis,
      head: async () => ({ seq: 1, step_hash: first.step_hash as string }),
      lines: (r) => j.lines(r),
      blob: (d) => j.blob(d),
    };
    const pub = await planCommittedPublication(growing, { policy: POLICY, salts: seededSalts('snapshot') });
    expect(pub.lines).toHaveLength(2);
    expect(pub.head).toEqual({ seq: 1, step_hash: first.step_hash });
  });

  test('the values redacted inside a view are returned with their seq, path and rule; whole slots are not among them', async () => {
    const policy = compilePolicy({
      rules: [
        { id: 'prompts', paths: ['/prompt'] },
        { id: 'mail', detectors: ['email'] },
      ],
    });
    const j = await memoryJournal(
      [{ step_id: 'r-0', ts: ts(0), model: 'm', prompt: 'p', input: { note: 'write to a@b.co' }, result: 'ok' }],
      1024,
      'stepchain/v2',
    );
    const pub = await planCommittedPublication(j, { policy, salts: seededSalts('views') });
    expect(pub.redactions.map((r) => [r.seq, r.path, r.rule, r.value])).toEqual([
      [0, '/input/note', 'mail', 'write to a@b.co'],
    ]);
    expect(pub.withheld.map((w) => [w.seq, w.slot, w.rule])).toEqual([[0, 'prompt', 'prompts']]);
    expect(pub.declarations).toEqual([
      { path: '/input/note', rule: 'mail', seq: 0 },
      { path: '/prompt', rule: 'prompts', seq: 0 },
    ]);
  });

  test('a slot a detector rule redacts whole (a string that is all e-mail) is withheld with that rule, and the public form still hashes', async () => {
    const policy = compilePolicy({ rules: [{ id: 'mail', detectors: ['email'] }] });
    const j = await memoryJournal(
      [{ step_id: 'w-0', ts: ts(0), model: 'm', prompt: 'a@b.co', input: 'i', result: 'ok' }],
      1024,
      'stepchain/v2',
    );
    const pub = await planCommittedPublication(j, { policy, salts: seededSalts('whole') });
    expect(pub.withheld.map((w) => [w.slot, w.rule])).toEqual([['prompt', 'mail']]);
    expect(JSON.parse(pub.lines[0]!).prompt).toEqual({
      '$stepchain:redacted': { commitment: pub.withheld[0]!.digest, rule: 'mail' },
    });
  });

  test('signed: the receipt is signed with the key given; an exporter is written into the manifest', async () => {
    const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i + 3));
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, {
      policy: POLICY,
      salts: seededSalts('signed'),
      sign: key.privateKey,
      exporter: 'exporter 1.0',
    });
    expect(pub.plan.manifest.exporter).toBe('exporter 1.0');
    const parts: Uint8Array[] = [];
    for await (const chunk of writeReceipt(pub.plan)) parts.push(Uint8Array.from(chunk));
    const report = await verifyPublishedReceipt(concatBytes(parts), { expectHead: (await j.head())!.step_hash });
    expect([report.ok, report.signed_by]).toEqual([true, expect.any(String)]);
  });

  test('the manifest is searched too: a withheld value in the exporter string is LEAK_DETECTED', async () => {
    const policy = compilePolicy({ rules: [{ id: 'first-prompt', paths: ['/prompt'], seq: { to: 0 } }] });
    const j = await memoryJournal(
      [{ step_id: 'x-0', ts: ts(0), model: 'm', prompt: 'quartz-meridian-5521', input: 'i', result: 'ok' }],
      1024,
      'stepchain/v2',
    );
    const e = await refusal(planCommittedPublication(j, { policy, exporter: 'tool quartz-meridian-5521' }));
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(/the manifest/);
  });
});

describe('REDACTION §12.2, §9: a line that is not a JSON object is SOURCE_INVALID, not a thrown SyntaxError or TypeError', () => {
  test.each([
    ['not JSON', 'not json'],
    ['JSON null', 'null'],
    ['a JSON array', '[1]'],
  ])('%s', async (_what, text) => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const broken: ChainSource = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d) => j.blob(d),
      lines: async function* (r) {
        for await (const l of j.lines(r)) yield l.seq === 1 ? { ...l, text } : l;
      },
    };
    expect((await refusal(planCommittedPublication(broken, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
  });
});

test('a stored slot value that only looks like a redaction marker ({"$stepchain:redacted": null}) is SOURCE_INVALID, not a thrown TypeError', async () => {
  const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
  const forged: ChainSource = {
    genesis: j.genesis,
    head: () => j.head(),
    blob: (d) => j.blob(d),
    lines: async function* (r) {
      for await (const l of j.lines(r)) {
        if (l.seq !== 1) yield l;
        else
          yield {
            ...l,
            text: canonicalJson(
              { ...JSON.parse(l.text), input: { '$stepchain:redacted': null } },
              { refuseReserved: false },
            ),
          };
      }
    },
  };
  expect((await refusal(planCommittedPublication(forged, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
});

test.each([['ts'], ['input']])(
  'a stored line without its required member %s is SOURCE_INVALID, not a thrown CanonicalError',
  async (member) => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const cut: ChainSource = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d) => j.blob(d),
      lines: async function* (r) {
        for await (const l of j.lines(r)) {
          const record = JSON.parse(l.text) as Record<string, unknown>;
          if (l.seq === 1) delete record[member];
          yield { ...l, text: canonicalJson(record, { refuseReserved: false }) };
        }
      },
    };
    expect((await refusal(planCommittedPublication(cut, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
  },
);
