/**
 * Outside attacks on the CLI's people-facing output (docs/cli.md, README.md): hostile bytes in journal
 * content, run identity, effect fields, file names, receipts and arguments, run through the built CLI
 * (dist/cli/main.js) as a child process, with pipes and under a pseudo-terminal (`script`, colour on).
 *
 * The promise under attack: people-facing output never passes raw control characters from journal content
 * (C0 except layout newlines/tabs, DEL, C1 incl. U+009B, bidi controls U+202A–202E and U+2066–2069), on
 * every verb; `--json` documents go to stdout and parse; `log` on a valid chain says it verified and never
 * says it does not hold; read-only verbs leave the journal byte-identical.
 *
 * A test that FAILS here is an attack that succeeded (see the comment above it); a passing test is an
 * attack the product held, kept as a regression test.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cliBatch, type BatchCall } from '../helpers/cli-batch.js';
import { snapshotOf } from '../helpers/dir-snapshot.mjs';
import { tempDir } from '../helpers/tmp.js';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const HAVE_SCRIPT = spawnSync('script', ['--version']).status === 0;

interface Out {
  rc: number | null;
  out: string; // stdout, as latin1 (one char per byte)
  err: string; // stderr, as latin1; empty under a pty (merged into out)
  all: string;
}

function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs the CLI; with pty, under `script` so that stdout and stderr are a terminal (onlcr off). */
function cli(args: string[], opts: { cwd: string; input?: string | Buffer; pty?: boolean } = { cwd: '.' }): Out {
  const env = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  if (!opts.pty) {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd, input: opts.input, env, timeout: 60_000 });
    const out = r.stdout.toString('latin1');
    const err = r.stderr.toString('latin1');
    return { rc: r.status, out, err, all: `${out}\n${err}` };
  }
  const cmd = `stty -onlcr; ${sh(process.execPath)} ${sh(CLI)} ${args.map(sh).join(' ')}; echo "@@rc=$?"`;
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], {
    cwd: opts.cwd,
    input: opts.input ?? '',
    env: { ...env, TERM: 'xterm-256color' },
    timeout: 60_000,
  });
  const raw = r.stdout.toString('latin1');
  const m = /@@rc=(\d+)/.exec(raw);
  const out = raw.replace(/@@rc=\d+\r?\n?/, '');
  return { rc: m ? Number(m[1]) : null, out, err: '', all: out };
}

/**
 * Runs `calls` through the built CLI in one process (test/helpers/cli-batch.ts), each answered as `cli` would
 * answer it. Every reading verb still runs as a real process of its own, piped and under a pty, in 'held:
 * hostile step content on the reading verbs' and the 'succeeded' attacks: the batches carry the many
 * repetitions of the same output paths over more journals.
 */
function batch(calls: readonly BatchCall[], pty: boolean): Array<Out & { snapshot?: string }> {
  return cliBatch(calls, { pty }).map((r) => ({
    rc: r.rc,
    out: pty ? r.all : r.out,
    err: pty ? '' : r.err,
    all: pty ? r.all : `${r.out}\n${r.err}`,
    ...(r.snapshot === undefined ? {} : { snapshot: r.snapshot }),
  }));
}

/** `make()` on first use, then its result: a batch is run when the first test that reads it runs. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

const latin = (s: string): string => Buffer.from(s, 'utf8').toString('latin1');

// The CLI's own terminal sequences (colour and the progress line) that a pty run may carry legitimately.
const OWN_SGR = /\x1b\[(?:0|1|2|3|4|22|23|24|31|32|33|34|35|36|37|39|90|91|92|93|94|95|96)m/g;
function withoutOwnSequences(s: string): string {
  return s
    .replace(/\r(?=[a-z]+(?::| \d)|\x1b\[K)/g, '')
    .replace(/\x1b\[K/g, '')
    .replace(OWN_SGR, '');
}

/** Raw forbidden bytes in output (latin1 string of the bytes): C0 but LF/TAB, DEL, C1 (UTF-8), bidi controls. */
function forbidden(bytes: string, pty: boolean): string[] {
  const t = pty ? withoutOwnSequences(bytes) : bytes;
  const found: string[] = [];
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    const n1 = t.charCodeAt(i + 1);
    const n2 = t.charCodeAt(i + 2);
    const ctx = JSON.stringify(t.slice(Math.max(0, i - 15), i + 15));
    if ((c < 0x20 && c !== 0x0a && c !== 0x09) || c === 0x7f) found.push(`0x${c.toString(16)} at ${i} ${ctx}`);
    if (c === 0xc2 && n1 >= 0x80 && n1 <= 0x9f) found.push(`C1 U+00${n1.toString(16)} at ${i} ${ctx}`);
    if (c === 0xe2 && n1 === 0x80 && n2 >= 0xaa && n2 <= 0xae)
      found.push(`bidi U+202${(n2 - 0xa0).toString(16)} ${ctx}`);
    if (c === 0xe2 && n1 === 0x81 && n2 >= 0xa6 && n2 <= 0xa9)
      found.push(`bidi U+206${(n2 - 0xa0).toString(16)} ${ctx}`);
  }
  return found;
}

