/**
 * The compact tables verify keeps per record (src/record/seen.ts) against the Maps they replaced: the same
 * answers for any sequence of texts and digests, growth and wide characters included.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { RunNoteCollector } from '../../src/cli/run-notes.js';
import { DigestTable, RepeatedTexts, TextArena } from '../../src/record/seen.js';

const DIST = fileURLToPath(new URL('../../dist', import.meta.url));

const digestOf = (n: number): string => 'sha256:' + createHash('sha256').update(String(n)).digest('hex');

/** Texts as a chain's step_ids and hostile ones come: ASCII, Latin-1, astral and lone surrogates, empty. */
const text = fc.oneof(
  fc.constantFrom('a', 'b', 'step-1', 'step-2', '', 'é', '\u{1F600}', '\ud800', 'x'.repeat(5000)),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

describe('TextArena', () => {
  test('gives back every text as added', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 600 }), (texts) => {
        const arena = new TextArena();
        const at = texts.map((t) => arena.add(t));
        expect(at).toEqual(texts.map((_, i) => i));
        texts.forEach((t, i) => {
          expect(arena.get(i)).toBe(t);
          expect(arena.is(i, t)).toBe(true);
          expect(arena.is(i, t + 'x')).toBe(false);
        });
      }),
    );
  });
});

describe('RepeatedTexts', () => {
  /** What a Map of first seqs says: every add of a text seen before, with the first's seq, in order. */
  const modelRepeats = (texts: string[]): { seq: number; text: string; first: number }[] => {
    const firsts = new Map<string, number>();
    const out: { seq: number; text: string; first: number }[] = [];
    texts.forEach((text, seq) => {
      const first = firsts.get(text);
      if (first === undefined) firsts.set(text, seq);
      else out.push({ seq, text, first });
    });
    return out;
  };

  test('finds the repeats a Map of first seqs finds, through many growths', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 2000 }), (texts) => {
        const seen = new RepeatedTexts();
        texts.forEach((t, seq) => seen.add(t, seq));
        expect(seen.repeats()).toEqual(modelRepeats(texts));
      }),
    );
  });

  test('texts that differ in one character, or only in length, are told apart at 30 000 entries', () => {
    const seen = new RepeatedTexts();
    const texts: string[] = [];
    for (let i = 0; i < 30_000; i++) texts.push(`id-${i}`);
    for (let i = 0; i < 30_000; i += 997) texts.push(`id-${i}`);
    texts.push('id-', 'id-1000000');
    texts.forEach((t, seq) => seen.add(t, seq));
    const repeats = seen.repeats();
    expect(repeats).toEqual(modelRepeats(texts));
    expect(repeats).toHaveLength(Math.ceil(30_000 / 997));
  });

  test('one text repeated at every seq of 200 000 is reported at each, in order, without a comparison of each with each', () => {
    const seen = new RepeatedTexts();
    for (let seq = 0; seq < 200_000; seq++) seen.add('same', seq);
    const repeats = seen.repeats();
    expect(repeats).toHaveLength(199_999);
    expect(repeats[0]).toEqual({ seq: 1, text: 'same', first: 0 });
    expect(repeats.at(-1)).toEqual({ seq: 199_999, text: 'same', first: 0 });
  });
});

describe('RunNoteCollector', () => {
  test('a step_id repeated at each of 300 000 seqs gives a note per repeat, without comparing each note with each', () => {
    // A writer whose step_id window is 1 can write such a journal; each repeat was looked up among the notes
    // found before it, about 4.5 * 10^10 comparisons here (minutes), where one pass over them is milliseconds.
    const collector = new RunNoteCollector();
    for (let seq = 0; seq < 300_000; seq++) collector.addLine({ text: '', kindIsStep: true, stepId: 'same' }, seq);
    const notes = collector.notes();
    expect(notes).toHaveLength(299_999);
    expect(notes[0]).toEqual({
      code: 'STEP_ID_REPEATED',
      seq: 1,
      message: 'the step at seq 1 repeats step_id "same" of the step at seq 0',
    });
    expect(notes.at(-1)?.seq).toBe(299_999);
    // 20 s, not the suite's 60: the quadratic version took 58 s here, this one under 2.
  }, 20_000);
});

