/**
 * The receipt manifest (spec/RECEIPT.md §4): a canonical JSON (RFC 8785) object that names the journal,
 * the range, the head and the digest, size and step count of every other entry. `parseManifest` reads
 * hostile bytes and returns either the manifest or the reasons it is not one; it never throws. Pure.
 */
import { partEntryName, partListOf } from './parts.js';
import { MAX_VALUE_DEPTH } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { isDigest } from '../canonical/sha256.js';
import { hasExactMembers, isObject, isSeq, type Json } from '../canonical/json.js';
import { genesisDefect, type Genesis } from '../record/formats.js';
import { MAX_BLOB_BYTES, MAX_CHAIN_ENTRY_BYTES, MAX_ENTRIES } from './limits.js';
import { BLOCK, paddedSize } from './tar.js';

export const RECEIPT_FORMAT = 'stepchain-receipt/v1';
export const MANIFEST_NAME = 'manifest.json';
export const SIGNATURE_NAME = 'manifest.sig.json';
export const CHAIN_NAME_RE = /^chain\/(\d{16})\.jsonl$/;
export const BLOB_NAME_RE = /^blobs\/([0-9a-f]{64})$/;

export interface ChainEntry {
  digest: string;
  name: string;
  size: number;
  steps: number;
}

export interface BlobEntry {
  digest: string;
  size: number;
}

export interface ReceiptRange {
  from: number;
  /** The prev_hash of step `from`: the genesis hash when from is 0. */
  prev_hash: string;
  to: number;
}

export interface ReceiptManifest {
  blobs: BlobEntry[];
  chain: ChainEntry[];
  exporter: string;
  format: typeof RECEIPT_FORMAT;
  genesis: Genesis;
  head: { seq: number; step_hash: string };
  range: ReceiptRange;
  /** Members defined by extensions (for example a published receipt's anchor and redactions). */
  [extension: string]:
    Json | undefined | BlobEntry[] | ChainEntry[] | Genesis | ReceiptRange | { seq: number; step_hash: string };
}

export const BASE_MEMBERS = ['blobs', 'chain', 'exporter', 'format', 'genesis', 'head', 'range'] as const;

export function chainEntryName(firstSeq: number): string {
  return `chain/${String(firstSeq).padStart(16, '0')}.jsonl`;
}

export function blobEntryName(digest: string): string {
  return `blobs/${digest.slice('sha256:'.length)}`;
}

/**
 * The tar bytes a receipt with this manifest has (spec/RECEIPT.md §6.1): a header, the data and its padding
 * for the manifest, the signature (when present) and every listed entry, then the two-block end marker.
 */
export function declaredArchiveBytes(
  manifestBytes: number,
  signatureBytes: number | null,
  m: Pick<ReceiptManifest, 'chain' | 'blobs'> & { parts?: unknown },
): number {
  let n =
    BLOCK + paddedSize(manifestBytes) + (signatureBytes === null ? 0 : BLOCK + paddedSize(signatureBytes)) + 2 * BLOCK;
  for (const c of m.chain) n += BLOCK + paddedSize(c.size);
  for (const b of m.blobs) n += BLOCK + paddedSize(b.size);
  // A stepchain/v3 receipt's parts (PARTS.md §8), listed by the extension member `parts`.
  for (const p of partListOf(m)) n += BLOCK + paddedSize(p.size);
  return n;
}

/** The entry names in the archive's fixed order (§3.3). */
export function entryNames(m: ReceiptManifest, signed: boolean): string[] {
  return [
    MANIFEST_NAME,
    ...(signed ? [SIGNATURE_NAME] : []),
    ...m.chain.map((c) => c.name),
    ...m.blobs.map((b) => blobEntryName(b.digest)),
    ...partListOf(m).map((p) => partEntryName(p.address)),
  ];
}

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface ManifestReason {
  message: string;
  path: string;
  /** Set when the manifest is well-formed but describes an archive beyond the limits (§6). */
  limit?: true;
}

