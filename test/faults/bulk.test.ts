/**
 * Bulk appends as a stream (issue 34; spec/FILE-STORE.md §18): appendStream and `append --jsonl` write a
 * batch of any length in bounded memory and keep the all-or-nothing promise — a step refused in the middle,
 * or the writer stopped and killed in the middle, leaves none of the batch: readers never see its lines,
 * and the buckets end up byte for byte as before it. Memory is checked without timing: a CLI import of 4×
 * the steps must not need more memory than the smaller one beyond a margin (before: about 6× the input).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, type StepInput } from '../../src/index.js';
import type { FileJournal } from '../../src/store/file/journal.js';
import { CLI } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';
import { drive, processState, until } from './helpers.js';

const root = tempDir('stepchain-bulk-');
const store = new FileStore(root, { fsync: 'none' });

/** Every bucket's bytes, by name: what "the batch left nothing" is checked against. */
function buckets(id: string): Record<string, string> {
  const dir = join(root, id, 'buckets');
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => [n, readFileSync(join(dir, n), 'utf8')]),
  );
}

async function* stepsOf(n: number, bad?: { at: number; step: StepInput }): AsyncGenerator<StepInput> {
  for (let i = 0; i < n; i++) yield i === bad?.at ? bad.step : { input: { i }, result: 'ok' };
}

function jsonl(name: string, n: number): string {
  const path = join(root, name);
  writeFileSync(
    path,
    Array.from({ length: n }, (_, i) => `{"input":{"i":${i},"text":"a step of a bulk import"},"result":"ok"}\n`).join(
      '',
    ),
  );
  return path;
}

