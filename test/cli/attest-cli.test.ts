/**
 * Independent time and co-signatures with the built CLI (spec/TIME.md): `stepchain timestamp` against a
 * real RFC 3161 authority (OpenSSL's `openssl ts -reply` on 127.0.0.1), `stepchain cosign` by three
 * parties, `export --attest`, and `verify --tsa-cert` / `--cosigner … --threshold` as an auditor runs them
 * offline: the verdict names the TSA and the time, and who signed what; another TSA's certificate, an
 * expired TSA certificate, a 2-of-3 policy that one signature cannot meet, and unusable pins are refused.
 */
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cliIn, codesOf, json } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';
import { startTsa, type LocalTsa } from '../helpers/tsa.js';

const dir = tempDir('stepchain-attest-cli-');
const { run } = cliIn(dir, {}, { inProcess: true });

let tsa: LocalTsa;

beforeAll(async () => {
  tsa = await startTsa(tempDir('stepchain-tsa-'));
  for (const k of ['operator', 'provider', 'approver', 'stranger'])
    expect((await run('keygen', '-o', `${k}.key`)).code).toBe(0);
  expect((await run('init', 'j')).code).toBe(0);
  writeFileSync(
    join(dir, 'steps.jsonl'),
    Array.from({ length: 6 }, (_, i) => JSON.stringify({ input: { i } })).join('\n') + '\n',
  );
  expect((await run('append', 'j', '--jsonl', '--file', 'steps.jsonl')).code).toBe(0);
  // The TSA stamps the head; the operator and the tool provider co-sign every step, the approver steps 2..4.
  const stamped = await run('timestamp', 'j', '--tsa', tsa.url, '-o', 'j.attest.json');
  expect(stamped.code, stamped.stderr).toBe(0);
  expect((await run('cosign', 'j', '--key', 'operator.key', '-o', 'j.attest.json')).code).toBe(0);
  expect((await run('cosign', 'j', '--key', 'provider.key', '-o', 'j.attest.json')).code).toBe(0);
  expect(
    (await run('cosign', 'j', '--key', 'approver.key', '-o', 'j.attest.json', '--from', '2', '--to', '4')).code,
  ).toBe(0);
  const exported = await run('export', 'j', '-o', 'r.tar.gz', '--attest', 'j.attest.json');
  expect(exported.code, exported.stderr).toBe(0);
}, 120_000);

afterAll(async () => tsa?.close());

describe('timestamp → export → verify --tsa-cert', () => {
  test('a token from the local TSA verifies offline: "existed no later than T, per TSA X"', async () => {
    expect(tsa.answered).toBe(1);
    const r = await run('verify', 'r.tar.gz', '--tsa-cert', tsa.cert.tsa, '--json');
    expect(r.code, r.stdout).toBe(0);
    const report = json(r).report;
    expect(report.attest.timestamps).toEqual([expect.objectContaining({ seq: 5, checked: true, tsa: 'Test TSA' })]);
    expect(report.proves.join('\n')).toMatch(
      /Steps 0–5 existed no later than \d{4}-\d\d-\d\dT[\d:.]+Z, per TSA Test TSA/,
    );
    expect(report.does_not_prove.join('\n')).not.toMatch(/content and timestamps are true/);
    const human = await run('verify', 'r.tar.gz', '--tsa-cert', tsa.cert.tsa);
    expect(human.stderr).toMatch(/proves {3}Steps 0–5 existed no later than .*, per TSA Test TSA/);
  });

  test('without --tsa-cert the token is carried but not relied on', async () => {
    const r = await run('verify', 'r.tar.gz', '--json');
    expect(r.code).toBe(0);
    expect(json(r).report.does_not_prove.join('\n')).toMatch(
      /content and timestamps are true[\s\S]*1 RFC 3161 time-stamp token, not checked; pin/,
    );
  });

  test("another TSA's certificate is TIMESTAMP_SIGNER (exit 1)", async () => {
    const r = await run('verify', 'r.tar.gz', '--tsa-cert', tsa.cert.other, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['TIMESTAMP_SIGNER']);
  });

  test('a token signed while the TSA certificate had expired is TIMESTAMP_CERT_EXPIRED', async () => {
    tsa.use('expired');
    try {
      expect((await run('timestamp', 'j', '--tsa', tsa.url, '-o', 'old.attest.json')).code).toBe(0);
    } finally {
      tsa.use('tsa');
    }
    expect((await run('export', 'j', '-o', 'old.tar', '--attest', 'old.attest.json')).code).toBe(0);
    const r = await run('verify', 'old.tar', '--tsa-cert', tsa.cert.expired, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['TIMESTAMP_CERT_EXPIRED']);
  });

  test("a token over another head is TIMESTAMP_MISMATCH: the step it names is not the chain's", async () => {
    const doc = JSON.parse(readFileSync(join(dir, 'j.attest.json'), 'utf8'));
    // The same token, claimed for step 4 instead of the head it stamps.
    const step4 = json(await run('show', 'j', '4', '--json'));
    const hash4 = (step4.record ?? step4.step ?? step4).step_hash as string;
    expect(hash4).toMatch(/^sha256:/);
    doc.timestamps[0] = { ...doc.timestamps[0], seq: 4, step_hash: hash4 };
    writeFileSync(join(dir, 'moved.attest.json'), JSON.stringify(doc));
    expect((await run('export', 'j', '-o', 'moved.tar', '--attest', 'moved.attest.json')).code).toBe(0);
    const r = await run('verify', 'moved.tar', '--tsa-cert', tsa.cert.tsa, '--json');
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['TIMESTAMP_MISMATCH']);
  });

  test("a pinned certificate that is not a TSA's, or not a certificate, is exit 2; --tsa-cert on a journal too", async () => {
    writeFileSync(join(dir, 'not-a-cert.pem'), 'hello\n');
    for (const file of [join(tsa.cert.tsa, '..', 'ca.pem'), 'not-a-cert.pem']) {
      const r = await run('verify', 'r.tar.gz', '--tsa-cert', file);
      expect(r.code, r.stderr).toBe(2);
    }
    expect((await run('verify', 'j', '--tsa-cert', tsa.cert.tsa)).code).toBe(2);
  });
});

