/**
 * Outsider 7's attacks on what a file-store writer trusts before it writes (spec/FILE-STORE.md §7 "A cache
 * ahead of the chain", §9 step 2 "What a writer checks on its first read", §18 "What a writer checks before
 * it cuts back"), and outsider 6's over-deep last line. Each tampers with the journal directory as someone
 * with write access to it would, then lets a writer go on: the built CLI as a real process where the
 * finding is about what a process does on its next start, the library in this process where it is about a
 * tampered file. Every attack here succeeded before these checks (the writer appended, or cut acknowledged
 * lines); each must now be refused with a coded error that loses nothing.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = join(resolve(__dirname, '..', '..'), 'dist', 'cli', 'main.js');
const B0 = join('buckets', '0000000000000000.jsonl');

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

/** The built CLI in a process of its own; `input` is its stdin. */
function cli(args: string[], input = ''): Promise<Out> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1' } }, (e, o, r) =>
      done({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stdout: o, stderr: r }),
    );
    child.stdin!.end(input);
  });
}

/** Every file of a journal directory and its bytes (what a refused writer must leave as it was). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    try {
      out[name] = readFileSync(p).toString('base64');
    } catch {
      out[name] = 'dir';
    }
  }
  return out;
}

async function journalOf(steps: number, format?: 'stepchain/v3'): Promise<{ store: FileStore; dir: string }> {
  const root = tempDir('o7w-');
  const store = new FileStore(root);
  const j = await store.create('j', format === undefined ? {} : { format });
  for (let i = 0; i < steps; i++) await j.append({ input: `payment ${i}` });
  await j.close();
  return { store, dir: join(root, 'j') };
}

async function appendCode(store: FileStore): Promise<string | number> {
  let j;
  try {
    j = await store.open('j'); // opening a journal for writing reads its tail (FILE-STORE §9)
    return (await j.append({ input: 'next' })).seq;
  } catch (e) {
    return `${(e as { code?: string }).code}: ${(e as Error).message.replace(/^[A-Z_]+: /, '')}`;
  } finally {
    await j?.close().catch(() => {});
  }
}

const lines = (dir: string): string[] => readFileSync(join(dir, B0), 'utf8').split('\n').slice(0, -1);
const setLines = (dir: string, ls: string[]): void => writeFileSync(join(dir, B0), ls.join('\n') + '\n');
/** The lines with the last one edited. */
const last = (f: (l: string) => string) => (ls: string[]) => [...ls.slice(0, -1), f(ls[ls.length - 1]!)];

