// The official MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against the
// test server over Streamable HTTP (test/mcp/fixtures/http-server.mjs), once directly and once through
// `stepchain mcp --upstream` (issue 44): the proxy must not change any scenario's result. Offline: the
// suite talks to 127.0.0.1 only.
//
// The suite is not a dependency of stepchain (it pulls express, octokit…), so it is installed apart and
// named here:
//
//   npm install --prefix /tmp/conformance @modelcontextprotocol/conformance@0.1.13
//   npm run build && node scripts/mcp-conformance.mjs /tmp/conformance/node_modules/@modelcontextprotocol/conformance
//
// No published version declares `engines`. Versions 0.1.5 to 0.1.13 run on Node 20 as published (checked on
// Node 20.20); 0.1.14 and later (0.2.0 alphas included) import fs.globSync, which Node 20 lacks, and stop at
// load. For those, on Node 20 only, the one use of fs.globSync is served by a small stand-in, loaded by a
// module hook for the suite's own imports: the results then come from a suite that is not as published,
// and the script says so.
import { spawn } from 'node:child_process';
import fs, { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const suite = process.argv[2];
if (suite === undefined) {
  console.error(
    'usage: node scripts/mcp-conformance.mjs <path to the installed @modelcontextprotocol/conformance package>',
  );
  process.exit(2);
}
const root = fileURLToPath(new URL('..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(suite, 'package.json'), 'utf8'));
// The suite's command: its package's bin (dist/index.mjs up to 0.1.5, dist/index.js after).
const entry = join(suite, typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin)[0]);
const needsGlob = typeof fs.globSync !== 'function' && readFileSync(entry, 'utf8').includes('globSync');
console.log(
  `@modelcontextprotocol/conformance ${manifest.version} on Node ${process.versions.node}${needsGlob ? ' (fs.globSync served by a stand-in: the suite is not run as published)' : ' (as published)'}\n`,
);
const work = mkdtempSync(join(tmpdir(), 'stepchain-conformance-'));

// fs.globSync(`**/<name>`, { cwd }) for Node 20, and the hook that gives it to the suite alone.
writeFileSync(
  join(work, 'fs-with-glob.mjs'),
  `import fs from 'node:fs';
import { join, relative } from 'node:path';
export * from 'node:fs';
export default fs;
export function globSync(pattern, { cwd = '.' } = {}) {
  const name = pattern.replace(/^\\*\\*\\//, '');
  const found = [];
  const walk = (dir) => { for (const e of fs.readdirSync(dir, { withFileTypes: true })) { const p = join(dir, e.name); if (e.isDirectory()) walk(p); else if (e.name === name) found.push(relative(cwd, p)); } };
  walk(cwd);
  return found;
}
`,
);
writeFileSync(
  join(work, 'hooks.mjs'),
  `const SHIM = new URL('./fs-with-glob.mjs', import.meta.url).href;
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(${JSON.stringify(pathToFileURL(suite).href)})) return { url: SHIM, shortCircuit: true };
  return next(specifier, context);
}
`,
);
writeFileSync(
  join(work, 'register.mjs'),
  `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
);

/** Starts `node args…` and resolves with the first match of `pattern` in its output. */
function start(args, pattern) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  return new Promise((resolve, reject) => {
    const look = (c) => {
      seen += c;
      const m = pattern.exec(seen);
      if (m) resolve({ child, match: m });
    };
    child.stdout.setEncoding('utf8').on('data', look);
    child.stderr.setEncoding('utf8').on('data', look);
    child.on('close', (code) => reject(new Error(`${args.join(' ')} exited (${code}): ${seen}`)));
  });
}

/** Runs every server scenario against `url`; each scenario's "passed, failed" line from the summary. */
function conformance(url) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [...(needsGlob ? ['--import', join(work, 'register.mjs')] : []), entry, 'server', '--url', url],
      { cwd: work, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
    });
    child.on('close', () => {
      const summary = out.slice(out.indexOf('=== SUMMARY ==='));
      resolve(
        new Map(
          [...summary.matchAll(/^[✓✗] ([\w-]+): (\d+) passed, (\d+) failed$/gm)].map((m) => [
            m[1],
            `${m[2]} passed, ${m[3]} failed`,
          ]),
        ),
      );
    });
  });
}

const server = await start([join(root, 'test/mcp/fixtures/http-server.mjs')], /LISTENING (\d+)/);
const upstream = `http://127.0.0.1:${server.match[1]}/mcp`;
const store = join(work, 'runs');
const proxy = await start(
  [join(root, 'dist/cli/main.js'), 'mcp', store, '--fsync', 'none', '--upstream', upstream],
  /give the client (http:\/\/\S+)/,
);
try {
  const direct = await conformance(upstream);
  const through = await conformance(proxy.match[1]);
  let differ = 0;
  console.log('| scenario | server alone | through stepchain mcp |\n|---|---|---|');
  for (const name of new Set([...direct.keys(), ...through.keys()])) {
    const a = direct.get(name) ?? 'not run';
    const b = through.get(name) ?? 'not run';
    if (a !== b) differ++;
    console.log(`| ${name} | ${a} | ${b}${a === b ? '' : ' **(differs)**'} |`);
  }
  console.log(`\n${direct.size} scenarios; ${differ === 0 ? 'the same result for every one' : `${differ} differ`}.`);
  process.exitCode = differ === 0 && direct.size > 0 ? 0 : 1;
} finally {
  proxy.child.kill('SIGTERM');
  server.child.kill('SIGTERM');
  await new Promise((r) => proxy.child.on('close', r));
  rmSync(work, { recursive: true, force: true });
}
