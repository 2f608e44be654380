/**
 * `stepchain disclose --journal` (spec/REDACTION.md §13.7): a stepchain/v3 publication has no secrets file, and
 * its withheld units could not be disclosed from the CLI or the package's entry points at all (outsider M). The
 * opening is made from the journal the receipt was published from, checked against the receipt before it is
 * written, and checked offline by `disclose --check` as any disclosure is. Real journals and publications.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { cliIn, type CliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-disclose-v3-');
let cli: CliIn;
/** `disclose public.tar --journal <journal> --seq 0 --path <path>` and more arguments. */
const opening = (journal: string, path: string, ...more: string[]): string[] => [
  'disclose',
  'public.tar',
  '--journal',
  journal,
  '--seq',
  '0',
  '--path',
  path,
  ...more,
];
const SECRET = 'Please mail the refund to grace.hopper@example.org before Friday, thank you.';

beforeAll(async () => {
  cli = cliIn(dir, {}, { inProcess: true });
  for (const j of ['runs/pay', 'runs/other']) {
    await cli.ok('init', j);
    writeFileSync(
      join(dir, 'step.json'),
      JSON.stringify({
        input: { note: SECRET, pin: '4711' },
        tool_call: { name: 'refund', arguments: { amount: 10 } },
      }),
    );
    await cli.ok('append', j, '--file', 'step.json');
  }
  writeFileSync(
    join(dir, 'policy.json'),
    JSON.stringify({
      rules: [
        { id: 'pin', paths: ['/input/pin'] },
        { id: 'mail', detectors: ['email'] },
      ],
    }),
  );
  await cli.ok('publish', 'runs/pay', '--policy', 'policy.json', '--opt-in', '-o', 'public.tar');
});

