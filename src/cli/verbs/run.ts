/**
 * Verbs over run journals (spec/FORMAT.md §11), so an agent in any language reaches the runtime from a
 * shell: `effect begin|end|list`, `continuation` (`runs`: runs.ts). A journal is named by its directory path, as
 * everywhere in the CLI; a store by its directory.
 */
import type { Json } from '../../index.js';
import { Run, RuntimeError, type Effect, type EffectDecision } from '../../runtime.js';
import { renderValue } from '../../diff/summary.js';
import { errorText } from '../log-lines.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { parseJsonStrict } from '../input.js';
import type { Output } from '../output.js';
import { withJournal } from '../location.js';
import { inline } from '../safe-text.js';

/**
 * Opens the run from the state its store saved (FILE-STORE §19) and, after a write, saves it again, so a
 * command folds only the records appended since the last one: its cost does not grow with the run's steps.
 */
function withRun<T>(path: string, readOnly: boolean, fn: (run: Run) => Promise<T>): Promise<T> {
  return withJournal(path, readOnly, async (journal) => {
    const run = Run.of(journal);
    const out = await fn(run);
    if (!readOnly) await run.saveState();
    return out;
  });
}

function jsonOption(value: unknown, flag: string, verb: string): Json {
  if (typeof value !== 'string') throw new UsageError(`${flag} JSON is required`, verb);
  return parseJsonStrict(value, { file: flag });
}

/** An effect as the CLI's JSON documents name it (snake_case, like the records). */
export function effectJson(e: Effect): Record<string, Json> {
  return {
    seq: e.seq,
    id: e.id,
    tool: e.tool,
    arguments: e.args,
    idempotency_key: e.idempotencyKey,
    summary: e.summary,
    call_id: e.callId,
    status: e.status,
    outcome_unknown: e.status === 'started',
    started_at: e.startedAt,
    ended_at: e.endedAt,
    end_seq: e.endSeq,
    duration_ms: e.durationMs,
    result: e.result,
    error: e.error,
    resolution:
      e.resolution === null
        ? null
        : { decision: e.resolution.decision, by: e.resolution.by, reason: e.resolution.reason },
    retry_of: e.retryOf,
  };
}

function effectLine(out: Output, e: Effect): string {
  const status =
    e.status === 'started'
      ? out.style(['yellow', 'bold'], 'PENDING — outcome unknown')
      : e.status === 'completed'
        ? out.style('green', 'completed')
        : out.style('red', 'failed');
  const key = e.idempotencyKey === null ? '' : `  key ${inline(e.idempotencyKey)}`;
  const took = e.durationMs === null ? '' : `  ${e.durationMs} ms`;
  const outcome = e.status === 'failed' ? `\n      error: ${inline(errorText(e.error, 100))}` : '';
  return `${String(e.seq).padStart(4)}  ${inline(e.id)}  ${out.style('cyan', inline(e.tool ?? '?'))}  ${status}${key}${took}\n      args: ${inline(renderValue(e.args, 100))}${e.summary ? `\n      summary: ${inline(e.summary)}` : ''}${outcome}`;
}

