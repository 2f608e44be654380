/**
 * Issue 32's attacks on a v3 publication through the built CLI (dist/cli/main.js, child processes): a journal
 * made with `init --format v3` and `append`, published with `publish`, then forged by someone holding only
 * the public receipt (every manifest digest recomputed). `verify --head <original head>` exits 0 on the
 * publication and 1 on each forgery, naming the problem and the step.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { run } from '../redact/outsider.js';
import { editRecord, reforge } from '../redact/v3-helpers.js';

const dir = tempDir('stepchain-v3-publication-cli-');
let head = '';
let receipt: Uint8Array;

beforeAll(async () => {
  const d = dir;
  expect((await run(['init', 'j', '--format', 'v3'], d)).code).toBe(0);
  const steps = [
    {
      model: 'm',
      prompt: 'Pay alice her 10 EUR.',
      tool_call: { name: 'transfer', arguments: { to: 'alice', amount: 10 } },
    },
    { model: 'm', prompt: 'Internal: never send more than 50 EUR.', result: { ok: true } },
    {
      model: 'm',
      input: {
        note: 'Quote to alice.liddell@example.org the price of the yearly plan, as agreed on the phone.',
        price: 59,
      },
    },
  ];
  for (const s of steps) expect((await run(['append', 'j'], d, JSON.stringify(s))).code).toBe(0);
  writeFileSync(
    join(d, 'policy.json'),
    JSON.stringify({
      rules: [
        { id: 'prompts', paths: ['/prompt'], seq: { from: 1, to: 1 } },
        { id: 'secrets', detectors: ['email'] },
      ],
    }),
  );
  const pub = await run(['publish', 'j', '--policy', 'policy.json', '--opt-in', '-o', 'public.tar.gz'], d);
  expect(pub.code, pub.stderr).toBe(0);
  expect(pub.stderr + pub.stdout).toContain('every value shown is bound to the head');
  head = JSON.parse((await run(['head', 'j', '--json'], d)).stdout).head.step_hash;
  receipt = gunzipSync(readFileSync(join(d, 'public.tar.gz')));
}, 120_000);

async function verifyForged(
  name: string,
  bytes: Uint8Array,
): Promise<{ code: number; report: { ok: boolean; problems: Array<{ code: string; location: { seq?: number } }> } }> {
  writeFileSync(join(dir, name), bytes);
  const r = await run(['verify', name, '--head', head, '--json'], dir);
  return { code: r.code, report: JSON.parse(r.stdout).report ?? JSON.parse(r.stdout) };
}

describe('stepchain verify --head <original head> on a v3 publication', () => {
  it('accepts the publication as made', async () => {
    const r = await run(['verify', 'public.tar.gz', '--head', head], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/not bound/i);
  });

  it('refuses a rewritten transfer (to mallory, 10000): ROOT_MISMATCH at seq 0', async () => {
    const { code, report } = await verifyForged(
      'rewritten.tar',
      reforge(receipt, (lines) =>
        editRecord(lines, 0, (x) => {
          x.tool_call.arguments = { to: 'mallory', amount: 10000 };
        }),
      ),
    );
    expect(code).toBe(1);
    expect(report.problems).toContainEqual(
      expect.objectContaining({ code: 'ROOT_MISMATCH', location: expect.objectContaining({ seq: 0 }) }),
    );
  });

  it('refuses invented text in place of the withheld prompt: SECRETS_INVALID at seq 1', async () => {
    const { code, report } = await verifyForged(
      'invented.tar',
      reforge(receipt, (lines) =>
        editRecord(lines, 1, (x) => {
          x.prompt = 'transfer 10000 EUR to mallory';
        }),
      ),
    );
    expect(code).toBe(1);
    expect(report.problems).toContainEqual(
      expect.objectContaining({ code: 'SECRETS_INVALID', location: expect.objectContaining({ seq: 1 }) }),
    );
  });

  it('refuses price 59 → 19 beside the withheld e-mail chunk', async () => {
    const { code, report } = await verifyForged(
      'price.tar',
      reforge(receipt, (lines) =>
        editRecord(lines, 2, (x) => {
          x.input.price = 19;
        }),
      ),
    );
    expect(code).toBe(1);
    expect(report.problems.map((p) => p.code)).toContain('ROOT_MISMATCH');
  });
});
