/**
 * `stepchain witness` (spec/PROOFS.md §9.5, after c2sp.org/tlog-witness): verify a checkpoint's log
 * signature, check that it extends the last checkpoint this witness cosigned for its origin (with a
 * consistency proof file), record it as the last — atomically, under an exclusive lock, so two runs never
 * both pass from the same last checkpoint — and only then cosign it (C2SP tlog-cosignature).
 */
import { EXIT_FAILED, EXIT_OK, UsageError, type Verb } from '../cli.js';
import { READ_LIMITS, policyFrom, readBounded, readSmall } from '../policy.js';
import { inline } from '../safe-text.js';

interface WitnessState {
  dir: string;
  file: string;
  lock: string;
}

async function stateFor(dir: string, origin: string): Promise<WitnessState> {
  const { createHash } = await import('node:crypto');
  const { join } = await import('node:path');
  const name = createHash('sha256').update(origin).digest('hex');
  return { dir, file: join(dir, `${name}.checkpoint`), lock: join(dir, `${name}.lock`) };
}

/** Holds `<origin>.lock` (O_EXCL) while `fn` runs; a second run fails at once instead of racing. */
async function locked<T>(state: WitnessState, fn: () => Promise<T>): Promise<T> {
  const { mkdir, open, unlink } = await import('node:fs/promises');
  await mkdir(state.dir, { recursive: true });
  let fh;
  try {
    fh = await open(state.lock, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    throw new UsageError(`another witness run holds ${state.lock}; if none is running (a crash), remove it`, 'witness');
  }
  try {
    await fh.writeFile(`${process.pid}\n`);
    return await fn();
  } finally {
    await fh.close();
    await unlink(state.lock).catch(() => {});
  }
}

/** Replaces the state file durably: temporary file, fsync, rename, directory fsync. */
async function saveState(state: WitnessState, note: string): Promise<void> {
  const { open, rename } = await import('node:fs/promises');
  const tmp = `${state.file}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(note);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, state.file);
  const dir = await open(state.dir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** The last checkpoint a witness cosigned for an origin (its state file), or null before its first: read bounded, a FIFO refused. */
async function stateNote(file: string): Promise<string | null> {
  const { lstat } = await import('node:fs/promises');
  try {
    await lstat(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return readSmall(file, 'the witness state', 'witness', READ_LIMITS.checkpoint);
}

export const witnessVerb: Verb = {
  name: 'witness',
  summary: 'cosign a checkpoint after checking it extends the last one this witness cosigned for its origin',
  usage: '[checkpoint] --key keyfile --name NAME --state DIR --log-key VKEY [--proof FILE] [-o FILE]',
  description: [
    'A witness keeps, per origin, the last checkpoint it cosigned (in --state). It cosigns a new checkpoint only when the',
    'log key signed it and a consistency proof (--proof, from `stepchain prove --old`) shows it extends that last one;',
    'a rewritten, truncated or forked journal is refused (exit 1) with the problem code. The state is written durably',
    'before the cosignature is, under a lock. Without a checkpoint it prints its verifier key (pin it with --witness).',
  ].join('\n'),
  options: {
    key: { type: 'string', arg: 'keyfile', description: "the witness's Ed25519 private key (see keygen)" },
    name: { type: 'string', arg: 'NAME', description: "the witness's key name, e.g. witness.example.com/w1" },
    state: {
      type: 'string',
      arg: 'DIR',
      description: 'where the witness keeps the last checkpoint it cosigned per origin',
    },
    'log-key': {
      type: 'string',
      arg: 'vkey|file',
      description: "the log's verifier key: the checkpoint must be signed by it",
    },
    proof: {
      type: 'string',
      arg: 'FILE',
      description: 'a consistency proof from the last cosigned checkpoint to this one',
    },
    out: {
      type: 'string',
      short: 'o',
      arg: 'FILE',
      description: 'where to write the cosigned checkpoint (default: the checkpoint file itself is left alone; stdout)',
    },
  },
  args: { min: 0, max: 1, names: ['checkpoint'] },
  examples: [
    ['stepchain witness --key w1.key --name witness.example/w1', "print this witness's verifier key"],
    [
      'stepchain witness later.checkpoint --key w1.key --name witness.example/w1 --state w1-state --log-key "$LOG_VKEY" --proof grew.proof -o later.cosigned',
      'cosign a checkpoint that extends the last one',
    ],
  ],
  async run({ out, values, positionals }) {
    if (values.key === undefined || values.name === undefined)
      throw new UsageError('--key and --name are required', 'witness');
    const p = await import('../../proofs/index.js');
    const { readKeyFile } = await import('../../receipt/node.js');
    let signer;
    try {
      signer = p.noteSigner(values.name as string, await readKeyFile(values.key as string), p.SIG_COSIGNATURE_V1);
    } catch (e) {
      throw new UsageError(`--name: ${(e as Error).message}`, 'witness');
    }
    const vkey = p.verifierKey(signer);
    if (positionals.length === 0) {
      if (out.json) out.document('witness', { ok: true, vkey });
      else out.print(vkey);
      return EXIT_OK;
    }
    if (values.state === undefined || values['log-key'] === undefined)
      throw new UsageError('--state and --log-key are required to cosign', 'witness');
    const policy = (await policyFrom({ 'log-key': values['log-key'] }, 'witness'))!;
    const note = await readSmall(positionals[0]!, 'checkpoint', 'witness');
    const refuse = (code: string, message: string): number => {
      if (out.json) out.document('witness', { ok: false, error: { code, message } });
      out.say(`${out.style('red', '✘ refused')} ${inline(message)}`);
      return EXIT_FAILED;
    };
    const checked = p.verifyCheckpoint(note, policy);
    if (!checked.ok) return refuse(checked.problems[0]!.code, checked.problems.map((x) => x.message).join('; '));
    const next = checked.checkpoint!;
    const state = await stateFor(values.state as string, next.origin);
    return locked(state, async () => {
      const lastNote = await stateNote(state.file);
      const last = lastNote === null ? null : p.verifyCheckpoint(lastNote, { log: policy.log }).checkpoint;
      if (lastNote !== null && last === null)
        throw new UsageError(
          `the witness state ${state.file} cannot be read; restore it (a witness never starts over)`,
          'witness',
        );
      let proof: Uint8Array[] = [];
      if (last && values.proof !== undefined) {
        const proofBytes = await readBounded(values.proof as string, '--proof', 'witness', READ_LIMITS.proof);
        const doc = p.verifyProofDocument(proofBytes, { log: policy.log }, { trusted: last });
        if (!doc.ok) return refuse(doc.problems[0]!.code, doc.problems.map((x) => x.message).join('; '));
        if (
          doc.type !== 'consistency' ||
          doc.checkpoint!.size !== next.size ||
          !Buffer.from(doc.checkpoint!.root).equals(Buffer.from(next.root))
        ) {
          return refuse('PROOF_MALFORMED', 'the proof file is not a consistency proof ending at this checkpoint');
        }
        const parsed = p.parseProofDocument(proofBytes);
        if (parsed.ok) proof = parsed.doc.hashes.map((h) => new Uint8Array(Buffer.from(h, 'base64')));
      } else if (last && next.size > last.size && last.size > 0) {
        return refuse(
          'PROOF_LENGTH_INVALID',
          `this witness last cosigned size ${last.size} of ${next.origin}; give --proof, a consistency proof from it (stepchain prove --old)`,
        );
      }
      const verdict = p.checkWitnessUpdate({ last, next, proof });
      if (!verdict.ok) return refuse(verdict.problem.code, verdict.problem.message);
      await saveState(state, note);
      const cosigned = p.addSignatures(note, p.cosignCheckpoint(note, signer));
      if (values.out !== undefined) await (await import('node:fs/promises')).writeFile(values.out as string, cosigned);
      if (out.json)
        out.document('witness', {
          ok: true,
          checkpoint: { origin: next.origin, size: next.size },
          extends: last ? last.size : null,
          vkey,
          ...(values.out === undefined ? { note: cosigned } : { file: values.out }),
        });
      else {
        if (values.out === undefined) out.print(cosigned.trimEnd());
        out.say(
          `cosigned ${inline(next.origin)} at size ${next.size}${last ? ` (extends size ${last.size})` : ' (first checkpoint seen for this origin)'}`,
        );
      }
      return EXIT_OK;
    });
  },
};