/** A line of output that content made up: a check mark verdict starting a line, with the FORGED marker. */
function forgedLines(o: Out): string[] {
  const text = Buffer.from(o.all, 'latin1').toString('utf8');
  return text.split(/\r?\n|\r/).filter((l) => /^(\x1b\[[0-9;]*m)*\s*✔ (valid|chain verified)[^\n]*FORGED/.test(l));
}

/** The output as text, the CLI's colours removed (for matching verdict words). */
function txt(o: Out): string {
  return Buffer.from(o.all, 'latin1').toString('utf8').replace(OWN_SGR, '');
}

const STACK = /\n\s+at .+:\d+:\d+\)?|(TypeError|ReferenceError|RangeError|SyntaxError):/;

// Hostile text: every forbidden class, SGR that hides or recolours, OSC, a lone C1 CSI, bidi, and a forged
// verdict line after a CR and after a LF.
const FORGE = '\n✔ valid receipt FORGED.tar.gz: 3 steps, head sha256:0000 (seq 2)';
const H =
  'Y\x1b[8mHID\x1b[38;2;1;2;3mZ' +
  'A\x1b]0;PWN\x07B\x1b[2JC\x1b[31mPWN\x1b[0mD\u009b31mE\u202eF\u2066G\x7fH\rI\x08K\u0085L\u200fM\tO' +
  '\r✔ chain verified: 99 steps FORGED' +
  FORGE;
// The same, holding NUL (possible in JSON content, impossible in argv).
const HN = `${H}\x00NUL`;
function expectClean(o: Out, pty: boolean, label: string): void {
  expect(forbidden(o.all, pty), `${label}: raw forbidden bytes`).toEqual([]);
  expect(forgedLines(o), `${label}: forged verdict lines`).toEqual([]);
  expect(STACK.test(o.all), `${label}: a stack trace`).toBe(false);
}

const snapshot = snapshotOf;

function writeStep(dir: string, name: string, step: unknown): string {
  writeFileSync(join(dir, name), JSON.stringify(step));
  return name;
}

// ---------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------

/**
 * A directory `build` makes once, through the CLI like every fixture here; each call returns a fresh copy of
 * it, so a test may change its own copy. The copies spare each test the processes that would rebuild it.
 */
function template(prefix: string, build: (d: string) => void): () => string {
  let built: string | undefined;
  return () => {
    if (built === undefined) {
      built = tempDir(`${prefix}template-`);
      build(built);
    }
    const d = tempDir(prefix);
    cpSync(built, d, { recursive: true });
    return d;
  };
}

/** An empty journal `j`. */
const emptyJournal = template('attack-cli-err-', (d) => {
  expect(cli(['init', 'j'], { cwd: d }).rc).toBe(0);
});

/** A journal `j` of one step (ok.json), and a key pair k.key, k.key.pub. */
const journalAndKey = template('attack-cli-argv-', (d) => {
  expect(cli(['init', 'j'], { cwd: d }).rc).toBe(0);
  expect(cli(['keygen', '-o', 'k.key'], { cwd: d }).rc).toBe(0);
  expect(cli(['append', 'j', '--file', writeStep(d, 'ok.json', { input: 1 })], { cwd: d }).rc).toBe(0);
});

/** A v2 journal `j` whose one step holds H (and NUL) everywhere a caller can put data. */
function hostileJournal(): string {
  const d = tempDir('attack-cli-');
  expect(cli(['init', 'j'], { cwd: d }).rc).toBe(0);
  const step = {
    input: { [HN]: HN },
    model: HN,
    prompt: HN,
    tool_call: { name: HN, arguments: { [HN]: HN } },
    result: HN,
    meta: { [HN]: HN },
  };
  expect(cli(['append', 'j', '--file', writeStep(d, 'step.json', step)], { cwd: d }).rc).toBe(0);
  writeStep(d, 'ok.json', { input: 1 });
  expect(cli(['append', 'j', '--file', 'ok.json'], { cwd: d }).rc).toBe(0);
  return d;
}

/**
 * A run journal `runs/r1` whose identity (agent, labels) and effects (tool, key, summary, args) hold H, and
 * its receipt r.tar.gz.
 */
const hostileRunDir = template('attack-cli-run-', (d) => {
  const init = cli(['init', 'runs/r1', '--agent', H, '--label', `env=${H}`, '--conversation', 'c1'], { cwd: d });
  expect(init.rc).toBe(0);
  // Each effect has its own idempotency key and arguments: since issue 36 a begin that repeats a pending
  // effect (same tool, key and arguments) is refused with EFFECT_PENDING (RUNS.md §5).
  const begin = (n: number): string => {
    const args = JSON.stringify({ [H]: H, n });
    const b = cli(
      ['effect', 'begin', 'runs/r1', '--tool', H, '--args', args, '--idempotency-key', `${H}#${n}`, '--summary', H],
      { cwd: d },
    );
    expect(b.rc).toBe(0);
    return b.out.trim();
  };
  const done = begin(1);
  const failed = begin(2);
  begin(3); // left pending
  expect(cli(['effect', 'end', 'runs/r1', done, '--result', JSON.stringify({ [H]: H })], { cwd: d }).rc).toBe(0);
  expect(
    cli(['effect', 'end', 'runs/r1', failed, '--error', JSON.stringify({ name: H, message: H })], { cwd: d }).rc,
  ).toBe(0);
  expect(cli(['export', 'runs/r1', '-o', 'r.tar.gz'], { cwd: d }).rc).toBe(0);
});
const hostileRun = (): { d: string; receipt: string } => ({ d: hostileRunDir(), receipt: 'r.tar.gz' });

