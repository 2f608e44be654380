/**
 * The `publication` manifest member of a published `stepchain/v2` receipt (spec/REDACTION.md §12.4): its
 * shape, and which chain lines such a receipt may carry. Pure: the published-receipt verifier uses it.
 */
import { isObject } from '../canonical/json.js';
import { isDigest } from '../canonical/sha256.js';

/** Version 3 of the publication: commitment hashing, no re-anchoring (version 2 is the anchor of §6). */
export const COMMITTED_PUBLICATION_FORMAT = 'stepchain-redaction/v3';

/** Version 4: a `stepchain/v3` journal published unit by unit, everything shown bound to the head (§13). */
export const COMMITTED_PUBLICATION_FORMAT_V3 = 'stepchain-redaction/v4';

export interface PublicationBlock {
  format: typeof COMMITTED_PUBLICATION_FORMAT | typeof COMMITTED_PUBLICATION_FORMAT_V3;
  policy_digest: string;
}

export interface PublicationBlockV3 extends PublicationBlock {
  format: typeof COMMITTED_PUBLICATION_FORMAT_V3;
}

/** Why a `publication` member breaks §12.4, or null. */
export function publicationDefect(value: unknown): string | null {
  if (!isObject(value) || Object.keys(value).sort().join(',') !== 'format,policy_digest')
    return 'publication must be {"format","policy_digest"} and nothing else';
  if (value.format !== COMMITTED_PUBLICATION_FORMAT && value.format !== COMMITTED_PUBLICATION_FORMAT_V3) {
    return `publication.format is ${JSON.stringify(value.format)}; this verifier reads ${JSON.stringify(COMMITTED_PUBLICATION_FORMAT)} and ${JSON.stringify(COMMITTED_PUBLICATION_FORMAT_V3)}`;
  }
  if (!isDigest(value.policy_digest)) return 'publication.policy_digest must be a digest';
  return null;
}
