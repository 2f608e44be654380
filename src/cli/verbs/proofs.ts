/**
 * Verbs for transparency proofs (spec/PROOFS.md): checkpoint (sign and keep), prove (inclusion and
 * consistency proof files), witness (check consistency with the last checkpoint it cosigned, cosign), and
 * the policy and pinned-checkpoint options verify shares. The library is loaded when a verb runs, so
 * `stepchain --help` and the other verbs do not pay for it.
 */
import { EXIT_FAILED, EXIT_OK, UsageError, type OptionSpec, type Verb } from '../cli.js';

type Proofs = typeof import('../../proofs/index.js');
const proofs = (): Promise<Proofs> => import('../../proofs/index.js');

/** The policy options: `--log-key`, `--witness`…, `--quorum`. */
export const POLICY_OPTIONS: Record<string, OptionSpec> = {
  'log-key': { type: 'string', arg: 'vkey|file', description: 'the log\'s verifier key (printed by `stepchain checkpoint`), or a file holding it' },
  witness: { type: 'string', multiple: true, arg: 'vkey|file', description: 'a witness verifier key (printed by `stepchain witness`); repeat for each witness' },
  quorum: { type: 'string', arg: 'k', description: 'how many of the --witness keys must have cosigned (default: all of them)' },
};

async function readSmall(path: string, what: string, verb: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`, verb);
  }
}

/** A vkey given inline or as a file; unusable is a usage error (exit 2), never "no key". */
async function vkeyArg(value: string, verb: string, flag: string): Promise<import('../../proofs/index.js').NoteVerifier> {
  const { parseVerifierKey } = await proofs();
  const text = value.includes('+') ? value : (await readSmall(value, `${flag} file`, verb)).trim();
  try {
    return parseVerifierKey(text);
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`, verb);
  }
}

/** The policy of the options, or null when no --log-key was given (witnesses without a log key are refused). */
export async function policyFrom(values: Record<string, unknown>, verb: string): Promise<import('../../proofs/index.js').CheckpointPolicy | null> {
  const witnessArgs = (values.witness as string[] | undefined) ?? [];
  if (values['log-key'] === undefined) {
    if (witnessArgs.length > 0 || values.quorum !== undefined) throw new UsageError('--witness and --quorum need --log-key', verb);
    return null;
  }
  const log = await vkeyArg(values['log-key'] as string, verb, '--log-key');
  const witnesses = await Promise.all(witnessArgs.map((w) => vkeyArg(w, verb, '--witness')));
  const quorum = values.quorum === undefined ? witnesses.length : Number(values.quorum);
  if (!Number.isSafeInteger(quorum) || quorum < 0 || quorum > witnesses.length) throw new UsageError(`--quorum must be a number from 0 to the ${witnesses.length} --witness keys`, verb);
  const { policyDefect } = await import('../../proofs/checkpoint.js');
  const defect = policyDefect({ log, witnesses, quorum });
  if (defect) throw new UsageError(`the policy cannot be used: ${defect}`, verb);
  return { log, witnesses, quorum };
}

/**
 * A pinned earlier checkpoint: read, parsed, and — with a log key — its log signature verified. Anything
 * that makes it unusable is a usage error (exit 2): a pin never falls back to "not pinned".
 */
export async function pinnedCheckpoint(path: string, policy: { log: import('../../proofs/index.js').NoteVerifier } | null, verb: string): Promise<import('../../proofs/index.js').TreeHead> {
  const { parseNote, parseCheckpoint, verifyCheckpoint } = await proofs();
  const note = await readSmall(path, 'checkpoint', verb);
  if (policy) {
    const v = verifyCheckpoint(note, { log: policy.log });
    if (!v.ok) throw new UsageError(`--checkpoint ${path} cannot be used: ${v.problems.map((p) => p.message).join('; ')}`, verb);
    return v.checkpoint!;
  }
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.note.text) : null;
  if (!cp?.ok) throw new UsageError(`--checkpoint ${path} cannot be used: ${parsed.ok ? (cp as { problem: { message: string } }).problem.message : parsed.problem.message}`, verb);
  return cp.checkpoint;
}

type FileJournal = import('../../store/file/journal.js').FileJournal;