const modes = HAVE_SCRIPT ? [false, true] : [false];
const modeName = (pty: boolean): string => (pty ? 'pty' : 'pipe');

// ---------------------------------------------------------------------------------------------------------
// Attacks that SUCCEEDED (these tests fail until the product is fixed)
// ---------------------------------------------------------------------------------------------------------

describe('succeeded: verify <receipt> passes a raw newline (and, on a terminal, SGR) from the run identity', () => {
  // Reproduction: stepchain init runs/r1 --agent $'x\n✔ valid receipt FORGED…' ; stepchain export runs/r1 -o r.tar.gz ;
  // stepchain verify r.tar.gz  →  the "proves   The steps belong to run r1 (agent …" line is split by the raw
  // LF (0x0A) of the agent name, and the next line of stderr starts with the forged "✔ valid receipt FORGED…".
  // The same with --label values and with a pending effect's tool name / idempotency key ("does not prove The
  // outcome of tool effect … idempotency key …"). Escapes (ESC, C1, bidi) are escaped; LF is not.
  it('pipe: the agent, a label and an idempotency key cannot start a forged "✔ valid" line', () => {
    const { d, receipt } = hostileRun();
    const o = cli(['verify', receipt], { cwd: d });
    expect(o.rc).toBe(0);
    expect(forgedLines(o)).toEqual([]);
  });

  // Reproduction under a terminal: script -qec 'stty -onlcr; stepchain verify r.tar.gz' /dev/null  →  the
  // agent's ESC[8m (conceal), ESC[38;2;1;2;3m and ESC[31m…ESC[0m reach the terminal raw in the "proves" line
  // (pipes get \u001b). ESC[8m hides every later line — the "does not prove … it is unsigned" lines and the
  // hint — since the CLI only resets with ESC[39m/ESC[22m; with the raw LF an attacker prints a green
  // "ESC[32m✔ valid receipt …" line of their own.
  it.skipIf(!HAVE_SCRIPT)('pty: no raw SGR from the agent name reaches the terminal', () => {
    const { d, receipt } = hostileRun();
    const o = cli(['verify', receipt], { cwd: d, pty: true });
    expect(o.rc).toBe(0);
    expect(o.all.includes('\x1b[8mHID')).toBe(false);
    expect(forbidden(o.all, true)).toEqual([]);
  });

  it.skipIf(!HAVE_SCRIPT)('pty: a green forged verdict made of the agent name alone', () => {
    const d = tempDir('attack-cli-green-');
    const agent = 'x)\n\x1b[32m✔ valid receipt FORGED.tar.gz: signed by the key you pinned\x1b[39m\n\x1b[8m';
    expect(cli(['init', 'runs/r1', '--agent', agent], { cwd: d }).rc).toBe(0);
    expect(cli(['export', 'runs/r1', '-o', 'r.tgz'], { cwd: d }).rc).toBe(0);
    const o = cli(['verify', 'r.tgz'], { cwd: d, pty: true });
    expect(o.all.includes(latin('\n\x1b[32m✔ valid receipt FORGED'))).toBe(false);
    expect(o.all.includes('\x1b[8m')).toBe(false);
  });
});

describe('succeeded: coded errors echo raw newlines from the input they quote', () => {
  // Reproduction: a step file whose member NAME holds "\n✔ valid receipt FORGED…":
  //   printf '{"input":1,"x\\n\\u2714 valid receipt FORGED":2}' > s.json; stepchain append j --file s.json
  // stderr: `error: FIELD_INVALID: unknown step field "x` LF `✔ valid receipt FORGED" (put extra data …` —
  // the message escapes ESC/C1/bidi (\u001b…) but passes the LF (0x0A) raw. Same for a reserved member name
  // ($stepchain:…, RESERVED_KEY), the JSON Pointer of DEPTH_LIMIT, and an unknown member of a publish policy.
  const cases: Array<[string, (d: string) => string[]]> = [
    [
      'append: unknown step member name',
      (d) => ['append', 'j', '--file', writeStep(d, 'unk.json', { input: 1, [HN]: 2 })],
    ],
    [
      'append: reserved member name',
      (d) => ['append', 'j', '--file', writeStep(d, 'res.json', { input: { [`$stepchain:${HN}`]: 1 } })],
    ],
    [
      'append: DEPTH_LIMIT pointer',
      (d) => [
        'append',
        'j',
        '--file',
        writeStep(d, 'deep.json', { input: { [HN]: JSON.parse(`${'['.repeat(120)}${']'.repeat(120)}`) } }),
      ],
    ],
    [
      'publish: unknown policy rule member',
      (d) => {
        writeFileSync(join(d, 'pol.json'), JSON.stringify({ rules: [{ id: 'a', paths: ['/x'], [HN]: 1 }] }));
        return ['publish', 'j', '--policy', 'pol.json', '--opt-in', '-o', 'x.tgz', '--secrets-out', 'x.json'];
      },
    ],
  ];
  for (const [name, args] of cases) {
    for (const json of [false, true]) {
      it(`${name}${json ? ' --json' : ''}: coded error, no forged line, no raw control bytes`, () => {
        const d = emptyJournal();
        const o = cli([...args(d), ...(json ? ['--json'] : [])], { cwd: d });
        expect(o.rc).toBe(2);
        expect(STACK.test(o.all)).toBe(false);
        if (json) expect(() => JSON.parse(o.out)).not.toThrow();
        expect(forbidden(o.all, false)).toEqual([]); // LF is layout, so this holds; the forged line does not:
        expect(forgedLines(o)).toEqual([]);
      });
    }
  }
});

