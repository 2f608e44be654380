/** `stepchain erase`: erase one value of a stepchain/v3 journal, or every matching value across a store (spec/ERASURE.md). */
import { resolve } from 'node:path';
import { FileStore } from '../../store/index.js';
import { eraseMatching, eraseValue, resumeErasures, type ErasureOutcome, type StuckErasure } from '../../erase.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { locate } from '../location.js';
import { backendOf } from '../../store/scheme.js';
import type { Output } from '../output.js';
import { inline } from '../safe-text.js';

function intArg(v: unknown, name: string): number {
  const n = typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`${name} takes a seq (a non-negative integer)`, 'erase');
  return n;
}

export const eraseVerb: Verb = {
  name: 'erase',
  summary:
    'erase a value from a stepchain/v3 journal (or every matching value of a store), keeping the chain verifiable',
  usage:
    '<journal> --seq N --path /result/email --reason TEXT [--by NAME]  |  <store> --match-path P --value JSON --reason TEXT  |  <journal> --resume',
  description: [
    'The value (and its part file, when no other record references it) and its salt are deleted; its digest stays, so every',
    'step hash, the head, every checkpoint and cosignature stay valid. An erasure record (kind "erasure": target, path, digest,',
    'reason, by) is appended first; then the record is rewritten under the journal lock by atomic replacement of its bucket.',
    'An erase interrupted between the two is completed by --resume (or by the next erase); verify reports it pending meanwhile.',
    'Across a store: --match-path is a JSON Pointer where "*" matches any member or index, --value the JSON value to find',
    '(a bare word is taken as a string). A journal directory or store root, sqlite:FILE[?journal=ID] or postgres://…[?journal=ID].',
  ].join('\n'),
  options: {
    seq: { type: 'string', arg: 'N', description: 'the seq of the record holding the value' },
    path: {
      type: 'string',
      arg: 'POINTER',
      description: 'JSON Pointer of the member or element to erase (/result/email)',
    },
    reason: { type: 'string', arg: 'TEXT', description: 'why (recorded in the erasure record; required)' },
    by: { type: 'string', arg: 'NAME', description: 'who asked or decided (recorded)' },
    'match-path': {
      type: 'string',
      arg: 'P',
      description: 'a store: erase every value at this pointer ("*": any name or index) that equals --value',
    },
    value: { type: 'string', arg: 'JSON', description: 'with --match-path: the value to find' },
    resume: { type: 'boolean', description: 'complete erasures that were recorded but interrupted' },
  },
  args: { min: 1, max: 1, names: ['location'] },
  examples: [
    [
      'stepchain erase runs/triage-0412 --seq 3 --path /result/email --reason "GDPR Art. 17 request #118" --by dpo',
      'erase one value',
    ],
    [
      'stepchain erase runs --match-path /input/customer/email --value alice@example.org --reason "GDPR Art. 17"',
      "erase one person's e-mail from every run",
    ],
  ],
  async run({ out, values, positionals }) {
    const say = (o: ErasureOutcome): void => sayOutcome(out, o);
    if (values['match-path'] !== undefined) {
      if (values.value === undefined || values.reason === undefined)
        throw new UsageError('--match-path needs --value and --reason', 'erase');
      let value: unknown;
      try {
        value = JSON.parse(values.value as string);
      } catch {
        value = values.value;
      }
      const text = positionals[0]!;
      const at = backendOf(text) === 'file' ? null : await locate(text, { journalOptional: true });
      let report;
      try {
        const store = at === null ? new FileStore(resolve(text)) : at.store;
        report = await eraseMatching(store, {
          matchPath: values['match-path'] as string,
          value,
          reason: values.reason as string,
          by: (values.by as string | undefined) ?? null,
        });
      } finally {
        await at?.close();
      }
      if (out.json) out.document('erase', { ok: report.failed.length === 0, ...report });
      else {
        for (const o of report.erased) say(o);
        for (const f of report.failed) out.say(out.style('red', failedLine(f)));
        if (report.journals_not_v3.length)
          out.say(
            `${report.journals_not_v3.length} journal(s) are not stepchain/v3 and were not searched: ${report.journals_not_v3.map(inline).join(', ')}`,
          );
        out.say(`${report.erased.length} value(s) erased in ${report.journals_scanned} journal(s) scanned`);
      }
      return report.failed.length === 0 ? EXIT_OK : EXIT_FAILED;
    }
    const at = await locate(positionals[0]!);
    try {
      if (at.id === undefined)
        throw new UsageError(
          `${inline(at.display)} names a store: add ?journal=<id> to erase one value (or use --match-path across the store)`,
          'erase',
        );
      if (values.resume === true) {
        const stuck: StuckErasure[] = [];
        const done = await resumeErasures(at.store, at.id, stuck);
        if (out.json) out.document('erase', { ok: stuck.length === 0, erased: done, stuck });
        else {
          done.forEach(say);
          for (const s of stuck)
            out.say(
              out.style(
                'red',
                `cannot carry out erasure record seq ${s.erasure.seq} (${inline(s.path)} of seq ${s.seq}): ${s.code}: ${inline(s.error)}; it stays pending and blocks no other erasure`,
              ),
            );
          out.say(
            `${done.length} interrupted erasure(s) completed${stuck.length ? `, ${stuck.length} cannot be carried out` : ''}`,
          );
        }
        return stuck.length === 0 ? EXIT_OK : EXIT_FAILED;
      }
      if (values.seq === undefined || values.path === undefined || values.reason === undefined)
        throw new UsageError(
          'erase needs --seq, --path and --reason (or --match-path on a store, or --resume)',
          'erase',
        );
      return await eraseOne(out, at.store, at.id, {
        seq: intArg(values.seq, '--seq'),
        path: values.path as string,
        reason: values.reason as string,
        by: (values.by as string | undefined) ?? null,
      });
    } finally {
      await at.close();
    }
  },
};

