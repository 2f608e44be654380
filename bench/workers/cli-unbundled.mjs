// The `stepchain` executable as it was before scripts/build-cli.mjs bundled it: the same runCli and verb
// table from tsc's per-file dist/cli, one ES module per source file. bench/speed.mjs times it beside the
// bundled dist/cli/main.js, so the start-up rows show before and after in one run.
import { runCli } from '../../dist/cli/cli.js';
import { VERBS } from '../../dist/cli/verbs/index.js';

process.exitCode = await runCli(process.argv.slice(2), VERBS);