describe('DigestTable', () => {
  test('finds each digest added, in order, and no other', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 3000 }), { maxLength: 3000 }), (ns) => {
        const table = new DigestTable();
        const model = new Map<string, number>();
        for (const n of ns) {
          const d = digestOf(n);
          const before = model.get(d);
          expect(table.indexOf(d, 0, false)).toBe(before ?? -1);
          expect(table.indexOf(d, 0, true)).toBe(before ?? model.size);
          if (before === undefined) model.set(d, model.size);
        }
        expect(table.size).toBe(model.size);
      }),
    );
  });

  test('reads the digest at an offset, with text after it (a stored call key: digest, then the tool name)', () => {
    const table = new DigestTable();
    expect(table.indexOf(digestOf(1) + '"sql_query"', 0, true)).toBe(0);
    expect(table.indexOf('xx' + digestOf(1), 2, false)).toBe(0);
    expect(table.indexOf(digestOf(2) + '"x"', 0, false)).toBe(-1);
  });

  test('finds a digest given as its bytes, at any offset, as the same entry as its text', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 200 }), { maxLength: 400 }), fc.nat({ max: 40 }), (ns, offset) => {
        const table = new DigestTable();
        const model = new Map<string, number>();
        for (const [k, n] of ns.entries()) {
          const d = digestOf(n);
          const bytes = new Uint8Array(offset + 32);
          bytes.set(Buffer.from(d.slice(7), 'hex'), offset);
          const before = model.get(d);
          // Bytes and text take turns: each finds what the other entered.
          const i = k % 2 === 0 ? table.indexOfBytes(bytes, offset, true) : table.indexOf(d, 0, true);
          expect(i).toBe(before ?? model.size);
          if (before === undefined) model.set(d, model.size);
          expect(table.indexOfBytes(bytes, offset, false)).toBe(model.get(d));
        }
        expect(table.size).toBe(model.size);
      }),
    );
  });

  test('refuses what is not a digest, adding nothing', () => {
    const table = new DigestTable();
    const d = digestOf(3);
    for (const bad of [
      d.toUpperCase(),
      d.replace('sha256:', 'sha512:'),
      d.slice(0, 70),
      d.slice(0, 70) + 'g',
      d.slice(0, 70) + '\u0131',
      '',
    ])
      expect(table.indexOf(bad, 0, true)).toBe(-1);
    expect(table.size).toBe(0);
  });
});

describe('what verify keeps per record', () => {
  test('300 000 records of distinct calls: the run notes and the approval check hold them outside a 16 MB heap', async () => {
    // In a process of its own, with its heap bounded, as verify hands them over: each record's step_id, and its
    // call's step_id as JSON text and key (digest, then the name). Maps of the strings held about 340 bytes a
    // record of heap (100 MB here: out of memory); the tables hold about 155 bytes a record of typed arrays, and
    // nothing that grows in the heap.
    const script = `
      const { EarlierCalls } = await import(${JSON.stringify(DIST + '/approval/earlier-calls.js')});
      const { RunNoteCollector } = await import(${JSON.stringify(DIST + '/cli/run-notes.js')});
      const used = () => { gc(); gc(); return process.memoryUsage().heapUsed; };
      const notes = new RunNoteCollector();
      const calls = new EarlierCalls();
      const n = 300000;
      // A digest as stored calls carry it (calls.ts storedKey): its 32 bytes as one-byte characters.
      const latin1 = (h) => { let t = ''; for (let i = 0; i < 64; i += 2) t += String.fromCharCode(parseInt(h.slice(i, i + 2), 16)); return t; };
      // Distinct digests without a hash object per record (their buffers would count until finalised).
      const hex = (k) => { let x = k * 2654435761 + 1, t = ''; for (let i = 0; i < 8; i++) { x = (x * 48271) % 2147483647; t += x.toString(16).padStart(8, '0'); } return t; };
      const before = used();
      for (let seq = 0; seq < n; seq++) {
        const id = 'b5c0e0a1-' + String(seq).padStart(8, '0') + '-4f00-8000-000000000000';
        notes.addLine({ text: '', kindIsStep: true, stepId: id }, seq);
        calls.stored('"' + id + '"', seq, latin1(hex(seq)), 0, '"sql_query"');
      }
      if (calls.find('{"arguments":{},"name":"x"}') !== undefined || notes.notes().length !== 0) process.exit(3);
      process.stdout.write(String((used() - before) / n));
    `;
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--expose-gc', '--max-old-space-size=16', '--input-type=module', '-e', script],
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      ),
    );
    expect(r.stderr).not.toContain('heap out of memory');
    expect(r.code, r.stderr.slice(0, 400)).toBe(0);
    expect(Number(r.stdout)).toBeLessThan(4);
  });
});
