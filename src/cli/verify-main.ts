/**
 * `stepchain verify` on its own (issue 25, CLI start-up): the shell with the one verb, which main.ts loads
 * when the command is `verify`. scripts/build-cli.mjs bundles it apart from the other verbs, so the verb an
 * auditor times reads its code from a few files of its own instead of the chunks it would share with every
 * other verb. runCli behaves the same with this table as with the whole one whenever the command is
 * `verify`: the table is read only for the main help and for "did you mean" of an unknown command.
 */
import { runCli } from './cli.js';
import { verifyVerb } from './verbs/verify.js';

export function runVerify(argv: readonly string[]): Promise<number> {
  return runCli(argv, [verifyVerb]);
}
