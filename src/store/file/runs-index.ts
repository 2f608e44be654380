/**
 * The file store's run index (spec/FORMAT.md §8.14): `<root>/.runs.jsonl`, one line per journal created
 * or forked — its id and, for a run journal, the identity from its genesis — appended with O_APPEND after
 * the journal's directory is in place. It is a cache, never the truth: listing reconciles it with the
 * directory listing, reads the metadata of any journal it lacks (a crash between rename and append, a
 * store from before the index, a copied-in journal) and adds those lines, and ignores lines for journals
 * that are gone. So `list({ conversationId })` over ten thousand runs is one readdir and one file read.
 */
import { appendFile, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isJournalId } from '../ids.js';
import { runEntryOf, type RunEntry } from '../runs.js';
import type { Genesis } from '../../record/formats.js';
import type { Lineage } from '../types.js';
import { isNotFound } from './fsutil.js';
import { MAX_META_BYTES, META_FILE, parseMeta } from './layout.js';
import { readRegular } from './fsutil.js';

export const RUNS_INDEX_FILE = '.runs.jsonl';

/** One index line: a run entry, or `{ id, run: null }` for a journal that is not a run (stepchain/v1). */
type IndexLine = { id: string; run: null } | RunEntry;

function lineOf(id: string, genesis: Genesis, lineage: Lineage | null): IndexLine {
  return runEntryOf(id, genesis, lineage) ?? { id, run: null };
}

/** Appends a journal's line; best effort (the next listing repairs a line that is missing). */
export async function indexJournal(root: string, id: string, genesis: Genesis, lineage: Lineage | null): Promise<void> {
  await appendFile(join(root, RUNS_INDEX_FILE), JSON.stringify(lineOf(id, genesis, lineage)) + '\n', { flag: 'a' }).catch(() => {});
}

function parseIndex(text: string): Map<string, IndexLine> {
  const lines = new Map<string, IndexLine>();
  for (const line of text.split('\n')) {
    if (line.length === 0) continue;
    try {
      const v = JSON.parse(line) as IndexLine;
      // A torn or foreign line is skipped: its journal is then read from its metadata.
      if (v !== null && typeof v === 'object' && typeof v.id === 'string' && (v.run === null || typeof v.run === 'object')) lines.set(v.id, v);
    } catch {
      // skipped
    }
  }
  return lines;
}

/** Every run journal under the root, from the index reconciled with the directory. */
export async function indexedRuns(root: string): Promise<RunEntry[]> {
  let entries;
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch (e) {
    if (isNotFound(e)) return [];
    throw e;
  }
  let text = '';
  try {
    text = await readFile(join(root, RUNS_INDEX_FILE), 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const index = parseIndex(text);
  const runs: RunEntry[] = [];
  const missing: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || !isJournalId(e.name)) continue;
    const line = index.get(e.name);
    if (line === undefined) missing.push(e.name);
    else if (line.run !== null) runs.push(line as RunEntry);
  }
  let repair = '';
  for (const id of missing) {
    let meta;
    try {
      meta = parseMeta((await readRegular(join(root, id, META_FILE), MAX_META_BYTES)).toString('utf8'), join(root, id, META_FILE));
    } catch {
      continue; // not a journal directory (or a damaged one: verify reports it)
    }
    const line = lineOf(id, meta.genesis, meta.lineage);
    repair += JSON.stringify(line) + '\n';
    if (line.run !== null) runs.push(line as RunEntry);
  }
  if (repair.length > 0) await appendFile(join(root, RUNS_INDEX_FILE), repair).catch(() => {});
  return runs;
}
