/**
 * The one sanitizer of people-facing output (issue 37): a journal's content is hostile until shown, and a
 * terminal obeys the control characters it is sent — OSC 52 writes the clipboard, ESC [2J clears the
 * screen, a carriage return draws a fake verdict over a real one, U+009B is a one-byte CSI on terminals
 * that read C1 controls, and the bidi overrides reorder what a person reads. So every such character from
 * content is shown escaped, in the `\u001b` form JSON uses (`\n`, `\t` and `\r` as those two letters):
 *
 *   C0 controls U+0000–U+001F, DEL U+007F, C1 controls U+0080–U+009F, the bidi embeddings and overrides
 *   U+202A–U+202E, the bidi isolates U+2066–U+2069, and the bidi marks U+200E, U+200F and U+061C; and the
 *   characters that break or hide text without showing: the line and paragraph separators U+2028 and U+2029
 *   (a new line to many terminals and editors), the zero-width space U+200B, the byte order mark U+FEFF, the
 *   soft hyphen U+00AD, and the tag characters U+E0000–U+E007F (invisible text; escaped as their UTF-16 pair).
 *
 * `inline` is for a value printed inside a line: its own newlines and tabs are escaped too, so content never
 * starts a line of its own. `block` keeps newlines and tabs, for text whose line breaks are the layout's
 * (a verdict, pretty-printed JSON, whose strings JSON.stringify has already escaped). Output applies `block`
 * to everything it writes (src/cli/output.ts), so a value that a verb forgot to pass through `inline` still
 * cannot reach the terminal as a control character. JSON.stringify escapes C0 only; the escapes made here
 * are JSON's own, so a JSON document passed through `block` is still JSON with the same values.
 * Pure: no `node:*` import.
 */

/** Every character escaped in people-facing output (see the module comment). */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'gu');
/** The same set less newline and tab. */
const UNSAFE_BLOCK =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;
const UNSAFE_BLOCK_ALL = new RegExp(UNSAFE_BLOCK.source, 'gu');

const SHORT: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

function escape(c: string): string {
  const short = SHORT[c];
  if (short !== undefined) return short;
  // A tag character is two UTF-16 units: each is escaped, as JSON writes a character beyond U+FFFF.
  let out = '';
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
}

/** A value for inside one line: every unsafe character escaped, newlines and tabs included. */
export function inline(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escape) : text;
}

/** Text whose newlines and tabs are layout: every other unsafe character escaped. */
export function block(text: string): string {
  return UNSAFE_BLOCK.test(text) ? text.replace(UNSAFE_BLOCK_ALL, escape) : text;
}

/** Whether text holds a character this module escapes (tests, and callers that choose a rendering). */
export function hasUnsafe(text: string): boolean {
  return UNSAFE.test(text);
}
