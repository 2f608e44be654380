/**
 * The stepchain command line: a thin shell over the library. It parses arguments (node:util parseArgs),
 * calls the library, prints. One top-level handler maps errors to the documented exit codes:
 *
 *   0  success
 *   1  verification failed, or a divergence was found
 *   2  usage, input or I/O error
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { StepchainError } from '../errors.js';
import { Output, type OutputOptions } from './output.js';
import { VERSION } from './version.js';
import { inline } from './safe-text.js';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_ERROR = 2;

export class UsageError extends StepchainError<'USAGE'> {
  constructor(
    message: string,
    readonly verb?: string,
  ) {
    super('USAGE', message);
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Placeholder shown in help, e.g. "N" or "file". */
  arg?: string;
  description: string;
}

export interface Context {
  out: Output;
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  debug: boolean;
}

export interface Verb {
  name: string;
  summary: string;
  /** Positional part of the usage line, e.g. "<journal> [--file step.json]". */
  usage: string;
  description?: string;
  options: Record<string, OptionSpec>;
  args: { min: number; max: number; names: string[] };
  examples: [command: string, what: string][];
  run(ctx: Context): Promise<number>;
}

/**
 * A verb known by its name until it runs: its module loads then, so a start pays only for what its verb
 * uses (`--version` loads none). The main help loads them all.
 */
export interface LazyVerb {
  readonly name: string;
  load(): Promise<Verb>;
}

export type VerbEntry = Verb | LazyVerb;

function loadVerb(v: VerbEntry): Verb | Promise<Verb> {
  return 'load' in v ? v.load() : v;
}

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'write one JSON document to stdout (people-facing text still goes to stderr)' },
  debug: { type: 'boolean', description: 'show stack traces for errors' },
  help: { type: 'boolean', short: 'h', description: 'show help' },
};

export function formatVerbHelp(verb: Verb): string {
  const lines = [`stepchain ${verb.name} — ${verb.summary}`, '', `Usage: stepchain ${verb.name} ${verb.usage}`];
  if (verb.description) lines.push('', verb.description);
  const opts = { ...verb.options, ...GLOBAL_OPTIONS };
  lines.push('', 'Options:');
  const rows = Object.entries(opts).map(
    ([name, o]) =>
      [
        `${o.short ? `-${o.short}, ` : '    '}--${name}${o.type === 'string' ? ` <${o.arg ?? 'value'}>` : ''}${o.multiple ? '…' : ''}`,
        o.description,
      ] as const,
  );
  const width = Math.max(...rows.map((r) => r[0].length));
  for (const [left, right] of rows) lines.push(`  ${left.padEnd(width)}  ${right}`);
  lines.push('', 'Examples:');
  for (const [cmd, what] of verb.examples) lines.push(`  # ${what}`, `  $ ${cmd}`);
  return lines.join('\n');
}

export function formatMainHelp(verbs: readonly Verb[]): string {
  const width = Math.max(...verbs.map((v) => v.name.length));
  return [
    'stepchain — a hash-chained journal of agent steps, with receipts anyone can verify offline',
    '',
    'Usage: stepchain <command> [options]',
    '',
    'Commands:',
    ...verbs.map((v) => `  ${v.name.padEnd(width)}  ${v.summary}`),
    '',
    'Examples:',
    ...verbs.flatMap((v) => (v.examples[0] ? [`  $ ${v.examples[0][0]}`] : [])),
    '',
    'Global options: --json (machine-readable output on stdout), --debug, --help, --version',
    'Exit codes: 0 success; 1 verification failed or divergence found; 2 usage, input or I/O error.',
    "Run `stepchain <command> --help` for a command's options and examples.",
  ].join('\n');
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j]!;
      row[j] = next;
    }
  }
  return row[b.length]!;
}

