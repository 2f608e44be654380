/**
 * append: one step from a file or standard input, or with --jsonl a whole JSONL input taken as one
 * all-or-nothing batch, streamed in bounded memory (a journal directory behind its pending-batch mark,
 * SQLite and Postgres in one transaction).
 */
import type { AppendResult, FileJournal, StepInput } from '../../index.js';
import { capabilitiesOf } from '../../record/formats.js';
import { Run, underRunRules } from '../../runtime/index.js';
import { EXIT_OK, type Verb } from '../cli.js';
import { InputError, parseJsonStrict, readLinesOf, readText } from '../input.js';
import { withJournal } from '../location.js';
import type { Output } from '../output.js';

export const appendVerb: Verb = {
  name: 'append',
  summary: 'append a step (or many, with --jsonl) from a file or standard input',
  usage: '<journal> [--file step.json] [--jsonl]',
  description:
    'A step is a JSON object with input, model, prompt, tool_call and result (absent ones are null), and optionally step_id, ts and meta. v, seq, prev_hash and step_hash are computed by the journal. Input is UTF-8 JSON, refused (never coerced) where it is not UTF-8 or holds a number a JSON number (a double) would store as another. In a run journal a record with a run kind (tool.started, tool.completed, run.completed, …) keeps the run\'s rules as effect begin/end do: a second outcome, a start that repeats a pending effect, run.completed with effects pending and anything after the run ended are refused (spec/RUNS.md §1, §5). With --jsonl the whole input is one batch, all or nothing, taken as a stream in memory bounded by its longest line whatever its length; other writers of the journal wait until it ends (and fail with LOCK_TIMEOUT past their lock timeout). A failure in the middle — a line that is not JSON, a step the journal refuses, a write error, a lost connection, the process killed — leaves none of the batch in the journal, and nothing is printed. In a journal directory the lines written so far stay uncommitted behind the pending-batch mark (.batch-pending.json), invisible to readers, and are cut off at once (or, after a crash, by the next writer to open the journal). In SQLite and Postgres they are inside one transaction, which is rolled back (after a crash, by SQLite or by the server); a Postgres batch whose input stalls longer than the idle timeout (10 s) fails whole. Only a stepchain/v3 journal\'s parts stored for the batch may remain in a directory or Postgres, referenced by no step. Once the whole batch is committed: one "seq step_hash" line per step added (a step repeating a committed step_id adds none).',
  options: {
    file: { type: 'string', short: 'f', arg: 'file', description: 'read from this file instead of standard input' },
    jsonl: {
      type: 'boolean',
      description:
        'one step per line, any number, appended as one all-or-nothing batch (a failure anywhere leaves none of it)',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain append runs/today --file step.json', 'append one step'],
    ['cat steps.jsonl | stepchain append runs/today --jsonl', 'append a batch, all or nothing'],
  ],
  async run({ out, values, positionals }) {
    if (values.jsonl) return appendJsonl(out, positionals[0]!, values.file as string | undefined);
    const { text, name } = await readText(values.file as string | undefined);
    const step = parseJsonStrict(text, { file: name }) as StepInput;
    const r = await withJournal(positionals[0]!, false, async (j) => {
      if (!capabilitiesOf(j.genesis).runRecords) return j.append(step);
      // A run journal: the record goes through the run's writer, which keeps the rules between records
      // (RUNS.md §1, §5) that effect begin/end keep, and saves the run's state for the next command.
      const run = Run.of(j);
      const at = await run.record({ ...step, kind: typeof step.kind === 'string' ? step.kind : 'step' });
      await run.saveState();
      return at;
    });
    if (out.json) out.document('append', { ok: true, appended: [r] });
    else out.print(`${r.seq} ${r.step_hash}`);
    return EXIT_OK;
  },
};

/** The young generation's size (both semi-spaces) past which a bulk import lets it grow no more. */
const YOUNG_CAP_BYTES = 8 * 1024 * 1024;

/**
 * Every step of a bulk import leaves garbage that dies young, for as long as the input lasts, and V8 answers
 * by growing its young generation to its maximum (two 16 MB semi-spaces: 1 000 000 steps peaked at 153 MB
 * resident). Once it reaches YOUNG_CAP_BYTES its growth factor is set to 1, so it stays there: 108–112 MB
 * (bench/RESULTS.md "Bulk append"). A V8 flag set at run time, read each time the young generation would
 * grow; this process is the CLI's own, so no library caller's heap is touched. Called every few hundred lines.
 */
function youngGenerationCap(): () => void {
  const v8 = process.getBuiltinModule('node:v8');
  let capped = false;
  return () => {
    if (capped) return;
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young === undefined || young.space_size < YOUNG_CAP_BYTES) return;
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    capped = true;
  };
}

/** The steps of a JSONL input, parsed one line at a time (bounded memory). */
async function* jsonlSteps(file: string | undefined): AsyncGenerator<StepInput> {
  let any = false;
  let where = '<stdin>';
  const cap = youngGenerationCap();
  for await (const { text, line, name } of readLinesOf(file)) {
    any = true;
    where = name;
    if (line % 256 === 0) cap();
    yield parseJsonStrict(text, { file: name, line }) as StepInput;
  }
  if (!any) throw new InputError('INPUT_INVALID', `${file ?? where} holds no steps`);
}

/**
 * append --jsonl: one all-or-nothing batch, taken as a stream (appendStream: bounded memory, whatever its
 * length; a directory behind its pending-batch mark, SQLite and Postgres in one transaction); then the lines
 * it added are read back and printed, one "seq step_hash" each (or, with --json, one document listing them).
 * A journal without appendStream (memory:) takes it as one appendMany.
 */
async function appendJsonl(out: Output, location: string, file: string | undefined): Promise<number> {
  return withJournal(location, false, async (j) => {
    const ruled = await underRunRules(j, jsonlSteps(file));
    const input = ruled?.steps ?? jsonlSteps(file);
    const after = ruled === null ? undefined : { after: ruled.after };
    const streaming = (j as Partial<FileJournal>).appendStream;
    if (typeof streaming !== 'function') {
      const steps: StepInput[] = [];
      for await (const s of input) steps.push(s);
      const results = await j.appendMany(steps, after);
      await ruled?.saveState();
      if (out.json) out.document('append', { ok: true, appended: results });
      else for (const r of results) out.print(`${r.seq} ${r.step_hash}`);
      return EXIT_OK;
    }
    const batch = await streaming.call(j as FileJournal, input, after); // eslint-disable-line @typescript-eslint/no-unsafe-class-instance-assignment -- a journal with appendStream is a FileJournal (checked just above)
    await ruled?.saveState();
    const appended: AppendResult[] = [];
    if (batch.first !== null) {
      for await (const l of j.lines({ from: batch.first, to: batch.last! })) {
        if (out.json) {
          const { seq, step_id, step_hash, prev_hash, ts } = JSON.parse(l.text) as AppendResult;
          appended.push({ seq, step_id, step_hash, prev_hash, ts });
        } else {
          // A committed line is canonical JSON: its step_hash is found without parsing the line (less garbage).
          await out.stream(`${l.seq} ${/"step_hash":"(sha256:[0-9a-f]{64})"/.exec(l.text)?.[1] ?? ''}`);
        }
      }
    }
    if (out.json) out.document('append', { ok: true, steps: batch.steps, appended });
    return EXIT_OK;
  });
}
