/**
 * What erasure in every store shares (spec/ERASURE.md §3, §4, §6): the request and outcome shapes, the
 * erasure record's step_id, the test-only fault points, and the store-wide match of a pointer pattern.
 */
import { existsSync, writeFileSync, writeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { StoreError } from '../store/errors.js';
import { UNLESS_AFTER, type WriterAppendOptions } from '../store/append.js';
import { ERASURE_WRITER } from '../store/prepare.js';
import type { AppendResult, Journal } from '../store/types.js';
import {
  ERASED_MARKER,
  ERASURE_KIND,
  ERASURE_OWN,
  ErasureError,
  erasureInputOf,
  eraseUnit,
  isSealed,
  unitAt,
  type ErasureInput,
} from '../record/v3/erasure.js';
import { decisionVoided } from './decision.js';

export interface EraseRequest {
  seq: number;
  /** JSON Pointer of a member or element (or a whole slot) of that record: `/result/email`. */
  path: string;
  reason: string;
  by?: string | null;
}

export interface ErasureOutcome {
  journal: string;
  seq: number;
  path: string;
  digest: string;
  /** The erasure record's seq and step_id. */
  erasure: { seq: number; step_id: string };
  /** Part files deleted because no record references them any more. */
  parts_deleted: string[];
  /** True when this call only completed an erasure an earlier, interrupted one had recorded. */
  resumed: boolean;
  /**
   * Other places of the journal that hold the same value (a tool's result repeated in its outcome and in
   * `run.completed`, …): not erased by this call; erase each by seq and path (erase/elsewhere.ts).
   */
  elsewhere?: { seq: number; path: string }[];
  /**
   * SQLite only: false when the WAL could not be truncated after the rewrite (another connection was
   * reading), so page images of the old row stay in the -wal file until the next checkpoint completes.
   */
  wal_truncated?: boolean;
}

/** The outcome of an erasure carried out (by this call, or `resumed`: one recorded earlier), from its erasure record. */
export function outcomeOf(
  journal: string,
  input: ErasureInput,
  erasure: { seq: number; step_id: string },
  done: { parts_deleted: string[]; wal_truncated?: boolean },
  resumed: boolean,
): ErasureOutcome {
  const { target: seq, path, digest } = input;
  return { journal, seq, path, digest, erasure: { seq: erasure.seq, step_id: erasure.step_id }, ...done, resumed };
}

/**
 * Test-only: STEPCHAIN_TEST_ERASE_FAULT=after-record|in-rewrite|after-rewrite kills the process there (a real
 * SIGKILL); in-rewrite (SQLite, Postgres) is inside the rewrite's transaction, after its UPDATE, before COMMIT.
 */
export function fault(point: 'after-record' | 'in-rewrite' | 'after-rewrite'): void {
  if (process.env.STEPCHAIN_TEST_ERASE_FAULT !== point) return;
  writeSync(2, `stepchain-erase-fault ${point}\n`);
  process.kill(process.pid, 'SIGKILL');
}

/**
 * Test-only: STEPCHAIN_TEST_ERASE_GATE=FILE makes an erase, once it has checked its target and before it
 * appends its erasure record, create FILE.ready and wait until FILE exists (once per process). A test starts
 * two erases of nested units, waits until both have read the record, and lets them go on in the order it
 * chooses: real processes racing, each having read the record before the other wrote.
 */
async function gate(): Promise<void> {
  const file = process.env.STEPCHAIN_TEST_ERASE_GATE;
  if (file === undefined || file === '') return;
  delete process.env.STEPCHAIN_TEST_ERASE_GATE;
  writeFileSync(`${file}.ready`, '');
  while (!existsSync(file)) await delay(5);
}

/**
 * The erasure record's step_id: its name (erasureStepId), or, when a record of the journal already holds it,
 * the name with `:2`, `:3`, … (ERASURE.md §3). Any record holding it by now is not this erasure's (a pending one
 * of the same unit sends the erase back first): one written before the reservation of §3.1, or by another
 * program. Outsider 12, 5: such a record made every erase of that unit fail STEP_ID_CONFLICT, for good.
 */
function freeStepId(name: string, taken: ReadonlySet<string>): string {
  let id = name;
  for (let n = 2; taken.has(id); n++) id = `${name}:${n}`;
  return id;
}

/** The erasure record's step_id: one per (target, digest), so a retried erase appends nothing twice. */
export function erasureStepId(seq: number, digest: string): string {
  return `erasure:${seq}:${digest.slice(7, 39)}`;
}

/**
 * An erasure the journal records but that cannot be carried out (its target holds no such unit, another
 * digest, …): a record appended by hand or by an older writer. It stays pending (verify: ERASURE_PENDING)
 * and is reported by `resume`; it does not keep any other erasure from being made.
 */
export interface StuckErasure {
  journal: string;
  seq: number;
  path: string;
  erasure: { seq: number; step_id: string };
  code: string;
  error: string;
}

/** Collects an ErasureError from carrying out a recorded erasure as stuck; rethrows anything else (I/O, a lock). */
export function stuckOrThrow(
  e: unknown,
  journal: string,
  p: { seq: number; step_id: string; input: { target: number; path: string } },
  stuck: StuckErasure[],
): void {
  if (!(e instanceof ErasureError)) throw e;
  stuck.push({
    journal,
    seq: p.input.target,
    path: p.input.path,
    erasure: { seq: p.seq, step_id: p.step_id },
    code: e.code,
    error: e.message,
  });
}

/**
 * Why a recorded erasure cannot be carried out before anything is read for it: its target is not a record
 * earlier than itself (one past the journal's end, or later: appended by hand, verify says ERASURE_MISMATCH,
 * ERASURE.md §5 step 4); else null. Outsider 12, 4: one naming a seq past the end made every erase crash.
 */
export function targetNotEarlier(p: { seq: number; input: { target: number; path: string } }): ErasureError | null {
  if (p.input.target < p.seq) return null;
  return new ErasureError(
    'ERASURE_TARGET_INVALID',
    `the erasure record at seq ${p.seq} names seq ${p.input.target}, which is not an earlier record`,
    p.input.path,
  );
}

export interface MatchRequest {
  /** A JSON Pointer with `*` for any member name or index: `/result/email`, `/input/messages/*\/content`. */
  matchPath: string;
  /** The value to find (compared as JSON). */
  value: unknown;
  reason: string;
  by?: string | null;
}

export interface StoreErasureReport {
  journals_scanned: number;
  /** v1/v2 journals, which cannot erase one value: listed, never silently skipped. */
  journals_not_v3: string[];
  erased: ErasureOutcome[];
  /** Matches that could not be erased, with why; seq -1 and path "": a journal that could not be searched. */
  failed: { journal: string; seq: number; path: string; error: string }[];
}

/**
 * The erasure that must come before erasing `req` in journal `id`, or null: a pre-v2 request's unsalted digest of
 * its presented call (spec/ERASURE.md §6.4, erase/approval-digest.ts), given by store.ts to the match erases.
 */
export type ErasureFirst = (id: string, req: EraseRequest) => Promise<EraseRequest | null>;

/** The pointers in record `r` matching `pattern` whose value is `want`: of an erasure record, only its own reason and by. */
export function matchesIn(r: Record<string, unknown>, pattern: readonly string[], want: string): string[] {
  const hits: string[] = [];
  matchPaths(r, pattern, '', want, hits);
  return r.kind === ERASURE_KIND ? hits.filter((h) => ERASURE_OWN.some((k) => h === `/input/${k}`)) : hits;
}

export function matchPaths(value: unknown, pattern: readonly string[], at: string, want: string, out: string[]): void {
  // `**` (internal, erase/elsewhere.ts): the value itself or any unit inside it, at any depth.
  if (pattern.length === 0 || (pattern[0] === '**' && JSON.stringify(value) === want)) {
    if (JSON.stringify(value) === want) out.push(at);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const [head, ...rest] = pattern[0] === '**' ? ['*', '**'] : pattern;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (k.startsWith('$stepchain:')) continue;
    if (head === '*' || head === k)
      matchPaths(v, rest, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, want, out);
  }
}

/** The tokens of a `--match-path` pattern (`*`: any member name or index), or OPTION_INVALID. */
export function matchPattern(matchPath: string): string[] {
  const tokens = matchPath.split('/');
  if (tokens[0] !== '' || tokens.length < 2)
    throw new StoreError(
      'OPTION_INVALID',
      `--match-path ${JSON.stringify(matchPath)} is not a JSON Pointer (it starts with "/")`,
    );
  return tokens.slice(1).map((t) => (t === '*' ? '*' : t.replace(/~1/g, '/').replace(/~0/g, '~')));
}

/** Whether a record (sealed form) holds a marker naming erasure record `stepId`: that erasure is carried out. */
export function hasMarker(record: Record<string, unknown>, stepId: string): boolean {
  if (!isSealed(record)) return false;
  return (
    JSON.stringify(record).includes(`"erasure":${JSON.stringify(stepId)}`) &&
    JSON.stringify(record).includes(ERASED_MARKER)
  );
}

/** Whether JSON Pointers `a` and `b` name the same unit, or one a unit inside the other. */
function nested(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/** An erasure record as read: its seq, step_id and (valid, spec/ERASURE.md §3) input; null for any other line. */
function erasureOf(text: string): { seq: number; step_id: string; input: ErasureInput } | null {
  if (!text.includes(`"kind":"${ERASURE_KIND}"`)) return null;
  const r = JSON.parse(text) as Record<string, unknown>;
  const input = erasureInputOf(r.input);
  if (r.kind !== ERASURE_KIND || typeof input === 'string') return null;
  return { seq: r.seq as number, step_id: r.step_id as string, input };
}

/**
 * How often an erase goes back to check afresh (appendErasure's `again`) before it gives up: each time another
 * erase of the same record was recorded meanwhile, or a recorded one was neither completed nor reported stuck
 * by the resume (a journal whose markers name erasure records of other targets: written by hand).
 */
const MAX_AGAIN = 16;

/**
 * Counts a caller's `again`; refuses, nothing written, past MAX_AGAIN, with a code of its own: the erase itself
 * is valid, and the same call made later succeeds (ERASURE_TARGET_INVALID, which it was, says nothing is there
 * to erase; outsider J).
 */
export function checkAgain(times: number, req: EraseRequest): void {
  if (times <= MAX_AGAIN) return;
  throw new ErasureError(
    'ERASURE_CONTENDED',
    `seq ${req.seq} ${req.path}: other erasures of that record kept being recorded (or one cannot be completed nor reported) while this one was checked, ${MAX_AGAIN} times; nothing written (erase again; if it is refused again, run stepchain erase --resume and verify)`,
    req.path,
  );
}

/**
 * The pause before an erase goes back (spec/ERASURE.md §4 step 4): a random time up to 2^`times` ms, at most
 * 100 ms, so that erases of one record in several processes stop meeting each other at the same moments.
 */
export function pauseBeforeAgain(times: number): Promise<void> {
  const most = Math.min(100, 2 ** times);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * most));
}

