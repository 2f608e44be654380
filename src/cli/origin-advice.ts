/** Advice for a checkpoint of another origin than the journal checked against it (spec/PROOFS.md §8.5). */
import type { Journal } from '../index.js';
import { genesisHash } from '../record/formats.js';

/**
 * What to do when the checkpoint's genesis is this journal's and only the id differs: most likely a copy under
 * another name (a directory journal's id is its name, and a checkpoint's origin names the id, spec/PROOFS.md §8.5).
 */
function renamedCopy(
  origin: { journalId: string; genesisHash: string } | null,
  journal: Pick<Journal, 'id' | 'genesis'>,
): string {
  if (origin?.genesisHash !== genesisHash(journal.genesis) || origin.journalId === journal.id) return '';
  return `. The genesis is this journal's and only the id differs: if this is a copy of journal "${origin.journalId}" under another name, check it under that name (a directory journal's id is its name) or check a receipt exported from it`;
}

/**
 * The ORIGIN_MISMATCH message for a checkpoint whose origin (`origin`, parsed: null when it is no journal's)
 * does not name `journal` (its id and genesis hash), else null.
 */
export function originMismatch(
  trustedOrigin: string,
  origin: { journalId: string; genesisHash: string } | null,
  journal: Pick<Journal, 'id' | 'genesis'>,
): string | null {
  if (origin?.journalId === journal.id && origin.genesisHash === genesisHash(journal.genesis)) return null;
  return `ORIGIN_MISMATCH: the checkpoint is of "${trustedOrigin.slice(0, 300)}", not of this journal (${journal.id}, genesis ${genesisHash(journal.genesis)})${renamedCopy(origin, journal)}`;
}
