/**
 * The store-wide match of an erase (spec/ERASURE.md §6.3, `--match-path` and `--value`): the pointers of one
 * stored line whose value equals the one asked for, compared as JSON. A value stored as a part (spec/PARTS.md:
 * a string or a container over the journal's part threshold) stands in the line as a reference, not as its
 * text; a value at the pointer that is or holds a reference is read through the journal's parts and compared
 * as read. The address cannot be computed from the value (it is salted with the part's random seed, PARTS.md
 * §5), and the writer's index may have lost an entry (two parts of equal content), so the content is compared.
 */
import type { Json } from '../canonical/json.js';
import { RESERVED_PREFIX } from '../canonical/limits.js';
import type { PartReader } from '../record/v3/part-reader.js';
import { ERASURE_KIND, ERASURE_OWN } from '../record/v3/erasure.js';
import { matchesIn, matchPattern, type MatchRequest } from './common.js';

/** The smallest part threshold (PARTS.md §3): a value whose JSON text is shorter holds no part at all. */
const MIN_PART_BYTES = 256;

const PART_MEMBER = `"${RESERVED_PREFIX}part"`;

/**
 * A place of a journal holding the value: a record's seq and the JSON Pointer of the unit; with `error`, a
 * unit at the pointer whose part could not be read (missing, corrupt): not compared, reported as failed.
 */
export interface Found {
  seq: number;
  path: string;
  error?: string;
}

/**
 * Given a journal's part reader (null: a journal without parts), the places of one of its stored lines that
 * hold `req.value` at `req.matchPath`; lines that cannot hold it are dismissed on their text. The pattern is
 * checked here, once (OPTION_INVALID), before any journal is searched.
 */
export function lineMatcher(req: MatchRequest): (reader: PartReader | null) => (text: string) => Promise<Found[]> {
  const pattern = matchPattern(req.matchPath);
  const want = JSON.stringify(req.value);
  // A cheap filter: a matching value's JSON text is in the line (a string: its text without the quotes).
  const needle = want.length > 2 && typeof req.value === 'string' ? want.slice(1, -1) : want;
  const large = Buffer.byteLength(want) >= MIN_PART_BYTES;
  return (reader) => async (text) => {
    const literal = text.includes(needle);
    const parted = reader !== null && large && text.includes(PART_MEMBER);
    if (!literal && !parted) return [];
    const r = JSON.parse(text) as Record<string, unknown>;
    const seq = r.seq as number;
    const hits: Found[] = literal ? matchesIn(r, pattern, want).map((path) => ({ seq, path })) : [];
    if (parted) hits.push(...(await partMatches(r, pattern, want, reader)));
    return hits;
  };
}

/** The pointers in record `r` matching `pattern` whose value holds a part reference and, read, is `want`. */
async function partMatches(
  r: Record<string, unknown>,
  pattern: readonly string[],
  want: string,
  reader: PartReader,
): Promise<Found[]> {
  const candidates: [string, unknown][] = [];
  holdersAt(r, pattern, '', candidates);
  const own = (h: string): boolean => ERASURE_OWN.some((k) => h === `/input/${k}`);
  const seq = r.seq as number;
  const out: Found[] = [];
  for (const [path, value] of candidates) {
    if (r.kind === ERASURE_KIND && !own(path)) continue;
    if (JSON.stringify(value) === want) continue; // matched as it stands (matchesIn)
    try {
      if (JSON.stringify(await reader.resolve(value as Json, { seq, path })) === want) out.push({ seq, path });
    } catch (e) {
      out.push({ seq, path, error: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/** The units at `pattern` (as matchPaths walks it: never into a reference) whose value holds a reference. */
function holdersAt(value: unknown, pattern: readonly string[], at: string, out: [string, unknown][]): void {
  if (pattern.length === 0) {
    if (value !== null && typeof value === 'object' && JSON.stringify(value).includes(PART_MEMBER))
      out.push([at, value]);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const [head, ...rest] = pattern;
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((v, i) => [String(i), v])
    : Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    if (k.startsWith(RESERVED_PREFIX)) continue;
    if (head === '*' || head === k) holdersAt(v, rest, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  }
}
