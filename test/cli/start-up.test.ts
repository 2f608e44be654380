/**
 * The bundled CLI's start (issue 25, "CLI start-up"): dist/cli/main.js is built by scripts/build-cli.mjs
 * into a few chunks, so a start reads a handful of files instead of a module per source file. These
 * tests count the files a real `stepchain` process loads (test/helpers/module-log.mjs) — no timing here;
 * the times are bench/speed.mjs's start-up rows — and check what the bundle must keep: worker threads,
 * stack traces that name src/, and the verb table.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const MODULE_LOG = fileURLToPath(new URL('../helpers/module-log.mjs', import.meta.url));
const DIST = new URL('../../dist/', import.meta.url).href;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The module URLs the process loaded (file: only; its worker threads' too), in load order. */
  files: string[];
}

function run(args: string[], dir: string): Promise<Run> {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, '');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', MODULE_LOG, CLI, ...args],
      { env: { ...process.env, NO_COLOR: '1', STEPCHAIN_MODULE_LOG: log } },
      (error, stdout, stderr) => {
        const files = readFileSync(log, 'utf8')
          .split('\n')
          .filter((u) => u.startsWith('file:') && !u.includes('/module-log.mjs'));
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr, files });
      },
    );
  });
}

const relative = (files: string[]): string[] => files.map((u) => (u.startsWith(DIST) ? u.slice(DIST.length) : u));

async function journal(dir: string, steps: number, text = 'x'): Promise<string> {
  const store = new FileStore(dir, { fsync: 'none' });
  const j = await store.create('run');
  await j.appendMany(
    Array.from({ length: steps }, (_, i) => ({
      input: { i, text },
      model: 'm',
      prompt: `p${i}`,
      tool_call: null,
      result: { i },
    })),
  );
  await j.close();
  return join(dir, 'run');
}

