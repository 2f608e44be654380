/** Verbs for receipts: verify (journal or receipt), export, keygen. */
import { resolve } from 'node:path';
import { exportReceipt, keygen, readPublicKeyFile, verifyReceiptFile, type ReceiptReport } from '../../receipt/index.js';
import { publishedReceiptHooks } from '../../redact/index.js';
import { intArg } from '../args.js';
import { readFile } from 'node:fs/promises';
import type { ChainReport } from '../../chain/report.js';
import type { Json } from '../../canonical/json.js';
import type { CheckpointPolicy, TreeHead } from '../../proofs/index.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Context, type Verb } from '../cli.js';
import { journalId, locate, locationKind, withJournal } from '../location.js';
import { POLICY_OPTIONS, pinnedCheckpoint, policyFrom, treeJournal } from './proofs.js';
import { countingSource } from '../output.js';
import { printReport } from './journal.js';


const HEAD_RE = /^sha256:[0-9a-f]{64}$/;

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'verify a journal or a receipt offline: the verdict, then every problem with its location',
  usage: '<journal | receipt.tar | receipt.tar.gz> [--head sha256:…] [--pubkey file] [--checkpoint FILE] [--log-key VKEY …]  |  --proof FILE --log-key VKEY',
  description: [
    'A receipt proves integrity relative to its head: pin the head you obtained independently (--head) or the signer\'s',
    'public key (--pubkey), or the check only shows the receipt is self-consistent. A pin that cannot be used (an empty',
    'or malformed key file, a malformed head) is an error (exit 2), never "no pin". A published (redacted) receipt is',
    'verified with its anchor and redaction declarations (spec/REDACTION.md §7).',
    'Transparency proofs (spec/PROOFS.md): --checkpoint pins an earlier checkpoint that the journal or receipt must extend',
    '(SIZE_DECREASED, INCONSISTENT, ORIGIN_MISMATCH, CONSISTENCY_UNPROVEN: exit 1); --log-key, --witness and --quorum are',
    'the policy a carried or given checkpoint must satisfy ("the log key and k of these witnesses"); --proof checks a proof file.',
  ].join('\n'),
  options: {
    head: { type: 'string', arg: 'sha256:…', description: 'the head you expect (obtained out of band); a different head fails' },
    checkpoint: { type: 'string', arg: 'FILE', description: 'an earlier signed checkpoint: what is verified must extend it (a truncated or rewritten journal fails, exit 1)' },
    proof: { type: 'string', arg: 'FILE', description: 'a proof file from `stepchain prove`: alone, check it; with a partial receipt and --checkpoint, the consistency proof between them' },
    ...POLICY_OPTIONS,
    pubkey: { type: 'string', arg: 'file', description: 'receipts: the signer\'s public key file — keyfile.pub from keygen, the base64 of the 32 key bytes, or the 32 raw bytes; the receipt must be signed by it (any other file is an error, exit 2)' },
  },
  args: { min: 0, max: 1, names: ['path'] },
  examples: [
    ['stepchain verify receipt.tar.gz --pubkey alice.key.pub', 'an auditor checks a signed receipt'],
    ['stepchain verify runs/today --checkpoint yesterday.checkpoint --log-key "$LOG_VKEY"', 'the journal still extends yesterday\'s checkpoint'],
    ['stepchain verify --proof steps.proof --log-key "$LOG_VKEY" --witness "$W1" --witness "$W2" --quorum 1', 'check a proof file: the log key and 1 of 2 witnesses'],
    ['stepchain verify runs/today --head sha256:3b4c…', 'check a journal against a head published earlier'],
  ],
  async run({ out, values, positionals }) {
    const policy = await policyFrom(values, 'verify');
    if (positionals.length === 0) {
      if (values.proof === undefined) throw new UsageError('missing <path> (or --proof FILE to check a proof file)', 'verify');
      return verifyProofFile(out, values, policy);
    }
    const path = positionals[0]!;
    const expectHead = values.head as string | undefined;
    if (expectHead !== undefined && !HEAD_RE.test(expectHead)) throw new UsageError('--head must be "sha256:" followed by 64 lowercase hex digits', 'verify');
    // A pinned checkpoint that cannot be used is an error (exit 2), never "not pinned".
    const trusted = values.checkpoint === undefined ? undefined : await pinnedCheckpoint(values.checkpoint as string, policy, 'verify');
    const kind = await locationKind(path);
    if (kind === 'journal') {
      if (values.pubkey !== undefined) throw new UsageError('--pubkey applies to receipts; a journal is not signed', 'verify');
      if (values.proof !== undefined) throw new UsageError('--proof with a journal: a journal holds every step, so --checkpoint alone proves it extends the checkpoint', 'verify');
      // Verified without opening it, so metadata that cannot be opened is a problem in the report.
      const at = locate(path);
      let report: ChainReport<string>;
      try {
        const progress = out.progress('verifying');
        report = await at.store.verify(journalId(at), { ...(expectHead !== undefined ? { expectHead } : {}), onProgress: () => progress.tick() });
        progress.end();
      } finally {
        await at.close();
      }
      if (trusted && report.ok) await checkJournalExtends(path, trusted, report);
      if (out.json) out.document('verify', { ok: report.ok, kind, path: at.display, report });
      else printReport(out, `journal ${at.kind === 'postgres' ? at.display : path}`, report, report.ok && trusted ? [`  ${out.style('green', 'proves')}   it extends the checkpoint of size ${trusted.size} (${values.checkpoint as string})`] : []);
      return report.ok ? EXIT_OK : EXIT_FAILED;
    }
    // An unusable key file is a usage error (exit 2), never "no key pinned".
    const publicKey = values.pubkey === undefined ? undefined : await readPublicKeyFile(values.pubkey as string);
    // A published (redacted) receipt carries anchor and redactions members; the hooks check them (their
    // finish adds the publication checks), and leave an ordinary receipt's report unchanged. The proofs
    // hooks check a carried checkpoint and proof, and the pinned earlier checkpoint.
    const { receiptProofHooks } = await import('../../proofs/receipt.js');
    const consistency = values.proof === undefined ? undefined : await readFile(values.proof as string).catch((e: Error) => {
      throw new UsageError(`cannot read --proof ${values.proof as string}: ${e.message}`, 'verify');
    });
    const proofHooks = receiptProofHooks({ ...(policy ? { policy } : {}), ...(trusted ? { trusted } : {}), ...(consistency ? { consistency: new Uint8Array(consistency) } : {}) });
    const published = publishedReceiptHooks().options;
    const report = proofHooks.finish(await verifyReceiptFile(path, {
      ...(expectHead !== undefined ? { expectHead } : {}), ...(publicKey !== undefined ? { publicKey } : {}), ...published,
      extensions: { ...published.extensions, ...proofHooks.extensions },
      onLine: (line) => {
        published.onLine?.(line);
        proofHooks.onLine(line);
      },
    }) as ReceiptReport<string>);
    if (out.json) {
      out.document('verify', { ok: report.ok, kind, path: resolve(path), report });
    } else {
      const extra: string[] = [];
      if (report.ok) {
        extra.push(`  scope: ${report.scope}${report.range ? ` (steps ${report.range.from}..${report.range.to})` : ''}; signed by: ${report.signed_by ?? 'nobody (unsigned)'}`);
        for (const p of report.proves) extra.push(`  ${out.style('green', 'proves')}   ${p}`);
        for (const p of report.does_not_prove) extra.push(`  ${out.style('yellow', 'does not prove')} ${p}`);
        if (expectHead === undefined && publicKey === undefined && !report.tlog?.pinned) extra.push(out.style('yellow', '  hint: pin the head (--head), the signer\'s key (--pubkey) or the log key (--log-key); otherwise anyone could have made this receipt'));
      }
      printReport(out, `receipt ${path}`, report, extra);
    }
    return report.ok ? EXIT_OK : EXIT_FAILED;
  },
};

