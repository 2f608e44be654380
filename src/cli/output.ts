/**
 * Where the CLI's output goes. `--json` documents go to stdout, one per command; everything meant for
 * people — verdicts, hints, progress — goes to stderr, so `stepchain verify --json r.tgz | jq` always
 * gets clean JSON. Colour and progress appear only on a terminal, never in CI, never with NO_COLOR.
 * Every line written here passes the sanitizer (safe-text.ts): a control or bidi character in it is shown
 * escaped, whatever verb built the line; verbs pass each value from content through `inline` besides, so
 * that its own newlines cannot start a line either.
 */
import { randomBytes } from 'node:crypto';
import { inspect, type styleText } from 'node:util';
import { describeLocation, type ChainReport } from '../chain/report.js';
import type { ChainSource } from '../index.js';
import { block, inline } from './safe-text.js';
import { firstAlteredStep, messageBesideCode, type VerdictFields } from '../chain/verdict.js';

export const JSON_FORMAT = 'stepchain-cli/v1';

type Style = Parameters<typeof styleText>[0];

export interface OutputOptions {
  json: boolean;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
  env?: NodeJS.ProcessEnv;
}

export class Output {
  readonly json: boolean;
  private readonly out: NodeJS.WriteStream;
  private readonly err: NodeJS.WriteStream;
  private readonly colour: boolean;
  readonly interactive: boolean;
  private progressLine = false;
  /**
   * What `style` writes in place of an SGR code: a noncharacter, a nonce drawn per Output, the code, a
   * noncharacter. `safe` escapes every control character first and only then turns these marks into SGR
   * codes, so the only escape sequences that reach a terminal are the ones `style` asked for: content
   * cannot know the nonce, and an ESC of its own — even a well-formed ESC [31m — is shown escaped.
   */
  private readonly mark = `\ufdd0${randomBytes(8).toString('hex')}:`;
  private readonly marks = new RegExp(`${this.mark}(\\d+)\ufdd1`, 'g');

  constructor(options: OutputOptions) {
    this.json = options.json;
    this.out = options.stdout ?? process.stdout;
    this.err = options.stderr ?? process.stderr;
    const env = options.env ?? process.env;
    const tty = Boolean(this.err.isTTY); // undefined, not false, on a pipe
    this.colour = tty && env.NO_COLOR === undefined && env.TERM !== 'dumb';
    this.interactive = tty && !this.json && env.CI === undefined;
  }

  /** Text styled as util.styleText would (the same SGR codes), for a line written through this Output. */
  style(format: Style, text: string): string {
    if (!this.colour) return text;
    let open = '';
    let close = '';
    for (const name of Array.isArray(format) ? format : [format]) {
      const codes = inspect.colors[name as string];
      if (!codes) continue;
      open += `${this.mark}${codes[0]}\ufdd1`;
      close = `${this.mark}${codes[1]}\ufdd1${close}`;
    }
    return `${open}${text}${close}`;
  }

  /** Text as it may reach a terminal: every control character escaped, then this Output's styling made real. */
  private safe(text: string): string {
    const shown = block(text);
    return this.colour ? shown.replace(this.marks, '\x1b[$1m') : shown;
  }

  /** A line for people, on stderr. */
  say(text = ''): void {
    this.clearProgress();
    this.err.write(this.safe(text) + '\n');
  }

  /** Primary human output of a read command (log, show, head): stdout, unless --json. */
  print(text: string): void {
    this.clearProgress();
    this.out.write(this.safe(text) + '\n');
  }

  /**
   * A line of output that may be one of millions (log --jsonl, log): when stdout's buffer is full — a
   * pipe to a slower reader — it waits for it to drain, so memory stays bounded however slow the reader.
   * (A pipe is written synchronously only while it has room; past that, Node queues every write.)
   */
  async stream(text: string): Promise<void> {
    this.clearProgress();
    if (this.out.write(this.safe(text) + '\n')) return;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error): void => {
        this.out.off('drain', onDrain);
        this.out.off('error', done);
        this.out.off('close', onClose);
        if (error) reject(error);
        else resolve();
      };
      const onDrain = (): void => done();
      const onClose = (): void =>
        done(Object.assign(new Error('standard output was closed by its reader'), { code: 'EPIPE' }));
      this.out.once('drain', onDrain);
      this.out.once('error', done);
      this.out.once('close', onClose);
    });
  }

  /**
   * The one JSON document of this command. JSON.stringify escapes C0 controls in strings; `block` escapes
   * DEL, C1 and bidi controls the same way (`\u009b`), so the document parses to the same values and is
   * safe to page through on a terminal.
   */
  document(command: string, body: Record<string, unknown>): void {
    this.out.write(block(JSON.stringify({ format: JSON_FORMAT, command, ...body }, null, 2)) + '\n');
  }

  progress(label: string, total?: number): Progress {
    return new Progress(this, label, total);
  }

  /** @internal */
  drawProgress(text: string): void {
    this.err.write(`\r${this.safe(text)}\x1b[K`);
    this.progressLine = true;
  }

  clearProgress(): void {
    if (this.progressLine) {
      this.err.write('\r\x1b[K');
      this.progressLine = false;
    }
  }
}

