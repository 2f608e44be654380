// Bundles the `stepchain` executable (issue 25, start-up): esbuild turns src/cli/main.ts and everything it
// reaches into dist/cli/main.js plus the chunks its verbs load when they run (dist/cli/chunks/, code
// splitting at each dynamic import), with source maps; `stepchain verify` gets a bundle of its own
// (dist/cli/verify/, below). The start of `stepchain verify` of a small journal loaded about 80 ES modules
// one by one, each resolved, read, compiled and linked on its own; bundled with the other verbs, about 15
// chunks; in its own bundle, 6 files. tsc's per-file dist/ stays as it is for the library entry points
// (package.json exports); only dist/cli/main.js is replaced. Run by `npm run build`, after tsc.
//
// Kept outside the bundle, loaded from dist/ or node_modules as without it:
// - src/parallel (the worker pool): its worker script is found beside pool.js (`new URL('./worker.js',
//   import.meta.url)`), so the pool stays tsc's dist/parallel/, imported from the chunks (dist/cli/chunks/,
//   dist/cli/verify/) as ../../parallel/index.js. The worker script itself is bundled (below), in place of
//   tsc's dist/parallel/worker.js, for the library's pool and the CLI's alike;
// - CommonJS dependencies (tar-stream and what it requires) and anything named at run time (pg): Node
//   loads them as usual. ES-module dependencies (@noble/*, pako) are bundled. The ASN.1 reader behind
//   `verify --tsa-cert` (@peculiar/asn1-*, asn1js, and their tslib) stays outside too: bundled, its helpers
//   became a chunk every start loaded (a file more for `--version`), for a verb option few commands use.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (p) => root + p;
const CHUNKS = 'cli/chunks';

/** The pool module, relative to a chunk in dist/cli/chunks/ or dist/cli/verify/ (the one place the bundle names a dist file). */
const POOL_FROM_CHUNK = '../../parallel/index.js';

const keepPoolOutside = {
  name: 'keep-parallel-outside',
  setup(build) {
    build.onResolve({ filter: /(^|\/)parallel\/index\.js$/ }, () => ({ path: POOL_FROM_CHUNK, external: true }));
  },
};

/**
 * canonical/sha256.ts hashes with node:crypto wherever `process.getBuiltinModule` gives it (Node ≥ 20.16;
 * package.json's engines ask for 20.19), and imports @noble/hashes only as the fallback for a platform
 * without it (the page). The CLI runs on Node only, so its bundle leaves that fallback out: loading and
 * evaluating it (its SHA-512 tables included) was a chunk and about 25 KiB of every start. Should the
 * native hash ever be missing, the stand-in says so at the first hash instead of hashing. Other importers
 * of @noble/hashes (ed25519 in @noble/curves) get the real module.
 */
const nativeHashOnly = {
  name: 'native-sha256-only',
  setup(build) {
    build.onResolve({ filter: /^@noble\/hashes\/sha2\.js$/ }, (args) =>
      /[\\/]src[\\/]canonical[\\/]sha256\.ts$/.test(args.importer)
        ? { path: 'sha2-fallback', namespace: 'native-sha256-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'native-sha256-only' }, () => ({
      loader: 'js',
      contents: [
        'const missing = () => { throw new Error("stepchain: node:crypto is not available (process.getBuiltinModule needs Node >= 20.16); the command line hashes with it"); };',
        'export const sha256 = Object.assign(missing, { create: missing });',
      ].join('\n'),
    }));
  },
};

/**
 * `stepchain verify`, the verb an auditor times, has a bundle of its own (src/cli/verify-main.ts, built into
 * dist/cli/verify/ by a second build): bundled with every verb, its code sat in chunks cut by which verbs
 * share each module, so a verify of a small journal read 15 files; built alone, its static imports fill
 * the entry and the few chunks it shares with its own lazy paths (receipts, Postgres, proofs). Measured:
 * 1.61× → 1.43× the CPU time of `node -e 0` (bench/speed.mjs, start-up). main.ts imports it by that path,
 * so the main build leaves it out; the main build keeps its own copy of the verb, for the main help.
 */