/** A journal against a pinned checkpoint: its origin names this journal, and its verified lines extend the tree. */
async function checkJournalExtends(path: string, trusted: TreeHead, report: ChainReport<string>): Promise<void> {
  const { leavesExtend, parseJournalOrigin } = await import('../../proofs/index.js');
  const { genesisHash } = await import('../../record/formats.js');
  await withJournal(path, true, async (journal) => {
    const origin = parseJournalOrigin(trusted.origin);
    let verdict: { ok: true } | { ok: false; problem: { code: string; message: string } };
    if (origin === null || origin.journalId !== journal.id || origin.genesisHash !== genesisHash(journal.genesis)) {
      verdict = { ok: false, problem: { code: 'ORIGIN_MISMATCH', message: `ORIGIN_MISMATCH: the checkpoint is of "${trusted.origin.slice(0, 300)}", not of this journal (${journal.id}, genesis ${genesisHash(journal.genesis)})` } };
    } else {
      verdict = await leavesExtend((async function* () {
        for await (const l of journal.lines()) yield (JSON.parse(l.text) as { step_hash: string }).step_hash;
      })(), trusted);
    }
    if (!verdict.ok) {
      report.problems.push({ code: verdict.problem.code, message: verdict.problem.message, location: {} });
      report.ok = false;
    }
  });
}