describe('a pending-batch mark is obeyed only when it matches the chain (outsider 7, 5.sh and 6.sh)', () => {
  it('a planted mark that does not end at a line of the chain is refused; nothing is cut', async () => {
    const { dir } = await journalOf(6);
    writeFileSync(
      join(dir, '.batch-pending.json'),
      `{"bucket":0,"seq":2,"size":100,"step_hash":"sha256:${'0'.repeat(64)}"}`,
    );
    const before = snapshot(dir);
    const r = await cli(['append', dir], '{"input":"new"}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/JOURNAL_CORRUPT: the pending-batch mark \S+\.batch-pending\.json \(seq 2/);
    expect(r.stderr).toContain('move .batch-pending.json aside');
    expect(snapshot(dir)).toEqual(before);
  });

  it('a self-consistent mark before a pending tool.started is refused: head.json names the started record', async () => {
    const root = tempDir('o7w-');
    const run = join(root, 'r');
    expect((await cli(['init', run, '--run'])).code).toBe(0);
    const begin = ['effect', 'begin', run, '--tool', 'pay', '--args', '{"eur":120}', '--idempotency-key', 'inv-9'];
    expect((await cli(begin)).code).toBe(0);
    const ls = lines(run);
    const prev = JSON.parse(ls[ls.length - 2]!) as { seq: number; step_hash: string };
    const size = Buffer.byteLength(ls.slice(0, -1).join('\n') + '\n');
    writeFileSync(
      join(run, '.batch-pending.json'),
      JSON.stringify({ bucket: 0, seq: prev.seq, size, step_hash: prev.step_hash }),
    );
    const before = snapshot(run);
    const again = await cli(begin);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/JOURNAL_CORRUPT: .*starts before seq \d+, which head\.json names as committed/);
    expect(snapshot(run)).toEqual(before);
    expect(readFileSync(join(run, B0), 'utf8').match(/tool\.started/g)).toHaveLength(1);
    // head.json removed too: the saved run state, anchored at the started record, still says it was acknowledged.
    rmSync(join(run, 'head.json'));
    const third = await cli(begin);
    expect(third.code).toBe(2);
    expect(third.stderr).toMatch(/JOURNAL_CORRUPT: .*which the saved run state \.run-state\.json folds as committed/);
    expect(readFileSync(join(run, B0), 'utf8').match(/tool\.started/g)).toHaveLength(1);
  });

  it("a dead batch's true mark is still cut back: its lines go, the chain verifies, the next seq follows the mark", async () => {
    const { store, dir } = await journalOf(4);
    const head = readFileSync(join(dir, 'head.json'), 'utf8');
    const tip = JSON.parse(lines(dir)[3]!) as { seq: number; step_hash: string };
    const mark = { bucket: 0, size: readFileSync(join(dir, B0)).length, seq: tip.seq, step_hash: tip.step_hash };
    const j = await store.open('j');
    for (let i = 0; i < 3; i++) await j.append({ input: `uncommitted ${i}` }); // the batch's lines, as it wrote them
    await j.close();
    writeFileSync(join(dir, '.batch-pending.json'), JSON.stringify(mark)); // …with its mark, written before them
    writeFileSync(join(dir, 'head.json'), head); // a batch's writer writes no head cache before its commit
    const r = await cli(['append', dir], '{"input":"after the dead batch"}');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^4 sha256:/);
    expect(existsSync(join(dir, '.batch-pending.json'))).toBe(false);
    expect(lines(dir).join('\n')).not.toContain('uncommitted');
    expect((await cli(['verify', dir])).code).toBe(0);
  });

  it('a mark whose next line is not the batch it names is refused', async () => {
    const { store, dir } = await journalOf(5);
    const ls = lines(dir);
    const at = JSON.parse(ls[1]!) as { seq: number; step_hash: string };
    const size = Buffer.byteLength(ls.slice(0, 2).join('\n') + '\n');
    // A true tail two steps back (seq 1), but the line after it (seq 2) links elsewhere.
    setLines(dir, [
      ...ls.slice(0, 2),
      ls[2]!.replace(/"prev_hash":"sha256:[0-9a-f]{4}/, '"prev_hash":"sha256:0000'),
      ...ls.slice(3),
    ]);
    writeFileSync(join(dir, 'head.json'), JSON.stringify({ seq: 1, step_hash: at.step_hash }) + '\n');
    writeFileSync(
      join(dir, '.batch-pending.json'),
      JSON.stringify({ bucket: 0, seq: at.seq, size, step_hash: at.step_hash }),
    );
    expect(await appendCode(store)).toMatch(
      /^JOURNAL_CORRUPT: .*followed by a line that is not the batch's first step/,
    );
    expect(lines(dir)).toHaveLength(5);
  });
});

