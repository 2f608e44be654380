/**
 * The executable documentation: how README.md and docs/*.md are read as programs (CONTRIBUTING.md,
 * "Examples in the docs"). Shared by test/docs/examples.test.ts, which runs every block and compares, and
 * scripts/docs-update.mjs (`npm run docs:update`), which rewrites the console blocks' output from real runs.
 *
 * The convention, per Markdown file, in document order, all blocks of one file sharing one fresh directory:
 * - ```console — lines starting with `$ ` are commands (a line ending in `\` continues on the next); the
 *   lines up to the next command are its output, stdout and stderr interleaved as a terminal shows them.
 *   `stepchain` is the built CLI (dist/cli/main.js). A command exits 0 unless it ends with `# exit N`.
 * - ```<lang> file=<name> — not a program: the block's text is written to <name> in that directory first.
 * - ```ts / ```js — a whole program: type-checked (strict, NodeNext, against the built package's types) and
 *   run with Node in that directory; it must exit 0. `stepchain` and its subpaths resolve to the build.
 *   `ts needs=postgres`: it gets a server's URL in DATABASE_URL (npm test's throwaway server); without one
 *   (`npm run docs:update`) it is skipped.
 * - ```sh and every other fence — shown, never run (installation, contributor scripts).
 * Output is compared after normalizing ids, times, hashes and sizes to placeholders (normalize below), so a
 * block may show either real values or the placeholders themselves.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');

/** README.md, then docs/*.md in name order: the files whose blocks are executed and whose links are checked. */
export function documentedFiles() {
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/**
 * The fenced blocks of a Markdown text: { lang, attrs, start, end, body } where start/end are the line
 * indexes of the opening and closing fences, and attrs the `key=value` words after the language.
 */
export function parseBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})([\w-]*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const fence = open[1];
    let end = i + 1;
    while (end < lines.length && !(lines[end].startsWith(fence) && lines[end].trim() === fence)) end++;
    if (end >= lines.length) throw new Error(`line ${i + 1}: a code fence that is never closed`);
    const attrs = {};
    for (const word of open[3].split(/\s+/).filter(Boolean)) {
      const eq = word.indexOf('=');
      attrs[eq < 0 ? word : word.slice(0, eq)] = eq < 0 ? true : word.slice(eq + 1);
    }
    blocks.push({ lang: open[2], attrs, start: i, end, body: lines.slice(i + 1, end) });
    i = end;
  }
  return blocks;
}

/** What a block is for the runner: 'console', 'file', 'code' or 'shown'. */
export function blockKind(block) {
  if (typeof block.attrs.file === 'string') return 'file';
  if (block.lang === 'console') return 'console';
  if (block.lang === 'ts' || block.lang === 'js') return 'code';
  return 'shown';
}

/** A console block's commands: [{ command, line, expectedExit, output: string[] }]. */
export function parseConsole(block) {
  const steps = [];
  let current;
  for (let i = 0; i < block.body.length; i++) {
    const line = block.body[i];
    if (line.startsWith('$ ')) {
      let command = line.slice(2);
      const first = i;
      while (command.endsWith('\\') && i + 1 < block.body.length) command = `${command}\n${block.body[++i]}`;
      const exit = /#\s*exit\s+(\d+)\s*$/.exec(command);
      current = { command, line: block.start + 2 + first, expectedExit: exit ? Number(exit[1]) : 0, output: [] };
      steps.push(current);
    } else if (current) {
      current.output.push(line);
    } else if (line.trim() !== '') {
      throw new Error(`line ${block.start + 2 + i}: console output before any \`$ \` command`);
    }
  }
  return steps;
}

/**
 * Placeholders for what differs from run to run. Applied to both the documented and the actual output,
 * so a placeholder in the text (not matched by any pattern) compares equal to any real value.
 */
export function normalize(text, dir) {
  let out = text;
  if (dir) out = out.split(dir).join('.');
  return out
    .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<id>')
    .replace(/\bsha256:[0-9a-f]{64}\b/g, 'sha256:<hash>')
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,64}\b/g, '<hex>')
    // A 12-digit step id prefix can be all digits (about 1 in 280): it is an id all the same.
    .replace(/(^|\s)[0-9]{12}(?=\s)/g, '$1<hex>')
    .replace(/\+[0-9a-f]{8}\+[A-Za-z0-9+/]{40,}={0,2}/g, '+<keyhash>+<key>')
    .replace(/(?<![\w+/])(?=[A-Za-z0-9+/]*\d)(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])[A-Za-z0-9+/]{40,}={0,2}(?![\w+/=])/g, '<base64>')
    .replace(/\b\d+ bytes\b/g, '<n> bytes')
    .replace(/\b\d+(?:\.\d+)? ?(?:ms|s)\b/g, '<duration>')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n+$/, '');
}

/** A fresh working directory for one Markdown file, with `stepchain` on its PATH. */
export function makeWorkdir(prefix = 'stepchain-docs-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const bin = join(dir, '.bin');
  mkdirSync(bin);
  const shim = join(bin, 'stepchain');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(shim, 0o755);
  // `python` is the test environment's (docs/otel.md runs a Python agent): $STEPCHAIN_PYTHON, else <repo>/.venv.
  const python = process.env.STEPCHAIN_PYTHON ?? join(ROOT, '.venv/bin/python');
  const pyShim = join(bin, 'python');
  writeFileSync(pyShim, `#!/bin/sh\nexec "${python}" "$@"\n`);
  chmodSync(pyShim, 0o755);
  return dir;
}

