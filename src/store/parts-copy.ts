/**
 * Copying a `stepchain/v3` journal's parts between stores (spec/PARTS.md §6–§7; POSTGRES.md §10's copy): before a
 * step is re-appended to the target, every part its line reaches — directly, inside another part, or as a
 * list's base — is read from the source (checked: size, file digest, shape) and stored in the target once,
 * byte for byte, under the index key the target's writer computes for its content with the TARGET's part
 * key. The target's ordinary append then finds each part through its own index instead of making a new one
 * (a new part would have a fresh seed, hence another address, root and step hash), so the copied line is the
 * source's line. The index stays private to each journal: no key leaves its store.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json } from '../canonical/json.js';
import { toHex } from '../canonical/sha256.js';
import { TAG } from '../record/v3/commit.js';
import { PartReader } from '../record/v3/part-reader.js';
import { PartWriter } from '../record/v3/part-writer.js';
import {
  hmacSha256,
  PART_THRESHOLD_DEFAULT,
  partRefOf,
  partRefsOfFile,
  type PartFile,
  type PartPayload,
  type PartRef,
} from '../record/v3/parts.js';
import { StoreError } from './errors.js';
import type { JournalParts } from './parts-prepare.js';
import { PART_SLOTS } from './parts-prepare.js';

const encoder = new TextEncoder();

/** A journal's parts, when it has them (every store's v3 journal exposes `parts`). */
export function journalPartsOf(journal: object): JournalParts | null {
  const p = (journal as { parts?: JournalParts | null }).parts;
  return p === undefined ? null : p;
}

export class PartCopier {
  /** Addresses already stored in the target by this copy. */
  private readonly done = new Set<string>();
  private key: Uint8Array | null = null;

  private readonly reader: PartReader | null;

  private static readonly copiers = new WeakMap<object, PartCopier>();

  /** The copier of one copy (a source into a target journal), made on the first step that references a part. */
  static of(source: object, target: object): PartCopier {
    let c = PartCopier.copiers.get(target);
    if (c?.from !== source)
      PartCopier.copiers.set(target, (c = new PartCopier(journalPartsOf(source), journalPartsOf(target), source)));
    return c;
  }

  /** Either side may have no parts (v1/v2): then the first step that references a part is refused. */
  constructor(
    private readonly source: JournalParts | null,
    private readonly target: JournalParts | null,
    private readonly from: object | null = null,
  ) {
    this.reader = source === null ? null : source.reader();
  }

  /**
   * The copy's side of one step that references parts: its parts stored in the target, `rec`'s slots resolved
   * in place (the step to re-append), and the canonical texts the target will seal (the stored slots, with
   * their references), once it is checked that the target's writer puts exactly those references back.
   */
  async carry(rec: Record<string, Json>, seq: number): Promise<Record<string, string>> {
    if (this.source === null || this.target === null)
      throw new StoreError(
        'JOURNAL_INVALID',
        `the source's step ${seq} references parts, and the ${this.source === null ? 'source' : 'target'} journal has no part store`,
        { location: { seq } },
      );
    const stored = { ...rec };
    Object.assign(rec, await this.copy(stored, seq));
    if (!(await this.reproduces(stored, rec, PART_THRESHOLD_DEFAULT))) {
      throw new StoreError(
        'JOURNAL_INVALID',
        `the source's step ${seq} stores its values in parts that a writer of this version would not make from them (another part threshold?), so it cannot be copied byte for byte; the copy stopped, and the target holds an identical prefix of the source`,
        { location: { seq } },
      );
    }
    const texts: Record<string, string> = {};
    for (const n of PART_SLOTS) if (stored[n] !== undefined) texts[n] = canonicalJsonTrusted(stored[n]);
    return texts;
  }

