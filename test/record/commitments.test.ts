import { describe, expect, test } from 'vitest';
import { verifyChain } from '../../src/chain/index.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import {
  committedStepHash,
  isSaltHex,
  newRecordSalt,
  sealCommitted,
  slotDigest,
  slotSalt,
  slotSalts,
} from '../../src/record/commitments.js';
import { genesisHash, makeGenesis } from '../../src/record/index.js';
import { STEP_V2 } from '../../src/record/v2.js';
import { MemoryStore } from '../../src/store/memory.js';

const encoder = new TextEncoder();
const genesis = makeGenesis({ journalId: 'v2-test', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v2' });

async function v2Journal(steps: Array<Record<string, unknown>>) {
  const store = new MemoryStore();
  const j = await store.create('j', {
    format: 'stepchain/v2',
    journalId: 'v2-test',
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  for (const s of steps) await j.append(s as never);
  const lines: string[] = [];
  for await (const l of j.lines()) lines.push(l.text);
  return { j, lines };
}

const verify = (lines: readonly string[]) =>
  verifyChain({
    genesis,
    files: [{ name: 'chain.jsonl', bytes: encoder.encode(lines.map((l) => l + '\n').join('')) }],
  });

describe('stepchain/v2: the step hash commits to salted slot digests (FORMAT §12)', () => {
  test('a v2 journal verifies; every line carries a 128-bit record salt; the step hash is the committed one', async () => {
    const { j, lines } = await v2Journal([
      { input: { pin: '4821' }, model: 'm', prompt: 'p', tool_call: null, result: true },
      {
        input: 1,
        model: 'm',
        prompt: 'p',
        tool_call: { name: 'http', arguments: { api_key: 'k' } },
        result: null,
        meta: { a: 1 },
      },
    ]);
    expect((await j.verify()).ok).toBe(true);
    expect(verify(lines).ok).toBe(true);
    for (const line of lines) {
      const r = JSON.parse(line) as Record<string, unknown>;
      expect(r.v).toBe(2);
      expect(isSaltHex(r.salt)).toBe(true);
      // Recomputed from the spec's definition, member by member.
      const slots = ['error', 'input', 'meta', 'model', 'prompt', 'result', 'tool_call'];
      expect(STEP_V2.redactable).toEqual(slots);
      const digests = Object.fromEntries(
        slots.map((s) => [
          s,
          slotDigest(slotSalt(r.salt as string, s, slots), s, s in r ? JSON.stringify(r[s]) : undefined),
        ]),
      );
      const clear = {
        kind: JSON.stringify(r.kind),
        prev_hash: JSON.stringify(r.prev_hash),
        ref: JSON.stringify(r.ref),
        seq: String(r.seq),
        step_id: JSON.stringify(r.step_id),
        ts: JSON.stringify(r.ts),
        v: '2',
      };
      expect(committedStepHash(clear, digests, slots)).toBe(r.step_hash);
    }
    expect(JSON.parse(lines[0]!).prev_hash).toBe(genesisHash(genesis));
  });

  test('the slot digest is SHA-256 of tag, slot salt and JCS([name, value]); absence commits to JCS([name])', () => {
    const salt = '00112233445566778899aabbccddeeff';
    expect(slotDigest(salt, 'input', '{"a":1}')).toBe(
      digestUtf8('stepchain/v2 slot\n00112233445566778899aabbccddeeff\n["input",{"a":1}]'),
    );
    expect(slotDigest(salt, 'meta', undefined)).toBe(
      digestUtf8('stepchain/v2 slot\n00112233445566778899aabbccddeeff\n["meta"]'),
    );
    // Slots error, input, meta, …: block 0 serves error (first half) and input (second half), block 1 meta.
    const block0 = digestUtf8('stepchain/v2 salt\n00112233445566778899aabbccddeeff\n0');
    expect(slotSalt(salt, 'error', STEP_V2.redactable)).toBe(block0.slice(7, 39));
    expect(slotSalt(salt, 'input', STEP_V2.redactable)).toBe(block0.slice(39, 71));
    expect(slotSalt(salt, 'meta', STEP_V2.redactable)).toBe(
      digestUtf8('stepchain/v2 salt\n00112233445566778899aabbccddeeff\n1').slice(7, 39),
    );
    expect(slotSalts(salt, STEP_V2.redactable)).toEqual(
      STEP_V2.redactable.map((s) => slotSalt(salt, s, STEP_V2.redactable)),
    );
  });

  test.each([
    ['a value', (l: string) => l.replace('"4821"', '"4822"')],
    [
      'the record salt',
      (l: string) => l.replace(/"salt":"([0-9a-f])/, (_m, c: string) => `"salt":"${c === '0' ? '1' : '0'}`),
    ],
    ['meta added', (l: string) => l.replace('"model":', '"meta":{},"model":')],
    ['the ts', (l: string) => l.replace(/"ts":"2/, '"ts":"1')],
  ])('changing %s breaks the step hash (HASH_MISMATCH)', async (_what, edit) => {
    const { lines } = await v2Journal([
      { input: { pin: '4821' }, model: 'm', prompt: 'p', tool_call: null, result: true },
    ]);
    const edited = edit(lines[0]!);
    expect(edited).not.toBe(lines[0]);
    const report = verify([edited]);
    expect(report.problems.map((p) => p.code)).toContain('HASH_MISMATCH');
  });

  test('a stored line without its salt is MISSING_FIELD and cannot be hashed', async () => {
    const { lines } = await v2Journal([{ input: 1, model: 'm', prompt: 'p', tool_call: null, result: null }]);
    const report = verify([lines[0]!.replace(/,"salt":"[0-9a-f]{32}"/, '')]);
    expect(report.problems.map((p) => p.code)).toEqual(['MISSING_FIELD', 'HASH_MISMATCH']);
  });

  test('record salts are fresh: 2000 draws, no repeat, every one 32 hex digits', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) seen.add(newRecordSalt());
    expect(seen.size).toBe(2000);
    for (const s of seen) expect(isSaltHex(s)).toBe(true);
  });

  test('the profile seal equals sealCommitted with the salt it drew', () => {
    const texts = {
      kind: '"step"',
      ref: 'null',
      input: '1',
      model: '"m"',
      prompt: 'null',
      tool_call: 'null',
      result: '[]',
      error: 'null',
    };
    const e = { seq: 0, stepId: 's', ts: '2026-01-01T00:00:00.000Z', prevHash: genesisHash(genesis) };
    const { line, stepHash } = STEP_V2.seal(texts, e);
    const salt = (JSON.parse(line) as { salt: string }).salt;
    expect(sealCommitted(STEP_V2, texts, e, salt)).toEqual({ line, stepHash });
  });
});
