// The `stepchain` executable as it was before `stepchain verify` got a bundle of its own (dist/cli/verify/,
// scripts/build-cli.mjs): the main build's shell and verb table, from its chunks in dist/cli/chunks/, where
// the verify verb shares its chunks with every other verb. bench/speed.mjs times it beside dist/cli/main.js,
// so the start-up rows show before and after in one run. (Their names carry a content hash: looked up here.)
import { readdirSync } from 'node:fs';

const dir = new URL('../../dist/cli/chunks/', import.meta.url);
const names = readdirSync(dir);
const chunk = (prefix) => {
  const name = names.find((n) => n.startsWith(prefix) && n.endsWith('.js'));
  if (name === undefined) throw new Error(`no ${prefix}*.js in dist/cli/chunks/: run npm run build`);
  return new URL(name, dir).href;
};
const [{ runCli }, { VERBS }] = await Promise.all([import(chunk('cli-')), import(chunk('verbs-'))]);

process.exitCode = await runCli(process.argv.slice(2), VERBS);