/** The journal as one that keeps a tree: today the file store's (a Postgres journal gets one when its store implements TreeStorage). */
export function treeJournal(journal: object, verb: string): FileJournal {
  if (typeof (journal as Partial<FileJournal>).treeView !== 'function') {
    throw new UsageError('checkpoints and proofs are kept by journal directories (the file store); this store does not keep a Merkle tree yet', verb);
  }
  return journal as FileJournal;
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
  summary: 'sign a checkpoint of a journal\'s Merkle tree (C2SP tlog-checkpoint); the journal keeps it',
  usage: '<journal> --sign keyfile -o FILE [--authority NAME]',
  description: [
    'The checkpoint names the journal (origin <authority>/<journal id>/<genesis hash>), its size and the root of the',
    'RFC 6962 tree over its steps, signed with the Ed25519 key as a C2SP signed note. The journal keeps every checkpoint',
    'it signs in checkpoints/ and refuses to sign one that does not extend the last it signed for the origin (exit 1,',
    'CHECKPOINT_REFUSED): a truncated or rewritten journal cannot get a new checkpoint. Prints the log\'s verifier key',
    '(vkey) that auditors pin with --log-key.',
  ].join('\n'),
  options: {
    sign: { type: 'string', arg: 'keyfile', description: 'the log\'s Ed25519 private key (see keygen)' },
    out: { type: 'string', short: 'o', arg: 'FILE', description: 'where to write the signed checkpoint' },
    authority: { type: 'string', arg: 'NAME', description: 'who keeps the store, a lowercase DNS name (default: that of the last checkpoint this journal signed)' },
  },
  args: { min: 1, max: 1, names: ['journal'] },
  examples: [
    ['stepchain checkpoint runs/today --sign log.key --authority agents.example.com -o today.checkpoint', 'sign the first checkpoint'],
    ['stepchain checkpoint runs/today --sign log.key -o later.checkpoint', 'a later one, which must extend the first'],
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
        if (!origin) throw new UsageError('--authority is required for the first checkpoint of a journal', 'checkpoint');
        authority = origin.authority;
      }
      let origin: string;
      try {
        origin = p.journalOrigin({ authority, journalId: journal.id, genesisHash: (await import('../../record/formats.js')).genesisHash(journal.genesis) });
      } catch (e) {
        throw new UsageError(`--authority: ${(e as Error).message}`, 'checkpoint');
      }
      const signer = p.noteSigner(origin, seed);
      let signed;
      try {
        signed = await file.checkpoint(signer);
      } catch (e) {
        if ((e as { code?: string }).code !== 'CHECKPOINT_REFUSED') throw e;
        if (out.json) out.document('checkpoint', { ok: false, error: { code: 'CHECKPOINT_REFUSED', message: (e as Error).message } });
        out.say(`${out.style('red', '✘ refused')} ${(e as Error).message}`);
        return EXIT_FAILED;
      }
      await writeOut(values.out as string, signed.note);
      const vkey = p.verifierKey(signer);
      const cp = { origin, size: signed.checkpoint.size, root: Buffer.from(signed.checkpoint.root).toString('base64') };
      if (out.json) out.document('checkpoint', { ok: true, checkpoint: cp, file: values.out, kept: signed.kept, vkey, extends: signed.previous ? signed.previous.size : null });
      else {
        out.say(`wrote ${values.out as string}: ${origin} at size ${cp.size}, root ${cp.root}${signed.previous ? ` (extends size ${signed.previous.size})` : ''}`);
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
    ['stepchain prove runs/today --checkpoint today.checkpoint --from 500 --to 520 -o steps.proof', 'steps 500–520 are in the checkpoint'],
    ['stepchain prove runs/today --checkpoint later.checkpoint --old today.checkpoint -o grew.proof', 'the later checkpoint extends the earlier'],
  ],
  async run({ out, values, positionals }) {
    if (values.checkpoint === undefined || values.out === undefined) throw new UsageError('--checkpoint <FILE> and -o <FILE> are required', 'prove');
    if ((values.from === undefined) === (values.old === undefined)) throw new UsageError('give either --from (an inclusion proof) or --old (a consistency proof)', 'prove');
    const p = await proofs();
    const { intArg } = await import('../args.js');
    const { withJournal } = await import('./journal.js');
    const note = await readSmall(values.checkpoint as string, 'checkpoint', 'prove');
    const cp = await pinnedCheckpoint(values.checkpoint as string, null, 'prove');
    return withJournal(positionals[0]!, true, async (journal) => {
      const view = await treeJournal(journal, 'prove').treeView();
      const mine = cp.size <= view.size && Buffer.from(await p.treeRoot(view.reader, cp.size)).equals(Buffer.from(cp.root));
      if (!mine) throw new UsageError(`${values.checkpoint as string} is not a checkpoint of this journal's tree (size ${cp.size}; the journal has ${view.size} steps)`, 'prove');
      let doc;
      if (values.from !== undefined) {
        const from = intArg(values.from, '--from', 'prove');
        const to = values.to === undefined ? from : intArg(values.to, '--to', 'prove');
        if (from > to || to >= cp.size) throw new UsageError(`steps ${from}..${to} are not in the checkpoint's ${cp.size} steps`, 'prove');
        const steps: string[] = [];
        for await (const l of journal.lines({ from, to })) steps.push((JSON.parse(l.text) as { step_hash: string }).step_hash);
        doc = p.inclusionProofDocument({ checkpoint: note, from, to, steps, proof: await p.proveInclusion(view.reader, from, to, cp.size) });
      } else {
        const oldNote = await readSmall(values.old as string, 'checkpoint', 'prove');
        const old = await pinnedCheckpoint(values.old as string, null, 'prove');
        if (old.size > cp.size) throw new UsageError(`--old has ${old.size} steps, more than --checkpoint's ${cp.size}: swap them`, 'prove');
        doc = p.consistencyProofDocument({ oldCheckpoint: oldNote, checkpoint: note, proof: await p.proveConsistency(view.reader, old.size, cp.size) });
      }
      await writeOut(values.out as string, p.serializeProofDocument(doc));
      if (out.json) out.document('prove', { ok: true, type: doc.type, file: values.out, hashes: doc.hashes.length });
      else out.say(`wrote ${values.out as string}: ${doc.type} proof, ${doc.hashes.length} hashes`);
      return EXIT_OK;
    });
  },
};
