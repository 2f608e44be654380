/** `stepchain diff`: where two runs (journals or receipts) diverge. */
import type { ChainSource } from '../../index.js';
import { diff, explain, formatDiff, summarize, type Explanation } from '../../replay.js';
import { openReceiptSource } from '../../receipt/index.js';
import { publishedReceiptHooks } from '../../redact/index.js';
import { EXIT_FAILED, EXIT_OK, type Verb } from '../cli.js';
import { locationKind, openJournal } from '../location.js';
import { countingSource } from '../output.js';
import { inline } from '../safe-text.js';
import { unboundLines, unboundOf } from '../unbound.js';

/** Opens a journal (directory or Postgres) or a receipt file as a read-only chain. */
export async function openRun(path: string): Promise<{ source: ChainSource; report: unknown; close(): Promise<void> }> {
  if ((await locationKind(path)) === 'journal') {
    const { journal, at } = await openJournal(path, { readOnly: true });
    return { source: journal, report: null, close: () => journal.close().finally(() => at.close()) };
  }
  // The whole verification, as `verify` runs it: published (redacted) receipts carry anchor and redactions
  // members, which the hooks check, and their finish adds the declaration and anchor checks.
  const source = await openReceiptSource(path, publishedReceiptHooks().options);
  return { source, report: source.report, close: async () => {} };
}

export const diffVerb: Verb = {
  name: 'diff',
  summary: 'show where two runs diverge, step and field (journals or receipts)',
  usage: '<a> <b> [--all] [--ignore pointer]… [--envelope] [--no-volatile] [--explain]',
  description: [
    'Compares content (input, model, prompt, tool_call, result, meta), not the envelope fields that always differ between runs.',
    'Extra or missing steps are reported as insertions and deletions. A receipt is verified in full first, exactly as',
    '`stepchain verify` does (a published receipt with its anchor and declarations): one that does not verify is an error (exit 2).',
    'Run journals are compared without their volatile members (spec/REPLAY.md §4: ref, response ids and times, durations in meta).',
    '--explain classifies each divergence (spec/REPLAY.md §7): request change (the agent asked something else: your code),',
    'recorded-answer change (the model answered differently: drift, unless one run is a strict replay, where no request',
    "went live), tool-result change, or run-record change (the run's own outcome: your code), with the fields that decide it.",
  ].join('\n'),
  options: {
    all: { type: 'boolean', description: 'report every divergence, not only the first' },
    ignore: {
      type: 'string',
      multiple: true,
      arg: 'pointer',
      description:
        'leave out values matching a JSON Pointer pattern (* one token, ** any depth), e.g. /result/**/request_id',
    },
    envelope: { type: 'boolean', description: 'compare ts, step_id, seq, prev_hash and step_hash too' },
    'no-volatile': {
      type: 'boolean',
      description: 'compare the volatile members of run journals too (spec/REPLAY.md §4)',
    },
    explain: {
      type: 'boolean',
      description: 'classify each divergence: request change, recorded-answer change, tool-result change',
    },
  },
  args: { min: 2, max: 2, names: ['a', 'b'] },
  examples: [
    ['stepchain diff runs/recorded runs/replay', 'the first divergence between a run and its replay'],
    ['stepchain diff a.tar.gz b.tar.gz --all --ignore /result/**/request_id', 'every divergence, ignoring request ids'],
    [
      'stepchain diff runs/recorded runs/replay --all --explain',
      'every divergence of a replay, each classified with its fields',
    ],
  ],
  async run({ out, values, positionals }) {
    const a = await openRun(positionals[0]!);
    try {
      const b = await openRun(positionals[1]!);
      try {
        const progress = out.progress('diffing: lines read');
        const report = await diff(countingSource(a.source, progress), countingSource(b.source, progress), {
          all: values.all === true,
          envelope: values.envelope === true,
          ...(values.ignore ? { ignore: values.ignore as string[] } : {}),
          ...(values['no-volatile'] === true ? { volatile: false } : {}),
        });
        progress.end();
        const explained = values.explain === true ? await explain(report, a.source, b.source) : undefined;
        // Issue 32: text a published receipt does not bind to its head (redacted views, marker texts) is named
        // on both sides, so that a match or a difference there is not read as a fact about the original run.
        const unbound = { a: unboundOf(a.report), b: unboundOf(b.report) };
        const unboundMember =
          unbound.a || unbound.b
            ? {
                unbound: {
                  a: unbound.a?.places ?? [],
                  b: unbound.b?.places ?? [],
                  a_count: unbound.a?.count ?? 0,
                  b_count: unbound.b?.count ?? 0,
                },
              }
            : {};
        if (out.json)
          out.document('diff', {
            ok: true,
            same: report.same,
            report,
            ...(explained ? { explain: explained } : {}),
            ...unboundMember,
          });
        else if (report.same)
          out.say(out.style(unbound.a || unbound.b ? 'yellow' : 'green', inline(summarize(report))));
        else {
          // The verdict goes to stderr like every verdict; with --all the step-by-step listing is the
          // command's output, on stdout (formatDiff's first line is the summary itself).
          out.say(out.style(['red', 'bold'], inline(summarize(report))));
          if (values.all) out.print(formatDiff(report).split('\n').slice(1).map(inline).join('\n'));
          if (explained) {
            const noneLive = strictReplay(a.source) || strictReplay(b.source);
            out.print(explained.map((e) => explanationLine(e, noneLive)).join('\n'));
          }
        }
        if (!out.json)
          for (const line of [
            ...unboundLines(out, a.report, `a (${positionals[0]!})`),
            ...unboundLines(out, b.report, `b (${positionals[1]!})`),
          ])
            out.say(line);
        return report.same ? EXIT_OK : EXIT_FAILED;
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  },
};

const CLASS_WORDS: Record<Explanation['class'], string> = {
  'request-change': 'request change (your code)',
  'recorded-answer-change': 'recorded-answer change (model drift: the same request got another answer)',
  'tool-result-change': 'tool-result change',
  'run-record-change': "run-record change (your code: the run's own record, not a model's answer)",
};

/** Between a recording and its strict replay no request went live (spec/REPLAY.md §7): an answer that differs is no drift. */
const NOT_LIVE_WORDS =
  'recorded-answer change (not model drift: a strict replay sends no request live; the recorder or your code kept something else)';

/** Whether a run is a strict replay (its labels, spec/REPLAY.md §6): none of its requests went live. */
function strictReplay(source: ChainSource): boolean {
  const run = (source.genesis as { run?: { labels?: Record<string, unknown> } }).run;
  return run?.labels?.['replay.mode'] === 'strict';
}

/** One classified divergence: where, the record kind, the class, the fields. */
function explanationLine(e: Explanation, noneLive: boolean): string {
  const where =
    e.divergence === 'changed'
      ? `seq ${e.seq_a}↔${e.seq_b}`
      : e.divergence === 'inserted'
        ? `seq ${e.seq_b} only in b`
        : `seq ${e.seq_a} only in a`;
  const words = noneLive && e.class === 'recorded-answer-change' ? NOT_LIVE_WORDS : CLASS_WORDS[e.class];
  return inline(`${where} ${e.record}: ${words}${e.fields.length > 0 ? ` at ${e.fields.join(', ')}` : ''}`);
}
