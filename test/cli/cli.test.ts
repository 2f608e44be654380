/**
 * The built CLI, driven as a child process for every verb: success and failure paths, exit codes
 * (0 ok, 1 verification failed or divergence, 2 usage/input/I-O error) and --json document shapes.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  args: string[],
  options: { cwd: string; input?: string | Buffer; env?: Record<string, string> },
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: options.cwd, env: { ...process.env, NO_COLOR: '1', ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
    else child.stdin!.end();
  });
}

/** A digest of every file under dir (names, sizes and bytes): equal before and after means untouched. */
function treeDigest(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        h.update(p.slice(dir.length) + '\0' + statSync(p).size + '\0');
        h.update(readFileSync(p));
      }
    }
  };
  walk(dir);
  return h.digest('hex');
}

const STEP = (i: number) => ({
  input: { question: `question ${i}` },
  model: 'gpt-4o',
  prompt: `You are step ${i}.`,
  tool_call: { name: 'search', arguments: { q: `q${i}` } },
  result: { hits: [i, i + 1] },
});

describe('stepchain CLI', () => {
  const dir = tempDir('stepchain-cli-');
  const journal = join(dir, 'run');

  test('--help lists every verb with an example; --version prints the version', async () => {
    const help = await run(['--help'], { cwd: dir });
    expect(help.code).toBe(0);
    for (const verb of ['init', 'append', 'log', 'show', 'head', 'verify', 'export', 'diff', 'fork', 'keygen'])
      expect(help.stdout).toContain(`  ${verb}`);
    expect(help.stdout).toContain('Exit codes');
    const version = await run(['--version'], { cwd: dir });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const verbHelp = await run(['append', '--help'], { cwd: dir });
    expect(verbHelp.code).toBe(0);
    expect(verbHelp.stdout).toContain('Examples:');
    expect(verbHelp.stdout).toContain('$ stepchain append');
  });

  test('a mistyped verb suggests the closest one and exits 2', async () => {
    const r = await run(['verfy', 'x'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('did you mean "verify"');
  });

  test('an unknown option suggests the closest one and exits 2', async () => {
    const r = await run(['log', journal, '--form', '3'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--from');
  });

  test('init creates a journal; init again is a clear error', async () => {
    const r = await run(['init', journal, '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ format: 'stepchain-cli/v1', command: 'init', ok: true });
    expect(doc.genesis.format).toBe('stepchain/v3');
    const again = await run(['init', journal], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/error: \w+/);
  });

  test('init --format v1 creates a stepchain/v1 journal; another format is a usage error', async () => {
    const v1 = await run(['init', join(dir, 'legacy'), '--format', 'v1', '--json'], { cwd: dir });
    expect(v1.code).toBe(0);
    expect(JSON.parse(v1.stdout).genesis.format).toBe('stepchain/v1');
    const bad = await run(['init', join(dir, 'other'), '--format', 'v9'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be v1, v2 or v3');
  });

  test('append from a file, from stdin, and a batch with --jsonl', async () => {
    const file = join(dir, 'step.json');
    writeFileSync(file, JSON.stringify(STEP(0), null, 2));
    const one = await run(['append', journal, '--file', file], { cwd: dir });
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^0 sha256:[0-9a-f]{64}\n$/);
    const stdin = await run(['append', journal, '--json'], { cwd: dir, input: JSON.stringify(STEP(1)) });
    expect(stdin.code).toBe(0);
    expect(JSON.parse(stdin.stdout).appended[0].seq).toBe(1);
    const batch = await run(['append', journal, '--jsonl'], {
      cwd: dir,
      input: [2, 3, 4].map((i) => JSON.stringify(STEP(i))).join('\n') + '\n',
    });
    expect(batch.code).toBe(0);
    expect(
      batch.stdout
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[0])),
    ).toEqual([2, 3, 4]);
  });

  test('bad input names the file, line and column, and appends nothing', async () => {
    const before = treeDigest(journal);
    const dup = await run(['append', journal, '--jsonl'], {
      cwd: dir,
      input: JSON.stringify(STEP(5)) + '\n{"model":"a","model":"b"}\n',
    });
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/<stdin>:2:\d+ repeats a member name/);
    const broken = await run(['append', journal, '--jsonl'], {
      cwd: dir,
      input: JSON.stringify(STEP(5)) + '\n{"model":"a",\n',
    });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/<stdin>:2:\d+ is not valid JSON/);
    const computed = await run(['append', journal], { cwd: dir, input: '{"seq":7}' });
    expect(computed.code).toBe(2);
    expect(computed.stderr).toContain('FIELD_NOT_ALLOWED');
    const date = await run(['append', journal], { cwd: dir, input: '{"meta":[1]}' });
    expect(date.code).toBe(2);
    expect(treeDigest(journal)).toBe(before);
  });

  test('input that is not UTF-8, or an integer a JSON number cannot carry exactly, is refused, never coerced (outsider B)', async () => {
    // Before: a Latin-1 é and stray bytes became U+FFFD, 12345678901234567890 became 12345678901234567000, exit 0.
    const before = treeDigest(journal);
    writeFileSync(join(dir, 'latin1.json'), Buffer.from('{"input":"caf\xe9"}', 'latin1'));
    const latin1 = await run(['append', journal, '--file', 'latin1.json'], { cwd: dir });
    expect(latin1.code).toBe(2);
    expect(latin1.stderr).toMatch(/latin1\.json:1: byte 14 of the line \(0xe9\) is not UTF-8/);
    const stray = await run(['append', journal], { cwd: dir, input: Buffer.from('{"input":"\xff\xfe"}', 'latin1') });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('INPUT_INVALID');
    const batch = await run(['append', journal, '--jsonl'], {
      cwd: dir,
      input: Buffer.concat([
        Buffer.from(JSON.stringify(STEP(5)) + '\r\n'),
        Buffer.from('{"input":"\xff"}\n', 'latin1'),
      ]),
    });
    expect(batch.code).toBe(2);
    expect(batch.stderr).toMatch(/<stdin>:2: byte 11 of the line \(0xff\) is not UTF-8/);
    for (const wide of [
      '12345678901234567890',
      '-9007199254740993',
      '[1, {"a": 90071992547409931}]',
      '1.2345678901234567890e19',
    ]) {
      const r = await run(['append', journal], { cwd: dir, input: `{"input":${wide}}` });
      expect(r.code, wide).toBe(2);
      expect(r.stderr, wide).toMatch(
        /<stdin>:1:\d+ holds the number -?[0-9.e]+, which would be stored as -?[0-9.e+]+, another number/,
      );
    }
    expect(treeDigest(journal)).toBe(before);
  });

  test('read-only verbs leave the journal byte-identical', async () => {
    const before = treeDigest(journal);
    for (const args of [
      ['log', journal],
      ['show', journal, '2'],
      ['head', journal],
      ['verify', journal],
      ['log', journal, '--json'],
    ]) {
      const r = await run(args, { cwd: dir });
      expect(r.code, args.join(' ') + r.stderr).toBe(0);
    }
    expect(treeDigest(journal)).toBe(before);
  });

  test('log, show and head print the run', async () => {
    const log = await run(['log', journal], { cwd: dir });
    expect(log.stderr).toContain('chain verified: 5 steps');
    expect(log.stdout).toContain('search');
    expect(log.stdout).toContain('You are step 4.');
    const show = await run(['show', journal, '3', '--json'], { cwd: dir });
    expect(JSON.parse(show.stdout).step).toMatchObject({ seq: 3, model: 'gpt-4o', result: { hits: [3, 4] } });
    const head = await run(['head', journal], { cwd: dir });
    expect(head.stdout).toMatch(/^4 sha256:[0-9a-f]{64}\n$/);
    const missing = await run(['show', journal, '99'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('last step is seq 4');
  });

  test('verify --json on a valid journal, and against a pinned head', async () => {
    const head = (await run(['head', journal], { cwd: dir })).stdout.split(' ')[1]!.trim();
    const ok = await run(['verify', journal, '--json', '--head', head], { cwd: dir });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      command: 'verify',
      ok: true,
      kind: 'journal',
      report: { ok: true, steps: 5, head },
    });
    const wrong = await run(['verify', journal, '--head', 'sha256:' + '0'.repeat(64)], { cwd: dir });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('HEAD_MISMATCH');
    const bad = await run(['verify', journal, '--head', 'nope'], { cwd: dir });
    expect(bad.code).toBe(2);
  });

  test('keygen writes a 0600 private key and a public key; refuses to overwrite', async () => {
    const key = join(dir, 'alice.key');
    const r = await run(['keygen', '-o', key, '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).key_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(readFileSync(key + '.pub', 'utf8')).toContain('PUBLIC KEY');
    const again = await run(['keygen', '-o', key], { cwd: dir });
    expect(again.code).toBe(2);
  });

  test('export a signed receipt, verify it with the pinned key, refuse the wrong key', async () => {
    const receipt = join(dir, 'receipt.tar.gz');
    const before = treeDigest(journal);
    const exp = await run(['export', journal, '-o', receipt, '--sign', join(dir, 'alice.key'), '--json'], { cwd: dir });
    expect(exp.code, exp.stderr).toBe(0);
    expect(JSON.parse(exp.stdout)).toMatchObject({
      command: 'export',
      ok: true,
      compressed: true,
      range: { from: 0, to: 4 },
    });
    expect(treeDigest(journal)).toBe(before);
    const ok = await run(['verify', receipt, '--pubkey', join(dir, 'alice.key.pub')], { cwd: dir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).toContain('✔ authenticated receipt');
    expect(ok.stderr).toContain('signed by: sha256:');
    await run(['keygen', '-o', join(dir, 'mallory.key')], { cwd: dir });
    const wrong = await run(['verify', receipt, '--pubkey', join(dir, 'mallory.key.pub'), '--json'], { cwd: dir });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout).report.problems.map((p: { code: string }) => p.code)).toContain('KEY_MISMATCH');
  });

  test('a tampered receipt fails verification with a located problem', async () => {
    const tar = join(dir, 'plain.tar');
    expect((await run(['export', journal, '-o', tar], { cwd: dir })).code).toBe(0);
    const bytes = readFileSync(tar);
    const text = bytes.toString('latin1');
    const at = text.indexOf('You are step 2.');
    bytes[at + 12] = '9'.charCodeAt(0);
    const tampered = join(dir, 'tampered.tar');
    writeFileSync(tampered, bytes);
    const r = await run(['verify', tampered, '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.report.problems.length).toBeGreaterThan(0);
  });

  test('a tampered journal: log says so plainly and exits 1', async () => {
    const copy = join(dir, 'tampered-run');
    expect((await run(['init', copy], { cwd: dir })).code).toBe(0);
    expect(
      (
        await run(['append', copy, '--jsonl'], {
          cwd: dir,
          input: [0, 1, 2].map((i) => JSON.stringify(STEP(i))).join('\n'),
        })
      ).code,
    ).toBe(0);
    const bucket = join(
      copy,
      'buckets',
      readdirSync(join(copy, 'buckets')).find((f) => f.endsWith('.jsonl'))!,
    );
    writeFileSync(bucket, readFileSync(bucket, 'utf8').replace('question 1', 'question X'));
    const log = await run(['log', copy], { cwd: dir });
    expect(log.code).toBe(1);
    expect(log.stderr).toContain('INVALID');
    expect(log.stderr).toContain('HASH_MISMATCH');
    expect(log.stderr).toContain('does NOT hold');
    const verify = await run(['verify', copy, '--json'], { cwd: dir });
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout).report.problems[0]).toMatchObject({
      code: 'HASH_MISMATCH',
      location: { seq: 1, line: 2 },
    });
  });

  test('fork, then diff: same prefix, divergence after, exit codes 0 and 1', async () => {
    const fork = join(dir, 'fork');
    const f = await run(['fork', journal, '--from-step', '2', fork, '--json'], { cwd: dir });
    expect(f.code, f.stderr).toBe(0);
    expect(JSON.parse(f.stdout).lineage).toMatchObject({ from_step: 2 });
    const changed = { ...STEP(3), tool_call: { name: 'search', arguments: { q: 'Lyon' } } };
    expect(
      (
        await run(['append', fork, '--jsonl'], {
          cwd: dir,
          input: [changed, STEP(4)].map((s) => JSON.stringify(s)).join('\n'),
        })
      ).code,
    ).toBe(0);
    const same = await run(['diff', journal, journal], { cwd: dir });
    expect(same.code).toBe(0);
    const d = await run(['diff', journal, fork], { cwd: dir });
    expect(d.code).toBe(1);
    expect(d.stderr).toContain('diverged at step 3');
    expect(d.stderr).toContain('tool_call.arguments.q');
    const json = await run(['diff', journal, fork, '--json', '--all'], { cwd: dir });
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ command: 'diff', same: false, report: { format: 'stepchain-diff/v1', same: false } });
    expect(doc.report.divergences[0].fields[0]).toMatchObject({
      path: '/tool_call/arguments/q',
      kind: 'changed',
      a: 'q3',
      b: 'Lyon',
    });
    const ignored = await run(['diff', journal, fork, '--ignore', '/tool_call/arguments/q'], { cwd: dir });
    expect(ignored.code).toBe(0);
    const receipt = join(dir, 'receipt.tar.gz');
    const vsReceipt = await run(['diff', receipt, journal], { cwd: dir });
    expect(vsReceipt.code, vsReceipt.stderr).toBe(0);
    // A published receipt differs from its journal exactly where values were redacted.
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ rules: [{ id: 'queries', paths: ['/tool_call/arguments/q'] }] }));
    const published = join(dir, 'public.tar');
    expect((await run(['publish', journal, '--policy', policy, '--opt-in', '-o', published], { cwd: dir })).code).toBe(
      0,
    );
    const vsPublished = await run(['diff', journal, published, '--json'], { cwd: dir });
    expect(vsPublished.code, vsPublished.stderr).toBe(1);
    // spec/DIFF.md §3.2: a marker is one changed value; a v3 publication withholds a member by a marker that
    // stands in the object holding it (REDACTION.md §13).
    expect(JSON.parse(vsPublished.stdout).report.divergences[0].fields[0]).toMatchObject({
      path: '/tool_call/arguments',
      kind: 'changed',
      a: { q: 'q0' },
      b: { '$stepchain:withheld': [expect.stringMatching(/^sha256:/)] },
    });
    expect((await run(['verify', published], { cwd: dir })).code).toBe(0);
  });

  test('errors are clear and carry no stack trace unless --debug', async () => {
    const r = await run(['verify', join(dir, 'nope.tar')], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no such file');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const json = await run(['verify', join(dir, 'nope.tar'), '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: { code: 'INPUT_UNREADABLE' } });
    const notJournal = await run(['log', join(dir, 'receipt.tar.gz')], { cwd: dir });
    expect(notJournal.code).toBe(2);
    expect(notJournal.stderr).not.toMatch(/\n\s+at /);
  });
});
