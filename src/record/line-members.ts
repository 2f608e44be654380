/**
 * Two top-level members of a canonical record line, read from its text without parsing it: whether its
 * `kind` is "step" and its `step_id` (spec/FORMAT.md §4: members in order, values skipped by their
 * brackets and strings). What a reader folding every line of a run needs from most of them, for a
 * fraction of a parse. Never throws, never reads past the text.
 */
const KIND_MEMBER = '"kind":';
const STEP_KIND = '"step"';

/**
 * Whether the top-level `kind` of a canonical record line is "step": walks the members in order (skipping
 * each value by its brackets and strings, never decoding it) until `kind`. False when there is no such
 * member or the text is not what a clean line is; never throws, never reads past the text.
 */
export function kindIsStep(text: string): boolean {
  if (text.charCodeAt(0) !== 0x7b) return false;
  let i = 1;
  while (i < text.length) {
    if (text.startsWith(KIND_MEMBER, i)) {
      const end = i + KIND_MEMBER.length + STEP_KIND.length;
      return (
        text.startsWith(STEP_KIND, i + KIND_MEMBER.length) &&
        (text.charCodeAt(end) === 0x2c || text.charCodeAt(end) === 0x7d)
      );
    }
    i = skipString(text, i);
    if (text.charCodeAt(i) !== 0x3a) return false;
    i = skipValue(text, i + 1);
    if (text.charCodeAt(i) !== 0x2c) return false;
    i++;
  }
  return false;
}

/**
 * The top-level `step_id` of a canonical record line when it is a string without escapes (what every
 * writer of this version writes: ids are [A-Za-z0-9_.-] or UUIDs), else null. Walks the members as
 * kindIsStep does, never decoding a value; never throws.
 */
export function stepIdOf(text: string): string | null {
  if (text.charCodeAt(0) !== 0x7b) return null;
  let i = 1;
  while (i < text.length) {
    if (text.startsWith(STEP_ID_MEMBER, i)) {
      const from = i + STEP_ID_MEMBER.length;
      if (text.charCodeAt(from) !== 0x22) return null;
      const end = text.indexOf('"', from + 1);
      const id = end < 0 ? null : text.slice(from + 1, end);
      return id === null || id.includes('\\') ? null : id;
    }
    i = skipString(text, i);
    if (text.charCodeAt(i) !== 0x3a) return null;
    i = skipValue(text, i + 1);
    if (text.charCodeAt(i) !== 0x2c) return null;
    i++;
  }
  return null;
}

const STEP_ID_MEMBER = '"step_id":';

/** The index after the JSON string that starts at i (text.length when it does not end). */
function skipString(text: string, i: number): number {
  if (text.charCodeAt(i) !== 0x22) return text.length;
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return text.length;
}

/** The index after the JSON value that starts at i: a string, an object or array (by depth), or a literal or number. */
function skipValue(text: string, i: number): number {
  let depth = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = skipString(text, i);
      if (depth === 0) return i;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (c === 0x2c && depth === 0) return i;
    i++;
  }
  return i;
}