describe('a streamed batch is all or nothing (appendStream, append --jsonl)', () => {
  test.each([
    [
      'a step the prepare refuses (a member the journal computes)',
      { v: 9, input: 'x' } as unknown as StepInput,
      'FIELD_NOT_ALLOWED',
    ],
    [
      'a step the sequencer refuses (a committed step_id with other content)',
      { step_id: 'before-0', input: 'other' },
      'STEP_ID_CONFLICT',
    ],
  ])(
    '%s at step 1234 of 1500, written 100 at a time: none of it, the buckets as before',
    async (_what, step, code) => {
      const id = `refused-${code}`;
      const j = (await store.create(id, { segmentBytes: 64 * 1024 })) as FileJournal;
      for (let i = 0; i < 3; i++) await j.append({ step_id: `before-${i}`, input: i });
      const before = buckets(id);
      const err = await j
        .appendStream(stepsOf(1500, { at: 1234, step }), { chunk: 100 })
        .catch((e: unknown) => e as { code?: string; message: string });
      expect((err as { code?: string }).code).toBe(code);
      if (code === 'FIELD_NOT_ALLOWED') expect((err as Error).message).toContain('step 1234 of the batch');
      expect(buckets(id)).toEqual(before);
      expect(existsSync(join(root, id, '.batch-pending.json'))).toBe(false);
      expect(await j.head()).toMatchObject({ seq: 2 });
      expect((await j.append({ input: 'after' })).seq).toBe(3);
      const ok = await j.appendStream(stepsOf(1500), { chunk: 100 });
      expect(ok).toEqual({ steps: 1500, appended: 1500, first: 4, last: 1503 });
      // appendMany of more than 4096 steps takes the same path: a refused step leaves none of it.
      const many = Array.from({ length: 5000 }, (_, i): StepInput => (i === 4321 ? step : { input: { many: i } }));
      const head = await j.head();
      await expect(j.appendMany(many)).rejects.toMatchObject({ code });
      expect(await j.head()).toEqual(head);
      many[4321] = { input: 'fine' };
      const results = await j.appendMany(many);
      expect(results.map((r) => r.seq)).toEqual(many.map((_, i) => head!.seq + 1 + i));
      expect((await j.verify()).ok).toBe(true);
      await j.close();
    },
    60_000,
  );

  test('the writer stopped in the middle: readers see none of the batch; killed there, the next writer cuts it off', async () => {
    const id = 'crashed';
    const j = await store.create(id);
    await j.append({ input: 'before' });
    await j.close();
    const before = buckets(id);
    const input = jsonl('crashed.jsonl', 5000);
    // The CLI writes 256 steps at a time: stopped before its fourth write, three chunks are in the buckets.
    const child = drive(CLI, ['append', join(root, id), '--jsonl', '--file', input], {
      STEPCHAIN_TEST_FAULT: 'after-confirm:stop@4',
    });
    await until(() => child.stderr().includes('stepchain-fault ') && processState(child.proc.pid!) === 'T');
    expect(existsSync(join(root, id, '.batch-pending.json'))).toBe(true);
    expect(Object.values(buckets(id)).join('').split('\n').length).toBeGreaterThan(700); // written, not committed
    const reader = await store.open(id, { readOnly: true });
    expect(await reader.head()).toMatchObject({ seq: 0 });
    const seen: number[] = [];
    for await (const l of reader.lines()) seen.push(l.seq);
    expect(seen).toEqual([0]);
    // verify (FILE-STORE §18): the chain as committed, and a warning that says a batch is pending.
    const head0 = (await reader.head())!.step_hash;
    const report = await reader.verify();
    expect(report).toMatchObject({ ok: true, steps: 1, head_seq: 0, head: head0, problems: [] });
    expect(report.warnings.map((w) => [w.code, w.location.seq])).toEqual([['BATCH_PENDING', 0]]);
    const cli = spawnSync(process.execPath, [CLI, 'verify', join(root, id), '--json'], { encoding: 'utf8' });
    expect(cli.status, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({
      ok: true,
      report: { ok: true, steps: 1, head: head0, warnings: [{ code: 'BATCH_PENDING' }] },
    });
    expect(buckets(id)).not.toEqual(before); // verify read the pending lines' buckets without touching them
    child.proc.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');
    expect(child.lines).toEqual([]); // nothing was printed: nothing was committed
    const next = await store.open(id);
    expect(buckets(id)).toEqual(before); // cut back when it took the lock
    expect(existsSync(join(root, id, '.batch-pending.json'))).toBe(false);
    expect((await next.append({ input: 'after' })).seq).toBe(1);
    expect((await next.verify()).ok).toBe(true);
    await next.close();
    await reader.close();
  }, 60_000);

  test('verify: a pending-batch mark that the chain does not end at is JOURNAL_INVALID; after the cut back, verify is clean', async () => {
    const id = 'bad-mark';
    const j = await store.create(id);
    await j.appendMany([{ input: 1 }, { input: 2 }, { input: 3 }]);
    await j.close();
    const size = readFileSync(join(root, id, 'buckets', '0000000000000000.jsonl')).length;
    writeFileSync(
      join(root, id, '.batch-pending.json'),
      JSON.stringify({ bucket: 0, size, seq: 2, step_hash: `sha256:${'0'.repeat(64)}` }),
    );
    const reader = await store.open(id, { readOnly: true });
    const report = await reader.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.code, p.location.file])).toEqual([['JOURNAL_INVALID', '.batch-pending.json']]);
    await reader.close();
  });

  test('append --jsonl of 4× the steps needs no more memory beyond a margin (memory does not grow with the input)', () => {
    const peak = (n: number): number => {
      const id = `memory-${n}`;
      spawnSync(process.execPath, [CLI, 'init', join(root, id)], { stdio: 'ignore' });
      const r = spawnSync(
        '/usr/bin/time',
        [
          '-f',
          'peak %M',
          process.execPath,
          CLI,
          'append',
          join(root, id),
          '--jsonl',
          '--file',
          jsonl(`${id}.jsonl`, n),
        ],
        { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] },
      );
      expect(r.status, r.stderr).toBe(0);
      return Number(/peak (\d+)/.exec(r.stderr)![1]) / 1024;
    };
    const small = peak(10_000);
    const large = peak(40_000);
    // Before: about 6× the input (3.5 MB of input more: ~+110 MB). Now: the stream's chunk, whatever its length.
    expect(large - small, `${small.toFixed(0)} MB for 10 000 steps, ${large.toFixed(0)} MB for 40 000`).toBeLessThan(
      40,
    );
  }, 120_000);
});
