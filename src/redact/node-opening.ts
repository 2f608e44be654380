/**
 * Disclosing a withheld unit of a stepchain/v3 publication (spec/REDACTION.md §13.7), for `stepchain disclose
 * --journal` and `discloseUnit`: a v3 publication has no secrets file — every unit's salt derives from its
 * record's seed, which never leaves the journal — so the opening is made from the journal it was published from,
 * and checked against the receipt before anything is written. Before, the default format's publications
 * could not be disclosed from the CLI or the package's entry points at all (outsider M). Node only: it reads
 * files.
 */
import { readFile } from 'node:fs/promises';
import { scanCanonical } from '../canonical/scan.js';
import type { ChainSource } from '../chain/source.js';
import { DISCLOSURE_FORMAT, invalidProofReport, type DisclosureReport } from './disclose.js';
import { HASH_DISCLOSURE_FORMAT } from './disclose-hash.js';
import { STEP_DISCLOSURE_FORMAT } from './disclose-step.js';
import { RedactError } from './errors.js';
import { readReceiptBytes, verifyDisclosureFiles, writeProof } from './node.js';
import { COMMITTED_PUBLICATION_FORMAT_V3 } from './publication.js';
import { openUnitV3, UNIT_OPENING_FORMAT, verifyUnitOpening, type UnitOpening } from './v3-opening.js';
import { verifyPublishedReceipt, type VerifyPublishedOptions } from './verify.js';

/**
 * The opening of the unit withheld at `seq`, `path` (with `chunk`: that chunk of the string there) of the v3
 * publication at `receiptPath`, made from `journal` and checked against the receipt; written to `out` (mode 0600,
 * never overwriting) when given. RedactError when the receipt is not a v3 publication, or nothing is withheld there.
 */
export async function discloseUnit(
  receiptPath: string,
  options: { journal: ChainSource; seq: number; path: string; chunk?: number; out?: string },
): Promise<{ proof: UnitOpening; report: DisclosureReport }> {
  const bytes = await readReceiptBytes(receiptPath);
  const published = await verifyPublishedReceipt(bytes);
  if (!published.ok || published.manifest_digest === null)
    throw new RedactError(
      'RECEIPT_INVALID',
      `${receiptPath} does not verify as a publication: ${published.problems[0]?.code ?? 'no publication'}`,
    );
  if (published.publication?.format !== COMMITTED_PUBLICATION_FORMAT_V3)
    throw new RedactError(
      'ARGUMENT_INVALID',
      `${receiptPath} is not a stepchain/v3 publication: disclose its values from the secrets file publish wrote (--secrets)`,
    );
  const proof = await openUnitV3(options.journal, options.seq, options.path, published.manifest_digest, options.chunk);
  const report = asDisclosure(await verifyUnitOpening(bytes, proof), proof);
  if (!report.ok) {
    const p = report.problems[0]!;
    // Another journal's seed gives other salts: the opening gives another digest than the receipt shows.
    const mismatch = p.code === 'COMMITMENT_MISMATCH';
    throw new RedactError(
      mismatch ? 'RECEIPT_INVALID' : 'ARGUMENT_INVALID',
      `the opening does not verify against ${receiptPath}: ${p.code}: ${p.message}${mismatch ? ' (is it the journal this receipt was published from?)' : ''}`,
    );
  }
  if (options.out !== undefined) await writeProof(options.out, proof);
  return { proof, report };
}

/**
 * Checks a proof file against a receipt file, whatever the proof: a unit opening of a v3 publication here,
 * anything else as verifyDisclosureFiles does. Never throws on their content.
 */
export async function verifyProofFile(
  receiptPath: string,
  proofPath: string,
  options: Omit<VerifyPublishedOptions, 'locate'> = {},
): ReturnType<typeof verifyDisclosureFiles> {
  let text: string;
  try {
    text = strictUtf8.decode(await readFile(proofPath));
  } catch (e) {
    // Unreadable: verifyDisclosureFiles says why; not UTF-8: refused here.
    if (!(e instanceof TypeError)) return verifyDisclosureFiles(receiptPath, proofPath, options);
    return invalidProofReport(`${proofPath} is not UTF-8 text`);
  }
  // I-JSON (RFC 7493), as REDACTION.md §13.7 asks: JSON.parse alone keeps the last of two members of one name,
  // so a proof read by another parser could say another value than the one checked here (outsider N).
  const defect = scanCanonical(text, { members: false }).defect;
  if (defect !== null && defect.code !== 'NONCANONICAL_LINE')
    return invalidProofReport(`${proofPath} is not I-JSON: ${defect.code}: ${defect.reason}`);
  const proof = JSON.parse(text) as unknown;
  const format = (proof as { format?: unknown } | null)?.format;
  if (typeof format === 'string' && !KNOWN.includes(format) && !format.startsWith('stepchain-step-disclosure/'))
    return invalidProofReport(
      `${proofPath} is a proof of format ${JSON.stringify(format.slice(0, 80))}, which this verifier does not know (it knows ${KNOWN.join(', ')})`,
    );
  if (format !== UNIT_OPENING_FORMAT) return verifyDisclosureFiles(receiptPath, proofPath, options);
  const bytes = await readReceiptBytes(receiptPath);
  return asDisclosure(await verifyUnitOpening(bytes, proof, options), proof as UnitOpening);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
/** The proofs `disclose --check` reads (a withdrawn step-disclosure format goes on to say why it is refused). */
const KNOWN = [DISCLOSURE_FORMAT, STEP_DISCLOSURE_FORMAT, HASH_DISCLOSURE_FORMAT, UNIT_OPENING_FORMAT];

/** A unit opening's report in the shape of a value's disclosure (the CLI's and a caller's one reading). */
function asDisclosure(r: Awaited<ReturnType<typeof verifyUnitOpening>>, proof: Partial<UnitOpening>): DisclosureReport {
  const at = `seq ${String(r.seq)}, ${String(r.path)}${proof.chunk === undefined ? '' : ` chunk ${proof.chunk}`}`;
  return {
    ok: r.ok,
    problems: r.problems,
    seq: r.seq,
    path: r.path,
    ...(typeof proof.chunk === 'number' ? { chunk: proof.chunk } : {}),
    rule: null,
    value: r.ok ? r.value : null,
    manifest_digest: typeof proof.manifest_digest === 'string' ? proof.manifest_digest : null,
    receipt: null,
    proves: r.ok
      ? [
          `The unit withheld at ${at} of the published receipt ${String(proof.manifest_digest)} is the disclosed value: its salts and value give the digest the receipt shows at that place, which its record's root, and so its head, binds.`,
        ]
      : [],
  };
}
