/**
 * `stepchain export` and `stepchain publish` hold the journal's appends for their last look and the rename
 * (spec/ERASURE.md §4.1), as the library does. An outsider found the CLI's progress-counting wrapper dropped
 * the hold: with the exporter's rename delayed, `stepchain erase` exited 0 and the receipt was then put in
 * place still holding the erased value. Here another real process holds the journal's appends (the file
 * journal's lock, the SQLite file's write lock) and each command must finish only after it lets go.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/index.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const LOCATION = fileURLToPath(new URL('../../dist/location.js', import.meta.url));
const HOLD_MS = 2_000;
const dir = tempDir('stepchain-copy-hold-cli-');
const cli = cliIn(dir);
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => (s instanceof SqliteStore ? s.close() : undefined)));
});

/**
 * Another process that opens `location`'s journal, holds its appends for HOLD_MS and lets go; resolves once it
 * holds them, with a promise of the moment (epoch ms) it let go (in an object: an async function's returned
 * promise would be awaited too).
 */
async function holdElsewhere(location: string): Promise<{ released: Promise<number> }> {
  const script = `
    const { openStore, parseLocation } = await import(${JSON.stringify(LOCATION)});
    const loc = parseLocation(process.argv[1]);
    const opened = await openStore(loc);
    const journal = await opened.store.open(loc.journal ?? process.argv[2]);
    await journal.holdingAppends(async () => {
      process.stdout.write('held\\n');
      await new Promise((r) => setTimeout(r, ${HOLD_MS}));
      process.stdout.write('released ' + Date.now() + '\\n');
    });
    await journal.close();
    await opened.close();`;
  const [where, id] = location.startsWith('sqlite:') ? [location, ''] : [join(location, '..'), 'j'];
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, where, id], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let said = '';
  let onHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const released = new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      said += b.toString();
      if (said.includes('held\n')) onHeld();
      const at = /released (\d+)/.exec(said);
      if (at !== null) resolve(Number(at[1]));
    });
    child.on('exit', (code) => reject(new Error(`the holding process exited ${code} having said: ${said}`)));
  });
  await Promise.race([held, released]);
  return { released };
}

/** A journal `j` of three steps at a fresh location of `kind`, as the CLI names it. */
async function journalAt(kind: 'file' | 'sqlite'): Promise<string> {
  const at = join(dir, `${kind}-${opened.length}`);
  const store = kind === 'file' ? new FileStore(at) : new SqliteStore(`${at}.db`);
  opened.push(store);
  const j = await store.create('j', { format: 'stepchain/v3' } as never);
  for (let i = 0; i < 3; i++) await j.append({ step_id: `s${i}`, result: { email: `n${i}@x.org` } });
  await j.close();
  return kind === 'file' ? join(at, 'j') : `sqlite:${at}.db?journal=j`;
}

const policy = join(dir, 'policy.json');
writeFileSync(policy, JSON.stringify({ rules: [{ id: 'emails', paths: ['/result/email'] }] }));

describe('the CLI’s copies wait for another process holding the journal’s appends', () => {
  for (const kind of ['file', 'sqlite'] as const)
    for (const verb of ['export', 'publish'] as const)
      test(`${verb} of a ${kind} journal`, async () => {
        const journal = await journalAt(kind);
        const out = join(dir, `${kind}-${verb}-${opened.length}.tar`);
        const { released } = await holdElsewhere(journal);
        const args = verb === 'export' ? [journal, '-o', out] : [journal, '--policy', policy, '--opt-in', '-o', out];
        const run = await cli.run(verb, ...args);
        const finished = Date.now();
        expect(run.code, run.stderr).toBe(0);
        expect(finished).toBeGreaterThanOrEqual(await released);
        expect(existsSync(out)).toBe(true);
        const verified = await cli.run('verify', out);
        expect(verified.code, verified.stdout + verified.stderr).toBe(0);
      });
});