export function suggest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(word) && word.length >= 2 ? 0.5 : distance(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

export async function runCli(
  argv: readonly string[],
  verbs: readonly VerbEntry[],
  io: Pick<OutputOptions, 'stdout' | 'stderr'> = {},
): Promise<number> {
  // What follows `--` is not the CLI's (`stepchain mcp <journal> -- <server command…>`): a server's own
  // --json or --version is passed on, not obeyed.
  const end = argv.indexOf('--');
  const own = end === -1 ? argv : argv.slice(0, end);
  const json = own.includes('--json');
  const debug = own.includes('--debug');
  const out = new Output({ json, ...io });
  const first = own.find((a) => !a.startsWith('-'));
  if (own.includes('--version') || own.includes('-V')) {
    if (json) out.document('version', { version: VERSION });
    else out.print(VERSION);
    return EXIT_OK;
  }
  if (first === undefined || (first === 'help' && argv.length === 1)) {
    if (own.includes('--help') || own.includes('-h') || first === 'help') {
      out.print(formatMainHelp(await Promise.all(verbs.map(loadVerb)))); // eslint-disable-line @typescript-eslint/await-thenable -- some verbs are at hand, others load (a Promise)
      return EXIT_OK;
    }
    out.say(formatMainHelp(await Promise.all(verbs.map(loadVerb)))); // eslint-disable-line @typescript-eslint/await-thenable -- some verbs are at hand, others load (a Promise)
    return EXIT_ERROR;
  }
  const verbName =
    first === 'help' ? (argv.find((a, i) => i > argv.indexOf('help') && !a.startsWith('-')) ?? 'help') : first;
  const entry = verbs.find((v) => v.name === verbName);
  let verb: Verb | undefined;
  try {
    verb = entry && (await loadVerb(entry));
    if (!verb) {
      const guess = suggest(
        verbName,
        verbs.map((v) => v.name),
      );
      throw new UsageError(
        `unknown command "${inline(verbName)}"${guess ? `; did you mean "${guess}"?` : ''} (see stepchain --help)`,
      );
    }
    if (first === 'help') {
      out.print(formatVerbHelp(verb));
      return EXIT_OK;
    }
    const rest = [...argv];
    rest.splice(argv.indexOf(first), 1);
    const { options, parsed } = parseVerbArgs(verb, rest);
    if (parsed.values.help) {
      out.print(formatVerbHelp(verb));
      return EXIT_OK;
    }
    checkVerbArgs(verb, options, parsed);
    return await verb.run({ out, values: parsed.values as Context['values'], positionals: parsed.positionals, debug });
  } catch (e) {
    return reportError(out, verb?.name ?? verbName, e, debug);
  }
}

/** The verb's own options and the global ones, parsed strictly; a parse error becomes a usage error with a guess. */
function parseVerbArgs(
  verb: Verb,
  rest: string[],
): { options: NonNullable<ParseArgsConfig['options']>; parsed: ReturnType<typeof parseArgs> } {
  const options: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, o] of Object.entries({ ...verb.options, ...GLOBAL_OPTIONS })) {
    options[name] = {
      type: o.type,
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    // parseArgs's own sentences are one a line ("…is ambiguous.\nDid you forget…"): one line, not an escaped \n.
    const message =
      e instanceof Error
        ? e.message.replace(/\. To specify a positional argument.*$/s, '').replace(/([.?])\n(?=[A-Z])/g, '$1 ')
        : String(e);
    const unknown = /Unknown option '(--?[^']+)'/.exec(message)?.[1];
    const guess = unknown ? suggest(unknown.replace(/^-+/, ''), Object.keys(options)) : undefined;
    throw new UsageError(`${inline(message)}${guess ? `; did you mean --${guess}?` : ''}`, verb.name);
  }
  return { options, parsed };
}

/** What parseArgs leaves unchecked: a one-value option given twice, and the count of positionals. */
function checkVerbArgs(
  verb: Verb,
  options: NonNullable<ParseArgsConfig['options']>,
  parsed: ReturnType<typeof parseArgs>,
): void {
  // A value option not declared repeatable is given at most once: parseArgs alone keeps the last, so
  // `--pubkey alice.pub --pubkey mallory.pub` would pin mallory's key without a word.
  const seen = new Set<string>();
  for (const t of parsed.tokens ?? []) {
    if (t.kind !== 'option' || options[t.name]?.type !== 'string' || options[t.name]?.multiple) continue;
    if (seen.has(t.name))
      throw new UsageError(`--${t.name} is given more than once; it takes one value, so give it once`, verb.name);
    seen.add(t.name);
  }
  const { min, max, names } = verb.args;
  if (parsed.positionals.length < min)
    throw new UsageError(
      `missing ${names
        .slice(parsed.positionals.length, min)
        .map((n) => `<${n}>`)
        .join(' ')}`,
      verb.name,
    );
  if (parsed.positionals.length > max)
    throw new UsageError(`unexpected argument "${inline(parsed.positionals[max]!)}"`, verb.name);
}

function reportError(out: Output, command: string, e: unknown, debug: boolean): number {
  out.clearProgress();
  if (e instanceof StepchainError) {
    const where = [
      e.location.file,
      e.location.line !== undefined ? `line ${e.location.line}` : undefined,
      e.location.seq !== undefined ? `seq ${e.location.seq}` : undefined,
      e.location.path,
    ]
      .filter((x) => x !== undefined && x !== '')
      .join(', ');
    const located =
      where === '' ||
      e.message.includes(where) ||
      (e.location.file !== undefined && e.message.includes(e.location.file));
    // The message is one logical line, shown inline as a whole: a value quoted from input (a member name, a
    // path, an argument) cannot start a line of its own, style or move the terminal.
    out.say(`${out.style('red', 'error:')} ${inline(e.message)}${located ? '' : ` [${inline(where)}]`}`);
    if (e instanceof UsageError) out.say(`Run \`stepchain ${e.verb ?? ''}${e.verb ? ' ' : ''}--help\` for usage.`);
    if (debug && e.stack) out.say(e.stack);
    if (out.json)
      out.document(command, { ok: false, error: { code: e.code as string, message: e.message, location: e.location } });
    return EXIT_ERROR;
  }
  const err = e as NodeJS.ErrnoException;
  const message = err && typeof err.message === 'string' ? err.message : String(e);
  out.say(`${out.style('red', 'error:')} ${inline(message)}`);
  if (debug && err?.stack) out.say(err.stack);
  else if (!err?.code)
    out.say('This looks like a bug in stepchain; run again with --debug and report the stack trace.');
  if (out.json) out.document(command, { ok: false, error: { code: err?.code ?? 'INTERNAL', message } });
  return EXIT_ERROR;
}