const begin = async (out: Output, values: Record<string, unknown>, path: string): Promise<number> => {
  if (typeof values.tool !== 'string') throw new UsageError('--tool NAME is required', 'effect');
  const args = values.args === undefined ? null : jsonOption(values.args, '--args', 'effect');
  return withRun(path, false, async (run) => {
    let effect;
    try {
      effect = await run.beginTool({
        name: values.tool as string,
        args,
        ...(values['idempotency-key'] !== undefined ? { idempotencyKey: values['idempotency-key'] as string } : {}),
        ...(values.summary !== undefined ? { summary: values.summary as string } : {}),
        ...(values.id !== undefined ? { id: values.id as string } : {}),
        ...(values['call-id'] !== undefined ? { callId: values['call-id'] as string } : {}),
      });
    } catch (e) {
      // Refused: it would repeat an effect of unknown outcome. Nothing on stdout (so `id=$(…) && tool` does
      // not run the tool), nothing written; exit 1, as a check that said no.
      if (!(e instanceof RuntimeError) || e.code !== 'EFFECT_PENDING') throw e;
      out.say(`${out.style('red', 'error:')} ${e.message}`);
      if (out.json)
        out.document('effect', {
          ok: false,
          action: 'begin',
          error: { code: e.code, message: e.message, location: e.location },
        });
      return EXIT_FAILED;
    }
    if (effect.status === 'completed') {
      // The key's effect completed: the tool must not run again. Its id and result are in the --json document.
      const existing = (await run.refresh()).effects.get(effect.id)!;
      const byKey = values['idempotency-key'] !== undefined && existing.idempotencyKey === values['idempotency-key'];
      const whose = byKey
        ? `idempotency key ${JSON.stringify(values['idempotency-key'])} belongs to effect`
        : `--id ${JSON.stringify(values.id)} is effect`;
      const message = `${whose} ${effect.id} (seq ${effect.seq}), which completed at seq ${existing.endSeq}: not begun again`;
      out.say(`${out.style('red', 'error:')} EFFECT_EXISTS: ${message}`);
      if (out.json)
        out.document('effect', {
          ok: false,
          action: 'begin',
          error: { code: 'EFFECT_EXISTS', message },
          effect: effectJson(existing),
        });
      return EXIT_FAILED;
    }
    // The id alone on stdout, printed only once the intent is durable: `id=$(stepchain effect begin …)`.
    if (out.json) out.document('effect', { ok: true, action: 'begin', id: effect.id, seq: effect.seq });
    else out.print(effect.id);
    return EXIT_OK;
  });
};

const end = async (out: Output, values: Record<string, unknown>, path: string, id: string): Promise<number> => {
  const hasResult = values.result !== undefined;
  const hasError = values.error !== undefined;
  if (hasResult === hasError)
    throw new UsageError('give exactly one of --result JSON (completed) or --error JSON (failed)', 'effect');
  const outcome = hasResult
    ? { result: jsonOption(values.result, '--result', 'effect') }
    : { error: jsonOption(values.error, '--error', 'effect') };
  return withRun(path, false, async (run) => {
    const at = await run.endTool(id, outcome);
    if (out.json)
      out.document('effect', { ok: true, action: 'end', id, status: hasResult ? 'completed' : 'failed', seq: at.seq });
    else out.say(`effect ${inline(id)} ${hasResult ? 'completed' : 'failed'} (seq ${at.seq})`);
    return EXIT_OK;
  });
};

const DECISIONS = ['retry', 'done', 'abandon', 'compensated'] as const;

const resolveAction = async (
  out: Output,
  values: Record<string, unknown>,
  path: string,
  id: string,
): Promise<number> => {
  const chosen = DECISIONS.filter((d) => values[d] === true);
  if (chosen.length !== 1)
    throw new UsageError('give exactly one of --retry, --done [--result JSON], --abandon or --compensated', 'effect');
  const decisionName = chosen[0]!;
  if (typeof values.reason !== 'string' || values.reason.trim() === '')
    throw new UsageError('--reason TEXT is required: what was checked, for whoever audits the run', 'effect');
  if (values.result !== undefined && decisionName !== 'done')
    throw new UsageError('--result goes with --done', 'effect');
  let decision: EffectDecision;
  if (decisionName === 'done')
    decision =
      values.result === undefined
        ? { done: true }
        : { done: true, result: jsonOption(values.result, '--result', 'effect') };
  else if (decisionName === 'retry') decision = { retry: true };
  else if (decisionName === 'abandon') decision = { abandon: true };
  else decision = { compensated: true };
  const by = typeof values.by === 'string' ? values.by : 'cli';
  return withRun(path, false, async (run) => {
    const at = await run.resolveEffect(id, decision, { reason: values.reason as string, by });
    if (out.json) out.document('effect', { ok: true, action: 'resolve', id, decision: decisionName, by, seq: at.seq });
    else out.say(`effect ${id} resolved: ${decisionName} (seq ${at.seq})`);
    return EXIT_OK;
  });
};

