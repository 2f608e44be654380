/** The publish and disclose verbs: a thin shell; exit codes, refusals, files. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { runCli } from '../../src/cli/cli.js';
import { VERBS } from '../../src/cli/verbs/index.js';
import { discloseVerb, publishVerb } from '../../src/cli/verbs/publish.js';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CREATED_AT, SAMPLE_POLICY, SECRETS, archiveText, sampleSteps } from './helpers.js';

const dir = tempDir('stepchain-redact-cli-');
const verbs = [...VERBS.filter((v) => v.name !== 'publish' && v.name !== 'disclose'), publishVerb, discloseVerb];
let out = '';
let err = '';

beforeEach(() => {
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
});
afterEach(() => vi.restoreAllMocks());

describe('stepchain publish / disclose', () => {
  test('end to end', async () => {
    const store = new FileStore(dir);
    const j = await store.create('run', { journalId: 'cli', createdAt: CREATED_AT, blobThreshold: 1024 });
    for (const s of sampleSteps()) await j.append(s);
    await j.close();
    const journal = join(dir, 'run');
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify(SAMPLE_POLICY, null, 2));
    const pub = join(dir, 'public.tar.gz');
    const secrets = join(dir, 'secrets.json');

    expect(await runCli(['publish', journal, '--policy', policy, '-o', pub], verbs)).toBe(2);
    expect(err).toMatch(/--opt-in/);
    expect(existsSync(pub)).toBe(false);

    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ rules: [{ id: 'x', pathz: ['/prompt'] }] }));
    expect(await runCli(['publish', journal, '--policy', join(dir, 'bad.json'), '--opt-in', '-o', pub], verbs)).toBe(2);
    expect(err).toMatch(/UNKNOWN_MEMBER: rule "x" \(rules\[0\]\) member "pathz"/);

    expect(
      await runCli(
        ['publish', journal, '--policy', policy, '--opt-in', '-o', pub, '--secrets-out', secrets, '--json'],
        verbs,
      ),
    ).toBe(0);
    const doc = JSON.parse(out);
    expect(doc.ok).toBe(true);
    expect(doc.redactions).toBeGreaterThan(5);
    for (const s of Object.values(SECRETS)) expect(archiveText(readFileSync(pub)).includes(s)).toBe(false);

    const proof = join(dir, 'proof.json');
    expect(
      await runCli(
        ['disclose', pub, '--secrets', secrets, '--seq', '1', '--path', '/tool_call/arguments/api_key', '-o', proof],
        verbs,
      ),
    ).toBe(0);
    out = '';
    expect(await runCli(['disclose', pub, '--check', proof], verbs)).toBe(0);
    expect(err).toMatch(/disclosure holds/);
    const forged = { ...JSON.parse(readFileSync(proof, 'utf8')), value: 'guess' };
    writeFileSync(join(dir, 'forged.json'), JSON.stringify(forged));
    expect(await runCli(['disclose', pub, '--check', join(dir, 'forged.json'), '--json'], verbs)).toBe(1);
    expect(out).toMatch(/COMMITMENT_MISMATCH/);
    expect(await runCli(['disclose', pub, '--seq', '1'], verbs)).toBe(2);
    const step = join(dir, 'step2.json');
    expect(await runCli(['disclose', pub, '--secrets', secrets, '--seq', '2', '-o', step], verbs)).toBe(0);
    expect(await runCli(['disclose', pub, '--check', step], verbs)).toBe(0);
    expect(err).toMatch(/whole-step disclosure holds/);

    // The original head: not in the public receipt, opened on request for someone who holds it.
    const head = (doc.original_head as { step_hash: string }).step_hash;
    expect(archiveText(readFileSync(pub)).includes(head)).toBe(false);
    expect(await runCli(['disclose', pub, '--secrets', secrets, '--hash-only', '--path', '/prompt'], verbs)).toBe(2);
    const opening = join(dir, 'head.json');
    err = '';
    expect(await runCli(['disclose', pub, '--secrets', secrets, '--hash-only', '-o', opening], verbs)).toBe(0);
    expect(err).toMatch(/its holder can test guesses/);
    err = '';
    expect(await runCli(['disclose', pub, '--check', opening], verbs)).toBe(0);
    expect(err).toContain(`the anchor commits to ${head} as the original hash of step 3 (the original head)`);
    writeFileSync(
      join(dir, 'guess.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(opening, 'utf8')), step_hash: 'sha256:' + '0'.repeat(64) }),
    );
    out = '';
    expect(await runCli(['disclose', pub, '--check', join(dir, 'guess.json'), '--json'], verbs)).toBe(1);
    expect(JSON.parse(out).problems[0].code).toBe('ANCHOR_MISMATCH');
  });

  test('publish prints where the original head went; a secret-shaped step_id refuses with ENVELOPE_SECRET', async () => {
    const store = new FileStore(join(dir, 'text'));
    const j = await store.create('run', { journalId: 'cli-text', createdAt: CREATED_AT });
    const steps = sampleSteps();
    for (const s of steps) await j.append(s);
    await j.close();
    const policy = join(dir, 'text-policy.json');
    writeFileSync(policy, JSON.stringify({ rules: [SAMPLE_POLICY.rules[2]] }));
    expect(
      await runCli(
        ['publish', join(dir, 'text', 'run'), '--policy', policy, '--opt-in', '-o', join(dir, 'text.tar')],
        verbs,
      ),
    ).toBe(0);
    expect(err).toMatch(
      /original head sha256:[0-9a-f]{64} \(seq 3\): in the public receipt only as a salted commitment; step 0 published unchanged/,
    );

    const bad = await store.create('bad', { journalId: 'cli-bad', createdAt: CREATED_AT });
    await bad.append({ ...steps[0]!, step_id: SECRETS['aws-access-key'] });
    await bad.close();
    err = '';
    expect(
      await runCli(
        ['publish', join(dir, 'text', 'bad'), '--policy', policy, '--opt-in', '-o', join(dir, 'bad.tar')],
        verbs,
      ),
    ).toBe(2);
    expect(err).toMatch(/ENVELOPE_SECRET: step 0's step_id matches the aws-access-key detector/);
    expect(err).not.toContain(SECRETS['aws-access-key']);
    expect(existsSync(join(dir, 'bad.tar'))).toBe(false);
  });
});
