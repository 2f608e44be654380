/**
 * Verbs for transparency proofs (spec/PROOFS.md): checkpoint (sign and keep), prove (inclusion and
 * consistency proof files), witness (check consistency with the last checkpoint it cosigned, cosign); the
 * policy and pinned-checkpoint options they share with verify are in ../policy.ts. The library is loaded
 * when a verb runs, so `stepchain --help` and the other verbs do not pay for it.
 */
import { genesisHash } from '../../record/formats.js';
import type { NodeReader, NoteSigner, SignedCheckpoint } from '../../format.js';
import { intArg } from '../args.js';
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { pinnedCheckpoint, proofs, readSmall } from '../policy.js';
import { inline } from '../safe-text.js';

/** What a journal that keeps a Merkle tree offers: the file store's and the Postgres store's journals. */
export interface TreeJournal {
  checkpoint(signer: NoteSigner): Promise<SignedCheckpoint>;
  checkpoints(): Promise<string[]>;
  treeView(): Promise<{ size: number; root: Uint8Array; reader: NodeReader }>;
}

/** The journal as one that keeps a tree (both stores do; a store of the caller's own may not). */
export function treeJournal(journal: object, verb: string): TreeJournal {
  const j = journal as Partial<TreeJournal>;
  if (typeof j.treeView !== 'function' || typeof j.checkpoint !== 'function' || typeof j.checkpoints !== 'function') {
    throw new UsageError('this store does not keep a Merkle tree, so it has no checkpoints or proofs', verb);
  }
  return journal as TreeJournal;
}

async function signingKey(path: string): Promise<Uint8Array> {
  const { readKeyFile } = await import('../../receipt/node.js');
  return readKeyFile(path);
}

async function writeOut(path: string, text: string): Promise<void> {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(path, text);
}

export const checkpointVerb: Verb = {
  name: 'checkpoint',
  summary: "sign a checkpoint of a journal's Merkle tree (C2SP tlog-checkpoint); the journal keeps it",
  usage: '<journal> --sign keyfile -o FILE [--authority NAME]',
  description: [
    'The checkpoint names the journal (origin <authority>/<journal id>/<genesis hash>), its size and the root of the',
    'RFC 6962 tree over its steps, signed with the Ed25519 key as a C2SP signed note. The journal keeps every checkpoint',
    "it signs (a directory in checkpoints/, a Postgres journal in its store's checkpoints table) and refuses to sign one",
    'that does not extend the last it signed for the origin (exit 1, CHECKPOINT_REFUSED): a truncated or rewritten',
    "journal cannot get a new checkpoint. Prints the log's verifier key (vkey) that auditors pin with --log-key.",
  ].join('\n'),
  options: {
    sign: { type: 'string', arg: 'keyfile', description: "the log's Ed25519 private key (see keygen)" },
    out: { type: 'string', short: 'o', arg: 'FILE', description: 'where to write the signed checkpoint' },
    authority: {
      type: 'string',
      arg: 'NAME',
      description:
        'who keeps the store, a lowercase DNS name (default: that of the last checkpoint this journal signed)',
    },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain checkpoint runs/today --sign log.key --authority agents.example.com -o today.checkpoint',
      'sign the first checkpoint',
    ],
    ['stepchain checkpoint runs/today --sign log.key -o later.checkpoint', 'a later one, which must extend the first'],
    [
      'stepchain checkpoint "postgres://db.example.com/agents?journal=today" --sign log.key -o today.checkpoint',
      "a journal kept in Postgres (its tree lives in the store's tables)",
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.sign === undefined) throw new UsageError('--sign <keyfile> is required', 'checkpoint');
    if (values.out === undefined) throw new UsageError('-o <FILE> is required', 'checkpoint');
    const p = await proofs();
    const { withJournal } = await import('./journal.js');
    const seed = await signingKey(values.sign as string);
    return withJournal(positionals[0]!, false, async (journal) => {
      const file = treeJournal(journal, 'checkpoint');
      let authority = values.authority as string | undefined;
      if (authority === undefined) {
        const kept = await file.checkpoints();
        const last = kept.length > 0 ? p.parseNote(kept[kept.length - 1]!) : null;
        const origin = last?.ok ? p.parseJournalOrigin(last.note.text.split('\n')[0]!) : null;
        if (!origin)
          throw new UsageError('--authority is required for the first checkpoint of a journal', 'checkpoint');
        authority = origin.authority;
      }
      let origin: string;
      try {
        origin = p.journalOrigin({ authority, journalId: journal.id, genesisHash: genesisHash(journal.genesis) });
      } catch (e) {
        throw new UsageError(`--authority: ${(e as Error).message}`, 'checkpoint');
      }
      const signer = p.noteSigner(origin, seed);
      let signed;
      try {
        signed = await file.checkpoint(signer);
      } catch (e) {
        if ((e as { code?: string }).code !== 'CHECKPOINT_REFUSED') throw e;
        if (out.json)
          out.document('checkpoint', {
            ok: false,
            error: { code: 'CHECKPOINT_REFUSED', message: (e as Error).message },
          });
        out.say(`${out.style('red', '✘ refused')} ${(e as Error).message}`);
        return EXIT_FAILED;
      }
      await writeOut(values.out as string, signed.note);
      const vkey = p.verifierKey(signer);
      const cp = { origin, size: signed.checkpoint.size, root: Buffer.from(signed.checkpoint.root).toString('base64') };
      if (out.json)
        out.document('checkpoint', {
          ok: true,
          checkpoint: cp,
          file: values.out,
          kept: signed.kept,
          vkey,
          extends: signed.previous ? signed.previous.size : null,
        });
      else {
        out.say(
          `wrote ${inline(values.out as string)}: ${inline(origin)} at size ${cp.size}, root ${cp.root}${signed.previous ? ` (extends size ${signed.previous.size})` : ''}`,
        );
        out.say(`  log key (pin it with --log-key): ${vkey}`);
      }
      return EXIT_OK;
    });
  },
};

