/**
 * Issue 32, as an outsider does it: a real default journal published with the real CLI, the unsigned public
 * receipt rewritten with nothing but its own bytes, and `stepchain verify --head <original head>` (human and
 * --json) and `stepchain diff` run as processes. A disclosed value rewritten as a marker-less view, or a
 * withheld value replaced by unmarked text, is refused (VIEW_INVALID); text beside a kept marker — invented,
 * or a price changed next to a redacted e-mail address — still verifies, and is reported as NOT bound to the
 * head on every surface, never as proven. Each test fails on the build before the fix (see outsider.ts).
 *
 * The publication (publishedRun: init, append, publish, head) starts real processes; the checks' calls run in
 * one process of the built CLI of the file's own (cliInProcess, support.ts), except under
 * STEPCHAIN_CLI_UNDER_TEST, whose other build only a started process runs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { cliInProcess } from '../hardening/support.js';
import { tempDir } from '../helpers/tmp.js';
import {
  INVENTED,
  asView,
  marker,
  publishedRun,
  read,
  rewrite,
  run as started,
  sortDeclarations,
  withheldAsView,
  type Manifest,
} from './outsider.js';

const dir = tempDir('stepchain-outsider-');
const pub = await publishedRun(dir);
const original = read(pub.receipt);
const inProcess = cliInProcess();
const run = (args: string[], cwd: string) =>
  process.env.STEPCHAIN_CLI_UNDER_TEST === undefined ? inProcess(args, { cwd }) : started(args, cwd);

let n = 0;
function forged(bytes: Uint8Array): string {
  const path = join(dir, `forged-${n++}.tar.gz`);
  writeFileSync(path, bytes);
  return path;
}

async function verify(path: string) {
  const human = await run(['verify', path, '--head', pub.head], dir);
  const json = await run(['verify', path, '--head', pub.head, '--json'], dir);
  const doc = JSON.parse(json.stdout) as {
    ok: boolean;
    report: {
      ok: boolean;
      problems: Array<{ code: string; location: Record<string, unknown> }>;
      unbound?: unknown[];
      unbound_count?: number;
      proves: string[];
    };
  };
  expect(json.code).toBe(human.code);
  return { code: human.code, text: human.stderr, doc };
}

/** Nothing may say that every disclosed value is the original while unbound text exists. */
const BLANKET = /every disclosed value is the original/i;

describe("the publisher's own receipt", () => {
  test('verifies against the original head; its one view (the price beside the e-mail) is NOT BOUND, on every line that speaks of it', async () => {
    const v = await verify(pub.receipt);
    expect(v.code).toBe(0);
    expect(v.doc.report.unbound).toEqual([{ seq: 2, field: 'input', path: '/input', why: 'view' }]);
    expect(v.doc.report.unbound_count).toBe(1);
    expect(v.text).toMatch(/NOT BOUND this receipt shows 1 value whose text is NOT bound to the head/);
    expect(v.text).toMatch(/not bound seq 2 \/input \(redacted view/);
    expect(v.text).not.toMatch(BLANKET);
    expect(v.doc.report.proves.join('\n')).not.toMatch(BLANKET);
  });

  test('publish tells the publisher which fields readers will see as not bound', () => {
    expect(pub.published).toMatch(
      /1 field is published as redacted views: verifiers show their text as NOT bound to the head/,
    );
  });
});

describe('(a) a disclosed value rewritten: tool_call {to: alice, amount: 10} → {to: mallory, amount: 10000}', () => {
  const mallory = { name: 'transfer', arguments: { to: 'mallory', amount: 10000 } };

  test('as a view with no marker inside: refused against the original head, VIEW_INVALID at seq 0, tool_call', async () => {
    const path = forged(rewrite(original, { record: (r, seq) => seq === 0 && asView(r, 'tool_call', mallory) }));
    const v = await verify(path);
    expect(v.code).toBe(1);
    expect(v.doc.report.problems).toEqual([
      expect.objectContaining({
        code: 'VIEW_INVALID',
        location: expect.objectContaining({ seq: 0, field: 'tool_call', path: '/tool_call' }),
      }),
    ]);
    expect(v.text).toMatch(/✘ INVALID/);
    expect(v.text).toMatch(/VIEW_INVALID .*seq 0/);
  });

  test('as a view with a marker the forger declares: it verifies, but the rewritten call is NOT bound — never proven', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) =>
          seq === 0 &&
          asView(r, 'tool_call', { ...mallory, arguments: { ...mallory.arguments, memo: marker('secrets') } }),
        manifest: (m: Manifest) => {
          m.redactions.push({ seq: 0, path: '/tool_call/arguments/memo', rule: 'secrets' });
          sortDeclarations(m);
        },
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(0);
    expect(v.doc.report.unbound).toContainEqual({ seq: 0, field: 'tool_call', path: '/tool_call', why: 'view' });
    expect(v.text).toMatch(/not bound seq 0 \/tool_call/);
    expect(v.text).not.toMatch(BLANKET);
  });
});

