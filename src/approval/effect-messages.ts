/**
 * The approval ledger's messages for an effect naming a request (spec/APPROVALS.md §5 step 3, step 5): kept apart
 * so the ledger reads as its checks. Pure; runs in a browser.
 */
import type { RequestState } from './ledger-types.js';

const q = (v: unknown): string => JSON.stringify(v);

export const metaHidden = (id: string, seq: number): string =>
  `seq ${seq}: effect ${q(id)} has a withheld or erased meta: whether it was begun for an approval request is not checked`;

export const outsideRange = (id: string, seq: number, rid: string | null): string =>
  `seq ${seq}: effect ${q(id)} names approval request ${q(rid)}, which is not in this range: its grant is not checked`;

export const noSuchRequest = (id: string, seq: number, rid: string | null): string =>
  `seq ${seq}: effect ${q(id)} names approval request ${q(rid)}, which is no request earlier in this chain`;

export const otherHash = (id: string, seq: number, rid: string, given: unknown, hash: string): string =>
  `seq ${seq}: effect ${q(id)} names request ${q(rid)} with step hash ${String(given)}, but that request is ${hash}`;

export const copiedRequest = (id: string, seq: number, rid: string, requestSeq: number, forked: number): string =>
  `seq ${seq}: effect ${q(id)} names request ${q(rid)} (seq ${requestSeq}), which this fork copied from its parent (steps 0–${forked}): a decision on it is the parent's too, so it authorises no effect in the fork; request approval again in the fork`;

export function deniedRequest(id: string, seq: number, rid: string, d: NonNullable<RequestState['decision']>): string {
  const name = d.approver.name;
  const by =
    name === null ? '' : ` by ${d.approver.pinned ? name : `a key calling itself ${q(name)} (unpinned, self-named)`}`;
  return `seq ${seq}: effect ${q(id)} was begun for request ${q(rid)}, which was denied at seq ${d.seq}${by}`;
}

/** `ts`: the effect's own instant (null when unreadable), `at`: its time by chain order, `given`: its ts as written. */
export function afterExpiry(
  id: string,
  seq: number,
  rid: string,
  t: { ts: number | null; at: number; given: unknown },
  expiresAt: string,
): string {
  const when =
    t.ts !== null && t.ts < t.at
      ? `after a record dated ${new Date(t.at).toISOString()} (its own ts ${String(t.given)} is earlier than the chain before it)`
      : `at ${String(t.given)}`;
  return `seq ${seq}: effect ${q(id)} was begun ${when}, after request ${q(rid)} expired (${expiresAt})`;
}

export const grantHidden = (id: string, seq: number, rid: string): string =>
  `seq ${seq}: effect ${q(id)} was begun for request ${q(rid)}, whose decision or presentation is withheld or erased: its grant is not checked`;

export const notGranted = (id: string, seq: number, rid: string): string =>
  `seq ${seq}: effect ${q(id)} was begun for request ${q(rid)}, which no valid decision granted before it`;

export const callHidden = (id: string, seq: number): string =>
  `seq ${seq}: effect ${q(id)}'s call or its request's presentation is withheld or erased: they are not compared`;