/**
 * Erases one value after completing the erasures recorded earlier and not carried out: said, never silently
 * (ERASURE.md §3.1); and says which false erasure records the value's sealing now exposes to verify.
 */
async function eraseOne(
  out: Output,
  store: Parameters<typeof eraseValue>[0],
  id: string,
  req: Parameters<typeof eraseValue>[2],
): Promise<number> {
  const stuck: StuckErasure[] = [];
  const first = await resumeErasures(store, id, stuck);
  const o = await eraseValue(store, id, req);
  const contradicted = contradicting(stuck, o);
  if (out.json) out.document('erase', { ok: true, ...o, completed_first: first, contradicted_by: contradicted });
  else {
    for (const done of [...first, o]) sayOutcome(out, done);
    for (const s of contradicted) out.say(out.style('yellow', contradictionLine(s)));
  }
  return EXIT_OK;
}

/**
 * The erasure records that could not be carried out (another digest at their path, written by hand or by another
 * program) and that name the unit just erased or one inside or around it. While its target was in private form
 * such a record was pending and checked by nobody (one pass keeps no private line); now that the target is sealed,
 * verify holds the record to it and reports ERASURE_MISMATCH there (ERASURE.md §5 step 4). The erase goes ahead —
 * the value must go — and says so, so the new verdict is not read as this erase's doing.
 */
function contradicting(stuck: readonly StuckErasure[], o: ErasureOutcome): StuckErasure[] {
  const around = (a: string, b: string): boolean => a === b || b.startsWith(a + '/');
  // Only a record that names the unit with another digest is the false record the warning describes; one stuck
  // for another reason (a target that is not earlier, a unit not there) verify judged as before.
  return stuck.filter(
    (s) => s.code === 'ERASURE_MISMATCH' && s.seq === o.seq && (around(s.path, o.path) || around(o.path, s.path)),
  );
}

function contradictionLine(s: StuckErasure): string {
  return `warning: erasure record seq ${s.erasure.seq} names ${inline(s.path)} of seq ${s.seq} with a digest that unit does not have (${inline(s.code)}): no erase wrote it. Now that seq ${s.seq} is sealed, verify checks that record and reports ERASURE_MISMATCH at seq ${s.erasure.seq}: the journal held a false erasure record before this erase (ERASURE.md §5 step 4)`;
}

/** One erasure in people's text, and each other place that holds the same value (ERASURE.md §4). */
function sayOutcome(out: { say(text: string): void }, o: ErasureOutcome): void {
  out.say(
    `${o.resumed ? 'completed an erasure recorded earlier (not by this call):' : 'erased'} ${inline(o.journal)} seq ${o.seq} ${inline(o.path)} (digest ${o.digest}; erasure record seq ${o.erasure.seq})${o.parts_deleted.length ? `; ${o.parts_deleted.length} part file(s) deleted` : ''}${o.wal_truncated === false ? '; the WAL still holds the old row until its next checkpoint (another connection was reading)' : ''}`,
  );
  for (const p of o.elsewhere ?? [])
    out.say(
      `  the same value is also at seq ${p.seq} ${inline(p.path)} (not erased: erase it too with --seq ${p.seq} --path ${inline(p.path)})`,
    );
}

/** One match that could not be erased, or (seq -1) one journal that could not be searched. */
function failedLine(f: { journal: string; seq: number; path: string; error: string }): string {
  const where = f.seq < 0 ? inline(f.journal) : `${inline(f.journal)} seq ${f.seq} ${inline(f.path)}`;
  return `failed ${where}: ${inline(f.error)}`;
}
