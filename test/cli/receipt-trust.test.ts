/**
 * Issue 14, through the built CLI (dist/, in one child process): a pinned key that cannot be used refuses
 * instead of unpinning (item 1); bytes smuggled after a receipt are refused (item 2); what export writes,
 * verify accepts, a 40 MB repetitive value included (item 3); every command that opens a receipt runs the
 * whole verification, so `diff` refuses a forged published receipt that `verify` refuses (item 6).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { disclose, publish } from '../../src/redact/index.js';
import { exportReceipt, keygen, keyPairFromSeed, publicKeyToPem } from '../../src/receipt/index.js';
import { FileStore } from '../../src/store/index.js';
import { concatBytes } from '../../src/bytes.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { testSeed } from '../receipt/fixture.js';
import { CREATED_AT, SAMPLE_POLICY, memoryJournal } from '../redact/helpers.js';
import { asRun, cliServer } from '../helpers/cli-batch.js';
import type { Run } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

// The calls in one process of the built CLI (test/helpers/cli-batch.ts cliServer: the built entry run afresh
// per call, stdout and stderr pipes captured byte for byte).
const server = cliServer();
const run = (args: string[], cwd: string): Promise<Run> => server.run({ args, cwd }).then(asRun);

const dir = tempDir('stepchain-trust-');
const STEP = (i: number) => ({
  input: { question: `question ${i}` },
  model: 'm',
  prompt: `step ${i}`,
  tool_call: null,
  result: { answer: i },
});

async function journalWith(name: string, steps: Array<Record<string, unknown>>): Promise<string> {
  const j = await new FileStore(dir).create(name, { journalId: name, createdAt: CREATED_AT });
  for (const s of steps) await j.append(s as never);
  await j.close();
  return join(dir, name);
}

await journalWith('run', [STEP(0), STEP(1), STEP(2)]);
const signer = join(dir, 'alice.key');
await keygen(signer, keyPairFromSeed(testSeed(1)));
const other = keyPairFromSeed(testSeed(2));
const signed = join(dir, 'signed.tar.gz');
const signedByOther = join(dir, 'other.tar.gz');
const unsigned = join(dir, 'unsigned.tar');
{
  const source = await new FileStore(dir).open('run', { readOnly: true });
  await exportReceipt(source, { out: signed, sign: { keyFile: signer } });
  await exportReceipt(source, { out: signedByOther, sign: other.privateKey });
  await exportReceipt(source, { out: unsigned });
  await source.close();
}
const alice = keyPairFromSeed(testSeed(1)).publicKey;

function keyFile(name: string, content: string | Uint8Array): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}

describe('a pinned key or head that cannot be used refuses; it never unpins (issue 14 item 1)', () => {
  const unusable: Array<[string, () => string]> = [
    ['an empty file', () => keyFile('empty.pub', '')],
    ['a file of whitespace', () => keyFile('blank.pub', ' \n\t\n')],
    ['a private key', () => signer],
    ['the base64 of 31 bytes', () => keyFile('short.pub', Buffer.alloc(31, 1).toString('base64') + '\n')],
    ['33 raw bytes', () => keyFile('long.pub', new Uint8Array(33).fill(9))],
    [
      'a small-order point (the identity), raw',
      () =>
        keyFile(
          'identity.pub',
          Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 1 : 0)),
        ),
    ],
    [
      'a non-canonical encoding (y = p)',
      () =>
        keyFile(
          'noncanonical.pub',
          Buffer.from('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex').toString('base64'),
        ),
    ],
    [
      'a directory',
      () => {
        const p = join(dir, 'keydir');
        mkdirSync(p, { recursive: true });
        return p;
      },
    ],
    ['a missing file', () => join(dir, 'no-such.pub')],
  ];

  test.each(unusable)(
    'verify --pubkey with %s: exit 2 naming the file, for a receipt signed by another key and for an unsigned one',
    async (_name, make) => {
      const pub = make();
      for (const receipt of [signedByOther, unsigned, signed]) {
        const r = await run(['verify', receipt, '--pubkey', pub], dir);
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain('KEY_INVALID');
        expect(r.stderr).toContain(pub);
        expect(r.stderr).not.toMatch(/valid receipt/);
      }
    },
  );

  test('disclose --check with an empty --pubkey: exit 2, not a holding proof', async () => {
    const j = await memoryJournal();
    const pub = join(dir, 'public.tar.gz');
    const secrets = join(dir, 'public.secrets.json');
    await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: pub, secretsOut: secrets, sign: other.privateKey });
    const proof = join(dir, 'proof.json');
    await disclose(pub, { secrets, seq: 1, path: '/tool_call/arguments/api_key', out: proof });
    expect((await run(['disclose', pub, '--check', proof], dir)).code).toBe(0);
    const r = await run(['disclose', pub, '--check', proof, '--pubkey', keyFile('empty2.pub', '')], dir);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('KEY_INVALID');
    // a usable key of someone else: the proof does not hold (exit 1)
    expect(
      (
        await run(
          ['disclose', pub, '--check', proof, '--pubkey', keyFile('alice-for-disclose.pub', publicKeyToPem(alice))],
          dir,
        )
      ).code,
    ).toBe(1);
  });

  test('verify --head that is empty or malformed: exit 2', async () => {
    for (const head of ['', 'sha256:', `sha256:${'A'.repeat(64)}`]) {
      const r = await run(['verify', signed, '--head', head], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--head must be/);
    }
  });

  test.each<[string, () => string | Uint8Array]>([
    ['keyfile.pub as keygen writes it (SPKI PEM)', () => readFileSync(`${signer}.pub`)],
    ['the PEM with CRLF line ends', () => readFileSync(`${signer}.pub`, 'utf8').replace(/\n/g, '\r\n')],
    ['the base64 of the 32 bytes, with a newline', () => Buffer.from(alice).toString('base64') + '\n'],
    ['the 32 raw bytes (a binary file)', () => alice],
  ])(
    'each accepted key file form pins: %s (exit 0 for the signer, 1 for another signer, 1 unsigned)',
    async (name, content) => {
      const pub = keyFile(`form-${name.length}.pub`, content());
      expect((await run(['verify', signed, '--pubkey', pub], dir)).code).toBe(0);
      const mismatch = await run(['verify', signedByOther, '--pubkey', pub, '--json'], dir);
      expect(mismatch.code).toBe(1);
      expect(JSON.parse(mismatch.stdout).report.problems.map((p: { code: string }) => p.code)).toEqual([
        'KEY_MISMATCH',
      ]);
      const missing = await run(['verify', unsigned, '--pubkey', pub, '--json'], dir);
      expect(missing.code).toBe(1);
      expect(JSON.parse(missing.stdout).report.problems.map((p: { code: string }) => p.code)).toEqual([
        'SIGNATURE_MISSING',
      ]);
    },
  );
});

describe('bytes smuggled after a receipt (issue 14 item 2)', () => {
  test('"\\x00" and a second gzip member after a signed receipt: verify exits 1 with ARCHIVE_INVALID', async () => {
    const evil = gzipSync(tarOf([{ name: 'evil.txt', data: text('rm -rf ~\n') }]));
    const smuggled = join(dir, 'smuggled.tar.gz');
    writeFileSync(smuggled, concatBytes([readFileSync(signed), Uint8Array.of(0), evil]));
    const r = await run(['verify', smuggled, '--pubkey', `${signer}.pub`, '--json'], dir);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).report.problems.map((p: { code: string }) => p.code)).toEqual(['ARCHIVE_INVALID']);
  });
});

describe('what export writes, verify accepts (issue 14 item 3)', () => {
  test('a 40 MB repetitive value: export .tar.gz and verify (it compresses about 1000:1)', async () => {
    const big = await journalWith('big', [
      STEP(0),
      { ...STEP(1), result: { log: 'a'.repeat(40 * 1024 * 1024) } },
      STEP(2),
    ]);
    const out = join(dir, 'big.tar.gz');
    const e = await run(['export', big, '-o', out, '--json'], dir);
    expect(e.code, e.stderr).toBe(0);
    const size = readFileSync(out).length;
    expect(size).toBeLessThan(200 * 1024); // the old 256:1 ratio limit refused this archive
    const v = await run(['verify', out, '--json'], dir);
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout).report.ok).toBe(true);
  }, 60_000);
});

describe('every command that opens a receipt runs the whole verification (issue 14 item 6)', () => {
  test('a published receipt with its declarations removed and its anchor forged: verify exits 1, diff refuses it (exit 2), not "same"', async () => {
    const j = await memoryJournal();
    const genuine = join(dir, 'genuine.tar');
    await publish(j, { policy: SAMPLE_POLICY, optIn: true, out: genuine });
    const entries = entriesOf(readFileSync(genuine));
    const manifest = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as Record<string, unknown>;
    expect('redactions' in manifest && 'anchor' in manifest).toBe(true);
    delete manifest.redactions;
    const anchor = manifest.anchor as Record<string, unknown>;
    // forge the anchor with a well-formed value that lies (it passes the member's shape check)
    if (typeof anchor.genesis_hash === 'string') anchor.genesis_hash = `sha256:${'0'.repeat(64)}`;
    const forged = join(dir, 'forged.tar');
    writeFileSync(
      forged,
      tarOf([{ name: 'manifest.json', data: text(canonicalJson(manifest as never)) }, ...entries.slice(1)]),
    );

    const v = await run(['verify', forged, '--json'], dir);
    expect(v.code).toBe(1);
    const codes = JSON.parse(v.stdout).report.problems.map((p: { code: string }) => p.code) as string[];
    expect(codes).toContain('ANCHOR_INVALID');
    expect(codes).toContain('REDACTION_UNDECLARED');

    expect((await run(['diff', genuine, genuine], dir)).code).toBe(0);
    for (const args of [
      [forged, genuine],
      [genuine, forged],
    ]) {
      const d = await run(['diff', ...args], dir);
      expect(d.code, d.stderr).toBe(2);
      expect(d.stderr).toMatch(/RECEIPT_INVALID: the receipt does not verify: (ANCHOR_INVALID|REDACTION_UNDECLARED)/);
      expect(d.stderr).not.toMatch(/same/);
    }
    // the gzip form of the forgery too, since a receipt is opened the same way whatever its compression
    const forgedGz = join(dir, 'forged.tar.gz');
    writeFileSync(forgedGz, gzipSync(readFileSync(forged)));
    expect(gunzipSync(readFileSync(forgedGz)).length).toBe(readFileSync(forged).length);
    expect((await run(['diff', forgedGz, genuine], dir)).code).toBe(2);
  });
});
