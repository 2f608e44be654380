/**
 * `stepchain copy` (copyJournal) racing an erase (outsider 14, F4, F5): real stores, the races made
 * deterministic by running the erase at the worst moment of the copy's reads (the style of
 * erase-live-copy.test.ts).
 * - F4 (a): a store-wide erase searched the copy's target while it was empty (created before its lines are
 *   written), reported done, and the copy then wrote the value in clear.
 * - F4 (b): an erase recorded in the source past the head the copy read left the copy holding the value, exit 0.
 * - F5: a line read after the erase sealed it, its erasure record past that head: the copy failed "source does
 *   not verify" and left a target that did not verify either.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import type { FileJournal } from '../../src/store/file/journal.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { copyJournal } from '../../src/store/copy.js';
import type { Journal, OpenOptions, SeqRange, Store } from '../../src/store/index.js';
import { eraseMatching, eraseValue, resumeErasures } from '../../src/erase.js';
import { tempDir } from '../helpers/tmp.js';
import { afterReads } from '../helpers/racing-reads.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EMAIL = 'mira.copy@example.org';
const PATH = '/result/email';
const complete = { completeErasures: (s: Store, id: string) => resumeErasures(s, id) };

/** A v3 journal `live` of `n` steps, seq 1's /result/email holding EMAIL (the others: n<seq>@x.org); left open. */
async function journalOf(n = 3): Promise<{ store: FileStore; journal: Journal }> {
  const store = new FileStore(tempDir('stepchain-erase-copy-'));
  const journal = await store.create('live', { format: 'stepchain/v3' } as never);
  for (let i = 0; i < n; i++)
    await journal.append({ step_id: `s${i}`, result: { email: i === 1 ? EMAIL : `n${i}@x.org` } });
  return { store, journal };
}

const erase = (store: FileStore, seq = 1) => eraseValue(store, 'live', { seq, path: PATH, reason: 'GDPR Art. 17' });

/** `journal`, whose reads of lines wait for `gate` (and say so through `reached`) before the first line. */
function gatedReads<J extends Journal>(journal: J, reached: () => void, gate: Promise<void>): J {
  return new Proxy(journal, {
    get(target, name, receiver) {
      if (name !== 'lines') return Reflect.get(target, name, receiver) as unknown;
      return (range: SeqRange = {}) =>
        (async function* () {
          reached();
          await gate;
          yield* target.lines(range);
        })();
    },
  });
}

/** Journal `id` of `store` verifies, and none of its lines holds EMAIL; its verdict's warning codes. */
async function expectErased(store: FileStore | SqliteStore, id: string): Promise<string[]> {
  const verdict = await store.verify(id);
  expect(verdict.problems, id).toEqual([]);
  expect(verdict.ok, id).toBe(true);
  const j = await store.open(id, { readOnly: true });
  try {
    for await (const l of j.lines()) expect(l.text, `${id} seq ${l.seq}`).not.toContain(EMAIL);
  } finally {
    await j.close();
  }
  return verdict.warnings.map((w) => w.code);
}