describe('record-keeping --profile art12', () => {
  test('writes the Art. 12 view of a verified run; a tampered journal is refused and nothing is written', async () => {
    const r = await run('record-keeping', 'j', '--retention', 'P6M', '-o', 'art12.json');
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(join(dir, 'art12.json'), 'utf8'));
    expect(doc).toMatchObject({
      format: 'stepchain-record-keeping/v1',
      profile: 'eu-ai-act-art12',
      retention: { period: 'P6M' },
    });
    expect(doc.runs[0].integrity).toMatchObject({ steps: 6, head_seq: 5, chain_verified: true });
    expect(doc.runs[0].input_data).toHaveLength(6);
    expect((await run('record-keeping', 'j', '-o', 'x.json')).code).toBe(2);
    cpSync(join(dir, 'j'), join(dir, 'jt'), { recursive: true });
    const bucket = join(dir, 'jt', 'buckets', readdirSync(join(dir, 'jt', 'buckets'))[0]!);
    writeFileSync(bucket, readFileSync(bucket, 'utf8').replace('"i":3', '"i":4'));
    const t = await run('record-keeping', 'jt', '--retention', 'P6M', '-o', 'jt.json');
    expect(t.code).toBe(1);
    expect(existsSync(join(dir, 'jt.json'))).toBe(false);
  });
});

describe('cosign → verify --cosigner … --threshold', () => {
  const pins = ['--cosigner', 'operator.key.pub', '--cosigner', 'provider.key.pub', '--cosigner', 'approver.key.pub'];

  test('2 of 3 pinned co-signers: authenticated, naming who signed which steps', async () => {
    const r = await run('verify', 'r.tar.gz', ...pins, '--threshold', '2', '--json');
    expect(r.code, r.stdout).toBe(0);
    const report = json(r).report;
    expect(report.verdict).toBe('authenticated');
    expect(report.attest.cosigned_by).toHaveLength(3);
    const proves = report.proves.join('\n');
    expect(proves).toMatch(/Co-signer approver\.key\.pub \(sha256:[0-9a-f]{64}\), whom you pinned, signed steps 2–4/);
    expect(proves).toMatch(/Co-signer operator\.key\.pub \(sha256:[0-9a-f]{64}\), whom you pinned, signed steps 0–5/);
  });

  test('a policy one signer short is COSIGN_QUORUM (exit 1)', async () => {
    const r = await run(
      'verify',
      'r.tar.gz',
      '--cosigner',
      'operator.key.pub',
      '--cosigner',
      'stranger.key.pub',
      '--json',
    );
    expect(r.code).toBe(1);
    expect(codesOf(r)).toEqual(['COSIGN_QUORUM']);
  });

  test('a threshold out of range, a key given twice, --threshold alone: exit 2', async () => {
    expect((await run('verify', 'r.tar.gz', ...pins, '--threshold', '4')).code).toBe(2);
    expect((await run('verify', 'r.tar.gz', ...pins, '--threshold', '0')).code).toBe(2);
    expect(
      (await run('verify', 'r.tar.gz', '--cosigner', 'operator.key.pub', '--cosigner', 'operator.key.pub')).code,
    ).toBe(2);
    expect((await run('verify', 'r.tar.gz', '--threshold', '1')).code).toBe(2);
  });

  test('a partial receipt carries only what binds to its range, and still verifies', async () => {
    expect(
      (await run('export', 'j', '-o', 'part.tar', '--from', '2', '--to', '4', '--attest', 'j.attest.json')).code,
    ).toBe(0);
    const r = await run('verify', 'part.tar', ...pins, '--threshold', '1', '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(
      json(r).report.attest.cosignatures.map((c: { keyid: string; from: number; to: number }) => `${c.from}..${c.to}`),
    ).toEqual(['2..4']);
  });
});
