// The whole-process limit: a bare Node process that reads, parses and hashes a journal's lines (lib/limit.mjs)
// and prints the count — what `stepchain verify` of the same journal is timed against, start-up included.
import { bucketFiles, limitPass } from '../lib/limit.mjs';

process.stdout.write(`${await limitPass(bucketFiles(process.argv[2]))}\n`);
