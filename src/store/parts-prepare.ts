/**
 * Parts at append (spec/PARTS.md §2): after prepareStep has validated a step of a `stepchain/v3` journal
 * (so no caller value holds a `$stepchain:` name, and every reference below is the writer's), its content
 * slots' large values are moved into parts and the slots' canonical texts and idempotency key are made
 * again from the values with references in place. `meta` and the envelope members (kind, ref) never move.
 * The parts go to the store before any line that references them, as blobs do. Pure but for the writer's
 * lookups in the part store.
 */
import { canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json } from '../canonical/json.js';
import { MEDIA_MIN_BYTES, PART_THRESHOLD_DEFAULT, type PartPayload } from '../record/v3/parts.js';
import { PartReader } from '../record/v3/part-reader.js';
import { PartWriter } from '../record/v3/part-writer.js';
import type { PartStore } from './parts.js';
import type { PreparedStep } from './prepare.js';

/** The slots whose values may become parts: every v3 slot but `meta` (design §8.1). */
export const PART_SLOTS: readonly string[] = ['error', 'input', 'model', 'prompt', 'result', 'tool_call'];

/** A prepared step with its parts substituted, and the new parts it needs stored first. */
export interface PartedStep {
  step: PreparedStep;
  parts: PartPayload[];
}

/** The shortest base64 text of a media part (MEDIA_MIN_BYTES raw bytes; parts.ts mediaBytesOf). */
const MEDIA_MIN_TEXT = Math.ceil(MEDIA_MIN_BYTES / 3) * 4;

/**
 * The UTF-8 length of a string (lone surrogates as U+FFFD's 3 bytes, as TextEncoder writes them), counted
 * only where it decides against `stop`: a string of `stop` characters or more, or one whose 3 bytes a
 * character stay below it, gives a bound on the right side of `stop` instead (the caller only compares).
 */
function utf8Length(s: string, stop: number): number {
  if (s.length >= stop) return s.length;
  if (3 * s.length < stop) return 3 * s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The slots of a step that could hold a part (their values), or null when none can: no walk, no await. */
function partSlots(step: PreparedStep, threshold: number): Record<string, Json> | null {
  let slots: Record<string, Json> | null = null;
  for (const name of PART_SLOTS) {
    const text = step.texts[name];
    // A slot whose text is shorter than the threshold holds nothing that could become a part: a value part's
    // text is at least the threshold in UTF-8 bytes, a media string at least MEDIA_MIN_TEXT characters, and
    // every value's text is a piece of its slot's (exactly measured: the walk below awaits at every value).
    if (text === undefined || (text.length < MEDIA_MIN_TEXT && utf8Length(text, threshold) < threshold)) continue;
    (slots ??= {})[name] = step.content[name]!;
  }
  return slots;
}

export async function substituteParts(
  step: PreparedStep,
  writer: PartWriter,
  slots: Record<string, Json> | null = partSlots(step, writer.threshold),
): Promise<PartedStep> {
  if (slots === null) return { step, parts: [] };
  const { slots: substituted, parts } = await writer.extract(slots);
  if (parts.length === 0 && Object.keys(substituted).every((k) => substituted[k] === slots[k])) return { step, parts };
  const content = { ...step.content };
  const texts: Record<string, string> = { ...step.texts };
  for (const name of Object.keys(substituted)) {
    content[name] = substituted[name]!;
    texts[name] = canonicalJsonTrusted(substituted[name]);
  }
  return { step: { ...step, content, texts, key: step.profile.key(texts) }, parts };
}

/**
 * A journal's parts, as its append and read paths use them: the store, the writer (made on first use, with
 * the store's part key) and a reader per read. Journals of v1/v2 have none.
 */
export class JournalParts {
  /**
   * The writer (its part key read or drawn on first use) and the writes of the parts it made, in the order
   * it made them. The writer remembers every part it made and references it again without storing it
   * again, so a call's lines may only be written once every part made before its own is durable: its write
   * waits for the earlier ones, and fails when one of them failed. A failed write also drops the writer and
   * its memory (the next call starts a new one), so no later line references a part that was never stored.
   */
  private current: { writer: Promise<PartWriter>; stored: Promise<void> } | null = null;

  constructor(
    readonly store: PartStore,
    private readonly threshold: number = PART_THRESHOLD_DEFAULT,
  ) {}

  /** Substitutes parts in prepared v3 steps and stores the new parts (before the caller writes any line). */
  async prepare(steps: readonly PreparedStep[]): Promise<PreparedStep[]> {
    if (steps.every((s) => s.profile.version !== 3)) return [...steps];
    const state = (this.current ??= {
      writer: this.store.key().then((key) => new PartWriter(key, this.store, { threshold: this.threshold })),
      stored: Promise.resolve(),
    });
    const forget = (): void => {
      if (this.current === state) this.current = null;
    };
    const writer = await state.writer.catch((e: unknown) => {
      forget();
      throw e;
    });
    const out: PreparedStep[] = [];
    const parts: PartPayload[] = [];
    for (const s of steps) {
      if (s.profile.version !== 3) {
        out.push(s);
        continue;
      }
      // Most steps hold nothing that could become a part: checked here, without an await per step.
      const slots = partSlots(s, writer.threshold);
      if (slots === null) {
        out.push(s);
        continue;
      }
      const done = await substituteParts(s, writer, slots);
      out.push(done.step);
      for (const p of done.parts) parts.push(p);
    }
    // After every part the writer made before these (which these steps may reference), in order.
    const stored = state.stored.then(() => (parts.length > 0 ? this.store.put(parts) : undefined));
    state.stored = stored;
    await stored.catch((e: unknown) => {
      forget();
      throw e;
    });
    return out;
  }

  /** Resolves restored records' parts through one reader (each part fetched and checked once per read). */
  resolver(): <R extends object>(record: R, seq: number) => Promise<R> {
    const reader = this.reader();
    return (record, seq) => resolveRecordParts(record, seq, reader);
  }

  /** A reader over this journal's parts (each part checked once per reader). */
  reader(deep = false): PartReader {
    return new PartReader((a, size) => this.store.get(a, size), { deep });
  }
}

/** A restored record's content slots with their part references resolved (PARTS.md §9). */
export async function resolveRecordParts<R extends object>(record: R, seq: number, reader: PartReader): Promise<R> {
  const fields = record as unknown as Record<string, Json>;
  for (const name of PART_SLOTS) {
    const v = fields[name];
    if (v === null || typeof v !== 'object') continue;
    fields[name] = await reader.resolve(v, { seq, path: `/${name}` });
  }
  return record;
}