describe('a copy racing an erase of its source', () => {
  it('F4 (b): an erasure recorded past the head it read is carried over and carried out in the target', async () => {
    const { store, journal } = await journalOf();
    const target = new SqliteStore(join(tempDir('stepchain-erase-copy-'), 'copy.db'));
    let erased = false;
    // The erase runs once the copy has read the source to its head (seq 2): seq 1 was read in clear.
    const racing = afterReads(journal, async (range) => {
      if (range.to === 2 && !erased) {
        erased = true;
        await erase(store);
      }
    });
    try {
      const result = await copyJournal(racing, target, 'copy', complete);
      expect(erased).toBe(true);
      expect(result.head?.seq).toBe(3);
      // Counted from what the target held before the copy, not before the pass that was retried.
      expect([result.already, result.copied]).toEqual([0, 4]);
      expect(result.erasures_pending).toBe(false);
      expect(await expectErased(target, 'copy')).toContain('VALUE_ERASED');
      // The target's step hashes are the source's.
      expect(result.head?.step_hash).toBe((await journal.head())?.step_hash);
    } finally {
      await journal.close();
      await target.close();
    }
  });

  it('F5: a line sealed while the copy reads it, its erasure record past the head, is copied with that record', async () => {
    const { store, journal } = await journalOf();
    let heads = 0;
    // The erase runs between the copy's read of the head (seq 2) and its read of the lines: seq 1 is read sealed.
    const racing = new Proxy(journal, {
      get(target, name, receiver) {
        if (name !== 'head') return Reflect.get(target, name, receiver) as unknown;
        return async () => {
          const head = await target.head();
          if (heads++ === 0) await erase(store);
          return head;
        };
      },
    });
    const into = new FileStore(tempDir('stepchain-erase-copy-'));
    try {
      const result = await copyJournal(racing, into, 'copy', complete);
      expect(result.head?.seq).toBe(3);
      expect(await expectErased(into, 'copy')).toContain('VALUE_ERASED');
    } finally {
      await journal.close();
    }
  });

  it('F4 (a): a store-wide erase searches again the copy it searched empty, once the copy has written it', async () => {
    const { store, journal } = await journalOf();
    // The copy (into the same store, `a-copy`, listed first) has created its target and waits to read the source.
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const copying = copyJournal(
      gatedReads(journal, () => reached(), gate),
      store,
      'a-copy',
      complete,
    );
    await atGate;
    // The erase searches `a-copy` (empty), and, as it turns to `live`, the copy runs to its end: it read `live`
    // before the erase recorded anything there, so it holds the value in clear.
    class CopyDuringErase extends FileStore {
      private released = false;
      override async open(id: string, options?: OpenOptions): Promise<FileJournal> {
        if (id === 'live' && !this.released) {
          this.released = true;
          open();
          await copying;
        }
        return super.open(id, options);
      }
    }
    const report = await eraseMatching(new CopyDuringErase(store.root), {
      matchPath: PATH,
      value: EMAIL,
      reason: 'GDPR Art. 17',
    });
    await journal.close();
    expect(report.failed).toEqual([]);
    expect(report.journals_scanned).toBe(2);
    expect(report.erased.map((o) => o.journal).sort()).toEqual(['a-copy', 'live']);
    for (const id of ['a-copy', 'live']) await expectErased(store, id);
    for (const name of readdirSync(join(store.root, 'a-copy', 'buckets')))
      expect(readFileSync(join(store.root, 'a-copy', 'buckets', name), 'utf8')).not.toContain(EMAIL);
  });

  it('a part an erase deletes after the copy read its reference: the copy reads the line again (outsider 14, 3)', async () => {
    // A value over the part threshold is stored once as a part; the erase records its erasure, rewrites the line
    // and deletes the part. A copy that read the line in clear and asks for the part then found it gone and
    // stopped PART_MISSING ("restore the journal's parts from a backup"), leaving an empty target.
    const store = new FileStore(tempDir('stepchain-erase-copy-'));
    const journal = await store.create('live', { format: 'stepchain/v3' } as never);
    const doc = `${'a long document '.repeat(80)}${EMAIL}`;
    for (let i = 0; i < 3; i++) await journal.append({ step_id: `s${i}`, result: { doc: i === 1 ? doc : `n${i}` } });
    const parts = (journal as unknown as { parts: { store: { get: (...a: unknown[]) => Promise<unknown> } } }).parts
      .store;
    const get = parts.get.bind(parts);
    let erased = false;
    parts.get = async (...a: unknown[]) => {
      if (!erased) {
        erased = true;
        await eraseValue(store, 'live', { seq: 1, path: '/result/doc', reason: 'GDPR Art. 17' });
      }
      return get(...a);
    };
    const into = new FileStore(tempDir('stepchain-erase-copy-'));
    try {
      const result = await copyJournal(journal, into, 'copy', complete);
      expect(erased).toBe(true);
      expect(result.head?.seq).toBe(3);
      // Counted from what the target held before the copy, not before the pass that was retried.
      expect([result.already, result.copied]).toEqual([0, 4]);
      expect(await expectErased(into, 'copy')).toContain('VALUE_ERASED');
    } finally {
      await journal.close();
    }
  });

  it('a source that keeps changing is refused SOURCE_CHANGED, and the target is left a valid prefix', async () => {
    // Every pass reads the source to its head, and an erase then records an erasure of one more copied step.
    const { store, journal } = await journalOf(12);
    let next = 1;
    const racing = afterReads(journal, async (range) => {
      if (range.from === 0 && range.to !== undefined && range.to > 0 && next < 12) await erase(store, next++);
    });
    const into = new FileStore(tempDir('stepchain-erase-copy-'));
    try {
      const refused = await copyJournal(racing, into, 'copy', complete).catch((e: unknown) => e);
      expect((refused as { code?: unknown }).code).toBe('SOURCE_CHANGED');
      expect((refused as Error).message).toMatch(/copying journal live into copy: the source kept changing/);
    } finally {
      await journal.close();
    }
    const verdict = await into.verify('copy');
    expect(verdict.problems).toEqual([]);
    expect(verdict.ok).toBe(true);
  });

  it('stepchain copy carries out in its target an erasure its source holds pending (dist CLI)', async () => {
    // The CLI passes erase's resume as completeErasures: the copy of a source whose erase was killed after its
    // record ends erased, where it used to hold the value, pending, until someone resumed it there.
    const { store, journal } = await journalOf();
    await journal.close();
    const cli = (...args: string[]) =>
      new Promise<{ code: number; signal: string | null; stderr: string }>((resolve) => {
        execFile(process.execPath, [CLI, ...args], { env: { ...process.env, NO_COLOR: '1' } }, (error, _o, stderr) =>
          resolve({ code: typeof error?.code === 'number' ? error.code : 0, signal: error?.signal ?? null, stderr }),
        );
      });
    const live = join(store.root, 'live');
    const killed = await new Promise<string | null>((resolve) => {
      execFile(
        process.execPath,
        [CLI, 'erase', live, '--seq', '1', '--path', PATH, '--reason', 'GDPR Art. 17'],
        { env: { ...process.env, NO_COLOR: '1', STEPCHAIN_TEST_ERASE_FAULT: 'after-record' } },
        (error) => resolve(error?.signal ?? null),
      );
    });
    expect(killed).toBe('SIGKILL');
    const into = new FileStore(tempDir('stepchain-erase-copy-'));
    const copied = await cli('copy', live, join(into.root, 'copy'));
    expect(copied.code, copied.stderr).toBe(0);
    expect(await expectErased(into, 'copy')).toContain('VALUE_ERASED');
  });
});