/** A progress bar on stderr, redrawn at most ten times a second; silent unless the output is interactive. */
export class Progress {
  private done = 0;
  private last = 0;

  constructor(
    private readonly output: Output,
    private readonly label: string,
    private readonly total?: number,
  ) {}

  tick(n = 1): void {
    this.done += n;
    if (!this.output.interactive) return;
    const now = Date.now();
    if (now - this.last < 100) return;
    this.last = now;
    if (this.total !== undefined && this.total > 0) {
      const width = 24;
      const fraction = Math.min(1, this.done / this.total);
      const filled = Math.round(fraction * width);
      this.output.drawProgress(
        `${this.label} [${'█'.repeat(filled)}${' '.repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${this.done}/${this.total}`,
      );
    } else {
      this.output.drawProgress(`${this.label} ${this.done}`);
    }
  }

  end(): void {
    this.output.clearProgress();
  }
}

/**
 * A ChainSource that ticks `progress` for every line read through it, so export, publish and diff show
 * progress without the library knowing about terminals.
 */
export function countingSource(source: ChainSource, progress: Progress): ChainSource {
  const counted: ChainSource = {
    genesis: source.genesis,
    head: () => source.head(),
    blob: (digest) => source.blob(digest),
    async *lines(range) {
      for await (const line of source.lines(range)) {
        progress.tick();
        yield line;
      }
    },
  };
  // The copy's last look and its placing hold the journal's appends (ERASURE.md §4.1): a wrapper that dropped
  // the hold would let an erase land between the look and the rename.
  if (source.holdingAppends !== undefined) counted.holdingAppends = (fn) => source.holdingAppends!(fn);
  // A stepchain/v3 journal's parts travel with it: the receipt writer carries each once (PARTS.md §8).
  const parts = (source as { parts?: unknown }).parts;
  // A fork's lineage travels too: its receipt says it is a fork (APPROVALS.md §4.1).
  const lineage = (source as { lineage?: unknown }).lineage;
  if (lineage !== undefined && lineage !== null) Object.assign(counted, { lineage });
  return parts === undefined || parts === null ? counted : Object.assign(counted, { parts });
}

/**
 * Prints the verdict and each problem; the shared human rendering of a ChainReport. A report that carries
 * the auditor's verdict (chain/verdict.ts) gets its three answers: authenticated (green), intact but not
 * authenticated (yellow, with what to pin: `pinWith`, the flags that would authenticate it), invalid (red).
 */
export function printReport(
  out: Output,
  subject: string,
  report: ChainReport & Partial<VerdictFields>,
  extra: string[] = [],
  pinWith?: string,
): void {
  const size = `${report.steps} step${report.steps === 1 ? '' : 's'}${report.head ? `, head ${report.head} (seq ${report.head_seq})` : ', empty'}`;
  if (report.ok && report.verdict === 'intact') {
    out.say(
      `${out.style(['yellow', 'bold'], '⚠ intact, NOT authenticated')} ${inline(subject)}: ${size}; nothing ties it to anyone${pinWith ? ` (pin ${pinWith})` : ''}`,
    );
  } else if (report.ok) {
    out.say(
      `${out.style('green', report.verdict === 'authenticated' ? '✔ authenticated' : '✔ valid')} ${inline(subject)}: ${size}`,
    );
    for (const by of report.authenticated_by ?? []) out.say(`  ${out.style('green', 'pinned')}   ${inline(by)}`);
  } else {
    const n = report.problems.length;
    out.say(
      `${out.style(['red', 'bold'], '✘ INVALID')} ${inline(subject)}: ${n}${report.problems_truncated ? '+' : ''} problem${n === 1 ? '' : 's'}`,
    );
    // The step first: what an auditor asks of a damaged chain is which step was altered.
    const altered = firstAlteredStep(report);
    if (altered)
      out.say(
        `  ${out.style(['red', 'bold'], 'altered')}  step ${altered.seq}${altered.field ? `, ${inline(altered.field)}` : ''} (${inline(altered.code)})`,
      );
    for (const p of report.problems)
      out.say(
        `  ${out.style('red', inline(p.code))} ${out.style('dim', inline(describeLocation(p.location)))}\n      ${inline(messageBesideCode(p))}`,
      );
  }
  for (const w of report.warnings)
    out.say(
      `  ${out.style('yellow', 'warning')} ${inline(w.code)} ${out.style('dim', inline(describeLocation(w.location)))}: ${inline(messageBesideCode(w))}`,
    );
  for (const line of extra) out.say(line);
  if (report.ok && report.verdict === 'intact' && report.to_pin)
    out.say(out.style('yellow', `  not authenticated: ${inline(report.to_pin)}`));
}