describe('succeeded: arguments and file names echoed into people-facing lines keep their raw newlines', () => {
  // Reproduction, e.g.: stepchain show j $'1\n✔ valid receipt FORGED'  →  stderr "error: … "1" LF "✔ valid
  // receipt FORGED…". Same for each verb below; a file name holding LF (legal on Linux) does it to
  // `export -o`, `keygen -o`, `page -o` ("wrote …" lines) and `doctor` / `verify` (the path they name).
  const argvCases: Array<[string, string[]]> = [
    ['show <seq>', ['show', 'j', H]],
    ['effect <subcommand>', ['effect', H, 'j']],
    ['runs --label', ['runs', '.', '--label', H]],
    ['init --bucket-bytes', ['init', 'k', '--bucket-bytes', H]],
    ['fork --from-step', ['fork', 'j', '--from-step', H, 'f']],
    ['prove --from', ['prove', 'j', '--checkpoint', 'ok.cp', '--from', H, '--to', '0', '-o', 'x.proof']],
    ['checkpoint --authority', ['checkpoint', 'j', '--sign', 'k.key', '--authority', H, '-o', 'c.cp']],
    ['witness --name', ['witness', '--key', 'k.key', '--name', H]],
    ['verify <path>', ['verify', `${H}.tar.gz`]],
    ['doctor <path>', ['doctor', H]],
    ['export -o <file>', ['export', 'j', '-o', `${H}.tgz`]],
    ['keygen -o <file>', ['keygen', '-o', `${H}.key`]],
    ['page -o <file>', ['page', '-o', `${H}.html`]],
  ];
  for (const [name, args] of argvCases) {
    it(`${name}: no forged verdict line`, () => {
      const d = journalAndKey();
      if (args[0] === 'prove') {
        expect(
          cli(['checkpoint', 'j', '--sign', 'k.key', '--authority', 'a.example', '-o', 'ok.cp'], { cwd: d }).rc,
        ).toBe(0);
      }
      const o = cli(args, { cwd: d });
      expect(STACK.test(o.all)).toBe(false);
      expect(forgedLines(o)).toEqual([]);
    });
  }

  // Reproduction: script -qec "stty -onlcr; stepchain export j -o $'q\e[8mHID.tgz'" /dev/null → the "wrote
  // q ESC[8m HID.tgz (… bytes, gzip)" line carries the raw ESC[8m; `doctor $'q\e[8mHID'` likewise in its
  // "✘ NOT HEALTHY /…/q ESC[8m HID" headline (pipes get \u001b; other escapes are escaped on the terminal).
  for (const [name, args] of [
    ['export -o', ['export', 'j', '-o', 'q\x1b[8mHID.tgz']],
    ['doctor', ['doctor', 'q\x1b[8mHID']],
  ] as Array<[string, string[]]>) {
    it.skipIf(!HAVE_SCRIPT)(`pty: ${name} with an SGR in the file name sends no raw SGR`, () => {
      const d = journalAndKey();
      const o = cli(args, { cwd: d, pty: true });
      expect(o.all.includes('\x1b[8mHID')).toBe(false);
    });
  }
});

