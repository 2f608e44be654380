/**
 * The origin of a stepchain journal's checkpoints (spec/PROOFS.md §8.5):
 * `<authority>/<journal id>/<hex of the genesis hash>`. The authority names who runs the store, the
 * journal id is the store's name for the journal (a fork has its parent's genesis but its own id), and
 * the genesis hash binds the signed tree to the genesis a receipt claims. Pure.
 */
import { ProofError } from './problems.js';

export interface JournalOrigin {
  /** Lowercase DNS name, optionally followed by path segments: `agents.example.com` or `example.com/team-a`. */
  authority: string;
  /** The journal's id in its store (spec/FILE-STORE.md §3). */
  journalId: string;
  /** The journal's genesis hash, `sha256:` + 64 hex digits. */
  genesisHash: string;
}

/** An origin is at most 255 bytes, so it fits every C2SP cosignature format (ML-DSA's `log_origin<1..255>`). */
export const MAX_ORIGIN_BYTES = 255;

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';
const AUTHORITY_RE = new RegExp(`^${LABEL}(?:\\.${LABEL})*(?:/[A-Za-z0-9._~-]+)*$`);
const JOURNAL_ID_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;
const GENESIS_RE = /^sha256:[0-9a-f]{64}$/;

function defect(o: JournalOrigin): string | null {
  if (
    typeof o?.authority !== 'string' ||
    !AUTHORITY_RE.test(o.authority) ||
    o.authority.split('/').some((s) => s === '.' || s === '..')
  ) {
    return `authority "${String(o?.authority)}" is not a lowercase DNS name optionally followed by /path segments`;
  }
  if (typeof o.journalId !== 'string' || !JOURNAL_ID_RE.test(o.journalId) || o.journalId.includes('..'))
    return `journal id "${String(o.journalId)}" is not a store id (FILE-STORE.md §3)`;
  if (typeof o.genesisHash !== 'string' || !GENESIS_RE.test(o.genesisHash)) return 'the genesis hash is not a digest';
  return null;
}

/** The origin of a journal. Throws ProofError ARGUMENT_INVALID for parts outside §8.5's grammar or an origin over 255 bytes. */
export function journalOrigin(o: JournalOrigin): string {
  const why = defect(o);
  if (why) throw new ProofError('ARGUMENT_INVALID', why);
  const origin = `${o.authority}/${o.journalId}/${o.genesisHash.slice(7)}`;
  if (origin.length > MAX_ORIGIN_BYTES)
    throw new ProofError('ARGUMENT_INVALID', `the origin is ${origin.length} bytes, more than ${MAX_ORIGIN_BYTES}`, {
      hint: 'use a shorter authority or journal id',
    });
  return origin;
}

/** The parts of a journal origin, or null for any other origin. */
export function parseJournalOrigin(origin: string): JournalOrigin | null {
  if (typeof origin !== 'string' || origin.length > MAX_ORIGIN_BYTES) return null;
  const parts = origin.split('/');
  if (parts.length < 3) return null;
  const o = {
    authority: parts.slice(0, -2).join('/'),
    journalId: parts.at(-2)!,
    genesisHash: 'sha256:' + parts.at(-1)!,
  };
  return defect(o) === null ? o : null;
}
