/**
 * Parts in a receipt (spec/PARTS.md §8): a full receipt of a stepchain/v3 journal carries each part its
 * records reach — directly, inside another part, or as a list's base — once, as the entry `parts/<address
 * hex>` after the chain and blob entries, listed in the manifest member `parts`
 * ([{address, digest, size}], sorted by address). The writer collects and checks them; the verifier checks
 * each entry against its listing and its shape (PARTS.md §9 steps 3–5), and at the end that every reference
 * met names a listed part that came, and every listed part was referenced. Pure.
 */
import type { Json } from '../canonical/json.js';
import { digestBytes } from '../canonical/sha256.js';
import type { Problem, ProblemLocation } from '../chain/report.js';
import {
  MAX_PART_BYTES,
  partMarker,
  parsePartFile,
  partRefsIn,
  partRefsOfFile,
  type PartFile,
  type PartRef,
  type PartSource,
} from '../record/v3/parts.js';
import { tooDeepFrom } from '../record/v3/part-depth.js';
import {
  checkPublicPart,
  isPublicPartFile,
  parsePublicPartFile,
  publicPartRefsIn,
  type PublicPartFile,
} from '../record/v3/public-part.js';
import { FatalProblem } from './problems.js';
import type { TarEntry, TarReader } from './tar-reader.js';

export const PARTS_MEMBER = 'parts';
export const PART_NAME_RE = /^parts\/([0-9a-f]{64})$/;
/** The record slots whose values may hold references (every v3 slot but meta). */
const PART_SLOTS = ['error', 'input', 'model', 'prompt', 'result', 'tool_call'] as const;

export interface PartEntry {
  address: string;
  /** SHA-256 of the part file (the references' `file`). */
  digest: string;
  size: number;
}

export function partEntryName(address: string): string {
  return `parts/${address.slice('sha256:'.length)}`;
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

/** The manifest's `parts` member, checked (an extension check: null when well formed). */
export function checkPartList(value: unknown): string | null {
  if (!Array.isArray(value)) return 'parts must be an array';
  let prev = '';
  for (const [i, e] of value.entries()) {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) return `parts/${i} is not {"address","digest","size"}`;
    const o = e as Record<string, unknown>;
    if (
      Object.keys(o).length !== 3 ||
      typeof o.address !== 'string' ||
      !DIGEST_RE.test(o.address) ||
      typeof o.digest !== 'string' ||
      !DIGEST_RE.test(o.digest) ||
      typeof o.size !== 'number' ||
      !Number.isSafeInteger(o.size) ||
      o.size < 0
    ) {
      return `parts/${i} is not {"address":"sha256:<hex>","digest":"sha256:<hex>","size":<bytes>}`;
    }
    if (o.address <= prev) return 'parts must be sorted by address without repeats';
    prev = o.address;
  }
  return null;
}

/** The listed parts of a manifest that passed checkPartList (none when it has no `parts`). */
export function partListOf(m: Record<string, unknown>): PartEntry[] {
  return Array.isArray(m[PARTS_MEMBER]) ? (m[PARTS_MEMBER] as PartEntry[]) : [];
}

/** Every public reference (`{"digest": A}` alone) in a public record's part slots, with its JSON Pointer. */
function linePublicRefs(text: string): { address: string; path: string }[] {
  if (!text.includes('"$stepchain:part":{"digest":"sha256:')) return [];
  let record: Record<string, Json>;
  try {
    record = JSON.parse(text) as Record<string, Json>;
  } catch {
    return [];
  }
  if (record === null || typeof record !== 'object' || !('secrets' in record)) return [];
  const out: { address: string; path: string }[] = [];
  for (const slot of PART_SLOTS) {
    const v = record[slot];
    if (v !== null && typeof v === 'object') for (const r of publicPartRefsIn(v, `/${slot}`)) out.push(r);
  }
  return out;
}

/** Every reference in a stored line's part slots, with its JSON Pointer (a line that does not parse has none). */
export function lineRefs(text: string): { ref: PartRef; path: string }[] {
  // No reference's member name in the line (JCS writes it as this exact text): no second parse.
  if (!text.includes('"$stepchain:part"')) return [];
  let record: Record<string, Json>;
  try {
    record = JSON.parse(text) as Record<string, Json>;
  } catch {
    return [];
  }
  if (record === null || typeof record !== 'object') return [];
  const out: { ref: PartRef; path: string }[] = [];
  for (const slot of PART_SLOTS) {
    const v = record[slot];
    if (v !== null && typeof v === 'object') for (const ref of partRefsIn(v, `/${slot}`)) out.push(ref);
  }
  return out;
}

