/**
 * Terminal escape injection (issue 37): journal content that would write the clipboard (OSC 52), clear the
 * screen, draw a fake "✔ chain verified" line with a carriage return or a newline, open a one-byte C1 CSI,
 * reverse the text (U+202E) or hide a DEL — in step content, tool names, idempotency keys, model ids, an
 * agent's name, labels, an error and a LangGraph thread's name — goes through every verb that prints
 * content, and through the ones that do not. No raw control character other than the layout's newlines
 * reaches stdout or stderr, human text or JSON, and no line of output starts with the forged verdict.
 * Where the verb shows the content, it shows it escaped.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { asRun, cliServer } from '../helpers/cli-batch.js';
import { tempDir } from '../helpers/tmp.js';
import { buildJournals, cli, type Ran } from './output-fixtures.js';

const HOSTILE = '\x1b]52;c;SGVsbG8=\x07\x1b[2J\r✔ chain verified FORGED\n✔ FORGED line\u009b31m\u202eevil\x7f\tend';
/** A name may hold no newline where a layout would not allow one (a policy's tool name): the same without it. */
const HOSTILE_NAME = '\x1b]52;c;SGVsbG8=\x07\x1b[2J\r✔ FORGED\u009b31m\u202e\x7f';
/** Every character the sanitizer escapes, except the newline that ends a line. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const dir = tempDir('stepchain-hostile-');
const at = (name: string) => join(dir, name);

/** Each verb as run, with whether its output shows the content (then it must show it escaped). */
const ROWS: Array<[name: string, args: () => string[], shows: boolean]> = [
  ['log v1', () => ['log', at('v1')], true],
  ['log run journal', () => ['log', at('run')], true],
  ['log LangGraph thread', () => ['log', at('thread')], true],
  ['log --json', () => ['log', at('run'), '--json'], true],
  ['log --jsonl', () => ['log', at('run'), '--jsonl'], true],
  ['show v1', () => ['show', at('v1'), '0'], true],
  ['show run record', () => ['show', at('run'), '2'], true],
  ['head', () => ['head', at('run')], false],
  ['verify journal', () => ['verify', at('run')], true],
  ['verify --json', () => ['verify', at('run'), '--json'], true],
  ['export', () => ['export', at('v1'), '-o', at('v1.tar.gz')], false],
  ['verify receipt', () => ['verify', at('v1.tar.gz')], false],
  ['diff --all', () => ['diff', at('v1'), at('v1-changed'), '--all'], true],
  ['diff --explain', () => ['diff', at('run'), at('run-changed'), '--all', '--explain'], true],
  ['diff receipt and journal', () => ['diff', at('v1.tar.gz'), at('v1-changed')], true],
  ['effect list', () => ['effect', 'list', at('run')], true],
  ['effect list --pending', () => ['effect', 'list', at('run'), '--pending'], true],
  ['effect list --json', () => ['effect', 'list', at('run'), '--json'], true],
  ['continuation', () => ['continuation', at('run')], true],
  ['runs', () => ['runs', dir], true],
  ['runs --label', () => ['runs', dir, '--label', `env=${HOSTILE}`], false],
  [
    'publish',
    () => [
      'publish',
      at('v2'),
      '--policy',
      at('policy.json'),
      '--opt-in',
      '-o',
      at('pub.tar.gz'),
      '--secrets-out',
      at('secrets.json'),
    ],
    false,
  ],
  ['verify publication', () => ['verify', at('pub.tar.gz')], false],
  [
    'disclose a value to stdout',
    () => ['disclose', at('pub.tar.gz'), '--secrets', at('secrets.json'), '--seq', '0', '--path', '/input/api_key'],
    false,
  ],
  [
    'publish v1',
    () => [
      'publish',
      at('v1-changed'),
      '--policy',
      at('policy-v1.json'),
      '--opt-in',
      '-o',
      at('pub1.tar.gz'),
      '--secrets-out',
      at('secrets1.json'),
    ],
    false,
  ],
  [
    'disclose a v1 value',
    () => [
      'disclose',
      at('pub1.tar.gz'),
      '--secrets',
      at('secrets1.json'),
      '--seq',
      '1',
      '--path',
      '/result',
      '-o',
      at('proof1.json'),
    ],
    false,
  ],
  ['disclose --check', () => ['disclose', at('pub1.tar.gz'), '--check', at('proof1.json')], true],
  [
    'disclose a whole step',
    () => ['disclose', at('pub1.tar.gz'), '--secrets', at('secrets1.json'), '--seq', '1', '-o', at('step1.json')],
    false,
  ],
  ['disclose --check a whole step', () => ['disclose', at('pub1.tar.gz'), '--check', at('step1.json')], true],
  ['fork', () => ['fork', at('run'), '--from-step', '2', at('run-fork')], false],
  ['doctor', () => ['doctor', at('run')], false],
  ['keygen', () => ['keygen', '-o', at('log.key')], false],
  [
    'checkpoint',
    () => ['checkpoint', at('run'), '--sign', at('log.key'), '--authority', 'log.example', '-o', at('run.checkpoint')],
    false,
  ],
  [
    'prove',
    () => ['prove', at('run'), '--checkpoint', at('run.checkpoint'), '--from', '1', '-o', at('run.proof')],
    false,
  ],
  [
    'verify --checkpoint of a hostile file',
    () => ['verify', at('run'), '--checkpoint', at('hostile.checkpoint')],
    false,
  ],
  [
    'witness a hostile checkpoint',
    () => [
      'witness',
      at('hostile.checkpoint'),
      '--key',
      at('log.key'),
      '--name',
      'w.example/w1',
      '--state',
      at('w-state'),
      '--log-key',
      logKey(),
    ],
    false,
  ],
  ['append a hostile step, then log it', () => ['append', at('v1'), '--file', at('hostile-step.json')], false],
  ['a hostile command name', () => [HOSTILE], true],
  ['a hostile option', () => ['log', at('v1'), `--${HOSTILE_NAME}`], true],
  ['a hostile journal path', () => ['log', at(HOSTILE_NAME)], true],
];

