#!/usr/bin/env node
/**
 * The `stepchain` executable. `npm run build` bundles it (scripts/build-cli.mjs); with --debug, source maps
 * are turned on first, so the stack traces it prints name src/ files and lines (a plain start does not pay
 * for reading the maps).
 */
if (process.argv.includes('--debug')) process.setSourceMapsEnabled(true);
const [{ runCli }, { VERBS }] = await Promise.all([import('./cli.js'), import('./verbs/index.js')]);

process.exitCode = await runCli(process.argv.slice(2), VERBS);