const list = async (out: Output, values: Record<string, unknown>, path: string): Promise<number> => {
  return withRun(path, true, async (run) => {
    const effects = values.pending ? await run.pendingEffects() : await run.effects();
    if (out.json) {
      out.document('effect', {
        ok: true,
        action: 'list',
        run_id: run.runId,
        effects: effects.map(effectJson),
        pending: effects.filter((e) => e.status === 'started').length,
      });
      return EXIT_OK;
    }
    if (effects.length === 0) out.say(values.pending ? 'no pending effects' : 'no effects');
    for (const e of effects) out.print(effectLine(out, e));
    const pending = effects.filter((e) => e.status === 'started').length;
    if (pending > 0)
      out.say(
        out.style(
          'yellow',
          `${pending} effect${pending === 1 ? '' : 's'} started with no recorded outcome: the tool may or may not have run. Check with its provider (idempotency key) before running it again.`,
        ),
      );
    return EXIT_OK;
  });
};

export const effectVerb: Verb = {
  name: 'effect',
  summary: "record a tool effect's intent before it runs, then its outcome; list effects, pending ones flagged",
  usage:
    'begin <journal> --tool NAME --args JSON [--idempotency-key K] [--summary TEXT] | end <journal> <id> (--result JSON | --error JSON) | resolve <journal> <id> (--retry | --done [--result JSON] | --abandon | --compensated) --reason TEXT [--by WHO] | list <journal> [--pending]',
  description: [
    'For agents in any language: `effect begin` records the intent durably (a tool.started record) and only then prints the',
    'effect id, alone on standard output; run the tool after it returns. `effect end` records the outcome once (a second one,',
    'or one for an id never begun, is an error, exit 2). `effect list` shows every effect; one started with no outcome is',
    'flagged PENDING (outcome unknown): its process died between intent and outcome. The journal must be a run journal',
    "(stepchain init --run, or any of init's run options).",
    '`effect begin` refuses (exit 1, nothing on standard output, nothing written) what would repeat a pending effect — the',
    'same --call-id, the same --idempotency-key, or the same tool and arguments (EFFECT_PENDING, naming it) — and a key',
    'whose effect completed (EFFECT_EXISTS; --json names that effect and its result). An --id already in the run names that',
    'effect, never a new one: EFFECT_PENDING while it is pending, EFFECT_EXISTS once it completed (same tool and arguments),',
    'else STEP_ID_CONFLICT (exit 2): a retry is a new effect, begun with a new id or none. `effect resolve` records the decision',
    'about a pending effect once its outcome is checked: --retry (it may run again; the next begin names it), --done',
    '(it happened, with --result), --abandon, or --compensated, with --reason and --by (spec/RUNS.md §5).',
  ].join('\n'),
  options: {
    tool: { type: 'string', arg: 'NAME', description: "begin: the tool's name" },
    args: { type: 'string', arg: 'JSON', description: "begin: the tool's arguments as JSON" },
    'idempotency-key': { type: 'string', arg: 'K', description: "begin: the key the tool's provider deduplicates by" },
    summary: { type: 'string', arg: 'TEXT', description: 'begin: what the effect does, for people' },
    id: { type: 'string', arg: 'ID', description: "begin: the effect's id (default a random UUID)" },
    'call-id': { type: 'string', arg: 'ID', description: "begin: the model's id for this tool call" },
    result: { type: 'string', arg: 'JSON', description: "end: the tool's result (completed)" },
    error: {
      type: 'string',
      arg: 'JSON',
      description: 'end: the tool\'s error (failed), e.g. {"name":"Declined","message":"…"}',
    },
    pending: { type: 'boolean', description: 'list: only effects with no outcome' },
    retry: { type: 'boolean', description: 'resolve: it did not happen, or may happen again: it is run again' },
    done: { type: 'boolean', description: 'resolve: it happened (its result: --result JSON)' },
    abandon: { type: 'boolean', description: 'resolve: given up; nothing repeats it' },
    compensated: { type: 'boolean', description: 'resolve: undone by a compensating action' },
    reason: { type: 'string', arg: 'TEXT', description: 'resolve: what was checked, why this decision' },
    by: { type: 'string', arg: 'WHO', description: 'resolve: who decided (default "cli")' },
  },
  args: { min: 2, max: 3, names: ['begin|end|resolve|list', 'journal', 'id'] },
  examples: [
    [
      'id=$(stepchain effect begin runs/r1 --tool send_email --args \'{"to":"a@b.example"}\' --idempotency-key mail-1)',
      'record the intent, capture the id',
    ],
    ['stepchain effect end runs/r1 "$id" --result \'{"sent":true}\'', 'record the outcome'],
    ['stepchain effect list runs/r1 --pending --json', 'effects whose outcome is unknown after a crash'],
    [
      'stepchain effect resolve runs/r1 "$id" --done --result \'{"sent":true}\' --reason "in the mail log" --by alice',
      'record what was found',
    ],
  ],
  async run({ out, values, positionals }) {
    const [action, path, id] = positionals as [string, string, string | undefined];
    if (action === 'begin' || action === 'list') {
      if (id !== undefined) throw new UsageError(`unexpected argument "${id}"`, 'effect');
      return action === 'begin' ? begin(out, values, path) : list(out, values, path);
    }
    if (action === 'end') {
      if (id === undefined) throw new UsageError('missing <id>: effect end <journal> <id> --result JSON', 'effect');
      return end(out, values, path, id);
    }
    if (action === 'resolve') {
      if (id === undefined)
        throw new UsageError(
          'missing <id>: effect resolve <journal> <id> (--retry | --done | --abandon | --compensated) --reason TEXT',
          'effect',
        );
      return resolveAction(out, values, path, id);
    }
    throw new UsageError(`unknown action "${action}": begin, end, resolve or list`, 'effect');
  },
};

