/**
 * Sealing any record from its members (spec/FORMAT.md §5.2): step_hash is the digest of the JCS of every
 * other member, and the stored line is the JCS of the whole record. The profiles' own seals are faster
 * forms of this one, held to it by test/record/profile.test.ts. Pure: runs in a browser.
 */
import { canonicalJson, canonicalJsonTrusted } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { digestUtf8 } from '../canonical/sha256.js';
import { assertIJson } from '../canonical/validate.js';
import type { StepRecordV1 } from './v1.js';
import type { StepRecordV2 } from './v2.js';

/** A stored record of any version this implementation reads (v1: FORMAT §5.1; v2: §11.2). */
export type StepRecord = StepRecordV1 | StepRecordV2;
export type UnsealedRecord = Omit<StepRecordV1, 'step_hash'> | Omit<StepRecordV2, 'step_hash'>;

/**
 * Seals an assembled record: adds step_hash = digest of the JCS of everything else, and returns the stored
 * line. The record's content may hold markers (blob references, redactions), so the reserved-name check is
 * the caller's job, done on user data before markers were substituted.
 *
 * JCS of an object is "{" + its sorted members joined by "," + "}", so the preimage and the line are
 * assembled from the same canonical member texts: one serialization of each value, and the top-level
 * step_hash member lands in its sorted place without searching text that user content could imitate.
 */
export function sealRecord(record: UnsealedRecord): { record: StepRecord; line: string } {
  assertIJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH });
  const texts: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) if (value !== undefined) texts[key] = canonicalJsonTrusted(value);
  const { stepHash, line } = sealMemberTexts(texts);
  return { record: { ...record, step_hash: stepHash }, line };
}

/**
 * The step hash and the stored line from the canonical text of each member's value, keyed by member name
 * (everything but step_hash). The caller vouches that each text is the JCS of a valid value.
 */
export function sealMemberTexts(texts: Readonly<Record<string, string>>): { stepHash: string; line: string } {
  const names = Object.keys(texts).sort();
  const members = names.map((name) => `${JSON.stringify(name)}:${texts[name]}`);
  const stepHash = digestUtf8(`{${members.join(',')}}`);
  let at = names.findIndex((name) => name > 'step_hash');
  if (at < 0) at = members.length;
  members.splice(at, 0, `"step_hash":${JSON.stringify(stepHash)}`);
  return { stepHash, line: `{${members.join(',')}}\n` };
}

export function computeStepHash(record: UnsealedRecord): string {
  return digestUtf8(canonicalJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH }));
}
