/**
 * The `stepchain` executable as package.json's `bin` names it (dist/cli/bin.cjs, built by
 * scripts/build-cli.mjs): a CommonJS script, because an ES module entry makes Node load its ES module loader
 * first (about 5 ms of CPU, 8% of `node -e 0`, measured: an empty .mjs against an empty .cjs), which the
 * agent verbs' bundle — a CommonJS script from V8's code cache (agent-load.ts) — never needs. `append` and
 * `effect`, which an agent runs once per step or per tool call (issue 45), start from here; every other
 * command, and these two with --debug, go on to the ES module entry, main.ts, as `node dist/cli/main.js`.
 */
import { loadAgent } from './agent-load.js';

const argv = process.argv.slice(2);
// The command as runCli finds it: the first argument that is not an option (main.ts decides the same way).
const command = argv.find((a) => !a.startsWith('-'));
if ((command === 'append' || command === 'effect') && !argv.includes('--debug')) {
  void loadAgent()
    .module.runAgent(argv)
    .then((code) => {
      process.exitCode = code;
    });
} else {
  void import('./main.js');
}