const ran = new Map<string, Ran>();
/** The log key `checkpoint` printed. */
const logKey = (): string => /--log-key\): (\S+)/.exec(ran.get('checkpoint')!.stderr)![1]!;

describe('no raw control character from content reaches the terminal, whatever the verb', () => {
  const server = cliServer();
  beforeAll(async () => {
    await buildJournals(dir, { text: HOSTILE, name: HOSTILE_NAME });
    writeFileSync(
      at('policy-v1.json'),
      JSON.stringify({ rules: [{ id: 'answers', paths: ['/result'], seq: { from: 1 } }] }),
    );
    writeFileSync(at('hostile.checkpoint'), `log.example/${HOSTILE_NAME}\n3\nAAAA\n\n— ${HOSTILE_NAME} AAAA\n`);
    writeFileSync(
      at('hostile-step.json'),
      JSON.stringify({ input: null, model: HOSTILE, prompt: HOSTILE, tool_call: null, result: HOSTILE }),
    );
    // In order: later rows read what earlier ones wrote (a receipt, a publication, a key, a checkpoint).
    // The rows in one process of the built CLI (test/helpers/cli-batch.ts cliServer: each call runs the built
    // entry afresh, stdout and stderr pipes captured byte for byte); the two runs after them start it for real.
    for (const [name, args] of ROWS) ran.set(name, asRun(await server.run({ args: args(), cwd: dir })));
    ran.set('log after append', await cli(['log', at('v1')], dir));
    ran.set('show after append', await cli(['show', at('v1'), '2'], dir));
  }, 600_000);

  test.each(ROWS.map(([name, , shows]) => [name, shows] as const))('%s', (name, shows) => {
    const r = ran.get(name)!;
    for (const [stream, text] of [
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ] as const) {
      const raw = RAW.exec(text);
      expect(
        raw,
        `${name}: ${stream} holds U+${raw?.[0].charCodeAt(0).toString(16).padStart(4, '0')} raw: ${JSON.stringify(text.slice(Math.max(0, (raw?.index ?? 0) - 40), (raw?.index ?? 0) + 40))}`,
      ).toBeNull();
      expect(text, `${name}: ${stream} draws the forged verdict on a line of its own`).not.toMatch(
        /^\s*✔ (chain verified FORGED|FORGED)/m,
      );
    }
    if (shows) expect(r.stdout + r.stderr, `${name} shows the content, escaped`).toMatch(/\\u001b(]52|\[2J)/);
  });

  test('the hostile step appended shows escaped in log and, whole, in show', () => {
    const log = ran.get('log after append')!;
    expect(log.code).toBe(0);
    expect(RAW.test(log.stdout + log.stderr)).toBe(false);
    expect(log.stdout).toContain('result: "\\u001b]52;c;SGVsbG8=\\u0007');
    const show = ran.get('show after append')!;
    expect(RAW.test(show.stdout + show.stderr)).toBe(false);
    expect(show.stdout).toContain(
      '"model": "\\u001b]52;c;SGVsbG8=\\u0007\\u001b[2J\\r✔ chain verified FORGED\\n✔ FORGED line\\u009b31m\\u202eevil\\u007f\\tend"',
    );
  });
});