describe('the bundled CLI', () => {
  test('`verify` of a one-step journal loads the entry and its own bundle (dist/cli/verify), no dependency, no worker pool, no store writer', async () => {
    const dir = tempDir('stepchain-start-');
    const path = await journal(dir, 1);
    const r = await run(['verify', path, '--json'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, kind: 'journal', report: { steps: 1 } });
    const files = relative(r.files);
    // Before the bundle: 135 files (dist/**, @noble/hashes, @noble/curves, pako, the Postgres store);
    // bundled with the other verbs, 15; in a bundle of its own, 6; with approval records and run notes, 9.
    expect(files[0]).toBe('cli/main.js');
    expect(files.length).toBeLessThanOrEqual(9);
    expect(files.slice(1).filter((f) => !f.startsWith('cli/verify/'))).toEqual([]);
  });

  test('`verify` in its own bundle answers as the whole shell does: its help, a usage error, a receipt', async () => {
    const dir = tempDir('stepchain-start-');
    const path = await journal(dir, 2);
    // `help verify` goes through the shell with every verb (its first word is not `verify`).
    const [own, shell] = await Promise.all([run(['verify', '--help'], dir), run(['help', 'verify'], dir)]);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('Usage: stepchain verify');
    expect(own.stdout).toBe(shell.stdout);
    expect(relative(own.files).filter((f) => f.startsWith('cli/chunks/'))).toEqual([]);
    expect(relative(shell.files).filter((f) => f.startsWith('cli/verify/'))).toEqual([]);
    const bad = await run(['--json', 'verify', path, '--thread', '2'], dir);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, error: { code: 'USAGE' } });
    expect(bad.stderr).toContain('did you mean --threads?');
    // A receipt's verifier is one of the verify bundle's lazy paths: its own chunks, tar-stream from
    // node_modules; the pool (dist/parallel) only at a first batch, which a two-step receipt never fills.
    const tar = join(dir, 'r.tar');
    expect((await run(['export', path, '--out', tar], dir)).code).toBe(0);
    const receipt = await run(['verify', tar, '--json'], dir);
    expect(receipt.code).toBe(0);
    expect(JSON.parse(receipt.stdout)).toMatchObject({ ok: true, kind: 'receipt', report: { steps: 2 } });
    expect(
      relative(receipt.files).filter(
        (f) => !/^(cli\/main\.js$|cli\/verify\/)/.test(f) && !f.includes('/node_modules/'),
      ),
    ).toEqual([]);
  });

  test('`append` and `effect` load the entry and their own script (dist/cli/agent), compiled from its code cache: no receipt, signature or other store chunks', async () => {
    const dir = tempDir('stepchain-start-');
    expect((await run(['init', join(dir, 'run'), '--run'], dir)).code).toBe(0);
    const path = join(dir, 'run');
    const step = join(dir, 'step.json');
    writeFileSync(step, JSON.stringify({ input: { q: 1 }, model: 'm', prompt: null, tool_call: null, result: null }));
    const appended = await run(['append', path, '--file', step, '--json'], dir);
    expect(appended.code).toBe(0);
    expect(JSON.parse(appended.stdout)).toMatchObject({ ok: true });
    const begun = await run(['effect', 'begin', path, '--tool', 'send', '--args', '{"to":"a"}'], dir);
    expect(begun.code).toBe(0);
    const ended = await run(['effect', 'end', path, begun.stdout.trim(), '--result', '{"sent":true}', '--json'], dir);
    expect(ended.code).toBe(0);
    expect(JSON.parse(ended.stdout)).toMatchObject({ ok: true, action: 'end', status: 'completed' });
    for (const r of [appended, begun, ended]) {
      // The main build's chunks held the receipt verifier, ed25519 and the witness code beside the store:
      // `append` of one step read 12 files of it. Now the entry is the one ES module: the verbs are one
      // script, dist/cli/agent/main.cjs, compiled from V8's code cache (src/cli/agent-load.ts).
      expect(relative(r.files)).toEqual(['cli/main.js']);
    }
    // The cache the build made is the one V8 takes here (same source, V8 and flags): a rejected cache would
    // compile the whole bundle at every start, the same output and no error, so only this says so.
    const probe = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { loadAgent } from ${JSON.stringify(new URL('cli/agent-load.js', DIST).href)}; const a = loadAgent(); console.log(JSON.stringify({ cached: a.cached, verbs: typeof a.module.runAgent }));`,
        ],
        (error, stdout) => (error ? reject(error) : resolve(stdout)),
      );
    });
    expect(JSON.parse(probe)).toEqual({ cached: true, verbs: 'function' });
    // Their help and a usage error read as from the whole shell.
    const [own, shell] = await Promise.all([run(['effect', '--help'], dir), run(['help', 'effect'], dir)]);
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('Usage: stepchain effect');
    expect(own.stdout).toBe(shell.stdout);
    const bad = await run(['--json', 'append', path, '--jsonll'], dir);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, error: { code: 'USAGE' } });
    expect(bad.stderr).toContain('did you mean --jsonl?');
  });

  test('`--version` loads the entry and the shell only', async () => {
    const dir = tempDir('stepchain-start-');
    const r = await run(['--version'], dir);
    expect(r.code).toBe(0);
    expect(relative(r.files).length).toBeLessThanOrEqual(8);
  });

  test('a journal larger than one batch still gets the worker pool, loaded from dist/parallel beside its worker', async () => {
    const dir = tempDir('stepchain-start-');
    // About 300 KB of lines: more than one 128 KiB batch.
    const path = await journal(dir, 200, 'y'.repeat(1400));
    const r = await run(['verify', path, '--json', '--threads', '2'], dir);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, report: { steps: 200 } });
    expect(relative(r.files)).toContain('parallel/index.js');
    // Loaded by the worker threads themselves: a worker whose script did not resolve would leave its
    // batches to the calling thread and the report unchanged, so the report alone cannot tell.
    expect(relative(r.files).filter((f) => f === 'parallel/worker.js').length).toBeGreaterThanOrEqual(1);
    const small = await run(['verify', await journal(tempDir('stepchain-start-'), 3), '--json', '--threads', '2'], dir);
    expect(small.code).toBe(0);
    expect(relative(small.files)).not.toContain('parallel/index.js');
  });

  test('--threads N runs N − 1 worker threads beside this one, each loading its bundled script alone (one file)', async () => {
    const dir = tempDir('stepchain-start-');
    const path = await journal(dir, 200, 'y'.repeat(1400));
    const [two, three] = await Promise.all([
      run(['verify', path, '--json', '--threads', '2'], dir),
      run(['verify', path, '--json', '--threads', '3'], dir),
    ]);
    for (const r of [two, three]) {
      expect(r.code).toBe(0);
      // The pool's modules load once on this thread; each worker loads its script and nothing else
      // (unbundled, each worker read 27 modules of dist/ and node_modules after it).
      const files = relative(r.files);
      const workers = files.slice(files.indexOf('parallel/worker.js'));
      expect(workers.length).toBeGreaterThan(0);
      expect(workers.filter((f) => f !== 'parallel/worker.js')).toEqual([]);
    }
    expect(relative(two.files).filter((f) => f === 'parallel/worker.js')).toHaveLength(1);
    expect(relative(three.files).filter((f) => f === 'parallel/worker.js')).toHaveLength(2);
  });

  test('a receipt of several batches loads the pool at its first batch: workers run, the same report as on one thread', async () => {
    const dir = tempDir('stepchain-start-');
    const path = await journal(dir, 200, 'y'.repeat(1400));
    const tar = join(dir, 'big.tar');
    expect((await run(['export', path, '--out', tar], dir)).code).toBe(0);
    const [one, two] = await Promise.all([
      run(['verify', tar, '--json', '--threads', '1'], dir),
      run(['verify', tar, '--json', '--threads', '2'], dir),
    ]);
    expect(one.code).toBe(0);
    expect(two.code).toBe(0);
    expect(JSON.parse(two.stdout)).toEqual(JSON.parse(one.stdout));
    expect(relative(one.files).filter((f) => f.startsWith('parallel/'))).toEqual([]);
    expect(relative(two.files).filter((f) => f === 'parallel/worker.js')).toHaveLength(1);
  });

  test('with --debug, a stack trace names the source file and line (source maps), not the bundle, in both builds', async () => {
    const dir = tempDir('stepchain-start-');
    const path = await journal(dir, 1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"input":');
    const r = await run(['append', path, '--file', bad, '--debug'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('INPUT_INVALID');
    expect(r.stderr).toMatch(/src\/cli\/input\.ts:\d+:\d+/);
    const plain = await run(['append', path, '--file', bad], dir);
    expect(plain.code).toBe(2);
    expect(plain.stderr).not.toContain('    at ');
    // The verify bundle is a build of its own, with its own maps.
    const verify = await run(['verify', path, '--head', 'sha256:0', '--debug'], dir);
    expect(verify.code).toBe(2);
    expect(verify.stderr).toMatch(/src\/cli\/verbs\/verify\.ts:\d+:\d+/);
    expect(relative(verify.files).filter((f) => f.startsWith('cli/chunks/'))).toEqual([]);
  });

  test('the main help loads every verb from the bundle, none from the per-file dist/', async () => {
    const dir = tempDir('stepchain-start-');
    const r = await run(['--help'], dir);
    expect(r.code).toBe(0);
    for (const verb of [
      'init',
      'verify',
      'export',
      'publish',
      'checkpoint',
      'witness',
      'page',
      'runs',
      'copy',
      'doctor',
    ])
      expect(r.stdout).toContain(`  ${verb} `);
    // Every verb loaded from the bundle; only CommonJS dependencies (tar-stream) come from node_modules.
    expect(r.files.filter((u) => !u.startsWith(`${DIST}cli/`) && !u.includes('/node_modules/'))).toEqual([]);
  });
});

describe("package.json's bin, dist/cli/bin.cjs (issue 45)", () => {
  const BIN = fileURLToPath(new URL('../../dist/cli/bin.cjs', import.meta.url));
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    bin: { stepchain: string };
  };

  /** One process of the bin, with the list of Node's own modules it loaded (process.moduleLoadList) at exit. */
  function bin(args: string[], dir: string): Promise<Run & { builtins: string[] }> {
    const log = join(dir, `builtins-${Math.random().toString(36).slice(2)}.txt`);
    const hook = join(dir, 'builtins.cjs');
    writeFileSync(
      hook,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(log)}, process.moduleLoadList.join('\\n')));`,
    );
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--require', hook, BIN, ...args],
        { env: { ...process.env, NO_COLOR: '1' } },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
            stdout,
            stderr,
            files: [],
            builtins: readFileSync(log, 'utf8').split('\n'),
          }),
      );
    });
  }

  test('is what `stepchain` runs; `append` and `effect` start without the ES module loader, other verbs go on to main.js', async () => {
    expect(pkg.bin.stepchain).toBe('dist/cli/bin.cjs');
    const dir = tempDir('stepchain-bin-');
    const path = join(dir, 'run');
    expect((await run(['init', path, '--run'], dir)).code).toBe(0);
    const esm = 'NativeModule internal/modules/esm/module_job';
    const step = join(dir, 'step.json');
    writeFileSync(step, JSON.stringify({ input: { q: 1 } }));
    const appended = await bin(['append', path, '--file', step], dir);
    expect([appended.code, appended.stdout]).toEqual([0, expect.stringMatching(/^1 sha256:[0-9a-f]{64}\n$/)]);
    expect(appended.builtins).not.toContain(esm);
    const begun = await bin(['effect', 'begin', path, '--tool', 't', '--args', '{"n":1}'], dir);
    expect(begun.code).toBe(0);
    expect(begun.builtins).not.toContain(esm);
    const ended = await bin(['effect', 'end', path, begun.stdout.trim(), '--result', '{}'], dir);
    expect([ended.code, ended.builtins.includes(esm)]).toEqual([0, false]);
    // Their file calls are synchronous (src/cli/agent-fs.ts in place of node:fs/promises) and their random
    // bytes come from node:crypto, not WebCrypto (scripts/build-cli.mjs): neither module is loaded.
    for (const r of [appended, begun, ended])
      expect(r.builtins.filter((m) => /^NativeModule (fs\/promises|internal\/crypto\/webcrypto)$/.test(m))).toEqual([]);
    // Refusals keep their exit codes and messages, as through main.js.
    const again = await bin(['effect', 'end', path, begun.stdout.trim(), '--result', '{}'], dir);
    const viaMain = await run(['effect', 'end', path, begun.stdout.trim(), '--result', '{}'], dir);
    expect([again.code, again.stderr]).toEqual([viaMain.code, viaMain.stderr]);
    expect(again.code).toBe(2);
    const verified = await bin(['verify', path], dir);
    expect(verified.code).toBe(0);
    expect(verified.builtins).toContain(esm);
    const listed = await bin(['effect', 'list', path, '--json'], dir);
    expect(JSON.parse(listed.stdout)).toMatchObject({ effects: [{ status: 'completed' }] });
  });
});
