#!/usr/bin/env node
/** The `stepchain` executable. */
import { runCli } from './cli.js';
import { VERBS } from './verbs/index.js';

process.exitCode = await runCli(process.argv.slice(2), VERBS);