describe('succeeded: the documentation contradicts the promises', () => {
  // README.md "The CLI in five lines" and docs/cli.md "Read" show `stepchain log` on a valid journal printing
  // "✔ chain verified … ✔ valid runs/today … The chain does NOT hold: the steps below cannot be trusted."
  // The product (correctly) never prints that on a valid chain; the documented output is wrong (and shows the
  // columns as <hex> model tool <time>, where the CLI prints <hex> <time> model tool).
  it.each(['README.md', 'docs/cli.md'])(
    '%s: the documented log of a valid journal never says it does not hold',
    (f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      const logBlocks = [...text.matchAll(/```console\n([\s\S]*?)```/g)]
        .map((m) => m[1]!)
        .filter((b) => b.includes('$ stepchain log runs/today\n'));
      expect(logBlocks.length).toBeGreaterThan(0);
      for (const b of logBlocks) expect(b).not.toMatch(/does NOT hold/);
    },
  );

  // README.md's guide table and docs/cli.md link docs/auditors.md and docs/sqlite.md; neither exists.
  it.each(['docs/auditors.md', 'docs/sqlite.md'])('%s, linked from README.md, exists', (f) => {
    expect(existsSync(join(ROOT, f))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Attacks the product HELD (regression tests)
// ---------------------------------------------------------------------------------------------------------

describe('held: hostile step content on the reading verbs', () => {
  const verbs: string[][] = [
    ['log', 'j'],
    ['log', 'j', '--json'],
    ['log', 'j', '--jsonl'],
    ['show', 'j', '0'],
    ['show', 'j', '0', '--json'],
    ['head', 'j'],
    ['head', 'j', '--json'],
    ['verify', 'j'],
    ['verify', 'j', '--json'],
    ['export', 'j', '-o', 'x.tgz'],
    ['verify', 'x.tgz'],
    ['verify', 'x.tgz', '--json'],
    ['diff', 'j', 'x.tgz'],
    ['diff', 'j', 'x.tgz', '--json'],
    ['doctor', 'j'],
  ];
  const d = hostileJournal();
  for (const args of verbs) {
    for (const pty of modes) {
      it(`${args.join(' ')} (${modeName(pty)}): no raw forbidden byte, no forged line, no crash`, () => {
        const o = cli(args, { cwd: d, pty });
        expect(o.rc).toBe(0);
        expectClean(o, pty, args.join(' '));
        if (!pty && args.includes('--json')) expect(() => JSON.parse(o.out)).not.toThrow();
        if (!pty && args.includes('--jsonl'))
          for (const l of o.out.trim().split('\n')) expect(() => JSON.parse(l)).not.toThrow();
        if (args[0] === 'log' && !args.includes('--json') && !args.includes('--jsonl')) {
          expect(txt(o)).toMatch(/✔ chain verified: 2 steps/);
          expect(txt(o)).not.toMatch(/does NOT hold|not hold/i);
        }
      });
    }
  }
});

describe('held: hostile run identity and effects on the run verbs', () => {
  const { d } = hostileRun();
  const verbs: string[][] = [
    ['effect', 'list', 'runs/r1'],
    ['effect', 'list', 'runs/r1', '--pending'],
    ['effect', 'list', 'runs/r1', '--json'],
    ['continuation', 'runs/r1'],
    ['runs', 'runs'],
    ['runs', 'runs', '--json'],
    ['runs', 'runs', '--agent', H],
    ['log', 'runs/r1'],
    ['log', 'runs/r1', '--json'],
    ['verify', 'runs/r1'],
    ['show', 'runs/r1', '1'],
    ['head', 'runs/r1'],
    ['verify', 'r.tar.gz', '--json'],
  ];
  // The agent bundle's verb and the shell's own run as real processes; the rest in one batch per mode.
  const real = (args: string[]): boolean => ['effect list runs/r1', 'runs runs'].includes(args.join(' '));
  const batched = modes.map((pty) =>
    once(() =>
      batch(
        verbs.filter((a) => !real(a)).map((args) => ({ args, cwd: d })),
        pty,
      ),
    ),
  );
  for (const args of verbs) {
    for (const [m, pty] of modes.entries()) {
      it(`${args.join(' ').slice(0, 40)} (${modeName(pty)}): clean`, () => {
        const o = real(args) ? cli(args, { cwd: d, pty }) : batched[m]!()[verbs.filter((a) => !real(a)).indexOf(args)]!;
        expect(o.rc).toBe(0);
        expectClean(o, pty, args.join(' '));
        if (!pty && args.includes('--json')) expect(() => JSON.parse(o.out)).not.toThrow();
      });
    }
  }
});

describe('held: hand-made journals whose problem messages quote hostile bytes', () => {
  const base = tempDir('attack-cli-dir-');
  expect(cli(['init', 'j'], { cwd: base }).rc).toBe(0);
  writeStep(base, 'ok.json', { input: 1 });
  cli(['append', 'j', '--file', 'ok.json'], { cwd: base });
  cli(['append', 'j', '--file', 'ok.json'], { cwd: base });
  const bucket = (p: string): string => join(p, 'buckets', '0000000000000000.jsonl');
  const lines = readFileSync(bucket(join(base, 'j')), 'utf8').split('\n');
  const Hj = JSON.stringify(HN).slice(1, -1); // canonical-ish escaping of H inside a JSON string
  const Hname = H.replace(/\//g, '');
  const variants: Array<[string, (p: string) => void, boolean]> = [
    ['a garbage line', (p) => writeFileSync(bucket(p), `${lines[0]}\n${H}\n`), false],
    [
      'an unknown member holding raw bytes',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]!.replace('{', `{"${Hname}":1,`)}\n`),
      false,
    ],
    [
      'an unknown member, escaped',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]!.replace('{', `{"\\u0001${Hj}":1,`)}\n`),
      false,
    ],
    [
      'a hostile step_id',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]!.replace(/"step_id":"[^"]*"/, `"step_id":"${Hj}"`)}\n`),
      false,
    ],
    [
      'a hostile ts',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]!.replace(/"ts":"[^"]*"/, `"ts":"${Hj}"`)}\n`),
      false,
    ],
    [
      'a hostile kind',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]!.replace(/"kind":"[^"]*"/, `"kind":"${Hj}"`)}\n`),
      false,
    ],
    [
      'a hostile marker name',
      (p) =>
        writeFileSync(
          bucket(p),
          `${lines[0]}\n${lines[1]!.replace(/"input":[^,]*,/, `"input":{"$stepchain:${Hj}":1},`)}\n`,
        ),
      false,
    ],
    ['an extra entry with a hostile name', (p) => writeFileSync(join(p, Hname), 'x'), false],
    ['a hostile name in buckets/', (p) => writeFileSync(join(p, 'buckets', Hname), 'x'), false],
    ['a hostile name in blobs/sha256/', (p) => writeFileSync(join(p, 'blobs', 'sha256', Hname), 'x'), false],
    [
      'a hostile journal_id',
      (p) => {
        const m = readFileSync(join(p, 'journal.json'), 'utf8');
        writeFileSync(join(p, 'journal.json'), m.replace(/"journal_id":"[^"]*"/, `"journal_id":"${Hj}"`));
      },
      false,
    ],
    [
      'a hostile journal.json member',
      (p) => {
        const m = readFileSync(join(p, 'journal.json'), 'utf8');
        writeFileSync(join(p, 'journal.json'), m.replace('{', `{"${Hj}":1,`));
      },
      false,
    ],
    [
      'a torn tail of hostile bytes',
      (p) => writeFileSync(bucket(p), `${lines[0]}\n${lines[1]}\n${H.replace(/\n/g, '')}`),
      true,
    ],
    ['a hostile head.json', (p) => writeFileSync(join(p, 'head.json'), H), true],
    [
      'a lock holder with a hostile hostname',
      (p) => {
        mkdirSync(join(p, 'journal.lock'));
        writeFileSync(
          join(p, 'journal.lock', 'holder-0123456789abcdef0123456789abcdef.json'),
          `${JSON.stringify({ host: null, hostname: H, pid: 1, start: null })}\n`,
        );
        writeFileSync(join(p, 'head.json'), H);
      },
      true,
    ],
  ];
  const verbsOn = (p: string): string[][] => [
    ['verify', p],
    ['log', p],
    ['verify', p, '--json'],
    ['log', p, '--json'],
    ['show', p, '0'],
    ['head', p],
    ['doctor', p],
  ];
  const dirOf = (name: string): string => join(base, name.replace(/\W+/g, '-'));
  // Every variant made and snapshotted first, then every verb on every variant in one batch per mode.
  const runs = once(() => {
    const before = variants.map(([name, make]) => {
      const p = dirOf(name);
      cpSync(join(base, 'j'), p, { recursive: true });
      make(p);
      return snapshot(p);
    });
    const calls = variants.flatMap(([name]) => verbsOn(dirOf(name)).map((args) => ({ args, cwd: base })));
    const outs = modes.map((pty) => batch(calls, pty));
    return { before, outs, per: verbsOn('').length };
  });
  for (const [v, [name, , valid]] of variants.entries()) {
    it(`${name}: ${valid ? 'valid, with a warning' : 'INVALID'}; no raw bytes, no forged ✔, journal untouched`, () => {
      const p = dirOf(name);
      const { before: all, outs, per } = runs();
      const before = all[v]!;
      for (const [m, pty] of modes.entries()) {
        for (const [i, args] of verbsOn(p).entries()) {
          const o = outs[m]![v * per + i]!;
          expectClean(o, pty, `${args.join(' ')} ${modeName(pty)}`);
          if (!pty && args.includes('--json')) expect(() => JSON.parse(o.out)).not.toThrow();
          if (args[0] === 'verify' && !args.includes('--json')) {
            expect(o.rc).toBe(valid ? 0 : 1);
            if (!valid) expect(txt(o)).not.toMatch(/(^|\n)(\x1b\[[0-9;]*m)*✔/);
          }
        }
      }
      expect(snapshot(p)).toBe(before);
    });
  }
});

describe('held: receipts with hostile tar entry names and manifest members', () => {
  // Hand-built ustar streams in the writer's exact header profile (RECEIPT.md §3.2), from a real receipt.
  const d = tempDir('attack-cli-tar-');
  expect(cli(['init', 'j'], { cwd: d }).rc).toBe(0);
  writeStep(d, 'ok.json', { input: 1 });
  cli(['append', 'j', '--file', 'ok.json'], { cwd: d });
  expect(cli(['export', 'j', '-o', 'r.tgz'], { cwd: d }).rc).toBe(0);
  const raw = gunzipSync(readFileSync(join(d, 'r.tgz')));
  const tmpl = raw.subarray(0, 512);
  const entries: Array<[Buffer, Buffer]> = [];
  for (let i = 0; i + 512 <= raw.length;) {
    const h = raw.subarray(i, i + 512);
    if (h.every((b) => b === 0)) break;
    const end = h.indexOf(0);
    const name = h.subarray(0, end < 0 || end > 100 ? 100 : end);
    const size = parseInt(h.subarray(124, 135).toString('latin1'), 8);
    entries.push([Buffer.from(name), Buffer.from(raw.subarray(i + 512, i + 512 + size))]);
    i += 512 + Math.ceil(size / 512) * 512;
  }
  const header = (name: Buffer, size: number): Buffer => {
    const h = Buffer.from(tmpl);
    h.fill(0, 0, 100);
    name.copy(h, 0);
    h.write(`${size.toString(8).padStart(11, '0')} `, 124, 'latin1');
    h.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')} \0`, 148, 'latin1');
    return h;
  };
  const tar = (ents: Array<[Buffer, Buffer]>): Buffer =>
    Buffer.concat([
      ...ents.flatMap(([n, b]) => [header(n, b.length), b, Buffer.alloc((512 - (b.length % 512)) % 512)]),
      Buffer.alloc(1024),
    ]);
  const evil = Buffer.from('Y\x1b[8mHID\x1b]0;PWN\x07\x1b[31mPWN\x9b31m\n\xe2\x9c\x94 valid receipt FORGED', 'latin1');
  const man = entries[0]![1].toString('utf8');
  const jcsStr = (s: string): string =>
    `"${[...s].map((ch) => (ch === '"' ? '\\"' : ch === '\\' ? '\\\\' : ch === '\n' ? '\\n' : ch.charCodeAt(0) < 0x20 ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}` : ch)).join('')}"`;
  const hs = '\x1b[8mHID\x1b[31mPWN\u009b31m\u202eF\n✔ valid receipt FORGED';
  const manFormat = JSON.parse(man) as { format: string };
  const cases: Array<[string, Buffer]> = [
    ['a hostile first entry name', tar([[evil.subarray(0, 60), Buffer.from('x')], ...entries])],
    ['a hostile extra entry name', tar([entries[0]!, [evil.subarray(0, 60), Buffer.from('x')], ...entries.slice(1)])],
    [
      'a hostile chain/ entry name',
      tar([
        entries[0]!,
        [Buffer.concat([Buffer.from('chain/'), evil.subarray(0, 50)]), entries[1]![1]],
        ...entries.slice(2),
      ]),
    ],
    [
      'a hostile manifest member',
      tar([[entries[0]![0], Buffer.from(man.replace('{"blobs"', `{${jcsStr(hs)}:1,"blobs"`))], ...entries.slice(1)]),
    ],
    [
      'a hostile manifest format',
      tar([[entries[0]![0], Buffer.from(man.replace(jcsStr(manFormat.format), jcsStr(hs)))], ...entries.slice(1)]),
    ],
  ];
  const fileOf = (name: string): string => `${name.replace(/\W+/g, '-')}.tar`;
  // Every receipt written, then `verify` of each in one batch per mode and `verify --json` of each (a pipe,
  // the same in either mode, so run once) in the pipe's batch.
  const runs = once(() => {
    for (const [name, bytes] of cases) writeFileSync(join(d, fileOf(name)), bytes);
    const verify = cases.map(([name]) => ({ args: ['verify', fileOf(name)], cwd: d }));
    const json = cases.map(([name]) => ({ args: ['verify', fileOf(name), '--json'], cwd: d }));
    const [pipe, ...pty] = modes.map((t) => batch(t ? verify : [...verify, ...json], t));
    return { verify: [pipe!.slice(0, cases.length), ...pty], json: pipe!.slice(cases.length) };
  });
  for (const [c, [name]] of cases.entries()) {
    it(`${name}: INVALID, every byte escaped, no forged ✔`, () => {
      const f = fileOf(name);
      for (const [m, pty] of modes.entries()) {
        const o = runs().verify[m]![c]!;
        expect(o.rc, o.all).toBe(1);
        expectClean(o, pty, `verify ${f} ${modeName(pty)}`);
        expect(txt(o)).toMatch(/✘ INVALID receipt/);
        const j = runs().json[c]!;
        expect((JSON.parse(j.out) as { ok: boolean }).ok).toBe(false);
      }
    });
  }
});

