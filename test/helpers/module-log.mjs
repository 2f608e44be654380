// Preloaded into a spawned CLI (`node --import ./test/helpers/module-log.mjs …`): appends the URL of every
// ES module the process loads, one per line, to the file named by STEPCHAIN_MODULE_LOG. Module hooks run
// on a thread of their own, so this file registers itself (under a "?hooks" URL, which does not register
// again) on each thread that preloads it: the main thread and every worker thread.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

if (!import.meta.url.endsWith('?hooks')) register(`${import.meta.url}?hooks`);

export async function load(url, context, next) {
  if (process.env.STEPCHAIN_MODULE_LOG) appendFileSync(process.env.STEPCHAIN_MODULE_LOG, `${url}\n`);
  return next(url, context);
}
