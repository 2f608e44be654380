/**
 * The leak sweep (spec/REDACTION.md §5.5) as invariants: a string a rule selected in one place and left
 * unselected in another is found wherever it is published — a chain line, a blob, the genesis, the
 * manifest — as it is or JSON-escaped up to five times, and the refusal names the escaping level; once
 * every copy is selected, nothing of it is published in any of those forms. Which strings are searched:
 * path-selected leaves of 8 or more characters, detector matches of any length.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  RedactError,
  escapedForms,
  preparePublication,
  publicationBytes,
  verifyPublishedReceipt,
} from '../../src/redact/index.js';
import type { StepInput } from '../../src/record/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { CREATED_AT, archiveText, memoryJournal, ts } from './helpers.js';

const RUNS = Number(process.env.RUNS ?? 100);

/** `s` inside a text, then inside `depth` JSON documents each quoted as a string value (a log of a body of …). */
function nested(s: string, depth: number, pad = ''): string {
  let v = `seen: ${s} (copied)${pad}`;
  for (let i = 0; i < depth; i++) v = JSON.stringify({ log: v });
  return v;
}

/** Step 0 passes the secret to the "vault" tool (selected there); step 1 carries `copy`. */
const steps = (secret: string, copy: string): StepInput[] => [
  { step_id: 's-0', ts: ts(0), model: 'm', tool_call: { name: 'vault', arguments: { secret } }, result: 'stored' },
  {
    step_id: 's-1',
    ts: ts(1),
    model: 'm',
    tool_call: { name: 'http', arguments: { url: 'https://x.example' } },
    result: { copy },
  },
];
const VAULT = { id: 'vault', paths: ['/tool_call/arguments/secret'], tools: ['vault'] };

