/** The demo's publishing stage: a redacted public receipt that still verifies and is bound to the run. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { verifyReceipt, type Journal } from 'stepchain';
import { disclose, discloseHash, publish } from 'stepchain/publish';
import { DEMO_POLICY } from './agent.js';

export interface PublishStageContext {
  heading(title: string, why: string): void;
  say(text: string): void;
  journal: Journal;
  root: string;
  rel(path: string): string;
  green(s: string): string;
  red(s: string): string;
  dim(s: string): string;
  keyFile: string;
  publicKey: Uint8Array;
  count(haystack: Uint8Array, needle: string): number;
  secret: string;
  privateReceipt: string;
}

export async function publishStage(ctx: PublishStageContext): Promise<void> {
  const { heading, say, green, red, dim } = ctx;
  heading(
    'Publish a redacted receipt',
    'Secrets are replaced by salted commitments, the chain is re-anchored so it still verifies, and the manifest binds it to the original run with salted commitments to its step hashes, so nobody can test guesses of a redacted value.',
  );
  const out = join(ctx.root, 'public.tar.gz');
  const secretsOut = join(ctx.root, 'public.secrets.json');
  const result = await publish(ctx.journal, {
    policy: DEMO_POLICY,
    optIn: true,
    out,
    sign: { keyFile: ctx.keyFile },
    secretsOut,
  });
  say(
    `${ctx.rel(out)}: ${result.redactions} values redacted by policy ${result.policy_digest.slice(0, 23)}…, salts kept privately in ${ctx.rel(secretsOut)} (mode 0600)`,
  );
  const report = await verifyReceipt(await readFile(out), { publicKey: ctx.publicKey });
  say(
    report.ok
      ? green(
          `✔ the public receipt verifies: ${report.steps} steps, every redaction declared and every declaration present`,
        )
      : red(`✘ ${report.problems.map((p) => p.code).join(', ')}`),
  );
  const publicBytes = gunzipSync(await readFile(out));
  const headShown = ctx.count(publicBytes, result.original_head.step_hash);
  say(
    `the original head ${result.original_head.step_hash.slice(0, 23)}… appears ${headShown === 0 ? green('0 times') : red(`${headShown} times`)} in the public receipt: with it, anyone could rebuild a redacted step from guesses and compare hashes`,
  );
  const { report: opened } = await discloseHash(out, { secrets: secretsOut });
  say(
    `for an auditor who already holds the original head, the publisher opens its commitment: ${opened.ok && opened.step_hash === result.original_head.step_hash ? green('✔ the anchor commits to that head') : red('✘ the opening fails')}`,
  );

  const inPrivate = ctx.count(gunzipSync(await readFile(ctx.privateReceipt)), ctx.secret);
  const inPublic = ctx.count(publicBytes, ctx.secret);
  say(
    `the planted API key appears ${inPrivate} times in the private receipt and ${inPublic === 0 ? green('0 times') : red(`${inPublic} times`)} in the public one (raw, decompressed bytes)`,
  );

  const { proof, report: check } = await disclose(out, {
    secrets: secretsOut,
    seq: 2,
    path: '/tool_call/arguments/api_key',
  });
  say(
    `selective disclosure of step 2 /tool_call/arguments/api_key: ${check.ok ? green('✔ proof verifies against the public receipt') : red('✘ proof rejected')} ${dim(`(rule ${proof.rule})`)}`,
  );
}
