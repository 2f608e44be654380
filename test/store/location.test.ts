/**
 * Store locations (src/location.ts, spec/SQLITE.md §3): one string, parsed the same for the library's
 * openStore and the CLI. Good rows beside malformed ones; an unknown scheme is never a relative directory.
 */
import { existsSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { openStore, parseLocation } from '../../src/location.js';
import { StoreError } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(StoreError);
    return (e as StoreError).code;
  }
  return 'parsed';
}

describe('parseLocation', () => {
  test.each([
    ['runs', { backend: 'file', path: 'runs', journal: undefined }],
    ['./runs:2026/today', { backend: 'file', path: './runs:2026/today' }],
    ['/abs/runs', { backend: 'file', path: '/abs/runs' }],
    ['C:\\runs', { backend: 'file', path: 'C:\\runs' }],
    ['sqlite:agents.db', { backend: 'sqlite', file: 'agents.db', journal: undefined, display: 'sqlite:agents.db' }],
    [
      'sqlite:data/agents.db?journal=run-42',
      { backend: 'sqlite', file: 'data/agents.db', journal: 'run-42', display: 'sqlite:data/agents.db?journal=run-42' },
    ],
    ['sqlite:/var/lib/agents.db', { backend: 'sqlite', file: '/var/lib/agents.db' }],
    ['sqlite:///var/lib/agents.db', { backend: 'sqlite', file: '/var/lib/agents.db' }],
    ['SQLITE:a%3Fb.db?journal=j', { backend: 'sqlite', file: 'a?b.db', journal: 'j' }],
    ['postgres://agent@db/agents?journal=run-42', { backend: 'postgres', journal: 'run-42', schema: undefined }],
    [
      'postgresql://agent:pw@db/agents?journal=r&schema=s',
      {
        backend: 'postgres',
        journal: 'r',
        schema: 's',
        hasPassword: true,
        display: 'postgresql://agent:***@db/agents?journal=r&schema=s',
      },
    ],
    ['memory:', { backend: 'memory', name: '', journal: undefined }],
    ['memory:tests?journal=j', { backend: 'memory', name: 'tests', journal: 'j' }],
  ])('%s', (text, expected) => {
    expect(parseLocation(text)).toMatchObject(expected);
  });

  test.each([
    ['s3://bucket/run-9', 'SCHEME_UNKNOWN'],
    ['S3://bucket/run-9', 'SCHEME_UNKNOWN'],
    ['file:///tmp/runs', 'SCHEME_UNKNOWN'],
    ['https://example.com/runs', 'SCHEME_UNKNOWN'],
    ['mysql://u:secret@db/x', 'SCHEME_UNKNOWN'],
    ['runs:2026/today', 'SCHEME_UNKNOWN'],
    ['sqlite:', 'OPTION_INVALID'],
    ['sqlite:a.db?journal=x&journal=y', 'OPTION_INVALID'],
    ['sqlite:a.db?mode=ro', 'OPTION_INVALID'],
    ['sqlite::memory:', 'OPTION_INVALID'],
    ['sqlite:a%zz.db', 'OPTION_INVALID'],
    ['memory:x?schema=y', 'OPTION_INVALID'],
    ['', 'OPTION_INVALID'],
  ])('refuses %s (%s)', (text, code) => {
    expect(codeOf(() => parseLocation(text))).toBe(code);
  });

  test('an unknown scheme names the known ones and never repeats a password', () => {
    try {
      parseLocation('mysql://user:hunter2@db/x');
    } catch (e) {
      expect((e as Error).message).toContain('sqlite:, postgres://, postgresql://, memory:');
      expect((e as Error).message).not.toContain('hunter2');
      return;
    }
    expect.unreachable();
  });
});

describe('openStore', () => {
  test('each backend behind the same Store; memory:name is one store per process', async () => {
    const dir = tempDir();
    for (const location of [`${dir}/files`, `sqlite:${dir}/agents.db`, 'memory:']) {
      const opened = await openStore(location);
      const j = await opened.store.create('j');
      await j.append({ input: location });
      await j.close();
      expect(await opened.store.list()).toEqual(['j']);
      expect((await opened.verify('j')).ok).toBe(true);
      expect((await opened.health('j')).ok).toBe(true);
      await opened.close();
    }
    expect(existsSync(`${dir}/agents.db`)).toBe(true);
    const a = await openStore('memory:shared');
    await a.store.create('x');
    expect(await (await openStore('memory:shared')).store.list()).toEqual(['x']);
    expect(await (await openStore('memory:')).store.list()).toEqual([]);
  });

  test('an unknown scheme is refused before anything is created', async () => {
    const cwd = process.cwd();
    await expect(openStore('s3://bucket/run-9')).rejects.toMatchObject({ code: 'SCHEME_UNKNOWN' });
    expect(existsSync(`${cwd}/s3:`)).toBe(false);
  });
});