const VERIFY = 'verify';
const verifyApart = {
  name: 'verify-bundled-apart',
  setup(build) {
    build.onResolve({ filter: /^\.\/verify-main\.js$/ }, (args) =>
      /[\\/]src[\\/]cli[\\/]main\.ts$/.test(args.importer)
        ? { path: `./${VERIFY}/main.js`, external: true }
        : undefined,
    );
  },
};

/**
 * What the builds below share: files in dist/, everything they import bundled in (less what each leaves
 * outside), for Node 20, with linked source maps that name src/ without copying it, readable rather than
 * small (as the page: the code a user runs is the code in src/, concatenated), and a metafile for the
 * checks at the end.
 */
const NODE_BUILD = {
  absWorkingDir: root,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Errors and --debug stacks point at src/ (main.ts turns source maps on for --debug).
  sourcemap: 'linked',
  sourcesContent: false,
  minify: false,
  legalComments: 'none',
  charset: 'utf8',
  metafile: true,
  logLevel: 'warning',
};
/** A CommonJS file (.cjs) of its own. */
const CJS_FILE = { format: 'cjs', outExtension: { '.js': '.cjs' } };

/**
 * `stepchain append` and `stepchain effect`, the verbs an agent runs once per step or per tool call (issue 45),
 * are one file of their own, dist/cli/agent/main.cjs, loaded with V8's code cache (src/cli/agent-load.ts):
 * in the main build, `append` of one step loaded 12 files (590 KiB), among them the chunks its modules share
 * with the receipt verifier, signatures (ed25519) and witnesses, which it never runs. CommonJS, because
 * Node 20 takes cached code only for a script (`vm.Script`), not for an ES module; `import.meta.url` (the
 * SQLite driver's require) is the file's URL. Loading the SQLite and Postgres stores (about 90 KiB of it)
 * only for their locations measured no different, so they stay in. The cache is made here, after the
 * bundle: scripts/agent-cache.mjs runs it once on a scratch journal and keeps what V8 compiled.
 */
const AGENT = 'cli/agent/main';

/**
 * Ed25519, in the agent verbs' bundle, is set up at its first use instead of at every start (issue 45, CLI
 * start-up). Those verbs reach it through modules they load for other reasons (the approval ledger's key ids,
 * the proofs' signed notes, the approval signer), but use it only in a run that holds approval records or
 * signs: @noble/curves' curve set-up (its field, the base point's tables, a probe of the platform's random
 * source that loads Node's WebCrypto) ran at every start, about 3 ms of CPU, 5% of `node -e 0`.
 * Two stand-ins, each loading the real module by `require` (which esbuild bundles as a module initialised on
 * its first require): src/crypto/ed25519.ts's exported functions, each calling the real one, and
 * @noble/curves' `ed25519` object, a proxy whose every property read is the real object's. Only functions
 * of src/crypto/ed25519.ts are offered, to the approval modules: one that imports one of its constants fails
 * the build here (esbuild: no matching export), not at run time.
 */
const ED25519_SRC = /[\\/]src[\\/]crypto[\\/]ed25519\.ts$/;
const APPROVAL_MODULE = /[\\/]src[\\/]approval[\\/][^\\/]+\.ts$/;
const lazyEd25519 = {
  name: 'ed25519-at-first-use',
  setup(build) {
    build.onResolve({ filter: /^@noble\/curves\/ed25519\.js$|(^|\/)crypto\/ed25519\.js$/ }, async (args) => {
      if (args.kind !== 'import-statement' || args.namespace === 'ed25519-noble-object') return undefined; // the real ones
      // src/crypto/ed25519.ts stands in for the approval modules, which every start loads; the receipt
      // modules that import its constants are loaded only when used, and import the real module.
      if (!args.path.startsWith('@noble/') && !APPROVAL_MODULE.test(args.importer)) return undefined;
      const real = await build.resolve(args.path, { kind: 'require-call', resolveDir: args.resolveDir });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'ed25519-at-first-use' };
    });
    build.onResolve({ filter: /\?object$/ }, (args) => ({
      path: args.path.slice(0, -'?object'.length),
      namespace: 'ed25519-noble-object',
    }));
    build.onLoad({ filter: /.*/, namespace: 'ed25519-noble-object' }, (args) => ({
      loader: 'js',
      resolveDir: root,
      contents: `export { ed25519 } from ${JSON.stringify(args.path)};`,
    }));
    build.onLoad({ filter: /.*/, namespace: 'ed25519-at-first-use' }, async (args) => {
      const load = `let real; const load = () => (real ??= require(${JSON.stringify(args.path)}));`;
      if (ED25519_SRC.test(args.path)) {
        const names = [...(await readFile(args.path, 'utf8')).matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]);
        return {
          loader: 'js',
          resolveDir: root,
          contents: [load, ...names.map((n) => `export function ${n}(...a) { return load().${n}(...a); }`)].join('\n'),
        };
      }
      // The object only (required, a module keeps every export; imported, @noble/curves' other curves are left out).
      return {
        loader: 'js',
        resolveDir: root,
        contents: [
          `let real; const load = () => (real ??= require(${JSON.stringify(args.path)} + '?object'));`,
          'export const ed25519 = new Proxy({}, {',
          '  get: (_, key) => Reflect.get(load().ed25519, key),',
          '  has: (_, key) => Reflect.has(load().ed25519, key),',
          '});',
        ].join('\n'),
      };
    });
  },
};

