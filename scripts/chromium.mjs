// A headless Chromium from npm alone, for the page tests and `npm run screenshots`: @sparticuz/chromium
// ships a brotli-compressed chrome-headless-shell (x86-64, glibc >= 2.25) that playwright-core drives.
// Its own executablePath() extracts into os.tmpdir()/chromium and trusts any file already there, so
// concurrent runs can exec a half-written binary (ETXTBSY) or another version's. Here it is extracted
// once per version and user into a folder that appears by an atomic rename, with the NSS/NSPR/expat
// libraries the package also ships, used only when the host lacks them.
import sparticuz from '@sparticuz/chromium';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import tar from 'tar-stream';

const require = createRequire(import.meta.url);
/** The package's root: its "exports" hide package.json, so go up from the entry (build/cjs/index.cjs). */
const packageRoot = () => path.join(path.dirname(require.resolve('@sparticuz/chromium')), '..', '..');

/** Unpacks bin/al2023.tar.br (libnss3, libnspr4, libexpat … built for glibc 2.25) into `into`. */
async function extractLibraries(into) {
  const ex = tar.extract();
  ex.on('entry', (header, stream, next) => {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      if (header.type !== 'file') return next();
      const file = path.join(into, header.name);
      if (!file.startsWith(into + path.sep))
        return next(new Error(`al2023.tar.br holds an entry outside its folder: ${header.name}`));
      mkdir(path.dirname(file), { recursive: true })
        .then(() => writeFile(file, Buffer.concat(chunks), { mode: 0o755 }))
        .then(() => next(), next);
    });
  });
  await pipeline(createReadStream(path.join(packageRoot(), 'bin', 'al2023.tar.br')), createBrotliDecompress(), ex);
}

/** The path of the extracted Chromium, extracting it first when needed. Throws with the reason when it cannot. */
export async function ensureChromium() {
  if (process.arch !== 'x64' || process.platform !== 'linux') {
    throw new Error(
      `@sparticuz/chromium ships Chromium for linux-x64 only; this is ${process.platform}-${process.arch}`,
    );
  }
  const { version } = JSON.parse(await readFile(path.join(packageRoot(), 'package.json'), 'utf8'));
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const finalDir = path.join(os.tmpdir(), `stepchain-chromium-${version}-${uid}`);
  const exe = path.join(finalDir, 'chromium');
  if (existsSync(exe)) {
    // Another user of a shared /tmp must not be able to plant the browser this runs.
    const info = statSync(finalDir);
    if (info.uid !== uid || (info.mode & 0o022) !== 0)
      throw new Error(`${finalDir} is not owned by this user or is writable by others; remove it`);
    return exe;
  }
  const work = await mkdtemp(`${finalDir}.tmp-`);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = work; // executablePath() extracts into os.tmpdir()
  try {
    await sparticuz.executablePath();
    await extractLibraries(path.join(work, 'al2023'));
  } catch (e) {
    await rm(work, { recursive: true, force: true });
    throw e;
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
  try {
    await rename(work, finalDir); // atomic: a concurrent run either wins or finds the finished folder
  } catch (e) {
    await rm(work, { recursive: true, force: true });
    if (!['ENOTEMPTY', 'EEXIST'].includes(e.code)) throw e;
  }
  return exe;
}

/** Launch options for playwright-core: the binary, its own libraries when the host lacks some, no Lambda flags. */
export function launchOptions(exe) {
  let missing = [];
  try {
    missing = execFileSync('ldd', [exe], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes('not found'))
      .map((l) => l.trim().split(' ')[0]);
  } catch {
    // no ldd: try the host's libraries; a failed launch names what is missing
  }
  const env = { ...process.env };
  if (missing.length > 0)
    env.LD_LIBRARY_PATH = [path.join(path.dirname(exe), 'al2023', 'lib'), env.LD_LIBRARY_PATH]
      .filter(Boolean)
      .join(':');
  // sparticuz.args are for AWS Lambda (--single-process, --disable-web-security …): they change what a
  // file:// page may do, so none of them is used. As root Chromium's sandbox cannot start.
  return { executablePath: exe, env, args: ['--no-sandbox'], chromiumSandbox: false, headless: true };
}