/** `verify --proof FILE`: a proof file against the policy (and a pinned earlier checkpoint for a consistency proof). */
async function verifyProofFile(out: Context['out'], values: Context['values'], policy: CheckpointPolicy | null): Promise<number> {
  if (policy === null) throw new UsageError('--proof needs --log-key: a proof file is checked against the log key you trust', 'verify');
  const { verifyProofDocument } = await import('../../proofs/index.js');
  const file = values.proof as string;
  const trusted = values.checkpoint === undefined ? undefined : await pinnedCheckpoint(values.checkpoint as string, policy, 'verify');
  const bytes = await readFile(file).catch((e: Error) => {
    throw new UsageError(`cannot read --proof ${file}: ${e.message}`, 'verify');
  });
  const report = verifyProofDocument(new Uint8Array(bytes), policy, trusted ? { trusted } : {});
  if (trusted && report.ok && report.type === 'inclusion') {
    report.problems.push({ code: 'CONSISTENCY_UNPROVEN', message: 'CONSISTENCY_UNPROVEN: --checkpoint pins an earlier checkpoint; an inclusion proof cannot show its checkpoint extends it (check a consistency proof)' });
    report.ok = false;
  }
  const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
  const summary = {
    ok: report.ok, type: report.type, problems: report.problems, cosignatures: report.cosignatures,
    checkpoint: report.checkpoint ? { origin: report.checkpoint.origin, size: report.checkpoint.size, root: b64(report.checkpoint.root) } : null,
    old_checkpoint: report.old_checkpoint ? { origin: report.old_checkpoint.origin, size: report.old_checkpoint.size, root: b64(report.old_checkpoint.root) } : null,
    from: report.from, to: report.to, steps: report.steps,
  };
  if (out.json) out.document('verify', { ok: report.ok, kind: 'proof', path: resolve(file), report: summary });
  else if (report.ok) {
    const cp = report.checkpoint!;
    out.say(`${out.style('green', '✔ valid')} proof ${file}: ${report.type === 'inclusion' ? `steps ${report.from}..${report.to} are in` : `size ${report.old_checkpoint!.size} is extended by`} ${cp.origin} at size ${cp.size}${report.cosignatures.length ? `, cosigned by ${report.cosignatures.map((c) => c.name).join(', ')}` : ''}`);
  } else {
    out.say(`${out.style(['red', 'bold'], '✘ INVALID')} proof ${file}: ${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`);
    for (const p of report.problems) out.say(`  ${out.style('red', p.code)}\n      ${p.message}`);
  }
  return report.ok ? EXIT_OK : EXIT_FAILED;
}