/**
 * The agent bundle's text as written: CommonJS's wrapper function, already in the file, so that
 * src/cli/agent-load.ts compiles what it reads, and the file still loads as a CommonJS module (--debug, and
 * any `require` of it): there, `module` is the wrapper's, and the function is called with Node's arguments;
 * compiled as a script, `module` is not defined and the script's value is the function. The first part
 * ends the first line without a line break, so the source map's lines still hold.
 */
/** Node 20's EXTERN_APEX (0xFBEE9 bytes) and a margin: see the agent bundle's padding below. */
const EXTERNAL_STRING_BYTES = 0xfbee9 + 4096;
const AGENT_WRAP = [
  '(typeof module === "object" ? (f) => f.call(exports, exports, require, module, __filename, __dirname) : (f) => f)' +
    '(function (exports, require, module, __filename, __dirname) { ',
  '\n});\n',
];

/**
 * The platform's CSPRNG for the agent bundle, in place of `globalThis.crypto` (esbuild's define): the same
 * bytes from node:crypto, which the bundle loads anyway, without Node's WebCrypto, which these verbs use for
 * nothing else and whose first use loaded and set it up (its modules, WebIDL converters) at every start:
 * record seeds and salts (getRandomValues of a Uint8Array of 32 or 4096 bytes) and ids (randomUUID). Node's
 * own getRandomValues checks its argument and fills it with randomFillSync; anything but a Uint8Array of at
 * most 65 536 bytes goes to it, to be checked and refused as before. Anything else asked of
 * `globalThis.crypto` (subtle) is the real one's.
 */
const RANDOM = `var __stepchainRandom = {
  getRandomValues: (a) => a instanceof Uint8Array && a.byteLength <= 65536 ? require("node:crypto").randomFillSync(a) : globalThis.crypto.getRandomValues(a),
  randomUUID: () => require("node:crypto").randomUUID(),
  get subtle() { return globalThis.crypto.subtle; },
};`;

/**
 * node:fs/promises in the agent bundle is src/cli/agent-fs.ts: the same calls made synchronously (that file
 * says why and what is kept). Other bundles and the library keep Node's.
 */
const syncFileCalls = {
  name: 'agent-sync-file-calls',
  setup(build) {
    build.onResolve({ filter: /^(node:)?fs\/promises$/ }, () => ({ path: at('src/cli/agent-fs.ts') }));
  },
};

