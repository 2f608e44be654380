// Runs several invocations of the built CLI in this one Node process, one after another (cli-call.mjs): one
// start of Node and one load of the verbs, instead of one per invocation. See test/helpers/cli-batch.ts.
//
//   node cli-batch-runner.mjs <calls.json> <results.json>
//   calls:   [{ args: string[], cwd: string, input?: string, snapshot?: string }]
//   results: [{ rc, out, err, all, snapshot? }] (out, err, all as latin1 text: one char per byte; `all` holds
//            both streams in the order written; `snapshot` = snapshotOf(the named directory) after the call)
import { readFileSync, writeFileSync } from 'node:fs';
import { runCall } from './cli-call.mjs';

const [callsFile, resultsFile] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, 'utf8'));
const results = [];
for (const call of calls) results.push(await runCall(call));
writeFileSync(resultsFile, JSON.stringify(results));
// A verb may leave a worker pool or a timer behind; the results are written, so end here.
process.exit(0);