export const proveVerb: Verb = {
  name: 'prove',
  summary: 'write an inclusion proof (steps N..M) or a consistency proof (old checkpoint → checkpoint) of a journal',
  usage: '<journal> --checkpoint FILE (--from N [--to M] | --old FILE) -o FILE',
  description: [
    'Writes a stepchain-proof/v1 file (spec/PROOFS.md §7.4) that anyone can check offline with',
    '`stepchain verify --proof FILE --log-key VKEY`: with --from/--to, that those steps are in the tree of the checkpoint;',
    'with --old, that the checkpoint extends the older one. The journal is only read; the checkpoint must be one of its own.',
  ].join('\n'),
  options: {
    checkpoint: { type: 'string', arg: 'FILE', description: 'the signed checkpoint the proof is against' },
    from: { type: 'string', arg: 'N', description: 'inclusion: the first step' },
    to: { type: 'string', arg: 'M', description: 'inclusion: the last step (default: --from)' },
    old: { type: 'string', arg: 'FILE', description: 'consistency: the older signed checkpoint' },
    out: { type: 'string', short: 'o', arg: 'FILE', description: 'where to write the proof file' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    [
      'stepchain prove runs/today --checkpoint today.checkpoint --from 500 --to 520 -o steps.proof',
      'steps 500–520 are in the checkpoint',
    ],
    [
      'stepchain prove runs/today --checkpoint later.checkpoint --old today.checkpoint -o grew.proof',
      'the later checkpoint extends the earlier',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.checkpoint === undefined || values.out === undefined)
      throw new UsageError('--checkpoint <FILE> and -o <FILE> are required', 'prove');
    if ((values.from === undefined) === (values.old === undefined))
      throw new UsageError('give either --from (an inclusion proof) or --old (a consistency proof)', 'prove');
    const p = await proofs();
    const { withJournal } = await import('./journal.js');
    const note = await readSmall(values.checkpoint as string, 'checkpoint', 'prove');
    const cp = await pinnedCheckpoint(values.checkpoint as string, null, 'prove');
    return withJournal(positionals[0]!, true, async (journal) => {
      const view = await treeJournal(journal, 'prove').treeView();
      const mine =
        cp.size <= view.size && Buffer.from(await p.treeRoot(view.reader, cp.size)).equals(Buffer.from(cp.root));
      if (!mine)
        throw new UsageError(
          `${values.checkpoint as string} is not a checkpoint of this journal's tree (size ${cp.size}; the journal has ${view.size} steps)`,
          'prove',
        );
      let doc;
      if (values.from !== undefined) {
        const from = intArg(values.from, '--from', 'prove');
        const to = values.to === undefined ? from : intArg(values.to, '--to', 'prove');
        if (from > to || to >= cp.size)
          throw new UsageError(`steps ${from}..${to} are not in the checkpoint's ${cp.size} steps`, 'prove');
        const steps: string[] = [];
        for await (const l of journal.lines({ from, to }))
          steps.push((JSON.parse(l.text) as { step_hash: string }).step_hash);
        doc = p.inclusionProofDocument({
          checkpoint: note,
          from,
          to,
          steps,
          proof: await p.proveInclusion(view.reader, from, to, cp.size),
        });
      } else {
        const oldNote = await readSmall(values.old as string, 'checkpoint', 'prove');
        const old = await pinnedCheckpoint(values.old as string, null, 'prove');
        if (old.size > cp.size)
          throw new UsageError(`--old has ${old.size} steps, more than --checkpoint's ${cp.size}: swap them`, 'prove');
        // A proof is written only between two checkpoints of this tree: an --old of another origin, or with
        // another root at its size (a fork, when the sizes are equal), gets no proof that could not verify.
        const refused =
          old.origin !== cp.origin
            ? {
                code: 'ORIGIN_MISMATCH',
                message: `--old is a checkpoint of "${old.origin.slice(0, 300)}", not of "${cp.origin.slice(0, 300)}"`,
              }
            : !Buffer.from(await p.treeRoot(view.reader, old.size)).equals(Buffer.from(old.root))
              ? old.size === cp.size
                ? {
                    code: 'FORKED',
                    message: `--old and --checkpoint both have size ${cp.size} but different roots: the log showed two histories (a fork); no consistency proof can connect them`,
                  }
                : {
                    code: 'INCONSISTENT',
                    message: `--old's root is not this journal's root at size ${old.size}: the journal was rewritten after it, or --old is of a fork`,
                  }
              : null;
        if (refused) {
          if (out.json) out.document('prove', { ok: false, error: refused });
          out.say(`${out.style(['red', 'bold'], '✘ refused')} ${refused.code} ${refused.message}`);
          return EXIT_FAILED;
        }
        doc = p.consistencyProofDocument({
          oldCheckpoint: oldNote,
          checkpoint: note,
          proof: await p.proveConsistency(view.reader, old.size, cp.size),
        });
      }
      await writeOut(values.out as string, p.serializeProofDocument(doc));
      if (out.json) out.document('prove', { ok: true, type: doc.type, file: values.out, hashes: doc.hashes.length });
      else out.say(`wrote ${inline(values.out as string)}: ${doc.type} proof, ${doc.hashes.length} hashes`);
      return EXIT_OK;
    });
  },
};
