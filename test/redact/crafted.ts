/**
 * Published receipts built by hand for the verifier's rules: a v1 chain of chosen contents sealed afresh
 * (test/helpers/chains.ts), its manifest written here with the `anchor` and `redactions` a case needs —
 * the publisher refuses to write what these cases plant. Unsigned.
 */
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { genesisHash, type Json } from '../../src/record/index.js';
import { blobEntryName, MANIFEST_NAME } from '../../src/receipt/manifest.js';
import type { AnchorBlock, Declaration } from '../../src/redact/anchor.js';
import { buildChain, type ContentSpec } from '../helpers/chains.js';
import { tarOf, text, type RawEntry } from '../receipt/craft.js';

export const D = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;
export const R = '$stepchain:redacted';
/** A valid redaction marker of rule `rule`. */
export const marker = (rule = 'r', extra: Record<string, Json> = {}): Json => ({
  [R]: { commitment: D(77), rule, ...extra },
});
export const blobRef = (bytes: Uint8Array): Json => ({
  '$stepchain:blob': { digest: digestBytes(bytes), size: bytes.length },
});

export interface Craft {
  contents: ContentSpec[];
  redactions?: Declaration[] | null;
  /** Replaces members of the anchor consistent with the rest (null: no anchor member). */
  anchor?: Partial<AnchorBlock> | null;
  blobs?: Uint8Array[];
  /** The first seq the receipt holds (a partial range when above 0). */
  from?: number;
  /** Chain entries of this many steps each (one entry by default). */
  perEntry?: number;
  /** Edits the sealed lines (each with its newline) before they are packed. */
  lines?: (lines: string[]) => string[];
  /** Edits the archive's entries before they are tarred. */
  entries?: (e: RawEntry[]) => RawEntry[];
  /** Zero bytes after the end marker. */
  trailing?: number;
  /** A `publication` member (REDACTION §12.4), or the `redactions` member's raw value. */
  publication?: Json;
  rawRedactions?: Json;
}

/** A published receipt (unsigned) of the chain of `contents`, with the manifest members a case asks for. */
export function craft(c: Craft): Uint8Array {
  const chain = buildChain(c.contents);
  const from = c.from ?? 0;
  const lines = (c.lines ? c.lines(chain.lines.slice()) : chain.lines).slice(from);
  const per = c.perEntry ?? lines.length;
  const chainEntries: RawEntry[] = [];
  for (let i = 0; i < lines.length; i += per) {
    const data = text(lines.slice(i, i + per).join(''));
    chainEntries.push({ name: `chain/${String(from + i).padStart(16, '0')}.jsonl`, data });
  }
  const blobs = [...(c.blobs ?? [])].sort((a, b) => (digestBytes(a) < digestBytes(b) ? -1 : 1));
  const redactions = c.redactions === undefined ? [] : c.redactions;
  const n = chain.lines.length;
  const first = redactions && redactions.length > 0 ? redactions[0]!.seq : n;
  const anchor =
    c.anchor === null
      ? null
      : {
          commitments: Array.from({ length: n - first }, (_, i) => D(1000 + i)),
          format: 'stepchain-redaction/v2',
          genesis_hash: genesisHash(chain.genesis),
          length: n,
          policy_digest: D(5),
          redacted_from: first,
          ...c.anchor,
        };
  const last = chain.records[n - 1]!;
  const manifest = {
    ...(anchor ? { anchor } : {}),
    blobs: blobs.map((b) => ({ digest: digestBytes(b), size: b.length })),
    chain: chainEntries.map((e, i) => ({
      digest: digestBytes(e.data),
      name: e.name,
      size: e.data.length,
      steps: Math.min(per, lines.length - i * per),
    })),
    exporter: 'stepchain/0.1.0',
    format: 'stepchain-receipt/v1',
    genesis: chain.genesis,
    head: { seq: last.seq, step_hash: last.step_hash },
    range: {
      from,
      prev_hash: from === 0 ? genesisHash(chain.genesis) : chain.records[from - 1]!.step_hash,
      to: last.seq,
    },
    ...(c.publication !== undefined ? { publication: c.publication } : {}),
    ...(redactions ? { redactions } : {}),
    ...(c.rawRedactions !== undefined ? { redactions: c.rawRedactions } : {}),
  };
  const entries: RawEntry[] = [
    { name: MANIFEST_NAME, data: text(canonicalJson(manifest as never)) },
    ...chainEntries,
    ...blobs.map((b) => ({ name: blobEntryName(digestBytes(b)), data: b })),
  ];
  return tarOf(c.entries ? c.entries(entries) : entries, { trailing: c.trailing ?? 0 });
}
