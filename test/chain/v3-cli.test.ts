/**
 * stepchain/v3 from the CLI (real processes, dist/): `init --format v3` creates a v3 journal that `append`
 * writes as v3; `verify` runs the fast tier, `verify --deep` the deep tier; a stored root that does not
 * commit to the values is found only with --deep, located at its seq; a receipt path with --deep is a usage
 * error. v1/v2 journals keep their format.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const dir = tempDir('stepchain-v3-cli-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

const bucket = (j: string): string =>
  join(
    dir,
    j,
    'buckets',
    readdirSync(join(dir, j, 'buckets')).find((n) => n.endsWith('.jsonl'))!,
  );

describe('stepchain/v3 in the CLI', { timeout: 120_000 }, () => {
  it('init --format v3, append, verify (fast and deep); a root not of the values is found by --deep only', async () => {
    expect((await run(['init', 'j3', '--format', 'v3'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'j3', 'journal.json'), 'utf8')).genesis.format).toBe('stepchain/v3');
    const step = {
      input: { to: 'alice', amount: 10 },
      prompt: 'Pay alice 10 EUR, then write to alice@example.org about the overdue invoice INV-9.',
      tool_call: { name: 'pay', arguments: { to: 'alice' } },
    };
    expect((await run(['append', 'j3'], JSON.stringify(step))).code).toBe(0);
    expect(
      (await run(['append', 'j3'], JSON.stringify({ kind: 'x.com.example.audit', input: { ok: true } }))).code,
    ).toBe(0);
    const lines = readFileSync(bucket('j3'), 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).v)).toEqual([3, 3]);

    const fast = await run(['verify', 'j3', '--json']);
    expect(fast.code).toBe(0);
    const report = JSON.parse(fast.stdout).report;
    expect(report.warnings.map((w: { code: string }) => w.code)).toEqual(['KIND_UNKNOWN']);
    expect((await run(['verify', 'j3', '--deep'])).code).toBe(0);

    // The last record's values changed after its root was computed; B and the step hash recomputed (what a
    // writer that lies about its root could store). The fast tier cannot see it; --deep finds it at seq 1.
    const r = JSON.parse(lines[1]!) as Record<string, unknown>;
    r.input = { ok: false };
    const { step_hash: _h, ...rest } = r;
    void _h;
    const bind = 'sha256:' + createHash('sha256').update(canonicalJson(rest)).digest('hex');
    const env = {
      bind,
      kind: r.kind,
      prev_hash: r.prev_hash,
      ref: r.ref,
      root: r.root,
      seq: r.seq,
      step_id: r.step_id,
      ts: r.ts,
      v: r.v,
    };
    const forged = canonicalJson({
      ...rest,
      step_hash: 'sha256:' + createHash('sha256').update(canonicalJson(env)).digest('hex'),
    });
    writeFileSync(bucket('j3'), `${lines[0]}\n${forged}\n`);
    rmSync(join(dir, 'j3', 'head.json'), { force: true });
    const again = await run(['verify', 'j3', '--json']);
    expect(JSON.parse(again.stdout).report.problems).toEqual([]);
    const deep = await run(['verify', 'j3', '--deep', '--json']);
    expect(deep.code).toBe(1);
    expect(JSON.parse(deep.stdout).report.problems[0]).toMatchObject({
      code: 'ROOT_MISMATCH',
      location: { seq: 1, field: 'root' },
    });
  });

  it('a one-byte edit of a v3 line is found by plain verify, at its seq', async () => {
    expect((await run(['init', 'j3b', '--format', 'v3', '--run'])).code).toBe(0);
    expect((await run(['append', 'j3b'], JSON.stringify({ input: { n: 1 } }))).code).toBe(0);
    const path = bucket('j3b');
    const text = readFileSync(path, 'utf8');
    const at = text.lastIndexOf('"n":1');
    writeFileSync(path, text.slice(0, at) + '"n":2' + text.slice(at + 5));
    const r = await run(['verify', 'j3b', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).report.problems[0]).toMatchObject({ code: 'HASH_MISMATCH', location: { seq: 1 } });
  });

  it('v1 and v2 journals keep their format; --format v4 is a usage error', async () => {
    expect((await run(['init', 'j1', '--format', 'v1'])).code).toBe(0);
    expect((await run(['init', 'j2', '--format', 'v2'])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'j1', 'journal.json'), 'utf8')).genesis.format).toBe('stepchain/v1');
    expect(JSON.parse(readFileSync(join(dir, 'j2', 'journal.json'), 'utf8')).genesis.format).toBe('stepchain/v2');
    expect((await run(['init', 'j4', '--format', 'v4'])).code).toBe(2);
  });
});
