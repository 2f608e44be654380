/**
 * Verbs for publishing redacted receipts (spec/REDACTION.md): `publish` writes a public receipt with the
 * policy's redactions and an anchor to the original run; `disclose` makes a proof from the secrets file
 * that reveals one redacted value, every value of a step, or one original step hash (--hash-only), or
 * (--check) checks such a proof against the public receipt.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { disclose, discloseHash, discloseStep, discloseUnit, publish, verifyDisclosureFiles } from '../../publish.js';
import { readPublicKeyFile } from '../../keys.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Context, type Verb } from '../cli.js';
import { intArg } from '../args.js';
import { withJournal } from './journal.js';
import { countingSource, type Output } from '../output.js';
import { inline } from '../safe-text.js';
import { nonRegularTarget } from '../../receipt/node.js';

export const publishVerb: Verb = {
  name: 'publish',
  summary:
    'publish a redacted receipt that still verifies: against the original head (v2 and v3 journals) or anchored to it (v1)',
  usage: '<journal> --policy policy.json --opt-in -o public.tar.gz [--secrets-out file] [--sign keyfile]',
  description: [
    'Redacts every value the policy selects (paths, tools, seq ranges, built-in secret detectors), replaces it with a',
    'salted commitment, re-chains the steps and writes a receipt whose manifest anchors it to the original journal',
    '(genesis hash, length, policy digest, and salted commitments to every original step hash from the first',
    'redaction on: the original head is not published, since with it anyone could test guesses of redacted values)',
    'and declares every redaction. The journal is only read. Nothing happens without --opt-in. Keep --secrets-out',
    'private (mode 0600): it holds the salts and the original values and hashes, and is what `stepchain disclose`',
    "needs later. Publishing refuses if a string a rule matched (8+ characters for a path rule's strings and numbers)",
    'would still appear in the output, as it is or JSON-escaped up to 5 times (LEAK_DETECTED), or if a step_id, ts or',
    'genesis member matches a detector of the policy: those are never redacted (ENVELOPE_SECRET).',
    '',
    'A stepchain/v2 journal (`stepchain init --format v2`) is published without re-chaining (spec/REDACTION.md',
    '§12): each record keeps its step hash, withheld values stay as salted digests, and the receipt verifies',
    'against the original head (`stepchain verify public.tar --head <head>`). Every withheld slot can later be',
    'opened from the journal itself; --secrets-out then holds only the values redacted inside a field.',
    '',
    'A stepchain/v3 journal is published unit by unit (spec/REDACTION.md §13): every member, element or chunk of a',
    'long string the policy selects stands as a withheld marker at its place, and every value shown is bound to the',
    "original head; a detector's hit inside a long string withholds only the chunks it touches. No secrets file:",
    'every withheld unit opens from the journal (disclose --journal; one inside a part cannot be disclosed yet).',
  ].join('\n'),
  options: {
    policy: { type: 'string', arg: 'file', description: 'the redaction policy (JSON; see spec/REDACTION.md §3)' },
    'opt-in': { type: 'boolean', description: 'confirm that a redacted copy of the journal is to be shared' },
    out: {
      type: 'string',
      short: 'o',
      arg: 'file',
      description: 'the public receipt; gzip when it ends in .tar.gz or .tgz',
    },
    'secrets-out': {
      type: 'string',
      arg: 'file',
      description: 'write the salts and original values here (0600, never overwritten)',
    },
    sign: {
      type: 'string',
      arg: 'keyfile',
      description: 'sign the manifest (and so the anchor) with this Ed25519 key',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain publish runs/today --policy policy.json --opt-in -o public.tar.gz --secrets-out secrets.json --sign alice.key',
      'a signed public receipt, keeping the secrets to disclose later',
    ],
    [
      'stepchain publish runs/today --policy policy.json --opt-in -o public.tar',
      'an unsigned, uncompressed public receipt with no way to disclose later',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values['opt-in'] !== true) {
      throw new UsageError(
        'publishing shares a redacted copy of the journal; pass --opt-in to confirm (nothing was written)',
        'publish',
      );
    }
    if (values.policy === undefined) throw new UsageError('--policy <file> is required', 'publish');
    if (values.out === undefined) throw new UsageError('-o <file> is required', 'publish');
    return withJournal(positionals[0]!, true, async (journal) => {
      const progress = out.progress('publishing: lines read');
      const result = await publish(countingSource(journal, progress), {
        policy: { file: values.policy as string },
        optIn: true,
        out: values.out as string,
        ...(values['secrets-out'] !== undefined ? { secretsOut: values['secrets-out'] as string } : {}),
        ...(values.sign !== undefined ? { sign: { keyFile: values.sign as string } } : {}),
      });
      progress.end();
      if (out.json) out.document('publish', { ok: true, ...result });
      else {
        out.say(
          `wrote ${inline(result.out)} (${result.bytes} bytes${result.compressed ? ', gzip' : ''}): ${result.range.to + 1} step${result.range.to === 0 ? '' : 's'}, ${result.redactions} redaction${result.redactions === 1 ? '' : 's'}`,
        );
        const k = result.redacted_from;
        if (result.publication === 'original-head')
          out.say(
            `  published against the original head ${result.original_head.step_hash} (seq ${result.original_head.seq}): verify it with --head; withheld values are salted digests only`,
          );
        // Issue 32: the publisher learns what readers will be told about views.
        if (result.bound)
          out.say(
            `  every value shown is bound to the head; ${result.redactions === 1 ? 'the withheld unit stands' : 'withheld units stand'} as markers at ${result.redactions === 1 ? 'its place' : 'their places'}, each declared`,
          );
        else if (result.views > 0)
          out.say(
            out.style(
              'yellow',
              `  ${result.views} field${result.views === 1 ? ' is' : 's are'} published as redacted views: verifiers show their text as NOT bound to the head (only the digest is); a path rule that withholds the whole field avoids that`,
            ),
          );
        else
          out.say(
            k > result.original_head.seq
              ? `  nothing redacted: the public head is the original head ${result.original_head.step_hash}`
              : `  original head ${result.original_head.step_hash} (seq ${result.original_head.seq}): in the public receipt only as a salted commitment${k > 0 ? `; ${k === 1 ? 'step 0' : `steps 0..${k - 1}`} published unchanged` : ''}`,
          );
        out.say(`  policy ${result.policy_digest}`);
        out.say(
          `  manifest ${result.manifest_digest}; ${result.signed_by ? `signed by ${result.signed_by}` : 'unsigned'}`,
        );
        if (result.secrets_out)
          out.say(
            `  secrets in ${result.secrets_out} (mode 0600): keep it private; it can disclose every redacted value`,
          );
        else if (result.bound)
          out.say(
            "  no secrets file: every withheld unit opens from the journal (its salt derives from its record's seed)",
          );
        else if (result.publication === 'original-head')
          out.say(
            '  no --secrets-out: withheld fields open from the journal (openSlot); values redacted inside a field cannot be disclosed',
          );
        else
          out.say(
            out.style('yellow', '  no --secrets-out: the redacted values can never be disclosed from this receipt'),
          );
      }
      return EXIT_OK;
    });
  },
};

export const discloseVerb: Verb = {
  name: 'disclose',
  summary: 'reveal one redacted value of a published receipt with a proof anyone can check, or check a proof',
  usage:
    '<public receipt> (--secrets file (--seq N [--path /pointer] | --hash-only [--seq N]) [-o proof.json] | --journal dir --seq N --path /pointer [--chunk K] [-o proof.json] | --check proof.json) [--pubkey file]',
  description: [
    'With --secrets, --seq and --path: makes a disclosure proof (the value and its salt) for the marker at that step and',
    'path, checks it against the receipt, and prints it (or writes it with -o, mode 0600; never overwriting).',
    "Without --path: a whole-step proof that discloses every redaction of step N and opens the anchor's commitments to",
    "the original hashes of steps N-1 and N, so anyone can re-derive the step's original hash (spec/REDACTION.md §8.4).",
    'Whoever receives it can also test guesses of values still redacted in earlier steps against those hashes.',
    'With --hash-only (stepchain/v1 publications; a v2 one has no anchor, its head is the original head: pin it with',
    "`stepchain verify --head`): opens only the anchor's commitment to the original hash of step N (default: the original head),",
    'disclosing no value, for someone who already holds that hash (§8.5). It lets its holder test guesses of the values',
    'redacted up to step N, as holding the original head does.',
    'With --journal, --seq and --path (a stepchain/v3 publication, which has no secrets file): opens the unit withheld there',
    "(with --chunk K, the K-th chunk of the string there) from the journal it was published from — the unit's salts derive",
    "from its record's seed — checks the opening against the receipt, and prints or writes it (-o, mode 0600).",
    'With --check: verifies a proof offline — the receipt verifies as a published receipt, a marker stands at the',
    "proof's location with its rule and commitment, and SHA-256 over the salt and value gives that commitment (or the",
    "step hash opens the anchor's commitment). Exit 0 when the proof holds, 1 when it does not.",
  ].join('\n'),
  options: {
    secrets: { type: 'string', arg: 'file', description: 'the secrets file written by publish --secrets-out' },
    journal: {
      type: 'string',
      arg: 'dir',
      description: 'a stepchain/v3 publication: the journal it was published from (its units open from their seeds)',
    },
    chunk: { type: 'string', arg: 'K', description: 'with --journal: the K-th chunk (from 0) of the string at --path' },
    seq: { type: 'string', arg: 'N', description: 'the step of the redacted value' },
    path: {
      type: 'string',
      arg: '/pointer',
      description: 'its JSON Pointer in the step, e.g. /tool_call/arguments/api_key (omit: the whole step)',
    },
    out: { type: 'string', short: 'o', arg: 'file', description: 'write the proof here instead of printing it' },
    'hash-only': {
      type: 'boolean',
      description: "open the anchor's commitment to step N's original hash (default: the head); no value",
    },
    check: {
      type: 'string',
      arg: 'proof.json',
      description: 'check this proof against the receipt instead of making one',
    },
    pubkey: {
      type: 'string',
      arg: 'file',
      description:
        'with --check: the receipt must be signed by this public key (keyfile.pub, base64 or 32 raw bytes; any other file is an error, exit 2)',
    },
  },
  args: { min: 1, max: 1, names: ['receipt'] },
  examples: [
    [
      'stepchain disclose public.tar.gz --secrets secrets.json --seq 4 --path /tool_call/arguments/api_key -o proof.json',
      'reveal one value to an auditor',
    ],
    [
      'stepchain disclose public.tar.gz --check proof.json --pubkey alice.key.pub',
      'the auditor checks the proof offline',
    ],
    [
      'stepchain disclose public.tar.gz --secrets secrets.json --seq 4 -o step4.json',
      "disclose all of step 4, tying it to the anchor's commitment",
    ],
    [
      'stepchain disclose public.tar.gz --secrets secrets.json --hash-only -o head.json',
      'show the original head to an auditor who holds it already',
    ],
  ],
  async run({ out, values, positionals }) {
    const receipt = positionals[0]!;
    if (values.check !== undefined) return checkDisclosure(out, receipt, values);
    if (values.pubkey !== undefined) throw new UsageError('--pubkey applies to --check', 'disclose');
    if (values['hash-only'] === true) return discloseHashOnly(out, receipt, values);
    if (values.journal !== undefined) return discloseFromJournal(out, receipt, values);
    if (values.chunk !== undefined) throw new UsageError('--chunk applies to --journal', 'disclose');
    if (values.secrets === undefined || values.seq === undefined) {
      throw new UsageError(
        'give --secrets and --seq (and --path for one value) to make a proof, or --check proof.json to check one',
        'disclose',
      );
    }
    if (values.path === undefined) {
      const { proof: step } = await discloseStep(receipt, {
        secrets: values.secrets as string,
        seq: intArg(values.seq, '--seq', 'disclose'),
        ...(values.out !== undefined ? { out: values.out as string } : {}),
      });
      if (out.json)
        out.document('disclose', { ok: true, proof: step, ...(values.out !== undefined ? { out: values.out } : {}) });
      else if (values.out !== undefined)
        out.say(
          `wrote ${inline(values.out as string)}: a whole-step proof of step ${step.seq} (${step.values.length} value${step.values.length === 1 ? '' : 's'}); it reveals them, and the original hash of the step before, to whoever receives it`,
        );
      else out.print(JSON.stringify(step));
      return EXIT_OK;
    }
    const { proof } = await disclose(receipt, {
      secrets: values.secrets as string,
      seq: intArg(values.seq, '--seq', 'disclose'),
      path: values.path as string,
      ...(values.out !== undefined ? { out: values.out as string } : {}),
    });
    if (out.json)
      out.document('disclose', { ok: true, proof, ...(values.out !== undefined ? { out: values.out } : {}) });
    else if (values.out !== undefined)
      out.say(
        `wrote ${inline(values.out as string)}: a proof of the value at seq ${proof.seq}, ${inline(proof.path)} (rule ${inline(proof.rule)}); it reveals that value to whoever receives it`,
      );
    else out.print(JSON.stringify(proof));
    return EXIT_OK;
  },
};

/** disclose --check: a proof checked offline against the public receipt (and the pinned key, if any). */
async function checkDisclosure(out: Output, receipt: string, values: Context['values']): Promise<number> {
  if (
    values.secrets !== undefined ||
    values.seq !== undefined ||
    values.path !== undefined ||
    values.out !== undefined ||
    values['hash-only'] !== undefined ||
    values.journal !== undefined ||
    values.chunk !== undefined
  ) {
    throw new UsageError('--check takes only the receipt, the proof and optionally --pubkey', 'disclose');
  }
  // An unusable key file is a usage error (exit 2), never "no key pinned".
  const publicKey = values.pubkey === undefined ? undefined : await readPublicKeyFile(values.pubkey as string);
  // A FIFO or device is refused before it is opened: reading a FIFO with no writer waits for ever.
  for (const [what, file] of [
    ['receipt', receipt],
    ['proof', values.check as string],
  ] as const) {
    const kind = (await nonRegularTarget(file)) ?? (existsSync(file) ? null : 'absent');
    if (kind === 'absent') throw new UsageError(`cannot read ${what} ${file}: there is no such file`, 'disclose');
    if (kind !== null)
      throw new UsageError(`cannot read ${what} ${file}: it is ${kind}, not a regular file`, 'disclose');
  }
  const report = await verifyDisclosureFiles(
    receipt,
    values.check as string,
    publicKey !== undefined ? { publicKey } : {},
  );
  if (out.json) {
    const { receipt: r, ...rest } = report;
    out.document('disclose', {
      ...rest,
      receipt: resolve(receipt),
      receipt_ok: r?.ok ?? null,
      receipt_problems: r?.problems ?? [],
    });
  } else if (report.ok) {
    if ('record' in report)
      out.say(
        `${out.style('green', '✔ whole-step disclosure holds')}: step ${report.seq} of the original run is\n${inline(JSON.stringify(report.record))}`,
      );
    else if ('step_hash' in report)
      out.say(
        `${out.style('green', '✔ hash disclosure holds')}: the anchor commits to ${report.step_hash} as the original hash of step ${report.seq}${report.head ? ' (the original head)' : ''}`,
      );
    else
      out.say(
        `${out.style('green', '✔ disclosure holds')}: seq ${report.seq}, ${inline(String(report.path))}${report.chunk === undefined ? '' : ` chunk ${report.chunk}`}${report.rule === null ? '' : ` (rule ${inline(report.rule)})`} = ${inline(JSON.stringify(report.value))}`,
      );
    for (const p of report.proves) out.say(`  ${out.style('green', 'proves')} ${inline(p)}`);
  } else {
    out.say(
      `${out.style(['red', 'bold'], '✘ disclosure does NOT hold')}${report.seq !== null ? ` for seq ${report.seq}${'path' in report ? `, ${inline(String(report.path))}` : ''}` : ''}`,
    );
    for (const p of report.problems) out.say(`  ${out.style('red', p.code)} ${inline(p.message)}`);
  }
  return report.ok ? EXIT_OK : EXIT_FAILED;
}