/** The environment every documented command and program runs in: no colour, UTC, not under a test runner. */
export function docEnv(dir, extra = {}) {
  const { NODE_ENV: _n, FORCE_COLOR: _f, NO_COLOR: _c, VITEST: _v, ...env } = process.env;
  return { ...env, PATH: `${join(dir, '.bin')}:${env.PATH ?? ''}`, NO_COLOR: '1', TZ: 'UTC', LC_ALL: 'C.UTF-8', ...extra };
}

/** Runs a process to its end: { exit, output } with stdout and stderr in the order they were written. */
function runProcess(file, args, dir, env, mergeStreams) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { cwd: dir, env, stdio: ['ignore', 'pipe', mergeStreams ? 'inherit' : 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (d) => chunks.push(d));
    child.stderr?.on('data', (d) => chunks.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ exit: code ?? (signal ? 128 : 1), output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

/**
 * Runs one console command in dir: { exit, output }. `exec 2>&1` makes stderr the same pipe as stdout, so
 * the output interleaves exactly as the process wrote it, as on a terminal.
 */
export function runCommand(command, dir, env = docEnv(dir)) {
  return runProcess('bash', ['-o', 'pipefail', '-c', `exec 2>&1\n${command}`], dir, env, true);
}

/** Writes a file block into dir. */
export function writeFileBlock(block, dir) {
  const path = join(dir, block.attrs.file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${block.body.join('\n')}\n`);
}

/**
 * A folder for the programs of ts/js blocks, inside the repository so that `import 'stepchain'` resolves to
 * this package's build by self-reference (package.json "exports"), as it would in an app that installed it.
 */
export function makeCodeDir() {
  const parent = join(ROOT, '.docs-run');
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, 'run-'));
}

/** A code block as TypeScript source (.mts) in codeDir; returns its path. */
export function writeCodeBlock(block, codeDir, name) {
  const path = join(codeDir, `${name}.mts`);
  writeFileSync(path, `${block.body.join('\n')}\n`);
  return path;
}

/** Transpiles a written block (types erased, nothing else) and runs it with Node in dir: { exit, output }. */
export async function runCodeBlock(path, dir, env = docEnv(dir)) {
  const ts = (await import('typescript')).default;
  const source = (await import('node:fs')).readFileSync(path, 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: path,
  }).outputText;
  const out = path.replace(/\.mts$/, '.mjs');
  writeFileSync(out, js);
  return runProcess(process.execPath, [out], dir, env, false);
}

/** Compiler options for type-checking the blocks as an adopter's strict ESM app would. */
export const CODE_COMPILER_OPTIONS = {
  strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['es2023'],
  types: ['node'], noEmit: true, skipLibCheck: true, isolatedModules: true,
};

/**
 * Runs one Markdown file's blocks in order in a fresh directory. Returns, per executed block,
 * { block, kind, steps?: [{ ...command, exit, actual }], exit?, output?, path? } and the directory.
 * Code blocks are written to codeDir (for the caller to type-check) and run.
 */
export async function runDocument(file, { codeDir = makeCodeDir(), env: extraEnv = {} } = {}) {
  const { existsSync, readFileSync } = await import('node:fs');
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const text = readFileSync(join(ROOT, file), 'utf8');
  const dir = makeWorkdir();
  const env = docEnv(dir, extraEnv);
  const results = [];
  for (const block of parseBlocks(text)) {
    const kind = blockKind(block);
    if (kind === 'file') writeFileBlock(block, dir);
    else if (kind === 'console') {
      const steps = [];
      for (const step of parseConsole(block)) {
        const { exit, output } = await runCommand(step.command, dir, env);
        steps.push({ ...step, exit, actual: output });
      }
      results.push({ block, kind, steps });
    } else if (kind === 'code') {
      // A block that needs a server runs only where one is given (the test suite gives its own).
      if (block.attrs.needs === 'postgres' && !env.DATABASE_URL) continue;
      const name = `${file.replace(/[^\w]+/g, '_')}_line${block.start + 1}`;
      const path = writeCodeBlock(block, codeDir, name);
      const { exit, output } = await runCodeBlock(path, dir, env);
      results.push({ block, kind, path, exit, output });
    }
  }
  return { text, dir, results };
}

/**
 * A Markdown text with each console block's output replaced by what its commands printed (results of
 * runDocument), in placeholders. A command whose documented output still matches after normalizing keeps
 * its text byte for byte, so rewriting twice changes nothing. Commands are kept as written.
 */
export function rewriteConsoleOutput(text, results, dir) {
  const lines = text.split('\n');
  const edits = [];
  for (const r of results) {
    if (r.kind !== 'console') continue;
    const body = [];
    let changed = false;
    for (const step of r.steps) {
      const documented = step.output.join('\n').replace(/\n+$/, '');
      const actual = normalize(step.actual, dir);
      const keep = normalize(documented, dir) === actual;
      if (!keep) changed = true;
      body.push(...step.command.split('\n').map((l, i) => `${i === 0 ? '$ ' : ''}${l}`));
      const out = keep ? documented : actual;
      if (out !== '') body.push(...out.split('\n'));
    }
    if (changed) edits.push({ start: r.block.start + 1, end: r.block.end, body });
  }
  // From the bottom up, so that earlier line indexes stay valid.
  for (const e of edits.reverse()) lines.splice(e.start, e.end - e.start, ...e.body);
  return { text: lines.join('\n'), rewritten: edits.length };
}
