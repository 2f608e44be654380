/**
 * The publisher's core (src/redact/publish.ts, spec/REDACTION.md §5.3, §5.6): the salt source checked at
 * the boundary, the envelope check's naming (the first rule naming the detector; a nested genesis member's
 * pointer), the refusal's hint, and the snapshot a publication takes (the journal up to the head it read
 * first, even while it grows).
 */
import { describe, expect, test } from 'vitest';
import { RedactError, compilePolicy, planCommittedPublication, preparePublication } from '../../src/redact/index.js';
import type { ChainSource } from '../../src/chain/source.js';
import { MemoryStore } from '../../src/store/index.js';
import { CREATED_AT, SAMPLE_POLICY, SECRETS, memoryJournal, sampleSteps } from './helpers.js';

const refusal = async (p: Promise<unknown>): Promise<RedactError> => {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(RedactError);
  return e as RedactError;
};

describe('the salt source (§5.3)', () => {
  test.each([
    ['a string', 'seed'],
    ['an array of salts', [new Uint8Array(32)]],
    ['a number', 32],
  ])('%s instead of a function: ARGUMENT_INVALID before anything is read', async (_what, salts) => {
    let read = 0;
    const j = await memoryJournal();
    const counted: ChainSource = {
      genesis: j.genesis,
      head: () => (read++, j.head()),
      lines: (r) => j.lines(r),
      blob: (d) => j.blob(d),
    };
    const e = await refusal(preparePublication(counted, { policy: SAMPLE_POLICY, optIn: true, salts: salts as never }));
    expect(e.code).toBe('ARGUMENT_INVALID');
    expect(read).toBe(0);
  });

  test("a source that throws: ARGUMENT_INVALID carrying the source's error as its cause", async () => {
    const boom = new Error('no entropy');
    const e = await refusal(
      preparePublication(await memoryJournal(), {
        policy: SAMPLE_POLICY,
        optIn: true,
        salts: () => {
          throw boom;
        },
      }),
    );
    expect(e.code).toBe('ARGUMENT_INVALID');
    expect(e.cause).toBe(boom);
  });
});

describe('envelope members (§5.6)', () => {
  test('the error names the first rule of the policy that lists the detector', async () => {
    const steps = sampleSteps();
    steps[1]!.step_id = SECRETS['aws-access-key'];
    const policy = {
      rules: [
        { id: 'first-aws', detectors: ['aws-access-key'], paths: ['/input'] },
        { id: 'all', detectors: ['aws-access-key', 'email'] },
      ],
    };
    const e = await refusal(preparePublication(await memoryJournal(steps), { policy, optIn: true }));
    expect(e.code).toBe('ENVELOPE_SECRET');
    expect(e.message).toMatch(/matches the aws-access-key detector \(rule "first-aws"\)/);
    expect(e.hint).toMatch(/envelope members/);
  });

  test('a nested genesis member (a v2 run label) is named by its pointer', async () => {
    const j = await new MemoryStore().create('r', {
      journalId: 'run-j',
      createdAt: CREATED_AT,
      run: { agent: 'a', labels: { env: 'prod', key: `id=${SECRETS['aws-access-key']}` } },
    });
    await j.append({ step_id: 's-0', ts: CREATED_AT, model: 'm', input: 'x' });
    const e = await refusal(planCommittedPublication(j, { policy: compilePolicy(SAMPLE_POLICY) }));
    expect(e.code).toBe('ENVELOPE_SECRET');
    expect(e.location).toMatchObject({ path: '/run/labels/key' });
    expect(e.message).toMatch(/the genesis\/run\/labels\/key matches the aws-access-key detector/);
  });

  test("a step's member has no pointer: the field names it", async () => {
    const steps = sampleSteps();
    steps[2]!.step_id = SECRETS.jwt;
    const e = await refusal(preparePublication(await memoryJournal(steps), { policy: SAMPLE_POLICY, optIn: true }));
    expect(e.location).toEqual({ seq: 2, field: 'step_id' });
  });
});

describe("the leak sweep's refusal (§5.5)", () => {
  test('says what to do', async () => {
    const steps = sampleSteps();
    steps[0]!.input = { echo: 'k-live-0123456789abcdef' };
    const e = await refusal(preparePublication(await memoryJournal(steps), { policy: SAMPLE_POLICY, optIn: true }));
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.hint).toMatch(/widen the rule/);
  });
});

describe('the snapshot (§6.2: length is the head read first)', () => {
  test('a journal that grows while it is published is published up to the head read at the start', async () => {
    const j = await memoryJournal();
    const head = await j.head();
    // The source answers the head of step 1 and then serves every line a range asks for (the journal grew).
    const growing: ChainSource = {
      genesis: j.genesis,
      head: async () => ({ seq: 1, step_hash: (await j.get(1))!.step_hash as string }),
      lines: (r) => j.lines(r),
      blob: (d) => j.blob(d),
    };
    expect(head!.seq).toBe(3);
    const pub = await preparePublication(growing, { policy: SAMPLE_POLICY, optIn: true });
    expect(pub.lines.length).toBe(2);
    expect(pub.anchor.length).toBe(2);
    expect(pub.originalHead.seq).toBe(1);
  });
});
