/**
 * The verbs an agent runs once per step or per tool call, on their own (issue 45, CLI start-up): `append`
 * and `effect`, which main.ts loads when the command is one of them. scripts/build-cli.mjs bundles it apart
 * from the other verbs, as verify-main.ts: bundled with every verb, `append` read the chunks it shares with
 * receipts, signatures and the other stores, cut by which verbs share each module. runCli behaves the same
 * with this table as with the whole one whenever the command is one of these two (the table is read only for
 * the main help and for "did you mean" of an unknown command).
 */
import { descriptorOutputs } from './agent-io.js';
import { runCli } from './cli.js';

export { descriptorOutputs };
import { appendVerb } from './verbs/append.js';
import { effectVerb } from './verbs/run.js';

export function runAgent(argv: readonly string[], io = descriptorOutputs()): Promise<number> {
  // Their output written on the descriptors, without Node's stdio streams (agent-io.ts says why).
  return runCli(argv, [appendVerb, effectVerb], io);
}
