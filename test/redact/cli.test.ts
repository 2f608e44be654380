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

    expect(await runCli(['publish', journal, '--policy', policy, '--opt-in', '-o', pub, '--secrets-out', secrets, '--json'], verbs)).toBe(0);
    const doc = JSON.parse(out);
    expect(doc.ok).toBe(true);
    expect(doc.redactions).toBeGreaterThan(5);
    for (const s of Object.values(SECRETS)) expect(archiveText(readFileSync(pub)).includes(s)).toBe(false);

    const proof = join(dir, 'proof.json');
    expect(await runCli(['disclose', pub, '--secrets', secrets, '--seq', '1', '--path', '/tool_call/arguments/api_key', '-o', proof], verbs)).toBe(0);
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
  });
});
