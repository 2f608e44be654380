/**
 * Format `stepchain/v2`, interim (spec/FORMAT.md §12): the v1 step record with `v` = 2, hashed by salted
 * slot commitments (commitments.ts) instead of over its raw values. This file stands in for the run
 * journal's own v2 profile (issue 17: run identity, boundary records) until that lands; the merge keeps
 * that profile's members and genesis and wraps it with commitProfiles exactly as below.
 */
import { canonicalValue } from '../canonical/value.js';
import { isValidId, isValidTimestamp } from './fields.js';
import { commitProfiles } from './commitments.js';
import type { JournalFormat, MemberRule, RecordProfile } from './profile.js';
import { STEP_V1, type StepRecordV1 } from './v1.js';

export const FORMAT_V2 = 'stepchain/v2';
export const RECORD_VERSION_V2 = 2;

export interface GenesisV2 {
  format: typeof FORMAT_V2;
  journal_id: string;
  created_at: string;
}

/** A stored (private-form) v2 step record: v1's members, `v` = 2, and the record salt. */
export type StepRecordV2 = Omit<StepRecordV1, 'v'> & { v: 2; salt: string };

const versionRule: MemberRule = {
  name: 'v', required: true, role: 'envelope',
  check: (text, start, end) => {
    const v = canonicalValue(text, start, end);
    if (v === RECORD_VERSION_V2) return null;
    return typeof v === 'number'
      ? { code: 'UNSUPPORTED_VERSION', message: `record version ${v} is not supported in a stepchain/v2 journal; it holds version 2` }
      : { message: 'v must be the number 2' };
  },
};

const BASE: RecordProfile = {
  ...STEP_V1,
  id: 'step/v2',
  version: RECORD_VERSION_V2,
  members: STEP_V1.members.map((m) => (m.name === 'v' ? versionRule : m)),
};

export const { stored: STEP_V2, published: STEP_V2_PUBLIC } = commitProfiles(BASE);

const GENESIS_MEMBERS = ['created_at', 'format', 'journal_id'] as const;

export const JOURNAL_V2: JournalFormat = {
  format: FORMAT_V2,
  genesisMembers: GENESIS_MEMBERS,
  genesisDefect(g) {
    const keys = Object.keys(g).sort();
    if (keys.join(',') !== GENESIS_MEMBERS.join(',')) {
      return `a stepchain/v2 genesis must have exactly the members created_at, format, journal_id (found ${keys.join(', ') || 'none'})`;
    }
    if (!isValidId(g.journal_id)) return 'genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]';
    if (!isValidTimestamp(g.created_at)) return 'genesis created_at must be an RFC 3339 UTC timestamp with milliseconds';
    return null;
  },
  records: [STEP_V2, STEP_V2_PUBLIC],
  // A public-form record carries `salts` (REDACTION.md §12.2); everything else is read as the stored form.
  select: (member) => (member('salts') !== undefined ? STEP_V2_PUBLIC : STEP_V2),
  memberNames: new Set([...STEP_V2.memberNames, ...STEP_V2_PUBLIC.memberNames]),
};
