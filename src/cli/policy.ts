/**
 * The transparency-proof options the verbs share (spec/PROOFS.md): the policy (`--log-key`, `--witness`…,
 * `--quorum`) and a pinned earlier checkpoint. Apart from the proof verbs (verbs/proofs.ts), so that
 * `stepchain verify` and `export` load this and not those; the proofs library itself loads only when an
 * option asks for it.
 */
import { UsageError, type OptionSpec } from './cli.js';
import { inline } from './safe-text.js';

export type Proofs = typeof import('../proofs/index.js');
export const proofs = (): Promise<Proofs> => import('../proofs/index.js');

/** The policy options: `--log-key`, `--witness`…, `--quorum`. */
export const POLICY_OPTIONS: Record<string, OptionSpec> = {
  'log-key': {
    type: 'string',
    arg: 'vkey|file',
    description: "the log's verifier key (printed by `stepchain checkpoint`), or a file holding it",
  },
  witness: {
    type: 'string',
    multiple: true,
    arg: 'vkey|file',
    description: 'a witness verifier key (printed by `stepchain witness`); repeat for each witness',
  },
  quorum: {
    type: 'string',
    arg: 'k',
    description: 'how many of the --witness keys must have cosigned (default: all of them)',
  },
};

/**
 * The most bytes read of each kind of small input file (spec/PROOFS.md §11.1): one past the limit its
 * format sets, so that a larger file fails that limit (LIMIT_EXCEEDED, KEY_INVALID) without being read whole.
 */
export const READ_LIMITS = {
  /** A signed note: a checkpoint, or a witness's state (PROOFS.md §11). */
  checkpoint: 1024 * 1024,
  /** A proof file (PROOFS.md §7.4, §11). */
  proof: 4 * 1024 * 1024,
  /** A verifier key (vkey) file, --log-key or --witness: a line of a few hundred bytes. */
  vkey: 64 * 1024,
} as const;

/**
 * At most `limit` + 1 bytes of the regular file `path`: a FIFO, a device, a directory or a socket is
 * refused before a byte is read (opened with O_NONBLOCK, so a FIFO without a writer cannot hang the open),
 * and no more than one byte past the limit is ever held. Unreadable is a usage error (exit 2).
 */
export async function readBounded(path: string, what: string, verb: string, limit: number): Promise<Uint8Array> {
  const { open } = await import('node:fs/promises');
  const { constants } = await import('node:fs');
  const refuse = (why: string): UsageError => new UsageError(`cannot read ${what} ${path}: ${why}`, verb);
  let handle: Awaited<ReturnType<typeof open>> | null = null;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const info = await handle.stat();
    if (!info.isFile())
      throw refuse(
        `it is ${info.isFIFO() ? 'a FIFO' : info.isDirectory() ? 'a directory' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : 'not a regular file'}, not a regular file`,
      );
    // Up to one byte past the limit, whatever the size said: the file may grow while it is read.
    let buf = new Uint8Array(Math.min(limit + 1, info.size + 1));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (n > limit) break;
        const bigger = new Uint8Array(Math.min(limit + 1, buf.length * 2));
        bigger.set(buf);
        buf = bigger;
      }
      const { bytesRead } = await handle.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    return buf.subarray(0, n);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw refuse((e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message);
  } finally {
    await handle?.close();
  }
}
/** A small text file named on the command line (a checkpoint, a vkey), at most `limit` + 1 bytes of it (readBounded). */
export async function readSmall(
  path: string,
  what: string,
  verb: string,
  limit: number = READ_LIMITS.checkpoint,
): Promise<string> {
  return new TextDecoder().decode(await readBounded(path, what, verb, limit));
}

/**
 * The whitespace a vkey may carry around it wherever it is given (spec/PROOFS.md §8.4): spaces, tabs, CR
 * and LF at either end, removed alike from an option, a file and the page's fields (src/page/pins.ts).
 */
export const trimVkey = (s: string): string => s.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');

