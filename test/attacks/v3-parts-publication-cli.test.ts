/**
 * A v3 journal with parts published and verified through the built CLI (dist/cli/main.js, child
 * processes): `append` of generic JSON whose message lists and page text become parts, `publish`, then
 * `verify --head <original head>` exits 0; a public part rewritten by an outsider (manifest listing made to
 * match) exits 1 with PART_ADDRESS_MISMATCH naming the part's entry.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { tempDir } from '../helpers/tmp.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { run } from '../redact/outsider.js';

const dir = tempDir('stepchain-v3-parts-publication-cli-');
const EMAIL = 'alice.liddell@example.org';
let head = '';
let receipt: Uint8Array;

beforeAll(async () => {
  expect((await run(['init', 'j', '--format', 'v3'], dir)).code).toBe(0);
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful agent. '.repeat(20) }];
  const lines: string[] = [];
  for (let t = 0; t < 3; t++) {
    messages.push({
      role: 'user',
      content:
        t === 1
          ? `Write to ${EMAIL} today. ` + 'Then summarise the page. '.repeat(40)
          : `turn ${t} ` + 'Read the next page. '.repeat(40),
    });
    lines.push(JSON.stringify({ model: 'm', prompt: messages }));
    const page = `page ${t} ` + 'words on the page '.repeat(80);
    lines.push(
      JSON.stringify({
        tool_call: { name: 'fetch', arguments: { url: `https://example.com/${t}` } },
        result: { text: page },
      }),
    );
    messages.push({ role: 'tool', content: page });
  }
  const a = await run(['append', 'j', '--jsonl'], dir, lines.join('\n') + '\n');
  expect(a.code, a.stderr).toBe(0);
  writeFileSync(join(dir, 'policy.json'), JSON.stringify({ rules: [{ id: 'secrets', detectors: ['email'] }] }));
  const pub = await run(['publish', 'j', '--policy', 'policy.json', '--opt-in', '-o', 'public.tar.gz'], dir);
  expect(pub.code, pub.stderr).toBe(0);
  head = JSON.parse((await run(['head', 'j', '--json'], dir)).stdout).head.step_hash;
  receipt = gunzipSync(readFileSync(join(dir, 'public.tar.gz')));
}, 180_000);

describe('stepchain publish and verify of a v3 journal with parts', () => {
  it('verifies against the original head, withholds the e-mail address and carries parts', async () => {
    const r = await run(['verify', 'public.tar.gz', '--head', head], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.from(receipt).toString('latin1')).not.toContain(EMAIL);
    expect(entriesOf(receipt).some((e) => e.name.startsWith('parts/'))).toBe(true);
  });

  it('refuses a rewritten public part: exit 1, PART_ADDRESS_MISMATCH at the entry', async () => {
    const entries = entriesOf(receipt);
    const manifest = JSON.parse(Buffer.from(entries[0]!.data).toString('utf8')) as {
      parts: Array<{ address: string; digest: string; size: number }>;
    };
    const victim = entries.find(
      (e) => e.name.startsWith('parts/') && Buffer.from(e.data).toString('utf8').includes('page 1 '),
    )!;
    const data = text(Buffer.from(victim.data).toString('utf8').replace('page 1 ', 'page 9 '));
    Object.assign(
      manifest.parts.find((p) => victim.name.endsWith(p.address.slice(7)))!,
      { digest: 'sha256:' + createHash('sha256').update(data).digest('hex'), size: data.length },
    );
    writeFileSync(
      join(dir, 'forged.tar'),
      tarOf(
        entries.map((e) =>
          e.name === 'manifest.json'
            ? { ...e, data: text(canonicalJson(manifest)) }
            : e === victim
              ? { ...e, data }
              : e,
        ),
      ),
    );
    const r = await run(['verify', 'forged.tar', '--head', head, '--json'], dir);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout).report ?? JSON.parse(r.stdout);
    expect(report.problems).toContainEqual(
      expect.objectContaining({
        code: 'PART_ADDRESS_MISMATCH',
        location: expect.objectContaining({ file: victim.name }),
      }),
    );
  });
});
