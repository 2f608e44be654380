// Runs several invocations of the built CLI in this one Node process, one after another, each as its own
// start would run it: process.argv, the working directory and process.exitCode set for it, then the built
// entry (dist/cli/main.js) evaluated afresh (a new module URL each time; the chunks it loads are shared),
// its stdout and stderr captured byte for byte. The streams stay the process's own, so whatever the CLI asks
// of them (isTTY, columns) is true of the pipe or terminal this process was started on. One start of Node
// and one load of the verbs, instead of one per invocation: see test/helpers/cli-batch.ts.
//
//   node cli-batch-runner.mjs <calls.json> <results.json>
//   calls:   [{ args: string[], cwd: string, snapshot?: string }]
//   results: [{ rc, out, err, all, snapshot? }] (out, err, all as latin1 text: one char per byte; `all` holds
//            both streams in the order written; `snapshot` = snapshotOf(the named directory) after the call)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { snapshotOf } from './dir-snapshot.mjs';

const [callsFile, resultsFile] = process.argv.slice(2);
const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
const streams = [process.stdout, process.stderr];
const writes = streams.map((s) => s.write);
const results = [];
for (const [n, call] of calls.entries()) {
  const chunks = [[], []];
  const all = [];
  streams.forEach((stream, i) => {
    stream.write = (chunk, encoding, done) => {
      const bytes = Buffer.from(chunk, typeof encoding === 'string' ? encoding : undefined);
      chunks[i].push(bytes);
      all.push(bytes);
      const callback = typeof encoding === 'function' ? encoding : done;
      if (callback) queueMicrotask(() => callback());
      return true;
    };
  });
  process.chdir(call.cwd);
  process.argv = [process.execPath, MAIN, ...call.args];
  process.exitCode = undefined;
  let rc;
  try {
    await import(`${pathToFileURL(MAIN).href}?call=${n}`);
    rc = process.exitCode ?? 0;
  } catch (error) {
    // What Node does with an uncaught error at the top level: print its stack on stderr, exit 1.
    const text = Buffer.from(`${error?.stack ?? String(error)}\n`);
    chunks[1].push(text);
    all.push(text);
    rc = 1;
  } finally {
    streams.forEach((stream, i) => (stream.write = writes[i]));
  }
  const latin = (list) => Buffer.concat(list).toString('latin1');
  results.push({
    rc,
    out: latin(chunks[0]),
    err: latin(chunks[1]),
    all: latin(all),
    ...(call.snapshot === undefined ? {} : { snapshot: snapshotOf(call.snapshot) }),
  });
}
writeFileSync(resultsFile, JSON.stringify(results));
// A verb may leave a worker pool or a timer behind; the results are written, so end here.
process.exit(0);