/** Where a receipt's writer gets parts from: a journal with parts (a v3 journal of any store). */
export function partSourceOf(source: object): PartSource | null {
  const parts = (source as { parts?: { store?: { get?: unknown } } | null }).parts;
  const get = parts?.store?.get;
  if (typeof get !== 'function') return null;
  return (a, size) => (get as PartSource).call(parts!.store, a, size);
}

export type PartProblemCode = 'PART_MISSING' | 'PART_CORRUPT' | 'PART_ADDRESS_MISMATCH';

/** The verifier's side: references met in lines and in part entries, against the listing and the entries read. */
export class ReceiptParts {
  private readonly listed = new Map<string, PartEntry>();
  /** Addresses whose entry came and checked out, with the references inside them. */
  private readonly came = new Set<string>();
  /** The first reference met for each address, where it was met. */
  private readonly referenced = new Map<string, { ref: PartRef; at: ProblemLocation }>();
  /** The first reference of each address met in a record, where: how deep references nest is counted from there. */
  private readonly fromRecords = new Map<string, ProblemLocation>();
  /** Each private part entry that came, with only its references kept (what their nesting depth needs). */
  private readonly shapes = new Map<string, PartFile>();

  /** A published receipt's public part files (REDACTION.md §13.10), checked deep at the end. */
  private readonly publicFiles = new Map<string, PublicPartFile>();
  /** Addresses met through a public reference: their files must be public ones, and give the address. */
  private readonly publicRefs = new Set<string>();

  constructor(
    list: readonly PartEntry[],
    /** Observes every public part file whose address checked (the publication's declaration checks). */
    private readonly onPublicPart?: (address: string, file: PublicPartFile) => void,
  ) {
    for (const e of list) this.listed.set(e.address, e);
  }

  /** A verified chain line: its references, each to a listed part of the size and digest the reference records. */
  line(
    text: string,
    seq: number | null,
    file: string | undefined,
    add: (code: PartProblemCode, message: string, at: ProblemLocation) => void,
  ): void {
    const at = (path: string): ProblemLocation => ({
      ...(file === undefined ? {} : { file }),
      ...(seq === null ? {} : { seq }),
      path,
    });
    for (const { ref, path } of lineRefs(text)) {
      if (!this.fromRecords.has(ref.digest)) this.fromRecords.set(ref.digest, at(path));
      this.reference(ref, at(path), add);
    }
    for (const { address, path } of linePublicRefs(text)) this.publicReference(address, at(path), add);
  }

  /** A public reference names an address only: the part's public file is bound by its address (checked at the end). */
  private publicReference(
    address: string,
    at: ProblemLocation,
    add: (code: PartProblemCode, message: string, at: ProblemLocation) => void,
  ): void {
    this.publicRefs.add(address);
    if (this.referenced.has(address)) return;
    this.referenced.set(address, { ref: { digest: address, file: '', size: 0 }, at });
    if (!this.listed.has(address))
      add('PART_MISSING', `the reference names part ${address}, which the manifest does not list`, at);
  }

  private reference(
    ref: PartRef,
    at: ProblemLocation,
    add: (code: PartProblemCode, message: string, at: ProblemLocation) => void,
  ): void {
    const first = !this.referenced.has(ref.digest);
    if (first) this.referenced.set(ref.digest, { ref, at });
    const e = this.listed.get(ref.digest);
    // Every reference, not only an address's first, is held to the listing (PARTS.md §9 step 3): a later one
    // naming another size or digest passed unseen (outsider K).
    if (e === undefined) {
      if (first) add('PART_MISSING', `the reference names part ${ref.digest}, which the manifest does not list`, at);
    } else if (e.digest !== ref.file || e.size !== ref.size)
      add(
        'PART_CORRUPT',
        `the reference records part ${ref.digest} as ${ref.size} bytes with digest ${ref.file}; the manifest lists ${e.size} bytes, ${e.digest}`,
        at,
      );
  }

  /** Whether `name` is a listed part's entry name (for the archive's fixed order). */
  names(): string[] {
    return [...this.listed.keys()].map(partEntryName);
  }

  /** A part entry read from the archive (within the part size limit), then checked by `entry`. */
  async read(
    tar: TarReader,
    entry: TarEntry,
    add: (code: PartProblemCode, message: string, at: ProblemLocation) => void,
  ): Promise<void> {
    if (entry.size > MAX_PART_BYTES)
      throw new FatalProblem('ARCHIVE_LIMIT', `part entry is ${entry.size} bytes; the limit is ${MAX_PART_BYTES}`, {
        file: entry.name,
      });
    tar.reserveData(entry);
    this.entry(entry.name, await tar.readData(entry), add);
  }

