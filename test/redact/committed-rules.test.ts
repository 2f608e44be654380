/**
 * Publishing a v2 journal in public form (src/redact/commit-publish.ts, spec/REDACTION.md §12.2), rules the
 * other suites do not reach: only the original journal is published (a public copy, an empty journal are
 * SOURCE_INVALID), and the leak sweep searches the salts that stay private — the record salt and the salts
 * of withheld and viewed slots — so a value that happens to hold one is refused.
 */
import { describe, expect, test } from 'vitest';
import { slotSalt } from '../../src/record/commitments.js';
import { STEP_V2 } from '../../src/record/v2.js';
import { RedactError, compilePolicy, planCommittedPublication, seededSalts } from '../../src/redact/index.js';
import type { ChainSource } from '../../src/chain/source.js';
import { MemoryStore } from '../../src/store/index.js';
import { CREATED_AT, SAMPLE_POLICY, memoryJournal, sampleSteps, ts } from './helpers.js';

const POLICY = compilePolicy(SAMPLE_POLICY);
const refusal = async (p: Promise<unknown>): Promise<RedactError> => {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(RedactError);
  return e as RedactError;
};

describe('only the original v2 journal is published (§12.2)', () => {
  test('its public copy is SOURCE_INVALID: its records carry no record salt', async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, { policy: POLICY, salts: seededSalts('c') });
    const copy: ChainSource = {
      genesis: j.genesis, head: () => j.head(), blob: (d) => j.blob(d),
      lines: async function* () { for (const [seq, text] of pub.lines.entries()) yield { segment: '0000000000000000.jsonl', seq, text }; },
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
      genesis: j.genesis, head: () => j.head(), blob: (d) => j.blob(d),
      lines: async function* (r) { for await (const l of j.lines(r)) yield l.seq === 1 ? { ...l, text: l.text.replace('{', '{ ') } : l; },
    };
    expect((await refusal(planCommittedPublication(spaced, { policy: POLICY }))).code).toBe('SOURCE_INVALID');
  });
});

describe('the salts that stay private are searched (§12.2: "with the record salts and the salts of withheld and viewed slots")', () => {
  const SALT = '0123456789abcdef0123456789abcdef';
  const journal = async (echo: (salts: { record: string; prompt: string; input: string; result: string }) => string) => {
    const j = await new MemoryStore().create('s', { journalId: 's', createdAt: CREATED_AT, format: 'stepchain/v2' });
    const salts = { record: SALT, prompt: slotSalt(SALT, 'prompt', STEP_V2.redactable), input: slotSalt(SALT, 'input', STEP_V2.redactable), result: slotSalt(SALT, 'result', STEP_V2.redactable) };
    await j.append({ step_id: 's-0', ts: ts(0), model: 'm', prompt: 'secret prompt', input: { mail: 'write to a@b.co' }, result: 'ok', salt: SALT } as never);
    await j.append({ step_id: 's-1', ts: ts(1), model: 'm', prompt: 'p', input: 'i', result: echo(salts) });
    return j;
  };
  const policy = compilePolicy({ rules: [{ id: 'prompts', paths: ['/prompt'], seq: { to: 0 } }, { id: 'mail', detectors: ['email'] }] });

  test.each([
    ['the record salt', (s: { record: string }) => `salt ${s.record}`, /rule "record salt"/],
    ['a withheld slot\'s salt', (s: { prompt: string }) => `salt ${s.prompt}`, /rule "prompts salt"/],
    ['a viewed slot\'s salt', (s: { input: string }) => `salt ${s.input}`, /rule "view salt"/],
  ])('%s in a disclosed value: LEAK_DETECTED', async (_what, echo, rule) => {
    const e = await refusal(planCommittedPublication(await journal(echo as never), { policy }));
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(rule);
    expect(e.message).toMatch(/appears in step 1/);
  });

  test('a disclosed slot\'s salt is public anyway: no refusal', async () => {
    const pub = await planCommittedPublication(await journal((s) => `salt ${s.result}`), { policy });
    expect(JSON.parse(pub.lines[0]!).salts.result).toBe(slotSalt(SALT, 'result', STEP_V2.redactable));
    expect(pub.withheld.map((w) => [w.seq, w.slot, w.rule])).toEqual([[0, 'prompt', 'prompts']]);
  });
});

describe('the leak sweep searches the disclosed blobs and the manifest (§12.2, §5.5)', () => {
  const SECRET = 'opal-harbor-7731-lantern';
  const steps = () => [
    { step_id: 'b-0', ts: ts(0), model: 'm', prompt: SECRET, input: 'i', tool_call: null, result: 'ok' },
    // Step 1's input is stored as a blob (over the 1024-byte threshold) and no rule selects it.
    { step_id: 'b-1', ts: ts(1), model: 'm', prompt: 'p', input: { doc: `${'x'.repeat(1500)} ${SECRET} end` }, tool_call: null, result: 'ok' },
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
