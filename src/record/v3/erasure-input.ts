/**
 * The input of an erasure record (spec/ERASURE.md §3): read and checked, its own `reason` and `by` possibly
 * erased in turn by a later erasure. Pure.
 */
import { RESERVED_PREFIX } from '../../canonical/limits.js';

const ERASED_MARKER = `${RESERVED_PREFIX}erased`;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The `input` of an erasure record (spec/ERASURE.md §3). */
export interface ErasureInput {
  target: number;
  path: string;
  digest: string;
  reason: string;
  by: string | null;
  /** Those of its own `reason` and `by` a later erasure erased (then `reason` is a stand-in, `by` null). */
  erased?: ('by' | 'reason')[];
}

/** The input of an erasure record, or why it is not one (spec/ERASURE.md §3). */
export function erasureInputOf(input: unknown): ErasureInput | string {
  if (!isObj(input)) return 'the input of an erasure record is {"by","digest","path","reason","target"}';
  // Its own reason and by may have been erased by a later erasure (spec/ERASURE.md §3): one marker each.
  const erased = ERASURE_OWN.filter((k) => !(k in input));
  const list = input[ERASED_MARKER];
  if (erased.length > 0 && (!Array.isArray(list) || list.length !== erased.length))
    return `the input of an erasure record whose ${erased.join(' and ')} was erased holds one erased marker for each`;
  const keys = Object.keys(input)
    .filter((k) => erased.length === 0 || k !== ERASED_MARKER)
    .concat(erased)
    .sort()
    .join(',');
  if (keys !== 'by,digest,path,reason,target')
    return `the input of an erasure record has exactly the members by, digest, path, reason, target (found ${keys || 'none'})`;
  if (erased.length > 0) {
    const rest = Object.fromEntries(Object.entries(input).filter(([k]) => k !== ERASED_MARKER));
    return ownErased({ ...rest, reason: input.reason ?? '-', by: input.by ?? null }, erased);
  }
  const { target, path, digest, reason, by } = input;
  if (typeof target !== 'number' || !Number.isSafeInteger(target) || target < 0)
    return 'target is the seq of the record erased';
  if (typeof path !== 'string' || !path.startsWith('/')) return 'path is a JSON Pointer into the erased record';
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest)) return "digest is the erased unit's digest";
  if (typeof reason !== 'string' || reason.length === 0) return 'reason is a non-empty string';
  if (by !== null && typeof by !== 'string') return 'by is a string or null';
  return { target, path, digest, reason, by };
}

/** The members of an erasure record's input that a later erasure may erase (spec/ERASURE.md §3). */
export const ERASURE_OWN: readonly ('by' | 'reason')[] = ['by', 'reason'];

/** An erasure record's input whose `erased` members were erased: checked as the rest, the erased ones named. */
function ownErased(input: Record<string, unknown>, erased: ('by' | 'reason')[]): ErasureInput | string {
  const checked = erasureInputOf(input);
  return typeof checked === 'string' ? checked : { ...checked, erased };
}