describe('a writer checks the last lines it links to (outsider 7, 1.sh)', () => {
  const tamper = (edit: (ls: string[]) => string[]) => async (): Promise<string | number> => {
    const { store, dir } = await journalOf(4);
    setLines(dir, edit(lines(dir)));
    const before = snapshot(dir);
    const code = await appendCode(store);
    expect(snapshot(dir)).toEqual(before); // nothing written, head.json not rewritten to a forged hash
    return code;
  };
  it('an edited last line, keeping its step_hash, is refused naming file, line and seq', async () => {
    expect(await tamper(last((l) => l.replace('payment 3', 'payment 999')))()).toMatch(
      /^JOURNAL_CORRUPT: \S+0000000000000000\.jsonl line 4 \(seq 3\): HASH_MISMATCH/,
    );
  });

  it('an edited line before the last is refused', async () => {
    const edit = (ls: string[]) => [...ls.slice(0, 2), ls[2]!.replace('payment 2', 'payment 222'), ls[3]!];
    expect(await tamper(edit)()).toMatch(/^JOURNAL_CORRUPT: .* line 3 \(seq 2\): HASH_MISMATCH/);
  });

  it('an edited step_hash on the last line, and a foreign member, are refused', async () => {
    const forged = last((l) => l.replace(/"step_hash":"sha256:[0-9a-f]{4}/, '"step_hash":"sha256:0000'));
    expect(await tamper(forged)()).toMatch(/^JOURNAL_CORRUPT: .* \(seq 3\): HASH_MISMATCH/);
    expect(await tamper(last((l) => l.replace('{', '{"x":1,')))()).toMatch(/^JOURNAL_CORRUPT: .* \(seq 3\): /);
  });

  it('a v3 record whose v is changed to 1 is refused', async () => {
    const { store, dir } = await journalOf(3, 'stepchain/v3');
    setLines(dir, last((l) => l.replace('"v":3', '"v":1'))(lines(dir)));
    expect(await appendCode(store)).toMatch(/^JOURNAL_CORRUPT: .* line 3 \(seq 2\): /);
  });
});

describe('a head cache past the chain (outsider 7, 3.sh)', () => {
  it("fsync 'always': the acknowledged last line deleted is refused; head.json is kept as evidence", async () => {
    const { dir } = await journalOf(4);
    setLines(dir, lines(dir).slice(0, -1));
    const before = snapshot(dir);
    const r = await cli(['append', dir], '{"input":"other"}');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/JOURNAL_CORRUPT: head\.json names seq 3, but the chain of \S+ ends at seq 2/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("fsync 'none' may lose acknowledged lines in an OS crash: that writer repairs the cache and goes on", async () => {
    const { dir } = await journalOf(4);
    setLines(dir, lines(dir).slice(0, -1));
    expect(await appendCode(new FileStore(dirname(dir), { fsync: 'none' }))).toBe(3);
  });
});

describe('buckets a crash cannot leave (outsider 7, 4.sh)', () => {
  for (const planted of ['0000000000000003.jsonl', '0000000000000099.jsonl'])
    it(`an empty bucket ${planted} after the chain's bucket is refused`, async () => {
      const { store, dir } = await journalOf(6);
      writeFileSync(join(dir, 'buckets', planted), '');
      expect(await appendCode(store)).toMatch(
        /^JOURNAL_CORRUPT: .*0000000000000000\.jsonl holds no whole line|buckets out of order/,
      );
      expect(readdirSync(join(dir, 'buckets')).sort()).toEqual(['0000000000000000.jsonl', planted]);
      expect(lines(dir)).toHaveLength(6);
    });

  it('an empty last bucket named for the next seq (a crash before its first line) is appended to', async () => {
    const { store, dir } = await journalOf(6);
    writeFileSync(join(dir, 'buckets', '0000000000000006.jsonl'), '');
    expect(await appendCode(store)).toBe(6);
  });
});

describe('a last line nested deeper than the record limit (outsider 6, 5.sh)', () => {
  for (const depth of [200, 20_000])
    it(`nested ${depth} deep: JOURNAL_CORRUPT naming DEPTH_LIMIT, not a stack overflow, nothing written`, async () => {
      const { store, dir } = await journalOf(2);
      setLines(dir, last((l) => l.replace('"payment 1"', '['.repeat(depth) + ']'.repeat(depth)))(lines(dir)));
      const before = snapshot(dir);
      expect(await appendCode(store)).toMatch(/^JOURNAL_CORRUPT: .* line 2 \(seq 1\): DEPTH_LIMIT/);
      expect(snapshot(dir)).toEqual(before);
    });
});
