/**
 * The transparency-proof options the verbs share (spec/PROOFS.md): the policy (`--log-key`, `--witness`…,
 * `--quorum`) and a pinned earlier checkpoint. Apart from the proof verbs (verbs/proofs.ts), so that
 * `stepchain verify` and `export` load this and not those; the proofs library itself loads only when an
 * option asks for it.
 */
import { UsageError, type OptionSpec } from './cli.js';

export type Proofs = typeof import('../proofs/index.js');
export const proofs = (): Promise<Proofs> => import('../proofs/index.js');

/** The policy options: `--log-key`, `--witness`…, `--quorum`. */
export const POLICY_OPTIONS: Record<string, OptionSpec> = {
  'log-key': { type: 'string', arg: 'vkey|file', description: 'the log\'s verifier key (printed by `stepchain checkpoint`), or a file holding it' },
  witness: { type: 'string', multiple: true, arg: 'vkey|file', description: 'a witness verifier key (printed by `stepchain witness`); repeat for each witness' },
  quorum: { type: 'string', arg: 'k', description: 'how many of the --witness keys must have cosigned (default: all of them)' },
};

/** A small file named on the command line (a key, a checkpoint), as text; one that cannot be read is a usage error. */
export async function readSmall(path: string, what: string, verb: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`, verb);
  }
}

/** A vkey given inline or as a file; unusable is a usage error (exit 2), never "no key". */
async function vkeyArg(value: string, verb: string, flag: string): Promise<import('../proofs/index.js').NoteVerifier> {
  const { parseVerifierKey } = await proofs();
  const text = value.includes('+') ? value : (await readSmall(value, `${flag} file`, verb)).trim();
  try {
    return parseVerifierKey(text);
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`, verb);
  }
}

/** The policy of the options, or null when no --log-key was given (witnesses without a log key are refused). */
export async function policyFrom(values: Record<string, unknown>, verb: string): Promise<import('../proofs/index.js').CheckpointPolicy | null> {
  const witnessArgs = (values.witness as string[] | undefined) ?? [];
  if (values['log-key'] === undefined) {
    if (witnessArgs.length > 0 || values.quorum !== undefined) throw new UsageError('--witness and --quorum need --log-key', verb);
    return null;
  }
  const log = await vkeyArg(values['log-key'] as string, verb, '--log-key');
  const witnesses = await Promise.all(witnessArgs.map((w) => vkeyArg(w, verb, '--witness')));
  const quorum = values.quorum === undefined ? witnesses.length : Number(values.quorum);
  if (!Number.isSafeInteger(quorum) || quorum < 0 || quorum > witnesses.length) throw new UsageError(`--quorum must be a number from 0 to the ${witnesses.length} --witness keys`, verb);
  const { policyDefect } = await import('../proofs/checkpoint.js');
  const defect = policyDefect({ log, witnesses, quorum });
  if (defect) throw new UsageError(`the policy cannot be used: ${defect}`, verb);
  return { log, witnesses, quorum };
}

/**
 * A pinned earlier checkpoint: read, parsed, and — with a log key — its log signature verified. Anything
 * that makes it unusable is a usage error (exit 2): a pin never falls back to "not pinned".
 */
export async function pinnedCheckpoint(path: string, policy: { log: import('../proofs/index.js').NoteVerifier } | null, verb: string): Promise<import('../proofs/index.js').TreeHead> {
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
