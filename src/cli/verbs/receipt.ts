/** Verbs for receipts: verify (journal or receipt), export, keygen. */
import { resolve } from 'node:path';
import { exportReceipt, keygen, readPublicKeyFile, verifyReceiptFile, type ReceiptReport } from '../../receipt/index.js';
import { publishedReceiptHooks } from '../../redact/index.js';
import { intArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { pathKind } from '../input.js';
import { countingSource } from '../output.js';
import { printReport, storeFor, withJournal } from './journal.js';


const HEAD_RE = /^sha256:[0-9a-f]{64}$/;

export const verifyVerb: Verb = {
  name: 'verify',
  summary: 'verify a journal or a receipt offline: the verdict, then every problem with its location',
  usage: '<journal | receipt.tar | receipt.tar.gz> [--head sha256:…] [--pubkey file]',
  description: [
    'A receipt proves integrity relative to its head: pin the head you obtained independently (--head) or the signer\'s',
    'public key (--pubkey), or the check only shows the receipt is self-consistent. A pin that cannot be used (an empty',
    'or malformed key file, a malformed head) is an error (exit 2), never "no pin". A published (redacted) receipt is',
    'verified with its anchor and redaction declarations (spec/REDACTION.md §7).',
  ].join('\n'),
  options: {
    head: { type: 'string', arg: 'sha256:…', description: 'the head you expect (obtained out of band); a different head fails' },
    pubkey: { type: 'string', arg: 'file', description: 'receipts: the signer\'s public key file — keyfile.pub from keygen, the base64 of the 32 key bytes, or the 32 raw bytes; the receipt must be signed by it (any other file is an error, exit 2)' },
  },
  args: { min: 1, max: 1, names: ['path'] },
  examples: [
    ['stepchain verify receipt.tar.gz --pubkey alice.key.pub', 'an auditor checks a signed receipt'],
    ['stepchain verify runs/today --head sha256:3b4c…', 'check a journal against a head published earlier'],
  ],
  async run({ out, values, positionals }) {
    const path = positionals[0]!;
    const expectHead = values.head as string | undefined;
    if (expectHead !== undefined && !HEAD_RE.test(expectHead)) throw new UsageError('--head must be "sha256:" followed by 64 lowercase hex digits', 'verify');
    const kind = await pathKind(path);
    if (kind === 'journal') {
      if (values.pubkey !== undefined) throw new UsageError('--pubkey applies to receipts; a journal directory is not signed', 'verify');
      // Verified without opening it, so a metadata file that cannot be opened is a problem in the report.
      const { store, id } = storeFor(path);
      const progress = out.progress('verifying');
      const report = await store.verify(id, { ...(expectHead !== undefined ? { expectHead } : {}), onProgress: () => progress.tick() });
      progress.end();
      if (out.json) out.document('verify', { ok: report.ok, kind, path: resolve(path), report });
      else printReport(out, `journal ${path}`, report);
      return report.ok ? EXIT_OK : EXIT_FAILED;
    }
    // An unusable key file is a usage error (exit 2), never "no key pinned".
    const publicKey = values.pubkey === undefined ? undefined : await readPublicKeyFile(values.pubkey as string);
    // A published (redacted) receipt carries anchor and redactions members; the hooks check them (their
    // finish adds the publication checks), and leave an ordinary receipt's report unchanged.
    const report: ReceiptReport<string> = await verifyReceiptFile(path, {
      ...(expectHead !== undefined ? { expectHead } : {}), ...(publicKey !== undefined ? { publicKey } : {}), ...publishedReceiptHooks().options,
    });
    if (out.json) {
      out.document('verify', { ok: report.ok, kind, path: resolve(path), report });
    } else {
      const extra: string[] = [];
      if (report.ok) {
        extra.push(`  scope: ${report.scope}${report.range ? ` (steps ${report.range.from}..${report.range.to})` : ''}; signed by: ${report.signed_by ?? 'nobody (unsigned)'}`);
        for (const p of report.proves) extra.push(`  ${out.style('green', 'proves')}   ${p}`);
        for (const p of report.does_not_prove) extra.push(`  ${out.style('yellow', 'does not prove')} ${p}`);
        if (expectHead === undefined && publicKey === undefined) extra.push(out.style('yellow', '  hint: pin the head (--head) or the signer\'s key (--pubkey); otherwise anyone could have made this receipt'));
      }
      printReport(out, `receipt ${path}`, report, extra);
    }
    return report.ok ? EXIT_OK : EXIT_FAILED;
  },
};

export const exportVerb: Verb = {
  name: 'export',
  summary: 'write a receipt: a deterministic tarball of the chain, its blobs and a manifest, optionally signed',
  usage: '<journal> -o receipt.tar.gz [--from N] [--to M] [--sign keyfile]',
  options: {
    out: { type: 'string', short: 'o', arg: 'file', description: 'output file; gzip-compressed when it ends in .tar.gz or .tgz' },
    from: { type: 'string', arg: 'N', description: 'first seq (a partial receipt when > 0)' },
    to: { type: 'string', arg: 'M', description: 'last seq (default: the head)' },
    sign: { type: 'string', arg: 'keyfile', description: 'sign the manifest with this Ed25519 private key (see keygen)' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain export runs/today -o receipt.tar.gz --sign alice.key', 'a signed receipt of the whole run'],
    ['stepchain export runs/today -o steps-10-20.tar --from 10 --to 20', 'a partial, uncompressed receipt'],
  ],
  async run({ out, values, positionals }) {
    if (values.out === undefined) throw new UsageError('-o <file> is required', 'export');
    return withJournal(positionals[0]!, true, async (journal) => {
      const progress = out.progress('exporting: lines read');
      const result = await exportReceipt(countingSource(journal, progress), {
        out: values.out as string,
        ...(values.from !== undefined ? { from: intArg(values.from, '--from', 'export') } : {}),
        ...(values.to !== undefined ? { to: intArg(values.to, '--to', 'export') } : {}),
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
