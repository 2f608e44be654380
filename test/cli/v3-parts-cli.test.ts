/**
 * Parts in the CLI (spec/PARTS.md): a long conversation appended to a stepchain/v3 journal with
 * `stepchain append --jsonl` is stored once per value, verifies as a directory, and its receipt — which
 * carries each part once — verifies in `stepchain verify`; a receipt whose part entry was changed does not.
 * The built CLI (dist/): the first call starts a real process; the rest run in one process of the CLI of the
 * file's own (cliInProcess, support.ts).
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-v3-parts-cli-');
const started = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 120_000 });
const cli = cliInProcess();

test('a 30-turn conversation: journal and receipt verify in the CLI; a changed part entry is found', async () => {
  const messages: unknown[] = [{ role: 'user', content: 'Read the pages.' }];
  const lines: string[] = [];
  for (let t = 0; t < 30; t++) {
    lines.push(JSON.stringify({ input: { turn: t }, model: 'm', prompt: [...messages] }));
    const text = `page ${t} ` + `lorem${t} ipsum `.repeat(200);
    lines.push(JSON.stringify({ input: { turn: t, tool: 'fetch' }, result: { text } }));
    messages.push({ role: 'assistant', content: `fetch ${t}` }, { role: 'tool', content: text });
  }
  writeFileSync(join(dir, 'steps.jsonl'), lines.join('\n') + '\n');
  const j = join(dir, 'chat');
  expect((await started(['init', j, '--format', 'v3'])).code).toBe(0);
  expect((await cli(['append', j, '--jsonl', '--file', join(dir, 'steps.jsonl')])).code).toBe(0);
  const verified = await cli(['verify', j]);
  expect(verified.code).toBe(0);
  const receipt = join(dir, 'chat.tar');
  expect((await cli(['export', j, '-o', receipt])).code).toBe(0);
  // Each page once: with 3 KB pages the receipt is a small multiple of the distinct content (a tar header and
  // padding per part, 60 lines), where every prompt stored whole would be ~15× it (30 prompts of 1–30 pages).
  const distinct = Buffer.byteLength(JSON.stringify(messages));
  expect(statSync(receipt).size).toBeLessThan(distinct * 3);
  const ok = await cli(['verify', receipt, '--json']);
  expect(ok.code).toBe(0);
  expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true });
  const bytes = readFileSync(receipt);
  const at = bytes.indexOf('lorem17 ipsum');
  bytes[at]! ^= 1;
  writeFileSync(receipt, bytes);
  const bad = await cli(['verify', receipt, '--json']);
  expect(bad.code).not.toBe(0);
  expect(bad.stdout).toContain('PART_CORRUPT');
}, 180_000);

test("show --parts lists a step's parts; --save-part writes an image as its raw bytes", async () => {
  const png = Buffer.alloc(4096);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(png);
  for (let i = 8; i < png.length; i++) png[i] = (i * 7) & 255;
  const j = join(dir, 'image');
  expect((await cli(['init', j, '--format', 'v3'])).code).toBe(0);
  const step = {
    prompt: [
      {
        role: 'user',
        content: [
          { type: 'file', mediaType: 'image/png', data: png.toString('base64') },
          { type: 'text', text: 'what is this?\u001b[31m' },
        ],
      },
    ],
  };
  writeFileSync(join(dir, 'image.json'), JSON.stringify(step));
  expect((await cli(['append', j, '--file', join(dir, 'image.json')])).code).toBe(0);
  const listed = await cli(['show', j, '0', '--parts', '--json']);
  expect(listed.code).toBe(0);
  const rows = JSON.parse(listed.stdout).parts as Array<{ path: string; kind: string; media_type: string | null }>;
  expect(rows).toContainEqual(
    expect.objectContaining({ path: '/prompt/0/content/0/data', kind: 'media', media_type: 'image/png' }),
  );
  const saved = await cli(['show', j, '0', '--save-part', '/prompt/0/content/0/data', '-o', join(dir, 'out.png')]);
  expect(saved.code).toBe(0);
  expect(readFileSync(join(dir, 'out.png')).equals(png)).toBe(true);
  const human = await cli(['show', j, '0', '--parts']);
  expect(human.stdout + human.stderr).not.toContain('\u001b');
  const wrong = await cli(['show', j, '0', '--save-part', '/nowhere', '-o', join(dir, 'x')]);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('/prompt/0/content/0/data');
}, 120_000);
