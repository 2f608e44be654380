/** Verbs over a journal (a directory, a SQLite or a Postgres location): init, append, log, show, head, fork. */
import type { Effect, Journal, StepRecord } from '../../index.js';
import { Run, startRun } from '../../runtime.js';
import { formatNamed, isRunGenesis, NEW_RUN_FORMAT, RUN_FORMATS, shortName } from '../../record/formats.js';
import type { CreatableFormat, RunFormat } from '../../record/formats.js';
import { intArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { journalId, locate, withJournal } from '../location.js';
import { JSON_FORMAT, printReport, type Output } from '../output.js';
import { identityLine, labelsOf } from '../identity.js';
import { logEntry } from '../log-lines.js';
import { inline } from '../safe-text.js';
import { savePart, stepParts } from '../parts.js';

/** show --parts / --save-part: the step's parts listed, or one written to a file (PARTS.md). */
async function showParts(
  out: Output,
  journal: Journal,
  seq: number,
  save: string | undefined,
  file: string | undefined,
): Promise<number> {
  if (save !== undefined) {
    const { row, bytes } = await savePart(journal, seq, save, file!);
    if (out.json) out.document('show', { ok: true, seq, saved: { ...row, out: file, written: bytes } });
    else
      out.say(
        `saved ${bytes} bytes of ${row.kind === 'media' ? inline(row.media_type!) : 'JSON'} (part ${row.address}) to ${inline(file!)}`,
      );
    return EXIT_OK;
  }
  const { rows } = await stepParts(journal, seq);
  if (out.json) out.document('show', { ok: true, seq, parts: rows });
  else if (rows.length === 0) out.say(`step ${seq} references no part`);
  else
    for (const r of rows)
      out.print(
        `${inline(r.path)}  ${r.kind}${r.media_type === null ? '' : ` ${inline(r.media_type)}`}  ${r.bytes} bytes  ${r.address}`,
      );
  return EXIT_OK;
}

export { openJournal, withJournal } from '../location.js';
export { describePrompt } from '../log-lines.js';

export { printReport };

export const initVerb: Verb = {
  name: 'init',
  summary:
    'create a journal (a directory, or in a SQLite file or Postgres; a run journal with --run or any run option)',
  usage:
    '<journal> [--format v1|v2|v3] [--run] [--conversation C] [--parent R] [--agent A] [--label k=v]… [--bucket-bytes N] [--blob-threshold N]',
  description: [
    'A journal is a directory path, a SQLite location sqlite:path/to/agents.db?journal=<id> (spec/SQLITE.md), or a Postgres',
    "location postgres://user@host:port/db?journal=<id> (the password from PGPASSWORD or ~/.pgpass); a store's file or",
    'tables are created on first use. Any other scheme (s3://…) is an error: nothing is created.',
    'Plain: a stepchain/v3 journal (every member, element and chunk committed, spec/FORMAT.md §14, so everything a',
    'published receipt shows is bound to the original head); --format v2 for a stepchain/v2 journal (salted per-field',
    'commitments, §12); --format v1 for a stepchain/v1 journal. A journal keeps the format of its genesis.',
    'With --run or any of --conversation, --parent, --agent, --label: a run journal',
    "(stepchain/v3, or v2 with --format v2; spec/FORMAT.md §11) whose run id is the journal's id, with its identity in the",
    'genesis (covered by the genesis hash) and a run.started record; effect and continuation need one. A run id already',
    'in the store is refused.',
  ].join('\n'),
  options: {
    format: {
      type: 'string',
      arg: 'v1|v2|v3',
      description:
        'the journal format (default v3, which commits every member, element and chunk; v2 or v1 for readers that know only those)',
    },
    run: { type: 'boolean', description: 'create a run journal (stepchain/v3 unless --format v2)' },
    conversation: { type: 'string', arg: 'C', description: 'the conversation this run belongs to' },
    parent: { type: 'string', arg: 'R', description: "the run that delegated this one (an orchestrator's run id)" },
    agent: { type: 'string', arg: 'A', description: "the agent's name" },
    label: {
      type: 'string',
      arg: 'k=v',
      multiple: true,
      description: 'a label fixed at creation: user, session, environment… (repeatable)',
    },
    'bucket-bytes': { type: 'string', arg: 'N', description: 'start a new bucket file after N bytes (default 64 MiB)' },
    'blob-threshold': {
      type: 'string',
      arg: 'N',
      description: 'store content fields of N canonical bytes or more as blobs (default 64 KiB)',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain init runs/today', 'a new journal in ./runs/today'],
    ['stepchain init runs/legacy --format v1', 'a stepchain/v1 journal'],
    [
      'stepchain init runs/r1 --conversation conv-42 --agent billing --label environment=prod',
      'a run journal with its identity',
    ],
    ['stepchain init "sqlite:agents.db?journal=run-42"', 'a new journal in the SQLite file agents.db'],
    ['PGPASSWORD=… stepchain init "postgres://agent@db.internal/agents?journal=run-42"', 'a new journal in Postgres'],
  ],
  async run({ out, values, positionals }) {
    const sizes = {
      ...(values['bucket-bytes'] !== undefined
        ? { segmentBytes: intArg(values['bucket-bytes'], '--bucket-bytes', 'init') }
        : {}),
      ...(values['blob-threshold'] !== undefined
        ? { blobThreshold: intArg(values['blob-threshold'], '--blob-threshold', 'init') }
        : {}),
    };
    const labels = labelsOf(values.label, 'init');
    const asRun =
      values.run === true || [values.conversation, values.parent, values.agent, labels].some((v) => v !== undefined);
    const format = values.format ?? shortName(NEW_RUN_FORMAT);
    const chosen = formatNamed(format);
    if (!chosen?.capabilities.written)
      throw new UsageError(`init --format must be v1, v2 or v3 (got ${JSON.stringify(format)})`, 'init');
    if (asRun && !chosen.capabilities.runRecords)
      throw new UsageError(
        `a run journal is ${RUN_FORMATS.join(' or ')}: drop --format ${String(format)}, or the run options`,
        'init',
      );
    const formatName = chosen.format as CreatableFormat;
    const at = await locate(positionals[0]!);
    let journal: Journal;
    try {
      const id = journalId(at);
      if (asRun) {
        const run = await startRun(at.store, {
          runId: id,
          ...sizes,
          ...(labels !== undefined ? { labels } : {}),
          ...(values.conversation !== undefined ? { conversationId: values.conversation as string } : {}),
          ...(values.parent !== undefined ? { parentRunId: values.parent as string } : {}),
          ...(values.agent !== undefined ? { agent: values.agent as string } : {}),
          format: formatName as RunFormat,
        });
        journal = run.journal;
      } else {
        journal = await at.store.create(id, { ...sizes, format: formatName });
      }
      await journal.close();
    } finally {
      await at.close();
    }
    if (out.json) out.document('init', { ok: true, journal: at.display, genesis: journal.genesis });
    else
      out.say(
        `created ${asRun ? 'run journal' : 'journal'} ${inline(at.kind === 'directory' ? positionals[0]! : at.display)} (journal_id ${inline(journal.genesis.journal_id)})`,
      );
    return EXIT_OK;
  },
};

async function* noSteps(): AsyncGenerator<StepRecord> {}

export const logVerb: Verb = {
  name: 'log',
  summary: 'show the run step by step, after verifying the chain',
  usage: '<journal> [--from N] [--to M] [--jsonl]',
  description:
    'The chain is verified first; the steps shown are those it verified. For programs: --json writes one document with the verification report and every step, which is built in memory — fine for a run of thousands of steps. --jsonl streams instead, in memory bounded by the longest step: one JSON object per line, {"type":"step","step":{…}} for each step, then a last line {"type":"summary","ok":…,"verification":{…}} with the verdict. Use --jsonl for long runs and pipelines, and trust the steps only once the summary line says ok (a stream without it was cut short).',
  options: {
    from: { type: 'string', arg: 'N', description: 'first seq to show' },
    to: { type: 'string', arg: 'M', description: 'last seq to show' },
    jsonl: {
      type: 'boolean',
      description: 'stream one JSON object per step, then a summary line with the verdict (bounded memory)',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain log runs/today', 'a git-log-like view of the run'],
    [
      'stepchain log runs/today --jsonl | jq -c \'select(.type == "step") | .step.result\'',
      'stream a long run into a pipeline',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.jsonl && out.json)
      throw new UsageError('--json writes one document and --jsonl a stream of lines: choose one', 'log');
    return withJournal(positionals[0]!, true, async (journal) => {
      const report = await journal.verify();
      const to = values.to !== undefined ? intArg(values.to, '--to', 'log') : undefined;
      // Show what was verified: a step appended since is not covered by the verdict.
      const last = report.head_seq === null ? to : to === undefined ? report.head_seq : Math.min(to, report.head_seq);
      const range = {
        ...(values.from !== undefined ? { from: intArg(values.from, '--from', 'log') } : {}),
        ...(last !== undefined ? { to: last } : {}),
      };
      // --from past the verified head shows nothing (an explicit --to before --from is still RANGE_INVALID).
      const pastHead = to === undefined && range.from !== undefined && range.to !== undefined && range.to < range.from;
      const steps = (): AsyncIterable<StepRecord> => (pastHead ? noSteps() : journal.read(range));
      // A run journal: its effects with no outcome are marked (RUNS.md §2), on every line that begins one.
      const pending: Effect[] =
        isRunGenesis(journal.genesis) && report.ok ? await Run.of(journal, { savedState: false }).pendingEffects() : [];
      const pendingIds = new Set(pending.map((e) => e.id));
      const runMembers = isRunGenesis(journal.genesis)
        ? { run: journal.genesis.run, pending_effects: pending.map((e) => e.id) }
        : {};
      if (values.jsonl) {
        for await (const step of steps())
          await out.stream(
            JSON.stringify({ type: 'step', step, ...(pendingIds.has(step.step_id) ? { outcome_unknown: true } : {}) }),
          );
        await out.stream(
          JSON.stringify({
            type: 'summary',
            format: JSON_FORMAT,
            command: 'log',
            ok: report.ok,
            verification: report,
            ...runMembers,
          }),
        );
        return report.ok ? EXIT_OK : EXIT_FAILED;
      }
      if (out.json) {
        const all: StepRecord[] = [];
        for await (const s of steps()) all.push(s);
        out.document('log', { ok: report.ok, verification: report, ...runMembers, steps: all });
        return report.ok ? EXIT_OK : EXIT_FAILED;
      }
      const identity = identityLine(journal.genesis);
      if (identity !== null) out.say(identity);
      // The verdict first: a valid chain in one line, an invalid one with every problem.
      if (report.ok)
        out.say(
          out.style(
            'green',
            `✔ chain verified: ${report.steps} step${report.steps === 1 ? '' : 's'}, head ${report.head ?? '(empty)'}`,
          ),
        );
      else
        printReport(out, positionals[0]!, report, [
          out.style(['red', 'bold'], 'The chain does NOT hold: the steps below cannot be trusted.'),
        ]);
      if (pending.length > 0)
        out.say(
          out.style(
            ['yellow', 'bold'],
            `⚠ ${pending.length} tool effect${pending.length === 1 ? '' : 's'} started with no recorded outcome (marked PENDING below): the tool may or may not have run`,
          ),
        );
      const width = process.stdout.columns && process.stdout.columns > 60 ? process.stdout.columns : 100;
      for await (const step of steps()) await out.stream(logEntry(out, step, width, pendingIds.has(step.step_id)));
      return report.ok ? EXIT_OK : EXIT_FAILED;
    });
  },
};

export const showVerb: Verb = {
  name: 'show',
  summary: 'print one step in full (blobs restored)',
  usage: '<journal> <seq> [--parts] [--save-part <pointer> -o <file>]',
  options: {
    parts: {
      type: 'boolean',
      description:
        'list the parts the step references (stepchain/v3): where each stands, its address, kind, media type and size',
    },
    'save-part': {
      type: 'string',
      arg: 'pointer',
      description:
        'write the part standing at this JSON Pointer (as --parts lists it) to the file -o names: a media part as its raw bytes, any other as JSON',
    },
    out: { type: 'string', short: 'o', arg: 'file', description: 'the file --save-part writes' },
  },
  args: { min: 2, max: 2, names: ['journal', 'seq'] },
  examples: [
    ['stepchain show runs/today 3', 'step 3 as JSON'],
    ['stepchain show runs/today 3 --parts', 'the parts step 3 references'],
    ['stepchain show runs/today 3 --save-part /prompt/0/content/1/data -o image.png', 'save an image the step sent'],
  ],
  async run({ out, positionals, values }) {
    const seq = intArg(positionals[1], 'seq', 'show');
    const save = values['save-part'] as string | undefined;
    if (save !== undefined && values.out === undefined) throw new UsageError('--save-part needs -o <file>', 'show');
    if (values.parts || save !== undefined)
      return withJournal(positionals[0]!, true, (journal) =>
        showParts(out, journal, seq, save, values.out as string | undefined),
      );
    return withJournal(positionals[0]!, true, async (journal) => {
      const step = await journal.get(seq);
      if (step === null) {
        const head = await journal.head();
        throw new UsageError(
          `no step ${seq}: the journal's last step is ${head === null ? 'none (it is empty)' : `seq ${head.seq}`}`,
          'show',
        );
      }
      if (out.json) out.document('show', { ok: true, step });
      else out.print(JSON.stringify(step, null, 2));
      return EXIT_OK;
    });
  },
};

export const headVerb: Verb = {
  name: 'head',
  summary: 'print the head: the last step hash, which identifies the run',
  usage: '<journal>',
  options: {},
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [['stepchain head runs/today', 'seq and step_hash of the last step']],
  async run({ out, positionals }) {
    return withJournal(positionals[0]!, true, async (journal) => {
      const head = await journal.head();
      if (out.json) out.document('head', { ok: true, head });
      else if (head === null) out.say('the journal is empty');
      else out.print(`${head.seq} ${head.step_hash}`);
      return EXIT_OK;
    });
  },
};

export const forkVerb: Verb = {
  name: 'fork',
  summary: 'start a new journal from step N of another (steps 0..N byte-identical)',
  usage: '<journal> --from-step N <new-journal>',
  options: { 'from-step': { type: 'string', arg: 'N', description: 'the last step the fork keeps' } },
  args: { min: 2, max: 2, names: ['journal', 'new-journal'] },
  examples: [['stepchain fork runs/today --from-step 4 runs/retry', 'replay from step 5 onwards in a new journal']],
  async run({ out, values, positionals }) {
    if (values['from-step'] === undefined) throw new UsageError('--from-step N is required', 'fork');
    const fromStep = intArg(values['from-step'], '--from-step', 'fork');
    const target = await locate(positionals[1]!);
    try {
      return await withJournal(positionals[0]!, true, async (parent, at) => {
        if (at.storeKey !== target.storeKey) {
          throw new UsageError(
            'the fork must live beside its parent (the same directory, or the same database and schema) so its lineage can name the parent by id',
            'fork',
          );
        }
        const fork = await target.store.fork(parent, { fromStep, to: journalId(target) });
        const head = await fork.head();
        await fork.close();
        if (out.json) out.document('fork', { ok: true, journal: target.display, lineage: fork.lineage, head });
        else
          out.say(
            `forked ${inline(at.display)} at step ${fromStep} into ${inline(target.display)} (head ${head?.step_hash})`,
          );
        return EXIT_OK;
      });
    } finally {
      await target.close();
    }
  },
};