async function refusal(
  j: Awaited<ReturnType<typeof memoryJournal>>,
  policy: unknown,
  exporter?: string,
): Promise<RedactError> {
  const e = await preparePublication(j, {
    policy: policy as never,
    optIn: true,
    ...(exporter === undefined ? {} : { exporter }),
  }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(RedactError);
  return e as RedactError;
}

/** The sentence naming the escaping level (§5.5: "naming … at which escaping level"). */
const levelText = (level: number): RegExp =>
  level === 0 ? /, as it is \(/ : level === 1 ? /, as a JSON string \(/ : new RegExp(`, JSON-escaped ${level} times `);

// Secrets of 8–20 characters between a Q and a Z, neither of which occurs in the middle, in anything else
// the journal publishes (lower-case hex, ids, timestamps) or in the nesting: the copy is the only place a
// form of the secret can be found, and only at the level it was planted at. The middle always holds one
// character JSON escapes (a quote, a backslash, a newline, a control character), so each level differs.
const middle = fc
  .tuple(
    fc.string({ unit: fc.constantFrom('a', 'b', '7', ' ', 'é', '\ud83d\ude00', '/'), maxLength: 8 }),
    fc.constantFrom('"', '\\', '\n', '\u0001', '\t'),
    fc.string({ unit: fc.constantFrom('c', 'd', '"', '\\', '\n', '-'), minLength: 5, maxLength: 8 }),
  )
  .map(([a, e, b]) => `Q${a}${e}${b}Z`);

describe('the leak sweep (spec/REDACTION.md §5.5), as properties', () => {
  test('a selected string copied unselected, in a line or a blob, nested 0–4 documents deep, is LEAK_DETECTED at its escaping level (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(middle, fc.integer({ min: 0, max: 4 }), fc.boolean(), async (secret, depth, blob) => {
        // Over the 1024-byte blob threshold the copy is stored as a blob, which the sweep reads too.
        const j = await memoryJournal(steps(secret, nested(secret, depth, blob ? 'x'.repeat(1100) : '')));
        const e = await refusal(j, { rules: [VAULT] });
        expect(e.code).toBe('LEAK_DETECTED');
        expect(e.message).toMatch(
          blob
            ? /rule "vault" \(matched at seq 0, \/tool_call\/arguments\/secret\)[^]*appears in blob sha256:[0-9a-f]{64},/
            : /rule "vault" \(matched at seq 0, \/tool_call\/arguments\/secret\)[^]*appears in step 1,/,
        );
        // A canonical line writes a string value escaped once: a copy nested n documents deep is level n + 1.
        expect(e.message).toMatch(levelText(depth + 1));
        for (const form of escapedForms(secret)) expect(e.message).not.toContain(form);
      }),
      { numRuns: RUNS },
    );
  });

  test('with every copy selected, it publishes, and no escaped form of the secret is anywhere in the archive (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(middle, fc.integer({ min: 0, max: 4 }), fc.boolean(), async (secret, depth, blob) => {
        const j = await memoryJournal(steps(secret, nested(secret, depth, blob ? 'x'.repeat(1100) : '')));
        const pub = await preparePublication(j, {
          policy: { rules: [VAULT, { id: 'copies', paths: ['/result/copy'] }] },
          optIn: true,
        });
        const bytes = await publicationBytes(pub);
        const text = archiveText(bytes);
        for (const form of escapedForms(secret)) expect(text.includes(form)).toBe(false);
        expect((await verifyPublishedReceipt(bytes)).problems).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('the leak sweep: where it looks and what it searches for', () => {
  test('a string with nothing to escape is found "as it is"', async () => {
    const e = await refusal(await memoryJournal(steps('Qplainsecret42Z', nested('Qplainsecret42Z', 2))), {
      rules: [VAULT],
    });
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(levelText(0));
  });

  test('the genesis is searched: a selected value equal to the journal id', async () => {
    const store = new MemoryStore();
    const j = await store.create('j', { journalId: 'Qjournal-7f3a9c', createdAt: CREATED_AT });
    for (const s of steps('Qjournal-7f3a9c', 'nothing here')) await j.append(s);
    const e = await refusal(j, { rules: [VAULT] });
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(/appears in the genesis, as it is \(/);
  });

  test('the manifest is searched: a selected value in the exporter string', async () => {
    const j = await memoryJournal(steps('Qexporter-secret', 'nothing here'));
    const e = await refusal(j, { rules: [VAULT] }, 'tool Qexporter-secret 1.0');
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(/appears in the manifest, as it is \(/);
    // The same exporter with nothing selected that it holds publishes.
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'other', paths: ['/result'] }] },
      optIn: true,
      exporter: 'tool Qexporter-secret 1.0',
    });
    expect(pub.plan.manifest.exporter).toBe('tool Qexporter-secret 1.0');
  });

  test.each([
    ['a path-selected leaf of 8 characters is searched', 'Q123456Z', true],
    ['a path-selected leaf of 7 characters is not (it would occur everywhere)', 'Q12345Z', false],
    ['a path-selected number of 8 digits is searched as JCS writes it', 41111111, true],
    ['a path-selected number of 7 digits is not', 4111111, false],
  ])('%s', async (_what, secret, searched) => {
    const copy = `id ${String(secret)} end`;
    const j = await memoryJournal([
      { step_id: 's-0', ts: ts(0), model: 'm', tool_call: { name: 'vault', arguments: { secret } }, result: 'stored' },
      { step_id: 's-1', ts: ts(1), model: 'm', tool_call: null, result: { copy } },
    ]);
    const run = preparePublication(j, { policy: { rules: [VAULT] }, optIn: true });
    if (searched) expect(((await run.catch((x: unknown) => x)) as RedactError).code).toBe('LEAK_DETECTED');
    else expect(JSON.parse((await run).lines[1]!).result.copy).toBe(copy);
  });

  test('a detector match is searched whatever its length: a 6-character e-mail address a tool-scoped rule found', async () => {
    const j = await memoryJournal([
      {
        step_id: 's-0',
        ts: ts(0),
        model: 'm',
        tool_call: { name: 'crm', arguments: { to: 'a@b.co' } },
        result: 'sent',
      },
      { step_id: 's-1', ts: ts(1), model: 'm', tool_call: null, result: 'reply from a@b.co' },
    ]);
    const e = await refusal(j, { rules: [{ id: 'crm-mail', detectors: ['email'], tools: ['crm'] }] });
    expect(e.code).toBe('LEAK_DETECTED');
    expect(e.message).toMatch(
      /rule "crm-mail" \(matched at seq 0, \/tool_call\/arguments\/to\)[^]*step 1, as it is \(/,
    );
  });
});
