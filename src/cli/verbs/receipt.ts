/** Verbs that write receipts and keys: export, keygen (verify is verify.ts). */
import { exportReceipt, keygen } from '../../receipt/index.js';
import { intArg } from '../args.js';
import type { Json } from '../../index.js';
import { EXIT_OK, UsageError, type Verb } from '../cli.js';
import { withJournal } from '../location.js';
import { countingSource } from '../output.js';
import { pinnedCheckpoint, readSmall } from '../policy.js';
import { treeJournal } from './proofs.js';
import { inline } from '../safe-text.js';

export const exportVerb: Verb = {
  name: 'export',
  summary: 'write a receipt: a deterministic tarball of the chain, its blobs and a manifest, optionally signed',
  usage: '<journal> -o receipt.tar.gz [--from N] [--to M] [--sign keyfile] [--attest FILE]',
  options: {
    out: {
      type: 'string',
      short: 'o',
      arg: 'file',
      description: 'output file; gzip-compressed when it ends in .tar.gz or .tgz',
    },
    from: { type: 'string', arg: 'N', description: 'first seq (a partial receipt when > 0)' },
    to: { type: 'string', arg: 'M', description: 'last seq (default: the head)' },
    sign: {
      type: 'string',
      arg: 'keyfile',
      description: 'sign the manifest with this Ed25519 private key (see keygen)',
    },
    attest: {
      type: 'string',
      arg: 'FILE',
      description:
        'carry the time-stamp tokens and co-signatures of this attestations file (from `stepchain timestamp` and `cosign`) that bind to the range',
    },
    checkpoint: {
      type: 'string',
      arg: 'FILE',
      description:
        'carry this signed checkpoint of the journal and the inclusion proof of the range (a partial receipt then verifies against it without its prefix); --to defaults to its last step',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain export runs/today -o receipt.tar.gz --sign alice.key', 'a signed receipt of the whole run'],
    ['stepchain export runs/today -o steps-10-20.tar --from 10 --to 20', 'a partial, uncompressed receipt'],
    [
      'stepchain export runs/today -o steps-500-520.tar --from 500 --to 520 --checkpoint today.checkpoint',
      'a partial receipt that proves its steps are in a signed checkpoint',
    ],
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
        const note = await readSmall(values.checkpoint as string, 'checkpoint', 'export');
        const view = await treeJournal(journal, 'export').treeView();
        extra = { proof: (await proveReceiptRange(view.reader, note, from, to)) as unknown as Json };
      }
      if (values.attest !== undefined) {
        const { readAttestations, attestMembers } = await import('./attest.js');
        const doc = await readAttestations(values.attest as string, journal, 'export');
        if (doc === null)
          throw new UsageError(
            `--attest ${values.attest as string}: no such file (make it with \`stepchain timestamp\` or \`cosign\`)`,
            'export',
          );
        const head = await journal.head();
        const members = attestMembers(doc, from, to ?? head?.seq ?? 0);
        extra = { ...(extra ?? {}), ...(members as unknown as Record<string, Json>) };
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
        out.say(
          `wrote ${inline(result.out)} (${result.bytes} bytes${result.compressed ? ', gzip' : ''}): steps ${result.range.from}..${result.range.to}, head ${result.head.step_hash}`,
        );
        out.say(
          `  manifest ${result.manifest_digest}; ${result.signed_by ? `signed by ${result.signed_by}` : 'unsigned'}`,
        );
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
    if (out.json)
      out.document('keygen', {
        ok: true,
        key_file: result.keyFile,
        public_key_file: result.publicKeyFile,
        key_id: result.keyId,
      });
    else
      out.say(
        `wrote ${inline(result.keyFile)} (private, mode 0600) and ${inline(result.publicKeyFile)}\nkey id ${result.keyId}`,
      );
    return EXIT_OK;
  },
};