describe('disclose --journal', () => {
  test('opens a withheld member, and the opening holds offline', async () => {
    await cli.ok(...opening('runs/pay', '/input/pin', '-o', 'pin.json'));
    expect(JSON.parse(readFileSync(join(dir, 'pin.json'), 'utf8'))).toMatchObject({
      format: 'stepchain-opening/v2',
      seq: 0,
      path: '/input/pin',
      value: '4711',
    });
    const check = await cli.run('disclose', 'public.tar', '--check', 'pin.json');
    expect(check.code).toBe(0);
    expect(check.stderr).toContain('✔ disclosure holds: seq 0, /input/pin = "4711"');
  });

  test('opens a withheld chunk of a string: the e-mail address inside the note', async () => {
    const r = await cli.run(...opening('runs/pay', '/input/note', '--chunk', '0', '--json'));
    // The address sits in the note's first chunk (64-byte chunks, REDACTION.md §13).
    expect(r.code).toBe(0);
    const proof = (JSON.parse(r.stdout) as { proof: { value: string; chunk: number } }).proof;
    expect(proof.chunk).toBe(0);
    expect(SECRET.startsWith(proof.value)).toBe(true);
    expect(proof.value).toContain('grace.hopper@example.org');
  });

  test('an edited value, another journal, a unit not withheld, a v3 flag on the wrong command: each refused, coded', async () => {
    const genuine = JSON.parse(readFileSync(join(dir, 'pin.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'forged.json'), JSON.stringify({ ...genuine, value: '0000' }));
    const forged = await cli.run('disclose', 'public.tar', '--check', 'forged.json');
    expect(forged.code).toBe(1);
    expect(forged.stderr).toMatch(/disclosure does NOT hold.*\n.*COMMITMENT_MISMATCH/);
    // The other journal's seed gives other salts: the opening does not give the receipt's digest.
    const other = await cli.run(...opening('runs/other', '/input/pin'));
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/RECEIPT_INVALID: .*COMMITMENT_MISMATCH.*published from/);
    const shown = await cli.run(...opening('runs/pay', '/tool_call/arguments/amount'));
    expect(shown.code).toBe(2);
    expect(shown.stderr).toMatch(/NOT_REDACTED/);
    expect((await cli.run('disclose', 'public.tar', '--journal', 'runs/pay', '--seq', '0')).stderr).toMatch(
      /needs --seq and --path/,
    );
    expect((await cli.run('disclose', 'public.tar', '--check', 'pin.json', '--journal', 'runs/pay')).code).toBe(2);
    expect(
      (await cli.run('disclose', 'public.tar', '--secrets', 's.json', '--seq', '0', '--chunk', '1')).stderr,
    ).toMatch(/--chunk applies to --journal/);
  });

  test('a chunk says which it is; a proof file that is not I-JSON is refused; a unit inside a part says so', async () => {
    await cli.ok(...opening('runs/pay', '/input/note', '--chunk', '0', '-o', 'chunk.json'));
    const check = await cli.run('disclose', 'public.tar', '--check', 'chunk.json');
    expect(check.code).toBe(0);
    expect(check.stderr).toMatch(/✔ disclosure holds: seq 0, \/input\/note chunk 0 = "Please mail/);
    // Two members named "value": JSON.parse keeps the last, another parser the first (outsider N).
    const text = readFileSync(join(dir, 'pin.json'), 'utf8').trim();
    writeFileSync(join(dir, 'twice.json'), text.replace('{', '{"value":"0000",'));
    const twice = await cli.run('disclose', 'public.tar', '--check', 'twice.json');
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/PROOF_INVALID.*not I-JSON: DUPLICATE_KEY/);
    writeFileSync(join(dir, 'latin1.json'), Buffer.concat([Buffer.from(text.slice(0, -1)), Buffer.from([0xff, 0x7d])]));
    expect((await cli.run('disclose', 'public.tar', '--check', 'latin1.json')).stderr).toMatch(
      /PROOF_INVALID.*not UTF-8/,
    );
    writeFileSync(join(dir, 'future.json'), JSON.stringify({ format: 'stepchain-opening/v9', seq: 0 }));
    expect((await cli.run('disclose', 'public.tar', '--check', 'future.json')).stderr).toMatch(
      /PROOF_INVALID .*format "stepchain-opening\/v9", which this verifier does not know/,
    );
    const missing = await cli.run('disclose', 'public.tar', '--check', 'nowhere.json');
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/no such file/)]);
    // A value of 1 KiB or more is stored once, as a part: a unit inside it cannot be opened yet, and says why.
    await cli.ok('init', 'runs/big');
    const cfg: Record<string, string> = { api_key: 'sk-live-1' };
    for (let i = 0; i < 40; i++) cfg[`setting${i}`] = 'v'.repeat(40);
    writeFileSync(join(dir, 'big.json'), JSON.stringify({ input: { cfg } }));
    await cli.ok('append', 'runs/big', '--file', 'big.json');
    writeFileSync(join(dir, 'key.json'), JSON.stringify({ rules: [{ id: 'key', paths: ['/input/cfg/api_key'] }] }));
    await cli.ok('publish', 'runs/big', '--policy', 'key.json', '--opt-in', '-o', 'big.tar');
    const inPart = await cli.run(
      'disclose',
      'big.tar',
      '--journal',
      'runs/big',
      '--seq',
      '0',
      '--path',
      '/input/cfg/api_key',
    );
    expect(inPart.code).toBe(2);
    expect(inPart.stderr).toMatch(
      /ARGUMENT_INVALID: \/input\/cfg\/api_key of step 0 lies inside part sha256:[0-9a-f]{64}.*not supported yet/,
    );
  });

  test('a record sealed by an erasure says why its units cannot be opened', async () => {
    await cli.ok('init', 'runs/sealed');
    writeFileSync(join(dir, 'two.json'), JSON.stringify({ input: { pin: '4711', email: 'x@example.org' } }));
    await cli.ok('append', 'runs/sealed', '--file', 'two.json');
    await cli.ok('publish', 'runs/sealed', '--policy', 'policy.json', '--opt-in', '-o', 'sealed.tar');
    await cli.ok(
      'erase',
      'runs/sealed',
      '--seq',
      '0',
      '--path',
      '/input/email',
      '--reason',
      'request of the data subject',
    );
    const r = await cli.run('disclose', 'sealed.tar', '--journal', 'runs/sealed', '--seq', '0', '--path', '/input/pin');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SOURCE_INVALID: step 0 was sealed by an erasure .*not supported yet/);
  });
});
