/**
 * `npm start`: the main job. Records a realistic agent run into a journal, then checks it the way each
 * kind of user would — an auditor verifying a signed receipt offline, a publisher removing secrets, a
 * test author diffing a replay, an agent killed mid-tool and resumed — printing what each stage proves.
 * Runs in seconds, and again.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
// The demo is a user of the package: it imports its public entries by name, as an application would.
import { exportReceipt, FileStore, keygen, verifyReceipt } from 'stepchain';
import { readPublicKeyFile } from 'stepchain/keys';
import { diff, summarize } from 'stepchain/testing';
import { describeLocation } from 'stepchain/verify';
import { agentRun, PLANTED_SECRET } from './agent.js';
import { publishStage } from './publish-stage.js';
import { crashStage } from './crash-stage.js';

const root = join(process.cwd(), '.stepchain-demo');
const rel = (p: string) => relative(process.cwd(), p);
const tty = process.stdout.isTTY && process.env.NO_COLOR === undefined;
const paint = (code: number, s: string) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = (s: string) => paint(1, s);
const green = (s: string) => paint(32, s);
const red = (s: string) => paint(31, s);
const dim = (s: string) => paint(2, s);

let stage = 0;
function heading(title: string, why: string): void {
  stage++;
  console.log(`\n${bold(`${stage}. ${title}`)}\n   ${dim(why)}`);
}
const say = (s: string) => console.log(`   ${s}`);

function count(haystack: Uint8Array, needle: string): number {
  const text = Buffer.from(haystack).toString('latin1');
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) n++;
  return n;
}

async function main(): Promise<void> {
  const started = Date.now();
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  const store = new FileStore(join(root, 'journals'));
  console.log(
    bold("stepchain — a tamper-evident journal of an AI agent's steps, with receipts anyone can verify offline"),
  );
  console.log(dim(`working in ${rel(root)}/`));

  heading(
    'Record an agent run',
    'Each step (prompt, model, tool call, result) is canonicalized (RFC 8785) and chained by SHA-256 to the one before.',
  );
  const journal = await store.create('trip');
  for (const step of agentRun()) {
    const r = await journal.append(step);
    const call = step.tool_call as { name?: string } | null;
    say(`step ${r.seq}  ${r.step_hash.slice(0, 23)}…  ${call?.name ?? '(final answer)'}`);
  }
  const head = (await journal.head())!;
  say(`head ${bold(head.step_hash)}`);
  say(dim('the 100 KB flight search result was stored once as a content-addressed blob; the chain hashes its digest'));

  heading(
    'Verify the journal',
    'Re-hash every line and check every link and blob. Any edit, deletion, insertion or reorder would show here.',
  );
  const report = await journal.verify();
  say(
    report.ok
      ? green(`✔ the chain holds: ${report.steps} steps, head ${report.head}`)
      : red(`✘ ${report.problems.length} problems`),
  );

  heading(
    'Export a signed receipt',
    'A deterministic tarball: canonical manifest, the chain, the blobs; the manifest is signed (Ed25519, DSSE).',
  );
  const keys = await keygen(join(root, 'publisher.key'));
  const receiptPath = join(root, 'receipt.tar.gz');
  const exported = await exportReceipt(journal, { out: receiptPath, sign: { keyFile: keys.keyFile } });
  say(`${rel(receiptPath)}: ${exported.bytes} bytes, ${exported.entries} entries, signed by ${exported.signed_by}`);

  heading(
    'Verify the receipt offline, as an auditor',
    "With nothing but the tarball and the publisher's public key: no journal, no network, no trust in the sender.",
  );
  const publicKey = await readPublicKeyFile(keys.publicKeyFile);
  const verdict = await verifyReceipt(await readFile(receiptPath), { publicKey, expectHead: head.step_hash });
  say(
    verdict.ok
      ? green(`✔ valid: ${verdict.steps} steps, ${verdict.scope} run, head pinned, signature by the pinned key`)
      : red(`✘ invalid: ${verdict.problems.map((p) => p.code).join(', ')}`),
  );
  for (const p of verdict.proves) say(`${green('proves')}          ${p}`);
  for (const p of verdict.does_not_prove) say(`${dim('does not prove')}  ${dim(p)}`);

  heading(
    'Tamper with a copy',
    'Change one character of one tool result inside the receipt: the auditor learns exactly where it broke.',
  );
  const tar = gunzipSync(await readFile(receiptPath));
  const text = tar.toString('latin1');
  const at = text.indexOf('"forecast":"sunny"');
  tar.write('"forecast":"snowy"', at, 'latin1');
  const tamperedPath = join(root, 'tampered.tar');
  await writeFile(tamperedPath, tar);
  const broken = await verifyReceipt(await readFile(tamperedPath), { publicKey });
  say(
    broken.ok
      ? red('✘ the tampering went unnoticed (this is a bug)')
      : green(`✔ detected: ${broken.problems.length} problem${broken.problems.length === 1 ? '' : 's'}`),
  );
  for (const p of broken.problems.slice(0, 3))
    say(`  ${red(p.code)} ${dim(describeLocation(p.location))}: ${p.message}`);

  await publishStage({
    heading,
    say,
    journal,
    root,
    rel,
    green,
    red,
    dim,
    keyFile: keys.keyFile,
    publicKey,
    count,
    secret: PLANTED_SECRET,
    privateReceipt: receiptPath,
  });

  heading(
    'Replay the run and diff it',
    'A test author replays the agent; the weather tool now answers differently. Where exactly did the replay diverge?',
  );
  const replay = await store.create('trip-replay');
  await replay.appendMany(agentRun({ weatherInLyon: 'rain' }));
  const d = await diff(journal, replay);
  say(d.same ? 'same' : bold(summarize(d)));
  say(dim('timestamps and step ids always differ between runs; content is what is compared'));
  await replay.close();
  await journal.close();

  await crashStage({ heading, say, store, green, red, dim, bold });

  console.log(
    `\n${green('done')} in ${((Date.now() - started) / 1000).toFixed(1)} s. Try: node dist/cli/main.js log ${rel(join(root, 'journals', 'trip'))}, or effect list ${rel(join(root, 'journals', 'trip-hotel'))}`,
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (process.env.DEBUG ? e.stack : `error: ${e.message}`) : e);
  process.exitCode = 1;
});