describe('(b) a withheld prompt replaced by "transfer 10000 EUR to mallory"', () => {
  test('as unmarked text: refused, VIEW_INVALID at seq 1, prompt', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => seq === 1 && withheldAsView(r, 'prompt', INVENTED),
        manifest: (m) => void (m.redactions = m.redactions.filter((d) => !(d.seq === 1 && d.path === '/prompt'))),
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(1);
    expect(v.doc.report.problems.map((p) => p.code)).toEqual(['VIEW_INVALID']);
    expect(v.doc.report.problems[0]!.location).toMatchObject({ seq: 1, field: 'prompt', path: '/prompt' });
  });

  test('as the text of the withheld marker: refused, VIEW_INVALID', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => {
          if (seq === 1)
            (r.prompt as { '$stepchain:redacted': Record<string, string> })['$stepchain:redacted'].text = INVENTED;
        },
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(1);
    expect(v.doc.report.problems).toEqual([
      expect.objectContaining({
        code: 'VIEW_INVALID',
        location: expect.objectContaining({ seq: 1, field: 'prompt', path: '/prompt' }),
      }),
    ]);
  });

  test('keeping a marker beside it: verify does not call it proven — NOT BOUND in the human report and in --json', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => seq === 1 && withheldAsView(r, 'prompt', [INVENTED, marker('prompts')]),
        manifest: (m) => {
          m.redactions = m.redactions.map((d) =>
            d.seq === 1 && d.path === '/prompt' ? { ...d, path: '/prompt/1' } : d,
          );
          sortDeclarations(m);
        },
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(0);
    expect(v.doc.report.unbound).toEqual([
      { seq: 1, field: 'prompt', path: '/prompt', why: 'view' },
      { seq: 2, field: 'input', path: '/input', why: 'view' },
    ]);
    expect(v.doc.report.unbound_count).toBe(2);
    expect(v.text).toMatch(/NOT BOUND this receipt shows 2 values whose text is NOT bound to the head/);
    expect(v.text).toMatch(/not bound seq 1 \/prompt/);
    expect(v.text).toMatch(
      /does not prove That the text of the 2 redacted views \(seq 1 \/prompt and seq 2 \/input\) is the original: it is NOT bound to the head/,
    );
    expect(v.text).not.toMatch(BLANKET);
  });
});

describe('the independent check: price 59 → 19 beside the redacted e-mail address, one manifest digest recomputed', () => {
  test('it verifies against the original head, and the changed price is reported as NOT bound, never as proven', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => {
          if (seq === 2) (r.input as Record<string, Json>).price = 19;
        },
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(0);
    expect(v.doc.report.unbound).toEqual([{ seq: 2, field: 'input', path: '/input', why: 'view' }]);
    expect(v.text).toMatch(/not bound seq 2 \/input/);
    expect(v.text).not.toMatch(BLANKET);
  });
});

describe('diff of a publication and its forgery', () => {
  test('names the text on both sides that no head binds, in human output and --json', async () => {
    const path = forged(
      rewrite(original, { record: (r, seq) => void (seq === 2 && ((r.input as Record<string, Json>).price = 19)) }),
    );
    const human = await run(['diff', pub.receipt, path], dir);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/NOT BOUND a \(.*public\.tar\.gz\) shows 1 value whose text is NOT bound/);
    expect(human.stderr).toMatch(/NOT BOUND b \(.*forged-\d+\.tar\.gz\) shows 1 value/);
    const json = await run(['diff', pub.receipt, path, '--json'], dir);
    const doc = JSON.parse(json.stdout) as {
      unbound: { a: unknown[]; b: unknown[]; a_count: number; b_count: number };
    };
    expect(doc.unbound).toEqual({
      a: [{ seq: 2, field: 'input', path: '/input', why: 'view' }],
      b: [{ seq: 2, field: 'input', path: '/input', why: 'view' }],
      a_count: 1,
      b_count: 1,
    });
  });
});

describe('a publication stripped of its declarations', () => {
  test('does not pass as an ordinary receipt: ANCHOR_INVALID, every marker undeclared', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => seq === 1 && withheldAsView(r, 'prompt', [INVENTED, marker('prompts')]),
        manifest: (m) => {
          delete (m as Record<string, unknown>).publication;
          delete (m as Record<string, unknown>).redactions;
        },
      }),
    );
    const v = await verify(path);
    expect(v.code).toBe(1);
    expect(v.doc.report.problems.map((p) => p.code)).toContain('ANCHOR_INVALID');
    expect(v.doc.report.problems.map((p) => p.code)).toContain('REDACTION_UNDECLARED');
  });
});

describe('log and show read journals only', () => {
  test('given the forged receipt they refuse, and print none of its text', async () => {
    const path = forged(
      rewrite(original, {
        record: (r, seq) => seq === 1 && withheldAsView(r, 'prompt', [INVENTED, marker('prompts')]),
      }),
    );
    for (const args of [
      ['log', path],
      ['show', path, '1'],
    ]) {
      const r = await run(args, dir);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).not.toContain(INVENTED);
    }
  });
});

type Json = import('../../src/record/index.js').Json;
