// One invocation of the built CLI inside this Node process, as its own start would run it: process.argv, the
// working directory, stdin (the call's input, if it has one) and process.exitCode set for it, then the
// built entry (dist/cli/main.js) evaluated afresh (a new module URL each time; the chunks it loads are
// shared), its stdout and stderr captured byte for byte. The streams stay the process's own otherwise, so
// what the CLI asks of them (isTTY, columns) is true of the pipe or terminal this process was started on.
// Used by test/helpers/cli-batch-runner.mjs and cli-serve.mjs (see test/helpers/cli-batch.ts).
import { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { snapshotOf } from './dir-snapshot.mjs';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const streams = [process.stdout, process.stderr];
const writes = streams.map((s) => s.write);
const stdinDescriptor = Object.getOwnPropertyDescriptor(process, 'stdin');
let calls = 0;

/**
 * @param {{ args: string[], cwd: string, input?: string, snapshot?: string }} call
 * @returns {Promise<{ rc: number, out: string, err: string, all: string, snapshot?: string }>}
 */
export async function runCall(call) {
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
  // The call's input, if it has one; else the process's own stdin (a pipe at its end, or the terminal).
  if (call.input !== undefined) {
    const stdin = Readable.from([Buffer.from(call.input, 'utf8')]);
    Object.defineProperty(process, 'stdin', { configurable: true, enumerable: true, get: () => stdin });
  }
  process.chdir(call.cwd);
  process.argv = [process.execPath, MAIN, ...call.args];
  process.exitCode = undefined;
  let rc;
  try {
    await import(`${pathToFileURL(MAIN).href}?call=${calls++}`);
    rc = process.exitCode ?? 0;
  } catch (error) {
    // What Node does with an uncaught error at the top level: print its stack on stderr, exit 1.
    const text = Buffer.from(`${error?.stack ?? String(error)}\n`);
    chunks[1].push(text);
    all.push(text);
    rc = 1;
  } finally {
    streams.forEach((stream, i) => (stream.write = writes[i]));
    if (call.input !== undefined && stdinDescriptor) Object.defineProperty(process, 'stdin', stdinDescriptor);
  }
  process.exitCode = undefined;
  const latin = (list) => Buffer.concat(list).toString('latin1');
  return {
    rc: typeof rc === 'number' ? rc : Number(rc),
    out: latin(chunks[0]),
    err: latin(chunks[1]),
    all: latin(all),
    ...(call.snapshot === undefined ? {} : { snapshot: snapshotOf(call.snapshot) }),
  };
}