export const exportVerb: Verb = {
  name: 'export',
  summary: 'write a receipt: a deterministic tarball of the chain, its blobs and a manifest, optionally signed',
  usage: '<journal> -o receipt.tar.gz [--from N] [--to M] [--sign keyfile]',
  options: {
    out: { type: 'string', short: 'o', arg: 'file', description: 'output file; gzip-compressed when it ends in .tar.gz or .tgz' },
    from: { type: 'string', arg: 'N', description: 'first seq (a partial receipt when > 0)' },
    to: { type: 'string', arg: 'M', description: 'last seq (default: the head)' },
    sign: { type: 'string', arg: 'keyfile', description: 'sign the manifest with this Ed25519 private key (see keygen)' },
    checkpoint: { type: 'string', arg: 'FILE', description: 'carry this signed checkpoint of the journal and the inclusion proof of the range (a partial receipt then verifies against it without its prefix); --to defaults to its last step' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain export runs/today -o receipt.tar.gz --sign alice.key', 'a signed receipt of the whole run'],
    ['stepchain export runs/today -o steps-10-20.tar --from 10 --to 20', 'a partial, uncompressed receipt'],
    ['stepchain export runs/today -o steps-500-520.tar --from 500 --to 520 --checkpoint today.checkpoint', 'a partial receipt that proves its steps are in a signed checkpoint'],
  ],
  async run({ out, values, positionals }) {
    if (values.out === undefined) throw new UsageError('-o <file> is required', 'export');
    return withJournal(positionals[0]!, true, async (journal) => {
      const from = values.from !== undefined ? intArg(values.from, '--from', 'export') : 0;
      let to = values.to !== undefined ? intArg(values.to, '--to', 'export') : undefined;
      let extra: Record<string, Json> | undefined;
      if (values.checkpoint !== undefined) {
        const cp = await pinnedCheckpoint(values.checkpoint as string, null, 'export');
        to ??= cp.size - 1;
        const { proveReceiptRange } = await import('../../proofs/receipt.js');
        const note = await readFile(values.checkpoint as string, 'utf8');
        const view = await treeJournal(journal, 'export').treeView();
        extra = { proof: (await proveReceiptRange(view.reader, note, from, to)) as unknown as Json };
      }
      const progress = out.progress('exporting: lines read');
      const result = await exportReceipt(countingSource(journal, progress), {
        out: values.out as string,
        from,
        ...(to !== undefined ? { to } : {}),
        ...(extra !== undefined ? { extra } : {}),
        ...(values.sign !== undefined ? { sign: { keyFile: values.sign as string } } : {}),
      });
      progress.end();
      if (out.json) out.document('export', { ok: true, ...result });
      else {
        out.say(`wrote ${result.out} (${result.bytes} bytes${result.compressed ? ', gzip' : ''}): steps ${result.range.from}..${result.range.to}, head ${result.head.step_hash}`);
        out.say(`  manifest ${result.manifest_digest}; ${result.signed_by ? `signed by ${result.signed_by}` : 'unsigned'}`);
      }
      return EXIT_OK;
    });
  },
};

export const keygenVerb: Verb = {
  name: 'keygen',
  summary: 'make an Ed25519 key pair for signing receipts (keyfile mode 0600, keyfile.pub beside it)',
  usage: '-o keyfile',
  options: { out: { type: 'string', short: 'o', arg: 'keyfile', description: 'where to write the private key' } },
  args: { min: 0, max: 0, names: [] },
  examples: [['stepchain keygen -o alice.key', 'writes alice.key (private, 0600) and alice.key.pub']],
  async run({ out, values }) {
    if (values.out === undefined) throw new UsageError('-o <keyfile> is required', 'keygen');
    const result = await keygen(values.out as string);
    if (out.json) out.document('keygen', { ok: true, key_file: result.keyFile, public_key_file: result.publicKeyFile, key_id: result.keyId });
    else out.say(`wrote ${result.keyFile} (private, mode 0600) and ${result.publicKeyFile}\nkey id ${result.keyId}`);
    return EXIT_OK;
  },
};
