// The worker thread behind test/helpers/cli-sync.ts: it starts the CLI server (cli-serve.mjs) with the
// environment it was given, passes each call from its port to the server, and puts the answer back on the
// port before waking the test's thread, which sleeps in Atomics.wait until then (a thread blocked that way
// cannot receive the server's IPC messages itself; this one can).
import { fork } from 'node:child_process';
import { workerData } from 'node:worker_threads';

const { port, signal, env, serve } = workerData;
const woken = new Int32Array(signal);
const wake = (message) => {
  port.postMessage(message);
  Atomics.store(woken, 0, 1);
  Atomics.notify(woken, 0);
};

const server = fork(serve, [], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'], env });
server.stdin.end(); // a call without input reads an ended stdin, as a started process given none would
server.stdout.resume();
let errors = '';
let ended;
server.stderr.on('data', (d) => (errors += d.toString()));
let next = 0;
server.on('message', (m) => wake({ id: m.id, result: m.result }));
server.on('exit', (code, signalName) => {
  ended = `the CLI server ended (${code ?? signalName}):\n${errors}`;
  wake({ ended });
});
port.on('message', (m) => {
  if (m === 'stop') {
    server.kill('SIGKILL');
    port.close();
    return;
  }
  if (ended === undefined) server.send({ id: next++, call: m });
  else wake({ ended });
});
