/**
 * Diff of a stepchain/v3 journal against its publication (outsider L, F5): a published receipt carries each
 * part a public record reaches as its public file (REDACTION.md §13.10), and diff compares a public reference
 * by what that file shows — a disclosed value is the value, a withheld unit inside it is the one divergence.
 * Before, every disclosed value held in a part (a long tool result, a chat's message list, an image) was
 * reported as changed to "redacted". Real publications through the publisher, opened as `stepchain diff` opens
 * them (verified in full).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { diff, formatDiff } from '../../src/diff/index.js';
import { openReceiptSource } from '../../src/receipt/index.js';
import { publishedReceiptHooks } from '../../src/redact/index.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { PublicPartResolution } from '../../src/record/v3/public-resolve.js';
import { publicPartMarker } from '../../src/record/v3/public-part.js';
import { tempDir } from '../helpers/tmp.js';
import { published } from '../redact/v3-helpers.js';
import { chatJournal, IMAGE } from '../redact/v3-parts-helpers.js';
import { EMAIL } from '../redact/v3-helpers.js';

async function receiptSource(bytes: Uint8Array) {
  const file = join(tempDir('diff-published-'), 'public.tar');
  writeFileSync(file, bytes);
  return openReceiptSource(file, publishedReceiptHooks().options);
}

describe('diff of a journal against its publication', () => {
  test('a chat whose lists, pages and image stand in parts: the withheld e-mail is the only divergence', async () => {
    const j = await chatJournal();
    const { bytes } = await published(j, compilePolicy({ rules: [{ id: 'secrets', detectors: ['email'] }] }));
    const source = await receiptSource(bytes);
    const report = await diff(j, source, { all: true });
    const text = formatDiff(report);
    // Every step whose prompt holds the secret message differs there and only there: in the one message.
    expect(report.same).toBe(false);
    const paths = report.divergences.flatMap((d) =>
      'fields' in d ? (d.fields as { path: string }[]).map((f) => f.path) : [d.kind],
    );
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(p).toMatch(/^\/prompt\/3\/content/);
    expect(text).not.toContain('‹redacted›');
    expect(text).not.toContain(EMAIL);
  });

  test('a publication withholding nothing is the same run; a withheld field outside the parts is the one divergence', async () => {
    const j = await chatJournal();
    const nothing = await published(j, compilePolicy({ rules: [{ id: 'none', paths: ['/input/nothing'] }] }));
    expect((await diff(j, await receiptSource(nothing.bytes), { all: true })).same).toBe(true);
    const url = await published(j, compilePolicy({ rules: [{ id: 'url', paths: ['/tool_call/arguments/url'] }] }));
    const report = await diff(j, await receiptSource(url.bytes), { all: true });
    const paths = report.divergences.flatMap((d) =>
      'fields' in d ? (d.fields as { path: string }[]).map((f) => f.path) : [d.kind],
    );
    // An object with a member withheld differs as a whole (its marker stands for members not shown).
    expect(new Set(paths)).toEqual(new Set(['/tool_call/arguments']));
    expect(formatDiff(report)).toContain('tool_call.arguments {"url":"https://example.com/0"} → {‹1 withheld›}');
    expect(formatDiff(report)).not.toContain('‹redacted›');
  });
});

describe('PublicPartResolution', () => {
  const store = (files: Record<string, string>) => async (address: string) =>
    address in files ? new TextEncoder().encode(files[address]) : null;
  const a = (n: number): string => 'sha256:' + n.toString(16).padStart(64, '0');
  const key = '"secrets":{"key":"AAAAAAAAAAAAAAAAAAAAAA"}';

  test('a list is its base chain then its tail; a media part is its base64', async () => {
    const r = new PublicPartResolution(
      store({
        [a(1)]: `{${key},"value":[1,2]}`,
        [a(2)]: `{"base":{"$stepchain:part":{"digest":"${a(1)}"}},${key},"tail":[3]}`,
        [a(3)]:
          `{"base":{"$stepchain:part":{"digest":"${a(2)}"}},${key},"tail":[{"$stepchain:part":{"digest":"${a(4)}"}}]}`,
        [a(4)]: `{"media_type":"image/png",${key},"size":3}\nabc`,
      }),
    );
    expect(await r.resolve({ x: publicPartMarker(a(3)) }, { seq: 0, path: '/prompt' })).toEqual({
      x: [1, 2, 3, 'YWJj'],
    });
    expect(IMAGE.length).toBeGreaterThan(0);
  });

  test('hostile files: a loop, a missing part, a part referenced again and again, nesting past the limit — coded, never a hang', async () => {
    const loop = new PublicPartResolution(
      store({
        [a(1)]: `{"base":{"$stepchain:part":{"digest":"${a(2)}"}},${key},"tail":[1]}`,
        [a(2)]: `{"base":{"$stepchain:part":{"digest":"${a(1)}"}},${key},"tail":[2]}`,
      }),
    );
    await expect(loop.resolve(publicPartMarker(a(1)), { seq: 3, path: '/prompt' })).rejects.toMatchObject({
      code: 'PART_CORRUPT',
      location: { seq: 3, path: '/prompt' },
    });
    const missing = new PublicPartResolution(store({}));
    await expect(missing.resolve({ m: [publicPartMarker(a(9))] }, { seq: 1, path: '/result' })).rejects.toMatchObject({
      code: 'PART_MISSING',
      location: { seq: 1, path: '/result/m/0' },
    });
    // Each part references the next twice: 2^40 values from 40 small files.
    const files: Record<string, string> = { [a(100)]: `{${key},"value":"leaf"}` };
    for (let i = 0; i < 40; i++)
      files[a(i + 1)] =
        `{${key},"value":[{"$stepchain:part":{"digest":"${a(i + 2 > 40 ? 100 : i + 2)}"}},{"$stepchain:part":{"digest":"${a(i + 2 > 40 ? 100 : i + 2)}"}}]}`;
    const bomb = new PublicPartResolution(store(files));
    await expect(bomb.resolve(publicPartMarker(a(1)), { seq: 0, path: '/result' })).rejects.toMatchObject({
      code: 'PART_CORRUPT',
      message: expect.stringContaining('expand more than'),
    });
    // Parts nested inside one another past MAX_PART_DEPTH.
    const deep: Record<string, string> = { [a(1000)]: `{${key},"value":{"end":true}}` };
    for (let i = 0; i < 130; i++)
      deep[a(i + 1)] = `{${key},"value":{"in":{"$stepchain:part":{"digest":"${a(i === 129 ? 1000 : i + 2)}"}}}}`;
    await expect(
      new PublicPartResolution(store(deep)).resolve(publicPartMarker(a(1)), { seq: 0, path: '/result' }),
    ).rejects.toMatchObject({
      code: 'PART_CORRUPT',
      message: expect.stringMatching(/nest deeper than 128|nests deeper/),
    });
  });
});

describe('a withheld chunk in people-facing text', () => {
  test('stands outside the quotes, so that text holding "‹withheld›" cannot pass for one, nor one for text', async () => {
    const { renderValue } = await import('../../src/diff/summary.js');
    const chunks = {
      '$stepchain:chunks': ['write to ', { '$stepchain:withheld': 'sha256:' + '1'.repeat(64) }, ' today'],
    };
    expect(renderValue(chunks, 200)).toBe('"write to "‹withheld›" today"');
    expect(renderValue('write to ‹withheld› today', 200)).toBe('"write to ‹withheld› today"');
    expect(
      renderValue({ '$stepchain:chunks': [{ '$stepchain:withheld': 'sha256:' + '2'.repeat(64) }, 'x'] }, 200),
    ).toBe('‹withheld›"x"');
  });
});

test('a withheld chunk in the middle of a long string stays in sight when the text around it is shortened', async () => {
  const { renderValue } = await import('../../src/diff/summary.js');
  const chunks = {
    '$stepchain:chunks': ['a'.repeat(300), { '$stepchain:withheld': 'sha256:' + '3'.repeat(64) }, 'b'.repeat(300)],
  };
  const shown = renderValue(chunks, 60);
  expect(shown).toContain('‹withheld›');
  expect(shown.length).toBeLessThanOrEqual(70);
  expect(shown).toMatch(/^"a+…a+"‹withheld›"b+…b+"$/);
});
