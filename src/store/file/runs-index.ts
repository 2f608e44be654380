/**
 * The file store's run index (spec/FILE-STORE.md §14): `<root>/.runs.jsonl`, one line per journal created
 * or forked — its id and, for a run journal, the identity from its genesis — appended with O_APPEND after
 * the journal's directory is in place. It is a cache, never the truth: listing reconciles it with the
 * directory listing, reads the metadata of any journal it lacks (a crash between rename and append, a
 * store from before the index, a copied-in journal) and adds those lines, and ignores lines for journals
 * that are gone. So `list({ conversationId })` over ten thousand runs is one readdir and one file read.
 */
import { appendFile, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isJournalId } from '../ids.js';
import { runEntryOf, type RunEntry } from '../runs.js';
import type { Genesis } from '../../record/formats.js';
import type { RunIdentity } from '../../record/v2.js';
import { isObject, setMember } from '../../canonical/json.js';
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

/**
 * A parsed index line as the index holds it, or null: the file is a cache a person or a torn write can
 * change, so each member an entry is read for is checked (a run's identity as RunIdentity types it).
 */
function indexLineOf(v: unknown): IndexLine | null {
  if (!isObject(v) || typeof v.id !== 'string') return null;
  if (v.run === null) return { id: v.id, run: null };
  const run = identityOf(v.run);
  if (typeof v.run_id !== 'string' || typeof v.created_at !== 'string' || run === null) return null;
  if (v.fork_of !== null && typeof v.fork_of !== 'string') return null;
  return { id: v.id, run_id: v.run_id, created_at: v.created_at, run, fork_of: v.fork_of };
}

function identityOf(v: unknown): RunIdentity | null {
  if (!isObject(v)) return null;
  const identity: RunIdentity = {};
  for (const key of ['agent', 'conversation_id', 'parent_run_id'] as const) {
    const x = v[key];
    if (typeof x === 'string') identity[key] = x;
    else if (x !== undefined) return null;
  }
  if (v.labels !== undefined) {
    if (!isObject(v.labels)) return null;
    const labels: Record<string, string> = {};
    for (const [k, x] of Object.entries(v.labels)) {
      if (typeof x !== 'string') return null;
      setMember(labels, k, x);
    }
    identity.labels = labels;
  }
  return identity;
}

/** Appends a journal's line; best effort (the next listing repairs a line that is missing). */
export async function indexJournal(root: string, id: string, genesis: Genesis, lineage: Lineage | null): Promise<void> {
  await appendFile(join(root, RUNS_INDEX_FILE), JSON.stringify(lineOf(id, genesis, lineage)) + '\n', {
    flag: 'a',
  }).catch(() => {});
}

/**
 * The index as one FileStore reads it: the index is append-only, so a listing reads only the bytes appended
 * since the last one (the whole file again when it shrank: replaced or removed). A line without its newline
 * yet (being appended, or torn) waits for the next listing.
 */
export class RunsIndex {
  private offset = 0;
  private pending = '';
  private readonly lines = new Map<string, IndexLine>();

  constructor(private readonly root: string) {}

  private async load(): Promise<Map<string, IndexLine>> {
    const path = join(this.root, RUNS_INDEX_FILE);
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.reset();
      return this.lines;
    }
    try {
      const { size } = await fh.stat();
      if (size < this.offset) this.reset();
      if (size > this.offset) {
        const buf = Buffer.alloc(size - this.offset);
        const { bytesRead } = await fh.read(buf, 0, buf.length, this.offset);
        this.offset += bytesRead;
        this.take(buf.subarray(0, bytesRead).toString('utf8'));
      }
    } finally {
      await fh.close();
    }
    return this.lines;
  }

  private reset(): void {
    this.offset = 0;
    this.pending = '';
    this.lines.clear();
  }

  private take(text: string): void {
    const parts = (this.pending + text).split('\n');
    this.pending = parts.pop()!;
    for (const line of parts) {
      if (line.length === 0) continue;
      try {
        const v = indexLineOf(JSON.parse(line));
        // A torn or foreign line is skipped: its journal is then read from its metadata.
        if (v !== null) this.lines.set(v.id, v);
      } catch {
        // skipped
      }
    }
  }

  /** Every run journal under the root, from the index reconciled with the directory. */
  async runs(): Promise<RunEntry[]> {
    let entries;
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (e) {
      if (isNotFound(e)) return [];
      throw e;
    }
    const index = await this.load();
    const runs: RunEntry[] = [];
    const missing: string[] = [];
    for (const e of entries) {
      if (!e.isDirectory() || !isJournalId(e.name)) continue;
      const line = index.get(e.name);
      if (line === undefined) missing.push(e.name);
      else if (line.run !== null) runs.push(line);
    }
    let repair = '';
    for (const id of missing) {
      let meta;
      try {
        meta = parseMeta(
          (await readRegular(join(this.root, id, META_FILE), MAX_META_BYTES)).toString('utf8'),
          join(this.root, id, META_FILE),
        );
      } catch {
        continue; // not a journal directory (or a damaged one: verify reports it)
      }
      const line = lineOf(id, meta.genesis, meta.lineage);
      repair += JSON.stringify(line) + '\n';
      if (line.run !== null) runs.push(line);
    }
    if (repair.length > 0) await appendFile(join(this.root, RUNS_INDEX_FILE), repair).catch(() => {});
    return runs;
  }
}