/** Whether `record` holds the unit an erasure record names, with the digest it names. */
function namesUnit(record: Record<string, unknown>, e: ErasureInput): boolean {
  try {
    return 'sha256:' + Buffer.from(unitAt(record, e.path).unit.digest).toString('hex') === e.digest;
  } catch {
    return false;
  }
}

/** What an erase decided before its commit point: the erasure record appended, or `again` (read afresh, after a resume). */
export type Attempt = { appended: AppendResult; input: ErasureInput } | 'again';

/**
 * Steps 2–4 of spec/ERASURE.md §4 on an open journal, so that of two erases of nested units only one is
 * recorded: the check is made against the journal as it is at a head seq `H` — record `req.seq` as stored, and
 * every erasure record up to `H` that names that record — and the erasure record is appended only if the head
 * is still `H` (AppendOptions.after, checked by the store under its writer lock). When another writer appended
 * meanwhile (HEAD_MOVED), the steps it appended are read: an erasure record among them that names the same
 * record sends the erase back to be checked afresh (`again`: the caller completes that erasure first, by a
 * resume); anything else is no concern of the check, and the append is retried after the new head.
 *
 * An erasure record of a nested unit (the same, one inside it, or one holding it) that is recorded but not
 * carried out sends the erase back too, to be completed by the caller's resume, unless that resume could not
 * carry it out (`stuck`: the step_ids it reported). Then, when it truly names this unit or one inside it (the
 * unit is there, with its digest), the erase is refused: erasing around it would leave it naming a unit that
 * exists nowhere. One that erases a unit holding this one is left as it is: the holder's digest is the same
 * after this erasure, so it stays pending. One whose unit is not there with its digest lies, and blocks
 * nothing (verify reports it, ERASURE_MISMATCH, once its target is sealed: spec/ERASURE.md §5 step 4).
 */