/**
 * A vkey given inline or as a file; unusable is a usage error (exit 2), never "no key". A file over its
 * 64 KiB fails that limit whatever its bytes past the key are (PROOFS.md §11.1): trailing whitespace is not
 * a way around it.
 */
async function vkeyArg(value: string, verb: string, flag: string): Promise<import('../proofs/index.js').NoteVerifier> {
  const { parseVerifierKey } = await proofs();
  let text: string;
  if (value.includes('+')) text = trimVkey(value);
  else {
    const bytes = await readBounded(value, `${flag} file`, verb, READ_LIMITS.vkey);
    if (bytes.length > READ_LIMITS.vkey)
      throw new UsageError(
        `${flag} file ${value}: LIMIT_EXCEEDED: is larger than ${READ_LIMITS.vkey} bytes; a verifier key file is at most ${READ_LIMITS.vkey}`,
        verb,
      );
    text = trimVkey(new TextDecoder().decode(bytes));
  }
  try {
    return parseVerifierKey(text);
  } catch (e) {
    throw new UsageError(`${flag}: ${(e as Error).message}`, verb);
  }
}

/**
 * A `--quorum` as typed: a non-negative decimal integer without sign, spaces, exponent or leading zeros
 * (spec/PROOFS.md §8.4). An empty value (`--quorum "$K"` with K unset) is not "0": it is refused, as is
 * anything else that is not such a number — a pin's policy never weakens silently.
 */
export function quorumArg(value: string, witnesses: number, verb: string): number {
  const ok = /^(0|[1-9][0-9]{0,8})$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(ok) || ok > witnesses)
    throw new UsageError(
      `--quorum must be a whole number from 0 to the ${witnesses} --witness keys, written without sign, spaces or leading zeros (got "${inline(value)}")`,
      verb,
    );
  return ok;
}

/** The policy of the options, or null when no --log-key was given (witnesses without a log key are refused). */
export async function policyFrom(
  values: Record<string, unknown>,
  verb: string,
): Promise<import('../proofs/index.js').CheckpointPolicy | null> {
  const witnessArgs = (values.witness as string[] | undefined) ?? [];
  if (values['log-key'] === undefined) {
    if (witnessArgs.length > 0 || values.quorum !== undefined)
      throw new UsageError('--witness and --quorum need --log-key', verb);
    return null;
  }
  const log = await vkeyArg(values['log-key'] as string, verb, '--log-key');
  const witnesses = await Promise.all(witnessArgs.map((w) => vkeyArg(w, verb, '--witness')));
  const quorum =
    values.quorum === undefined ? witnesses.length : quorumArg(values.quorum as string, witnesses.length, verb);
  const { policyDefect } = await import('../proofs/checkpoint.js');
  const defect = policyDefect({ log, witnesses, quorum });
  if (defect) throw new UsageError(`the policy cannot be used: ${defect}`, verb);
  return { log, witnesses, quorum };
}

/**
 * A pinned earlier checkpoint: read, parsed, and — with a log key — its log signature verified. Anything
 * that makes it unusable is a usage error (exit 2): a pin never falls back to "not pinned".
 */
export async function pinnedCheckpoint(
  path: string,
  policy: import('../proofs/index.js').CheckpointPolicy | null,
  verb: string,
): Promise<import('../proofs/index.js').TreeHead> {
  const { parseNote, parseCheckpoint, verifyCheckpoint } = await proofs();
  const note = await readSmall(path, 'checkpoint', verb);
  if (policy) {
    // The whole policy, witnesses and quorum too (--help says so): a pin that fails it is unusable.
    const v = verifyCheckpoint(note, policy);
    if (!v.ok)
      throw new UsageError(`--checkpoint ${path} cannot be used: ${v.problems.map((p) => p.message).join('; ')}`, verb);
    return v.checkpoint!;
  }
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.note.text) : null;
  if (!cp?.ok)
    throw new UsageError(
      `--checkpoint ${path} cannot be used: ${parsed.ok ? (cp as { problem: { message: string } }).problem.message : parsed.problem.message}`,
      verb,
    );
  return cp.checkpoint;
}