function bundleAgent() {
  return esbuild.build({
    absWorkingDir: root,
    entryPoints: { [AGENT]: 'src/cli/agent-main.ts' },
    outdir: 'dist',
    outExtension: { '.js': '.cjs' },
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    external: ['tar-stream'],
    plugins: [keepPoolOutside, nativeHashOnly, lazyEd25519, syncFileCalls],
    define: { 'import.meta.url': '__stepchainBundleUrl', 'globalThis.crypto': '__stepchainRandom' },
    // `import()` becomes `require()`: a function V8 restores from a code cache has lost the script's
    // dynamic-import callback ("A dynamic import callback was not specified"), and what these verbs import
    // lazily (node:fs, node:readline, the `pg` driver) can be required.
    supported: { 'dynamic-import': false },
    banner: { js: `var __stepchainBundleUrl = require("node:url").pathToFileURL(__filename).href;\n${RANDOM}` },
    minify: false,
    legalComments: 'none',
    // ASCII (other characters escaped): V8 keeps the source as a one-byte string, half the memory of a two-byte
    // one, and reads it with fewer young-generation collections during the start.
    charset: 'ascii',
    metafile: true,
    logLevel: 'warning',
  });
}

/**
 * package.json's `bin`, dist/cli/bin.cjs (src/cli/bin.ts says why it is CommonJS): the agent loader
 * (agent-load.ts) and a dynamic import of the ES module entry, dist/cli/main.js, for every other command.
 */
function bundleBin() {
  return esbuild.build({
    ...NODE_BUILD,
    ...CJS_FILE,
    entryPoints: { 'cli/bin': 'src/cli/bin.ts' },
    plugins: [
      {
        name: 'main-entry-outside',
        setup(build) {
          build.onResolve({ filter: /^\.\/main\.js$/ }, () => ({ path: './main.js', external: true }));
        },
      },
    ],
    define: { 'import.meta.url': '__stepchainBinUrl' },
    banner: {
      js: '#!/usr/bin/env node\nvar __stepchainBinUrl = require("node:url").pathToFileURL(__filename).href;',
    },
  });
}

/** One esbuild build of the CLI: its entries in dist/, the chunks they share in dist/`chunkDir`. */
function bundle(entryPoints, chunkDir, plugins) {
  return esbuild.build({
    ...NODE_BUILD,
    entryPoints,
    splitting: true,
    format: 'esm',
    chunkNames: `${chunkDir}/[name]-[hash]`,
    external: ['tar-stream', '@peculiar/*', 'asn1js', 'protobufjs', 'protobufjs/*'],
    plugins: [keepPoolOutside, nativeHashOnly, ...plugins],
  });
}

/**
 * The pool's worker script, one file in place of tsc's dist/parallel/worker.js: each worker thread loads it
 * in a fresh isolate, and unbundled it read, compiled and linked 27 ES modules (the chain, record and
 * canonical folders, canonicalize, @noble/hashes), about 20 ms of CPU per worker (measured: two workers that
 * load it and answer one empty batch, against two that load an empty script). With node:crypto's SHA-256
 * only, as the CLI: a worker thread is Node's.
 */
function bundleWorker() {
  return esbuild.build({
    ...NODE_BUILD,
    entryPoints: { 'parallel/worker': 'src/parallel/worker.ts' },
    format: 'esm',
    plugins: [nativeHashOnly],
  });
}

await rm(at(`dist/${CHUNKS}`), { recursive: true, force: true });
await rm(at(`dist/cli/${VERIFY}`), { recursive: true, force: true });
await rm(at('dist/cli/agent'), { recursive: true, force: true });
// The verify bundle's entry sits beside its chunks, so a relative path (the pool's) holds from either.
const builds = [
  await bundle({ 'cli/main': 'src/cli/main.ts' }, CHUNKS, [verifyApart]),
  await bundle({ [`cli/${VERIFY}/main`]: 'src/cli/verify-main.ts' }, `cli/${VERIFY}`, []),
];
const agent = await bundleAgent();
const bin = await bundleBin();
const binImports = Object.values(bin.metafile.outputs)
  .flatMap((o) => o.imports ?? [])
  .filter((i) => !i.path.startsWith('node:') && i.path !== './main.js');
if (binImports.length > 0)
  throw new Error(`dist/cli/bin.cjs must be one file; it imports ${binImports.map((i) => i.path).join(', ')}`);
await chmod(at('dist/cli/bin.cjs'), 0o755);
const agentImports = Object.values(agent.metafile.outputs)
  .flatMap((o) => o.imports ?? [])
  .filter((i) => !i.path.startsWith('node:') && i.path !== 'tar-stream');