describe('held: log on valid chains, read-only verbs, tampering', () => {
  const d = tempDir('attack-cli-ro-');
  cli(['init', 'a'], { cwd: d });
  writeStep(d, 'ok.json', { input: 1 });
  cli(['append', 'a', '--file', 'ok.json'], { cwd: d });
  cli(['append', 'a', '--file', 'ok.json'], { cwd: d });
  cli(['keygen', '-o', 'k.key'], { cwd: d });
  const variants: Record<string, (p: string) => void> = {
    plain: () => {},
    torn: (p) => writeFileSync(join(p, 'buckets', '0000000000000000.jsonl'), '{"inp', { flag: 'a' }),
    'no head cache': (p) => writeFileSync(join(p, 'head.json'), 'junk'),
    quarantine: (p) => writeFileSync(join(p, 'buckets', '0000000000000000.jsonl.quarantine-1'), 'junk'),
    'lock dir left behind': (p) => mkdirSync(join(p, 'journal.lock')),
  };
  const dirOf = (name: string): string => join(d, name.replace(/\W+/g, '-'));
  const readOnly = (name: string, p: string): string[][] => [
    ['show', p, '0'],
    ['head', p],
    ['verify', p],
    ['verify', p, '--json'],
    ['export', p, '-o', join(d, `${name}.tgz`)],
    ['diff', p, join(d, 'a')],
    ['runs', d],
    ['doctor', p],
    ['prove', p, '--from', '0', '--to', '0', '-o', join(d, `${name}.proof`)],
    ['publish', p, '--policy', '/dev/null', '-o', join(d, `${name}.pub.tgz`)],
  ];
  // Each variant made and snapshotted first; then, in one batch, `log`, `log --json` and the read-only verbs
  // on each, the variant's snapshot taken after each of its verbs.
  const runs = once(() => {
    const before = Object.entries(variants).map(([name, make]) => {
      const p = dirOf(name);
      cpSync(join(d, 'a'), p, { recursive: true });
      make(p);
      return snapshot(p);
    });
    const calls = Object.keys(variants).flatMap((name) => {
      const p = dirOf(name);
      return [
        { args: ['log', p], cwd: d },
        { args: ['log', p, '--json'], cwd: d },
        ...readOnly(name, p).map((args) => ({ args, cwd: d, snapshot: p })),
      ];
    });
    return { before, outs: batch(calls, false), per: 2 + readOnly('', '').length };
  });
  for (const [v, name] of Object.keys(variants).entries()) {
    it(`${name}: log says verified (never "does not hold"); read-only verbs leave it byte-identical`, () => {
      const p = dirOf(name);
      const { before: all, outs, per } = runs();
      const before = all[v]!;
      const [log, logJson, ...rest] = outs.slice(v * per, (v + 1) * per);
      expect(log!.rc).toBe(0);
      expect(txt(log!)).toMatch(/✔ chain verified: 2 steps/);
      expect(txt(log!)).not.toMatch(/not hold/i);
      const lj = JSON.parse(logJson!.out) as { ok: boolean };
      expect(lj.ok).toBe(true);
      // `export` and `publish` take the journal's lock for their last look and rename (ERASURE.md §4.1), so a
      // lock directory left behind with no holder is broken and given back, as any writer's taking does; every
      // other byte stays as it was.
      const lockGone = JSON.stringify(
        (JSON.parse(before) as [string, ...unknown[]][]).filter(([n]) => n !== 'journal.lock'),
      );
      let expected = before;
      for (const [i, args] of readOnly(name, p).entries()) {
        const o = rest[i]!;
        expect(STACK.test(o.all), `${args.join(' ')}: ${o.all}`).toBe(false);
        if (name === 'lock dir left behind' && args[0] === 'export') expected = lockGone;
        expect(o.snapshot, args.join(' ')).toBe(expected);
      }
      expect(snapshot(p)).toBe(expected);
    });
  }

  it('a tampered journal: verify and log exit 1 and print no ✔ verdict', () => {
    const p = join(d, 'tampered');
    cpSync(join(d, 'a'), p, { recursive: true });
    const b = join(p, 'buckets', '0000000000000000.jsonl');
    // change the first record's commitment root (stepchain/v3) with the same length, keeping the line canonical
    const before = readFileSync(b, 'utf8');
    const after = before.replace(
      /"root":"sha256:([0-9a-f])/,
      (_m, c: string) => `"root":"sha256:${c === '0' ? '1' : '0'}`,
    );
    expect(after).not.toBe(before);
    writeFileSync(b, after);
    for (const pty of modes) {
      const v = cli(['verify', p], { cwd: d, pty });
      expect(v.rc).toBe(1);
      const text = txt(v);
      expect(text).toMatch(/✘ INVALID/);
      expect(text).not.toMatch(/(^|\n)(\x1b\[[0-9;]*m)*✔/);
      const l = cli(['log', p], { cwd: d, pty });
      expect(l.rc).toBe(1);
      expect(txt(l)).not.toMatch(/(^|\n)(\x1b\[[0-9;]*m)*✔ chain verified/);
    }
  });
});

describe('held: publish and disclose a hostile value; special files in a journal', () => {
  it('a redacted value holding every hostile byte: publish, verify, disclose and its check print it escaped', () => {
    const d = tempDir('attack-cli-pub-');
    // The v2 flow: a secrets file, and disclose from it (a v3 publication has no secrets file).
    expect(cli(['init', 'j', '--format', 'v2'], { cwd: d }).rc).toBe(0);
    writeStep(d, 's.json', { input: 'hi', tool_call: { name: 'http', arguments: { api_key: HN } }, result: 'ok' });
    expect(cli(['append', 'j', '--file', 's.json'], { cwd: d }).rc).toBe(0);
    writeFileSync(
      join(d, 'pol.json'),
      JSON.stringify({ rules: [{ id: 'k', paths: ['/tool_call/arguments/api_key'] }] }),
    );
    const steps: string[][] = [
      ['publish', 'j', '--policy', 'pol.json', '--opt-in', '-o', 'pub.tgz', '--secrets-out', 'sec.json'],
      ['verify', 'pub.tgz'],
      [
        'disclose',
        'pub.tgz',
        '--secrets',
        'sec.json',
        '--seq',
        '0',
        '--path',
        '/tool_call/arguments/api_key',
        '-o',
        'proof.json',
      ],
      ['disclose', 'pub.tgz', '--check', 'proof.json'],
      ['disclose', 'pub.tgz', '--check', 'proof.json', '--json'],
      ['diff', 'j', 'pub.tgz'],
    ];
    for (const args of steps) {
      const o = cli(args, { cwd: d });
      expect(o.rc, `${args.join(' ')}: ${o.all}`).toBe(args[0] === 'diff' ? 1 : 0);
      expectClean(o, false, args.join(' '));
      if (args.includes('--json')) expect(() => JSON.parse(o.out)).not.toThrow();
    }
    for (const args of steps.slice(1).filter((a) => a[0] !== 'disclose' || a.includes('--check'))) {
      expectClean(cli(args, { cwd: d, pty: true }), true, `${args.join(' ')} pty`);
    }
  });

  it('a FIFO as a bucket, journal.json, head.json or a blob: verify and log answer, without blocking', () => {
    const d = tempDir('attack-cli-fifo-');
    expect(cli(['init', 'j'], { cwd: d }).rc).toBe(0);
    writeStep(d, 'big.json', { input: { x: 'a'.repeat(70_000) } });
    expect(cli(['append', 'j', '--file', 'big.json'], { cwd: d }).rc).toBe(0);
    const blob = readdirSync(join(d, 'j', 'blobs', 'sha256'))[0]!;
    for (const f of ['buckets/0000000000000000.jsonl', 'journal.json', 'head.json', `blobs/sha256/${blob}`]) {
      const p = join(d, f.replace(/\W+/g, '-'));
      cpSync(join(d, 'j'), p, { recursive: true });
      spawnSync('rm', [join(p, f)]);
      expect(spawnSync('mkfifo', [join(p, f)]).status).toBe(0);
      for (const args of [
        ['verify', p],
        ['log', p],
        ['show', p, '0'],
        ['export', p, '-o', `${p}.tgz`],
      ]) {
        const o = cli(args, { cwd: d });
        expect(o.rc, `${args.join(' ')} (${f})`).not.toBeNull(); // not killed by the 60 s timeout
        expect(STACK.test(o.all), o.all).toBe(false);
      }
    }
  });
});