export async function appendErasure(
  journal: Journal,
  req: EraseRequest,
  recordAt: (seq: number) => Promise<string | null>,
  stuck: ReadonlySet<string>,
): Promise<Attempt> {
  const head = await journal.head();
  const text = await recordAt(req.seq);
  if (text === null) throw new StoreError('OPTION_INVALID', `journal ${journal.id} has no record at seq ${req.seq}`);
  const record = JSON.parse(text) as Record<string, unknown>;
  if (record.kind === ERASURE_KIND && !ERASURE_OWN.some((k) => req.path === `/input/${k}`))
    throw new ErasureError(
      'ERASURE_TARGET_INVALID',
      `seq ${req.seq} is an erasure record: of its values only /input/reason and /input/by can be erased (the rest is what verify checks the erased value against, spec/ERASURE.md §3)`,
    );
  const digest = 'sha256:' + Buffer.from(unitAt(record, req.path).unit.digest).toString('hex');
  const stepId = erasureStepId(req.seq, digest);
  // Refused before anything is written: a record that does not verify deep, or a unit that cannot be sealed
  // (a signed decision's unit only when the decision already counts as none, erase/decision.ts).
  eraseUnit(record, req.path, stepId, digest, await decisionVoided(journal, text, req.path));
  let after = head?.seq ?? -1;
  // The step_ids this erasure's name (and its fallbacks) already hold: see freeStepId.
  const taken = new Set<string>();
  for await (const l of journal.lines({ to: after })) {
    if (l.text.includes(`"step_id":"${stepId}`)) taken.add((JSON.parse(l.text) as { step_id: string }).step_id);
    const e = erasureOf(l.text);
    if (e?.input.target !== req.seq || !nested(e.input.path, req.path) || hasMarker(record, e.step_id)) continue;
    if (!stuck.has(e.step_id)) return 'again';
    if (e.input.path !== req.path && !e.input.path.startsWith(`${req.path}/`)) continue;
    if (!namesUnit(record, e.input)) continue; // a record that lies about the unit: verify names it, it blocks nothing
    throw new ErasureError(
      'ERASURE_TARGET_INVALID',
      `erasure record seq ${e.seq} (${e.step_id}) erases ${e.input.path === req.path ? req.path : `${e.input.path}, inside ${req.path},`} of seq ${req.seq} and is recorded but cannot be carried out: erasing ${req.path} would leave it naming a unit that exists nowhere; nothing written (stepchain erase --resume says why it cannot be carried out)`,
      req.path,
    );
  }
  const input: ErasureInput = { target: req.seq, path: req.path, digest, reason: req.reason, by: req.by ?? null };
  await gate();
  // Lines appended after `after` concern the check only when they are erasures of the same record, or hold a
  // step_id this erasure's name may take: the store reads them under its lock and commits past any other
  // (UNLESS_AFTER), so appends that never pause cannot keep the erasure out. Checked here after each append
  // instead, it waited, re-reading, for as long as other writers kept appending (outsider H).
  const holdsName = (line: string): boolean => line.includes(`"step_id":"${stepId}`);
  const concerns = (line: string): boolean => holdsName(line) || erasureOf(line)?.input.target === req.seq;
  for (;;) {
    try {
      // The commit point: from here the erasure is recorded, and completed by this call or the next erase.
      const step = {
        step_id: freeStepId(stepId, taken),
        kind: ERASURE_KIND,
        ref: null,
        input: input as never,
        result: null,
        error: null,
      };
      Object.defineProperty(step, ERASURE_WRITER, { value: true });
      const options: WriterAppendOptions = { after, [UNLESS_AFTER]: concerns };
      return { appended: await journal.append(step, options), input };
    } catch (e) {
      if (!(e instanceof StoreError) || e.code !== 'HEAD_MOVED') throw e;
      const before = after;
      for await (const l of journal.lines({ from: after + 1 })) {
        if (erasureOf(l.text)?.input.target === req.seq) return 'again';
        if (holdsName(l.text)) taken.add((JSON.parse(l.text) as { step_id: string }).step_id);
        after = l.seq;
      }
      if (after === before) throw e; // the head moved, yet no step follows it: nothing to decide again on
    }
  }
}