export type ManifestResult = { ok: true; manifest: ReceiptManifest } | { ok: false; reasons: ManifestReason[] };

/**
 * Parses and checks the manifest bytes. `extensions` lists the extra top-level members this verifier
 * understands (with a check for each); any other member is refused.
 */
export function parseManifest(
  bytes: Uint8Array,
  extensions: Record<string, (value: unknown) => string | null> = {},
): ManifestResult {
  const fail = (message: string, path = ''): ManifestResult => ({ ok: false, reasons: [{ message, path }] });
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return fail('the manifest is not valid UTF-8');
  }
  const scan = scanCanonical(text, { maxDepth: MAX_VALUE_DEPTH });
  if (scan.defect)
    return fail(
      `the manifest is not canonical JSON (RFC 8785): ${scan.defect.reason} (${scan.defect.code} at character ${scan.defect.index + 1})`,
      scan.defect.path,
    );
  if (scan.markers.length > 0)
    return fail('the manifest holds a member name with the reserved prefix "$stepchain:"', scan.markers[0]!.path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail(`the manifest does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isObject(value)) return fail('the manifest must be a JSON object');
  if (value.format !== RECEIPT_FORMAT) {
    return fail(
      `format is ${JSON.stringify(value.format)}; this verifier reads ${JSON.stringify(RECEIPT_FORMAT)}`,
      '/format',
    );
  }
  const reasons: ManifestReason[] = [];
  const bad: Bad = (message, path, limit) => void reasons.push({ message, path, ...(limit ? { limit } : {}) });
  checkMembers(value, extensions, bad);
  if (reasons.length) return { ok: false, reasons };
  checkHeader(value, bad);
  checkChainList(value, bad, reasons);
  checkBlobList(value, bad);
  if (reasons.length) return { ok: false, reasons };
  return { ok: true, manifest: value as ReceiptManifest };
}

type Bad = (message: string, path: string, limit?: true) => void;

/** Every member is a base member or one an extension understands (and passes its check); no base member is missing. */
function checkMembers(
  value: Record<string, unknown>,
  extensions: Record<string, (value: unknown) => string | null>,
  bad: Bad,
): void {
  for (const k of Object.keys(value)) {
    if ((BASE_MEMBERS as readonly string[]).includes(k)) continue;
    const check = extensions[k];
    if (!check) bad(`unknown manifest member ${JSON.stringify(k)}`, `/${k}`);
    else {
      const why = check(value[k]);
      if (why) bad(why, `/${k}`);
    }
  }
  for (const k of BASE_MEMBERS) if (!(k in value)) bad(`required member "${k}" is missing`, `/${k}`);
}

/** exporter, genesis, range and head (§4.2). */
function checkHeader(value: Record<string, unknown>, bad: Bad): void {
  if (typeof value.exporter !== 'string' || value.exporter.length === 0 || value.exporter.length > 256)
    bad('exporter must be a string of 1–256 characters', '/exporter');
  const g = genesisDefect(value.genesis);
  if (g) bad(g, '/genesis');
  const range = value.range;
  if (
    !isObject(range) ||
    !hasExactMembers(range, ['from', 'prev_hash', 'to']) ||
    !isSeq(range.from) ||
    !isSeq(range.to) ||
    !isDigest(range.prev_hash) ||
    range.from > range.to
  ) {
    bad('range must be {"from":<seq>,"prev_hash":"sha256:<hex>","to":<seq>} with from ≤ to', '/range');
  }
  const head = value.head;
  if (
    !isObject(head) ||
    !hasExactMembers(head, ['seq', 'step_hash']) ||
    !isSeq(head.seq) ||
    !isDigest(head.step_hash)
  ) {
    bad('head must be {"seq":<seq>,"step_hash":"sha256:<hex>"}', '/head');
  } else if (isObject(range) && head.seq !== range.to) {
    bad(`head.seq ${head.seq} is not range.to ${String(range.to)}`, '/head/seq');
  }
}

/** The chain entries (§4.2): named for their first seq, in order, contiguous, holding the range's steps. */
function checkChainList(value: Record<string, unknown>, bad: Bad, reasons: readonly ManifestReason[]): void {
  const { chain, range } = value;
  if (!Array.isArray(chain) || chain.length === 0) {
    bad('chain must be a non-empty array', '/chain');
    return;
  }
  let last = -1;
  let steps = 0;
  chain.forEach((c: unknown, i) => {
    const at = `/chain/${i}`;
    if (
      !isObject(c) ||
      !hasExactMembers(c, ['digest', 'name', 'size', 'steps']) ||
      !isDigest(c.digest) ||
      typeof c.name !== 'string' ||
      !isSeq(c.size) ||
      !isSeq(c.steps) ||
      c.steps === 0
    ) {
      bad(
        'a chain entry is {"digest":"sha256:<hex>","name":"chain/<16 digits>.jsonl","size":<bytes>,"steps":<n ≥ 1>}',
        at,
      );
      return;
    }
    const m = CHAIN_NAME_RE.exec(c.name);
    if (!m) {
      bad(`chain entry name ${JSON.stringify(c.name)} is not chain/<16-digit first seq>.jsonl`, `${at}/name`);
      return;
    }
    const first = Number(m[1]);
    if (i === 0 && isObject(range) && first !== range.from)
      bad(
        `the first chain entry is named for seq ${first}, but the range starts at ${String(range.from)}`,
        `${at}/name`,
      );
    if (first <= last) bad('chain entries must be listed in increasing seq order without repeats', `${at}/name`);
    if (i > 0 && first !== steps + (isObject(range) && isSeq(range.from) ? range.from : 0))
      bad(
        `chain entry ${c.name} should start at seq ${steps + Number(isObject(range) ? range.from : 0)} given the step counts before it`,
        `${at}/name`,
      );
    if (c.size > MAX_CHAIN_ENTRY_BYTES)
      bad(`chain entry size ${c.size} exceeds the limit of ${MAX_CHAIN_ENTRY_BYTES}`, `${at}/size`, true);
    last = first;
    steps += c.steps;
  });
  if (
    !reasons.some((r) => !r.limit) &&
    isObject(range) &&
    isSeq(range.from) &&
    isSeq(range.to) &&
    steps !== range.to - range.from + 1
  ) {
    bad(
      `the chain entries hold ${steps} steps, but the range ${range.from}..${range.to} has ${range.to - range.from + 1}`,
      '/chain',
    );
  }
}

/** The blob entries (§4.2): sorted by digest without repeats, within the limits; and the entry count (§6). */
function checkBlobList(value: Record<string, unknown>, bad: Bad): void {
  const { chain, blobs } = value;
  if (!Array.isArray(blobs)) bad('blobs must be an array', '/blobs');
  else {
    let prev = '';
    blobs.forEach((b: unknown, i) => {
      const at = `/blobs/${i}`;
      if (!isObject(b) || !hasExactMembers(b, ['digest', 'size']) || !isDigest(b.digest) || !isSeq(b.size)) {
        bad('a blob entry is {"digest":"sha256:<hex>","size":<bytes>}', at);
        return;
      }
      if (b.digest <= prev) bad('blobs must be sorted by digest without repeats', `${at}/digest`);
      if (b.size > MAX_BLOB_BYTES)
        bad(`blob size ${b.size} exceeds the limit of ${MAX_BLOB_BYTES}`, `${at}/size`, true);
      prev = b.digest;
    });
  }
  if (Array.isArray(chain) && Array.isArray(blobs) && 1 + 1 + chain.length + blobs.length > MAX_ENTRIES) {
    bad(`the manifest lists ${chain.length + blobs.length} entries; an archive holds at most ${MAX_ENTRIES}`, '', true);
  }
}
