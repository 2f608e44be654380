#!/usr/bin/env node
/**
 * The `stepchain` executable. `npm run build` bundles it (scripts/build-cli.mjs); with --debug, source maps
 * are turned on first, so the stack traces it prints name src/ files and lines (a plain start does not pay
 * for reading the maps). `stepchain verify` loads its own bundle (verify-main.ts), `append` and `effect`
 * theirs (agent-main.ts, with V8's code cache: agent-load.ts); every other command the shell and the verb
 * table, each verb's code when it runs.
 */
import { loadAgent } from './agent-load.js';

const debug = process.argv.includes('--debug');
if (debug) process.setSourceMapsEnabled(true);
const argv = process.argv.slice(2);
// The command as runCli finds it: the first argument that is not an option.
const command = argv.find((a) => !a.startsWith('-'));
if (command === 'verify') {
  process.exitCode = await (await import('./verify-main.js')).runVerify(argv);
} else if (command === 'append' || command === 'effect') {
  // Node's own streams here, not the bin's direct descriptor writes (agent-io.ts): whoever runs this entry —
  // a test harness evaluating it in-process, a program that replaced process.stdout — sees every byte where
  // it looks for it. The bin (bin.ts), which agents run, keeps the cheaper descriptor writes.
  process.exitCode = await loadAgent({ debug }).module.runAgent(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
  });
} else {
  const [{ runCli }, { VERBS }] = await Promise.all([import('./cli.js'), import('./verbs/index.js')]);
  process.exitCode = await runCli(argv, VERBS);
}