  /** A part entry's bytes: against its listing, then its shape; its own references are met here. */
  entry(
    name: string,
    bytes: Uint8Array,
    add: (code: PartProblemCode, message: string, at: ProblemLocation) => void,
  ): void {
    const address = 'sha256:' + PART_NAME_RE.exec(name)![1]!;
    const e = this.listed.get(address)!;
    const at: ProblemLocation = { file: name };
    if (bytes.length !== e.size) {
      add('PART_CORRUPT', `part entry is ${bytes.length} bytes; the manifest lists ${e.size}`, at);
      return;
    }
    const digest = digestBytes(bytes);
    if (digest !== e.digest) {
      add('PART_CORRUPT', `part entry hashes to ${digest}; the manifest lists ${e.digest}`, at);
      return;
    }
    if (isPublicPartFile(bytes)) {
      const p = parsePublicPartFile(bytes);
      if (typeof p === 'string') {
        add('PART_CORRUPT', `public part entry ${p}`, at);
        return;
      }
      this.publicFiles.set(address, p);
      this.came.add(address);
      if (p.kind === 'list') this.publicReference(p.base, { file: name, path: '/base' }, add);
      if (p.kind !== 'media')
        for (const r of publicPartRefsIn(
          p.kind === 'value' ? p.value : p.tail,
          p.kind === 'value' ? '/value' : '/tail',
        ))
          this.publicReference(r.address, { file: name, path: r.path }, add);
      return;
    }
    const f = parsePartFile(bytes);
    if (typeof f === 'string') {
      add('PART_CORRUPT', `part entry ${f}`, at);
      return;
    }
    this.came.add(address);
    for (const inner of partRefsOfFile(f)) this.reference(inner, { file: name }, add);
    if (f.kind !== 'media') {
      const refs = partRefsIn(f.kind === 'value' ? f.value : f.tail).map((r) => partMarker(r.ref));
      this.shapes.set(address, f.kind === 'value' ? { ...f, value: refs } : { ...f, tail: refs });
    }
  }

  /**
   * The deep tier of every public part file (REDACTION.md §13.10): its address from what it shows, a list's
   * over its base's elements (base chains followed without recursion, each part once); and a part met
   * through a public reference must be a public file — a private reference's F and size do not bind a file
   * that no address was checked for.
   */
  private checkPublic(add: (code: PartProblemCode, message: string, at: ProblemLocation) => void): void {
    const elements = new Map<string, Uint8Array[] | null>(); // address → element digests (null: not an array)
    const failed = new Set<string>();
    for (const address of this.publicRefs) {
      if (this.came.has(address) && !this.publicFiles.has(address)) {
        add('PART_CORRUPT', `part ${address} is referenced by a public record but its entry is a private part file`, {
          file: partEntryName(address),
        });
        failed.add(address);
      }
    }
    for (const start of [...this.publicFiles.keys()].sort()) {
      // The chain of bases still to check, bottom first.
      const chain: string[] = [];
      for (let a: string | null = start; a !== null && !elements.has(a) && !failed.has(a);) {
        if (chain.includes(a)) {
          add('PART_CORRUPT', `part ${a}'s base chain loops`, { file: partEntryName(a) });
          break;
        }
        chain.push(a);
        const f = this.publicFiles.get(a);
        a = f?.kind === 'list' ? f.base : null;
      }
      for (let i = chain.length - 1; i >= 0; i--) {
        const a = chain[i]!;
        const f = this.publicFiles.get(a);
        if (f === undefined) {
          failed.add(a);
          continue;
        }
        const base = f.kind === 'list' ? (elements.get(f.base) ?? null) : null;
        const r = checkPublicPart(f, a, base);
        if (!r.ok) {
          failed.add(a);
          add(r.code, `public part ${a}: ${r.message}`, {
            file: partEntryName(a),
            ...(r.path ? { path: r.path } : {}),
          });
          continue;
        }
        elements.set(a, r.elements);
        this.onPublicPart?.(a, f);
      }
    }
  }

  /** At the end: a listed part no reference reached, and a referenced part whose entry never came. */
  finish(add: (code: PartProblemCode | 'ENTRY_UNEXPECTED', message: string, at: ProblemLocation) => void): void {
    if (this.publicFiles.size > 0 || this.publicRefs.size > 0) this.checkPublic(add);
    // References nest at most MAX_PART_DEPTH deep from a record (PARTS.md §10), as readers of the parts refuse.
    const depths = new Map<string, number>();
    for (const [address, at] of this.fromRecords) {
      const message = tooDeepFrom(address, '', this.shapes, depths);
      if (message !== null) add('PART_CORRUPT', message, at);
    }
    for (const [address, { at }] of this.referenced) {
      if (this.listed.has(address) && !this.came.has(address))
        add('PART_MISSING', `part ${address} is referenced here but its entry is missing or damaged`, at);
    }
    for (const address of this.listed.keys()) {
      if (!this.referenced.has(address))
        add('ENTRY_UNEXPECTED', `part ${address} is listed but no record in the range reaches it`, {
          file: partEntryName(address),
        });
    }
  }
}

export type { Problem };
