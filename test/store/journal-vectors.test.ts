/**
 * vectors/journals.json (spec/FILE-STORE.md §13): each directory is built on disk and verified without
 * opening it (FileStore.verify, what `stepchain verify <journal>` runs); the report must be exactly the
 * expected one. A journal whose metadata file is invalid is also refused by open, with the same code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, StoreError } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { loadVectors } from '../helpers/vectors.js';

interface JournalCase {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  dirs: string[];
  files: Array<{ path: string; text: string }>;
  expect: {
    ok: boolean;
    head: string | null;
    head_seq: number | null;
    steps: number;
    problems: Array<{ code: string; file?: string; line?: number; seq?: number; field?: string }>;
    warnings: Array<{ code: string }>;
  };
}

const vectors = loadVectors<JournalCase>('journals.json');
const root = tempDir('stepchain-journal-vectors-');

function materialize(c: JournalCase): void {
  const dir = join(root, c.id);
  for (const d of c.dirs) mkdirSync(join(dir, d), { recursive: true });
  for (const f of c.files) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
}

describe('journals.json vectors', () => {
  test.each(vectors.cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    materialize(c);
    const store = new FileStore(root);
    const report = await store.verify(c.id);
    expect(
      {
        ok: report.ok,
        head: report.head,
        head_seq: report.head_seq,
        steps: report.steps,
        problems: report.problems.map((p) => {
          const { file, line, seq, field } = p.location;
          return {
            code: p.code,
            ...(file !== undefined ? { file } : {}),
            ...(line !== undefined ? { line } : {}),
            ...(seq !== undefined ? { seq } : {}),
            ...(field !== undefined ? { field } : {}),
          };
        }),
        warnings: report.warnings.map((w) => ({ code: w.code })),
      },
      c.comment,
    ).toEqual(c.expect);
    expect(report.ok).toBe(c.result === 'valid');
    if (c.expect.problems[0]?.file === 'journal.json' && c.expect.steps === 0) {
      const err = await store.open(c.id, { readOnly: true }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('JOURNAL_INVALID');
    }
  });

  test('an invalid metadata file is refused naming the member at fault', async () => {
    const byId = new Map(vectors.cases.map((c) => [c.id, c]));
    for (const [id, says] of [
      ['meta-extra-member', '"extra"'],
      ['meta-proto-member', '"__proto__"'],
      ['meta-missing-lineage', '"lineage"'],
      ['lineage-extra-member', '"lineage.note"'],
      ['lineage-parent-path', 'lineage.parent_journal must be a journal id'],
      ['meta-noncanonical', 'canonical form'],
    ] as const) {
      const c = byId.get(id)!;
      const dir = join(root, c.id);
      mkdirSync(dir, { recursive: true });
      materialize(c);
      const err = await new FileStore(root).open(c.id).catch((e: unknown) => e);
      expect((err as StoreError).message, id).toContain(says);
    }
  });
});