if (agentImports.length > 0)
  throw new Error(`dist/${AGENT}.cjs must be one file; it imports ${agentImports.map((i) => i.path).join(', ')}`);
{
  // esbuild's ASCII charset escapes every string, template and regular expression; what it leaves is in
  // comments, written out here as \u escapes (text in a comment), so the file is ASCII throughout.
  // It is also written inside CommonJS's wrapper (AGENT_WRAP), so the loader compiles the file's text as it
  // is read: wrapping it there made a second, flat copy of the 800 KiB source, a young-generation collection
  // at every start.
  const file = at(`dist/${AGENT}.cjs`);
  const ascii = (await readFile(file, 'utf8')).replace(/[^\x00-\x7f]/gu, (c) =>
    [...c].map((u) => `\\u{${u.codePointAt(0).toString(16)}}`).join(''),
  );
  const text = AGENT_WRAP[0] + ascii + AGENT_WRAP[1];
  // At least EXTERNAL_STRING_BYTES long, padded with a comment where shorter: Node gives V8 a latin1 text of
  // that size as an external string (its buffer outside V8's heap; src/string_bytes.cc, EXTERN_APEX), and a
  // shorter one as a copy in V8's young generation, which 800 KiB of source filled: a collection at every start.
  await writeFile(
    file,
    text.length >= EXTERNAL_STRING_BYTES ? text : `${text}//${' '.repeat(EXTERNAL_STRING_BYTES - text.length)}\n`,
  );
}
const made = spawnSync(process.execPath, [at('scripts/agent-cache.mjs')], { encoding: 'utf8' });
if (made.status !== 0) throw new Error(`scripts/agent-cache.mjs failed: ${made.stderr}`);
const worker = await bundleWorker();
const workerImports = Object.values(worker.metafile.outputs)[0].imports.filter((i) => !i.path.startsWith('node:'));
if (workerImports.length > 0)
  throw new Error(
    `dist/parallel/worker.js must be one file; it imports ${workerImports.map((i) => i.path).join(', ')}`,
  );

// Every relative path the bundle names must lead to a file: the chunks' imports of each other, the pool in
// dist/parallel/, and what code finds by `new URL(…, import.meta.url)` (the page verb's built page, the
// pool's worker script). Those paths were written for the file they were in, so code that lands in another
// folder (the entry in dist/cli/, not dist/cli/chunks/) would break them; a worker that does not load fails
// quietly (its batches are checked on the calling thread), so look here, at build time.
const PATHS = [
  /(?:\bfrom|\bimport\()\s*"(\.{1,2}\/[^"]+)"/g,
  /new URL\(\s*"(\.{1,2}\/[^"]+)",\s*import\.meta\.url\s*\)/g,
];
for (const name of builds.flatMap((b) => Object.keys(b.metafile.outputs)).filter((n) => n.endsWith('.js'))) {
  const file = at(name);
  const code = await readFile(file, 'utf8');
  for (const re of PATHS) {
    for (const [, rel] of code.matchAll(re)) {
      const target = fileURLToPath(new URL(rel, pathToFileURL(file)));
      if (!existsSync(target))
        throw new Error(`${name} names ${rel}, which is not there (${target}); see scripts/build-cli.mjs`);
    }
  }
}
for (const [b, where] of [
  [builds[0], 'dist/cli/main.js'],
  [builds[1], `dist/cli/${VERIFY}/main.js`],
]) {
  const outputs = Object.entries(b.metafile.outputs).filter(([name]) => name.endsWith('.js'));
  const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
  console.error(`${where}: bundled with ${outputs.length - 1} chunks, ${(bytes / 1024).toFixed(0)} KiB in all`);
}
console.error(
  `dist/${AGENT}.cjs: one file, ${(
    Object.entries(agent.metafile.outputs)
      .filter(([n]) => n.endsWith('.cjs'))
      .reduce((n, [, o]) => n + o.bytes, 0) / 1024
  ).toFixed(0)} KiB; ${made.stdout.trim()}`,
);
console.error(
  `dist/parallel/worker.js: one file, ${(Object.values(worker.metafile.outputs).reduce((n, o) => n + (o.bytes ?? 0), 0) / 1024).toFixed(0)} KiB with its source map`,
);