export const continuationVerb: Verb = {
  name: 'continuation',
  summary: 'print the safe continuation point: the last seq where every started tool call has its outcome',
  usage: '<journal>',
  description: [
    'The point an agent may resume from (or fork at): every model request and tool effect started up to it has its',
    'outcome, and every tool call a model asked for has a result, so the messages up to it are valid to send to a model.',
    'A run killed mid-tool never continues from inside the tool call. --json adds the records up to the point.',
  ].join('\n'),
  options: {},
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain continuation runs/r1', 'where to resume'],
    ['stepchain fork runs/r1 --from-step "$(stepchain continuation runs/r1)" runs/r1-resumed', 'fork at it'],
  ],
  async run({ out, positionals }) {
    return withRun(positionals[0]!, true, async (run) => {
      const point = await run.continuationPoint();
      const pending = await run.pendingEffects();
      const head = await run.journal.head();
      if (out.json) {
        out.document('continuation', {
          ok: true,
          run_id: run.runId,
          seq: point.seq,
          head_seq: head?.seq ?? null,
          pending: pending.map((e) => e.id),
          steps: point.steps,
        });
        return EXIT_OK;
      }
      if (point.seq === null) out.say('no continuation point: the run has no record yet');
      else out.print(String(point.seq));
      if (head !== null && point.seq !== head.seq)
        out.say(
          `the run's head is seq ${head.seq}; records after ${point.seq ?? 'the start'} are in flight or wait for a tool's outcome`,
        );
      for (const e of pending)
        out.say(
          out.style(
            'yellow',
            `pending effect ${inline(e.id)} (${inline(e.tool ?? '?')}, seq ${e.seq}): outcome unknown`,
          ),
        );
      return EXIT_OK;
    });
  },
};
