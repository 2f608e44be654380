/**
 * What a receipt's checked attestations add to its verdict (spec/TIME.md §7): the sentences of `proves`
 * and `does_not_prove` for the time-stamp tokens and co-signatures that held, and the pin a quorum of
 * pinned co-signers holds. Called once every attestation check passed. Pure; runs in a browser.
 */
import { digestBytes } from '../canonical/sha256.js';
import { pinHeld, settleVerdict } from '../chain/verdict.js';
import type { ReceiptReport } from '../receipt/verify.js';
import type { AttestReport, Cosigner } from './receipt.js';

/** A key id (RECEIPT.md §5): the digest of the raw 32-byte public key. */
const keyIdOf = (key: Uint8Array): string => digestBytes(key);

/** The sentences: who signed what, and the time a TSA vouches for in place of the agent's clock. */
export function describeAttestations(report: ReceiptReport, attest: AttestReport, cosigners: Cosigner[]): void {
  const from = report.range!.from;
  const checked = attest.timestamps.filter((t) => t.checked);
  for (const t of checked) {
    report.proves.push(
      `Steps ${from}–${t.seq} existed no later than ${t.gen_time}, per TSA ${t.tsa}: its RFC 3161 token (serial ${t.serial}) stamps the head at seq ${t.seq}, which each of them is hashed into.`,
    );
  }
  const unchecked = attest.timestamps.length - checked.length;
  if (checked.length > 0) {
    report.does_not_prove = report.does_not_prove.map((s) =>
      s.startsWith('That the recorded content and timestamps are true')
        ? "That the recorded content is true, or any step's own timestamp (the agent's clock): the time-stamping authority fixes only a latest time by which the steps existed, not when each was taken."
        : s,
    );
  } else if (unchecked > 0) {
    report.does_not_prove.push(
      `When the steps existed: the receipt carries ${unchecked} RFC 3161 time-stamp token${unchecked === 1 ? '' : 's'}, not checked; pin the time-stamping authority's certificate (--tsa-cert) to rely on ${unchecked === 1 ? 'it' : 'them'}.`,
    );
  }
  // In the order the caller pinned the co-signers (not the envelopes' keyid order), so the verdict reads the same each time.
  const byKey = new Map<string, string[]>();
  for (const p of cosigners) {
    const keyid = keyIdOf(p.key);
    const ranges = attest.cosignatures
      .filter((c) => c.verified && c.keyid === keyid)
      .map((c) => (c.from === c.to ? `step ${c.to}` : `steps ${c.from}–${c.to}`));
    if (ranges.length > 0) byKey.set(p.name ? `${p.name} (${keyid})` : keyid, ranges);
  }
  for (const [who, ranges] of byKey)
    report.proves.push(
      `Co-signer ${who}, whom you pinned, signed ${ranges.join(', ')} (each statement names the last step's hash, so it covers every step before it too).`,
    );
  const unknown = attest.cosignatures.filter((c) => !c.pinned).length;
  if (unknown > 0)
    report.does_not_prove.push(
      `Who made ${unknown} co-signature${unknown === 1 ? '' : 's'} by keys you did not pin: a key id is a claim until compared with one you trust.`,
    );
  if (cosigners.length > 0 && attest.threshold !== null) {
    pinHeld(
      report,
      `${attest.cosigned_by.length} of the ${cosigners.length} co-signers you pinned (threshold ${attest.threshold}) signed statements over its steps: ${[...byKey.keys()].join('; ')}`,
    );
    settleVerdict(report, 'receipt');
  }
}
