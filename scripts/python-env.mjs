#!/usr/bin/env node
/**
 * Sets up the Python test environment `.venv` (issue 42) from pinned requirements: python/requirements-dev.txt,
 * and test/otel/requirements.txt when that file exists. Idempotent and fast when already set up: a stamp in
 * .venv records the digest of the requirement files and the interpreter's version, and nothing is installed
 * while it matches. `npm test` runs it before pytest; STEPCHAIN_PYTHON names the interpreter (default: the
 * first of python3.13, python3.12, python3.11, python3 that is 3.11 or later — pydantic-ai-harness needs 3.11).
 * One runs at a time (.venv.lock): `npm test` starts one beside vitest, and the tests that run Python start one
 * too (test/helpers/python-env.ts), which waits for the first and then finds the environment made.
 */
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const venv = join(root, '.venv');
const python = join(venv, 'bin', 'python');
const stampFile = join(venv, '.stepchain-requirements');
const files = ['python/requirements-dev.txt', 'test/otel/requirements.txt'].filter((f) => existsSync(join(root, f)));

function version(exe) {
  const r = spawnSync(exe, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function interpreter() {
  const candidates = process.env.STEPCHAIN_PYTHON
    ? [process.env.STEPCHAIN_PYTHON]
    : ['python3.13', 'python3.12', 'python3.11', 'python3'];
  for (const exe of candidates) {
    const v = version(exe);
    if (v !== null && Number(v.split('.')[0]) === 3 && Number(v.split('.')[1]) >= 11) return { exe, v };
  }
  console.error(`python-env: no Python 3.11 or later found (tried ${candidates.join(', ')}); set STEPCHAIN_PYTHON`);
  process.exit(2);
}

/** Whether a process with this pid is running (EPERM: it is, under another user). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Takes .venv.lock, a file holding its holder's pid, waiting while a running process holds it; released when
 * this process exits. A holder killed outright leaves the file behind: its pid is no longer running, and the
 * next setup takes the lock over. (Two setups taking over one stale lock at the same instant could both go
 * on; a stale lock needs a setup killed by SIGKILL first, and pip's own file writes are then the worst case.)
 */
function lock() {
  const lockFile = join(root, '.venv.lock');
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let holder = NaN;
    try {
      holder = Number.parseInt(readFileSync(lockFile, 'utf8'), 10);
    } catch {
      continue; // released between the two calls
    }
    // NaN: the holder has created the file and not yet written its pid.
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(lockFile, { force: true });
    else Atomics.wait(sleeper, 0, 0, 200);
  }
  process.on('exit', () => {
    try {
      if (readFileSync(lockFile, 'utf8') === String(process.pid)) rmSync(lockFile);
    } catch {
      // already gone
    }
  });
}

lock();
const hash = createHash('sha256');
for (const f of files) hash.update(`${f}\n`).update(readFileSync(join(root, f)));
const { exe, v } = interpreter();
const stamp = `${hash.digest('hex')} python ${v}\n`;

if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && version(python) === v) {
  process.exit(0);
}
const started = Date.now();
if (existsSync(venv) && version(python) !== v) rmSync(venv, { recursive: true, force: true });
if (!existsSync(python)) execFileSync(exe, ['-m', 'venv', venv], { stdio: 'inherit' });
rmSync(stampFile, { force: true });
const args = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-q'];
for (const f of files) args.push('-r', join(root, f));
execFileSync(python, args, { stdio: 'inherit' });
writeFileSync(stampFile, stamp);
console.error(
  `python-env: .venv set up with Python ${v} from ${files.join(', ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
