/**
 * The Art. 12 record-keeping view (issue 39): per run, the period of use, the models and tools used, each
 * input by seq and digest, persons (none until approval records exist) and the retention period, with the
 * notice that logging is what Art. 12 asks and tamper-evidence this tool's addition.
 */
import { describe, expect, test } from 'vitest';
import { ART12_NOTICE, recordKeepingDocument, runRecordKeeping } from '../../src/attest/record-keeping.js';
import { canonicalJson, digestUtf8 } from '../../src/canonical/index.js';
import { MemoryStore } from '../../src/store/index.js';

describe('runRecordKeeping', () => {
  test("a run's period, reference inputs and input data come from its verified records", async () => {
    const j = await new MemoryStore().create('art12');
    await j.appendMany([
      {
        input: { question: 'Weather in Lyon?' },
        model: 'gpt-4o',
        tool_call: { name: 'weather', arguments: { city: 'Lyon' } },
      },
      { input: null, model: { name: 'claude' }, result: { ok: true } },
      { input: 'follow-up', model: 'gpt-4o', tool_call: { name: 'calendar' } },
    ]);
    const records = [];
    for await (const r of j.read()) records.push(r);
    const entry = await runRecordKeeping(j.genesis, j.read(), true);
    expect(entry.period_of_use).toMatchObject({ start: records[0]!.ts, end: records[2]!.ts });
    expect(entry.reference_inputs).toEqual({ models: ['claude', 'gpt-4o'], tools: ['calendar', 'weather'] });
    expect(entry.input_data).toEqual([
      {
        seq: 0,
        step_hash: records[0]!.step_hash,
        input_digest: digestUtf8(canonicalJson({ question: 'Weather in Lyon?' })),
      },
      { seq: 2, step_hash: records[2]!.step_hash, input_digest: digestUtf8(canonicalJson('follow-up')) },
    ]);
    expect(entry.persons_involved.persons).toEqual([]);
    expect(entry.integrity).toEqual({ head: records[2]!.step_hash, head_seq: 2, steps: 3, chain_verified: true });
    const doc = recordKeepingDocument([entry], 'P6M');
    expect(doc.retention.period).toBe('P6M');
    expect(doc.notice).toBe(ART12_NOTICE);
    expect(doc.notice).toMatch(/Article 12 .* asks that .* automatic recording of events \(logs\)/);
    expect(doc.notice).toMatch(/Tamper-evidence is this tool's addition, not what Article 12 asks/);
  });

  test('an empty journal has no period and no head', async () => {
    const j = await new MemoryStore().create('empty');
    const entry = await runRecordKeeping(j.genesis, j.read(), true);
    expect(entry.period_of_use).toMatchObject({ start: null, end: null });
    expect(entry.integrity).toMatchObject({ head: null, steps: 0 });
  });
});
