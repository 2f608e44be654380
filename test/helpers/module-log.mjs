// Preloaded into a spawned CLI (`node --import ./test/helpers/module-log.mjs …`): appends the URL of every
// ES module the process loads, one per line, to the file named by STEPCHAIN_MODULE_LOG. Module hooks run
// on a thread of their own, so the same file registers itself on the main thread and logs on the other.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) register(import.meta.url);

export async function load(url, context, next) {
  if (process.env.STEPCHAIN_MODULE_LOG) appendFileSync(process.env.STEPCHAIN_MODULE_LOG, `${url}\n`);
  return next(url, context);
}