/** disclose --hash-only: the anchor's commitment to one original step hash opened, no value disclosed. */
async function discloseHashOnly(out: Output, receipt: string, values: Context['values']): Promise<number> {
  if (values.secrets === undefined)
    throw new UsageError('--hash-only needs --secrets (and optionally --seq; default: the original head)', 'disclose');
  if (values.path !== undefined) throw new UsageError('--hash-only discloses no value: leave out --path', 'disclose');
  const { proof: opening } = await discloseHash(receipt, {
    secrets: values.secrets as string,
    ...(values.seq !== undefined ? { seq: intArg(values.seq, '--seq', 'disclose') } : {}),
    ...(values.out !== undefined ? { out: values.out as string } : {}),
  });
  if (out.json)
    out.document('disclose', {
      ok: true,
      proof: opening,
      ...(values.out !== undefined ? { out: values.out } : {}),
    });
  else if (values.out !== undefined)
    out.say(
      `wrote ${inline(values.out as string)}: the original hash of step ${opening.seq} with its salt; its holder can test guesses of values redacted up to that step`,
    );
  else out.print(JSON.stringify(opening));
  return EXIT_OK;
}

/** disclose --journal: a withheld unit of a v3 publication opened from the journal it was published from. */
async function discloseFromJournal(out: Output, receipt: string, values: Context['values']): Promise<number> {
  if (values.secrets !== undefined) throw new UsageError('--journal and --secrets: give one', 'disclose');
  if (values.seq === undefined || values.path === undefined)
    throw new UsageError('--journal needs --seq and --path (the withheld unit to open)', 'disclose');
  const chunk = values.chunk === undefined ? undefined : intArg(values.chunk, '--chunk', 'disclose');
  return withJournal(values.journal as string, true, async (journal) => {
    const { proof } = await discloseUnit(receipt, {
      journal,
      seq: intArg(values.seq, '--seq', 'disclose'),
      path: values.path as string,
      ...(chunk === undefined ? {} : { chunk }),
      ...(values.out !== undefined ? { out: values.out as string } : {}),
    });
    if (out.json)
      out.document('disclose', { ok: true, proof, ...(values.out !== undefined ? { out: values.out } : {}) });
    else if (values.out !== undefined)
      out.say(
        `wrote ${inline(values.out as string)}: the opening of the unit withheld at seq ${proof.seq}, ${inline(proof.path)}${chunk === undefined ? '' : ` chunk ${chunk}`}; it reveals that value to whoever receives it`,
      );
    else out.print(JSON.stringify(proof));
    return EXIT_OK;
  });
}
