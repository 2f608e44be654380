/**
 * vitest global setup: one real PostgreSQL server for the whole `npm test` run, owned by a child process
 * (test/setup/pg-runner.mjs; why a child: see its header). Test files get the URL with inject('pgUrl');
 * processes they spawn inherit STEPCHAIN_PG_URL. If the server cannot start, the run fails here, loudly:
 * the Postgres tests are never skipped.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** postgres://postgres:<password>@127.0.0.1:<port>/postgres of the run's throwaway server. */
    pgUrl: string;
  }
}

interface RunnerMessage {
  url?: string;
  error?: string;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runner = fileURLToPath(new URL('./pg-runner.mjs', import.meta.url));
  const child = fork(runner, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const message = await new Promise<RunnerMessage>((resolve, reject) => {
    child.once('message', (m) => resolve(m as RunnerMessage));
    child.once('exit', (code, signal) =>
      reject(
        new Error(`the PostgreSQL runner (${runner}) exited before the server was up (code ${code}, signal ${signal})`),
      ),
    );
  });
  if (message.url === undefined) {
    if (child.connected) child.disconnect();
    await exited;
    throw new Error(
      `the Postgres tests need a server and none could be started: ${message.error ?? 'no reason given'}`,
    );
  }
  project.provide('pgUrl', message.url);
  process.env.STEPCHAIN_PG_URL = message.url; // forks workers, and the processes the tests spawn, inherit it
  return async () => {
    if (child.connected) child.disconnect(); // the runner stops the server and deletes its folder
    await exited;
  };
}