  /**
   * Stores in the target every part the record's slots reach (bases and inner parts before the parts that
   * reference them), each under the target's index key for its content. Returns the slots with every part
   * resolved: the step to re-append.
   */
  async copy(stored: Readonly<Record<string, Json>>, seq: number): Promise<Record<string, Json>> {
    this.key ??= await this.target!.store.key();
    const order: PartPayload[] = [];
    const visit = async (ref: PartRef, path: string): Promise<void> => {
      // Iterative over the references a part holds, appending each part after those it references.
      const stack: { ref: PartRef; expanded: boolean }[] = [{ ref, expanded: false }];
      const seen = new Set<string>();
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        if (this.done.has(top.ref.digest)) {
          stack.pop();
          continue;
        }
        const { file, value } = await this.reader!.shallow(top.ref, { seq, path });
        if (!top.expanded) {
          top.expanded = true;
          if (!seen.has(top.ref.digest)) {
            seen.add(top.ref.digest);
            for (const inner of partRefsOfFile(file))
              if (!this.done.has(inner.digest)) stack.push({ ref: inner, expanded: false });
          }
          continue;
        }
        stack.pop();
        this.done.add(top.ref.digest);
        const bytes = await this.source!.store.get(top.ref.digest, top.ref.size);
        if (!(bytes instanceof Uint8Array))
          throw new StoreError(
            'JOURNAL_CORRUPT',
            `part ${top.ref.digest} (seq ${seq}) vanished from the source while it was copied`,
            { location: { seq, path } },
          );
        order.push({ address: top.ref.digest, bytes, indexKey: this.indexKey(file, value) });
      }
    };
    for (const name of PART_SLOTS) {
      const v = stored[name];
      if (v === undefined || v === null || typeof v !== 'object') continue;
      for (const { ref, path } of refsIn(v, `/${name}`)) await visit(ref, path);
    }
    if (order.length > 0) await this.target!.store.put(order);
    const out: Record<string, Json> = { ...stored };
    for (const name of PART_SLOTS) {
      const v = stored[name];
      if (v !== undefined && v !== null && typeof v === 'object')
        out[name] = await this.reader!.resolve(v, { seq, path: `/${name}` });
    }
    return out;
  }

  /**
   * Whether the target's writer, given the resolved slots, puts back exactly the stored slots (every part
   * found through the target's index, none made anew): checked before anything is appended.
   */
  async reproduces(
    stored: Readonly<Record<string, Json>>,
    resolved: Readonly<Record<string, Json>>,
    threshold: number,
  ): Promise<boolean> {
    const store = this.target!.store;
    const writer = new PartWriter(this.key ?? (await store.key()), store, { threshold });
    const slots: Record<string, Json> = {};
    for (const name of PART_SLOTS) if (resolved[name] !== undefined) slots[name] = resolved[name]!;
    const made = await writer.extract(slots);
    if (made.parts.length > 0) return false;
    return PART_SLOTS.every((n) =>
      stored[n] === undefined
        ? made.slots[n] === undefined
        : made.slots[n] !== undefined && canonicalJsonTrusted(made.slots[n]) === canonicalJsonTrusted(stored[n]),
    );
  }

  /** The target writer's index key for a part's content (PARTS.md §6), under the target's part key. */
  private indexKey(file: PartFile, value: Json): string {
    const pieces =
      file.kind === 'media'
        ? [Uint8Array.of(TAG.media), encoder.encode(canonicalJsonTrusted(file.mediaType)), file.raw]
        : [Uint8Array.of(TAG.part), encoder.encode(canonicalJsonTrusted(value))];
    return toHex(hmacSha256(this.key!, pieces));
  }
}

function refsIn(v: Json, path: string): { ref: PartRef; path: string }[] {
  const out: { ref: PartRef; path: string }[] = [];
  const walk = (x: Json, p: string): void => {
    if (x === null || typeof x !== 'object') return;
    const ref = partRefOf(x);
    if (ref !== null) {
      out.push({ ref, path: p });
      return;
    }
    if (Array.isArray(x)) x.forEach((e, i) => walk(e, `${p}/${i}`));
    else for (const k of Object.keys(x)) walk(x[k]!, `${p}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(v, path);
  return out;
}
