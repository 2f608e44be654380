/**
 * `stepchain page`: writes the built page byte for byte, says where and its sha256 (--json), never
 * replaces an existing file without --force, and has --help with examples. The built CLI, as a child process.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { PAGE_FILE } from './browser.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const dir = tempDir('stepchain-page-cli-');

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

describe('stepchain page', () => {
  const built = readFileSync(PAGE_FILE);
  const sha = createHash('sha256').update(built).digest('hex');

  test('-o writes the built page; --json names the file, its size and sha256', async () => {
    const r = await run(['page', '-o', 'verify.html', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      format: 'stepchain-cli/v1',
      command: 'page',
      ok: true,
      out: join(dir, 'verify.html'),
      bytes: built.length,
      sha256: `sha256:${sha}`,
      version: expect.any(String),
    });
    expect(readFileSync(join(dir, 'verify.html')).equals(built)).toBe(true);
  });

  test('an existing file is not replaced without --force (exit 2), and is with it', async () => {
    const target = join(dir, 'existing.html');
    writeFileSync(target, 'mine');
    const refused = await run(['page', '-o', target]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`OUTPUT_EXISTS: ${target} exists; pass --force to replace it`);
    expect(readFileSync(target, 'utf8')).toBe('mine');
    const forced = await run(['page', '-o', target, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain(`sha256 ${sha}`);
    expect(readFileSync(target).equals(built)).toBe(true);
  });

  test('-o is required; --help has examples; the page is listed in stepchain --help', async () => {
    const missing = await run(['page']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('-o <file> is required');
    const help = await run(['page', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: stepchain page -o verify.html [--force]');
    expect(help.stdout).toContain('$ stepchain page -o verify.html');
    expect((await run(['--help'])).stdout).toMatch(/\n {2}page +write the offline verification page/);
  });
});
