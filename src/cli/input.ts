/** Reading people's JSON input (step files, stdin, policies) with errors that point at the line and column. */
import { readFile, stat } from 'node:fs/promises';
import { scanCanonical } from '../format.js';
import type { Json } from '../index.js';
import { StepchainError } from '../errors.js';

export class InputError extends StepchainError<'INPUT_INVALID' | 'INPUT_UNREADABLE'> {}

function lineAndColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/**
 * Parses JSON text strictly: JSON.parse would silently keep the last of two duplicate members and accept
 * lone surrogates, so the strict scanner runs first. Formatting (whitespace, member order) is free.
 */
export function parseJsonStrict(text: string, where: { file: string; line?: number }): Json {
  const scan = scanCanonical(text, { members: false });
  const d = scan.defect;
  if (d && d.code !== 'NONCANONICAL_LINE') {
    const pos = lineAndColumn(text, d.index);
    const line = (where.line ?? 1) + pos.line - 1;
    const what =
      d.code === 'MALFORMED_LINE'
        ? 'is not valid JSON'
        : d.code === 'DUPLICATE_KEY'
          ? 'repeats a member name'
          : d.code === 'LONE_SURROGATE'
            ? 'holds a lone surrogate'
            : d.code === 'NOT_FINITE_NUMBER'
              ? 'holds a number too large for JSON'
              : 'nests too deeply';
    throw new InputError(
      'INPUT_INVALID',
      `${where.file}:${line}:${pos.column} ${what}: ${d.reason}${d.path ? ` (at ${d.path})` : ''}`,
      {
        location: { file: where.file, line, ...(d.path ? { path: d.path } : {}) },
      },
    );
  }
  const inexact = inexactNumber(text);
  if (inexact !== -1) {
    const pos = lineAndColumn(text, inexact);
    const line = (where.line ?? 1) + pos.line - 1;
    const literal = /^-?[0-9.eE+-]+/.exec(text.slice(inexact))![0];
    throw new InputError(
      'INPUT_INVALID',
      `${where.file}:${line}:${pos.column} holds the number ${literal.length > 40 ? literal.slice(0, 40) + '…' : literal}, which would be stored as ${String(Number(literal))}, another number: a JSON number is a double here (RFC 8785; RFC 7493 §2.2). Send it as a string`,
      { location: { file: where.file, line } },
    );
  }
  // Proven, not checked: JSON.parse yields JSON values only, and the scan above refused what Json excludes.
  return JSON.parse(text) as Json;
}

/**
 * A number token worth a look: 16 digits or more (a decimal of at most 15 significant digits survives the trip
 * through a double, DBL_DIG, and comes back as the same value), or an exponent of three digits (underflow).
 */
const MAY_LOSE_DIGITS = /[0-9.]{16}|[eE][+-]?[0-9]{3}/;

/**
 * The index of the first number outside strings that the journal would store as another, in a text the strict
 * scan accepted as JSON; -1 when there is none. JSON.parse rounds a number to a double and the journal writes
 * that double's shortest form (RFC 8785), so 12345678901234567890 would be stored as 12345678901234567000 and
 * the step would hold a number the agent never sent (outsiders B and C). Kept: a number whose stored form has
 * its value (35809267966483470, 1e21 written out, 0.1), and a decimal or exponent form that is its double
 * written to the digits it gives (Java's 9.999999999999999E22 and 4.9E-324, C's 0.10000000000000001: outsider D),
 * as a writer of doubles writes them. Refused: an integer written out that its double changes (2^63 too: it is
 * stored as 9223372036854776000), digits a double does not hold (0.1000000000000000000001), underflow (1e-400).
 */
export function inexactNumber(text: string): number {
  if (!MAY_LOSE_DIGITS.test(text)) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: the text is valid JSON, so a backslash always escapes the next character.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) continue;
    let end = i + 1;
    while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
    const literal = text.slice(i, end);
    if (MAY_LOSE_DIGITS.test(literal) && !keepsItsValue(literal)) return i;
    i = end - 1;
  }
  return -1;
}

/** Whether the journal stores `literal` as itself (see inexactNumber). */
function keepsItsValue(literal: string): boolean {
  const value = decimalValue(literal);
  const stored = Number(literal);
  if (value === decimalValue(String(stored))) return true;
  if (/^-?[0-9]+$/.test(literal)) return false;
  // A double written to `digits` significant digits: its exact value rounded there (toPrecision rounds the exact
  // binary value). Zero has no such form: a non-zero decimal stored as 0 underflowed.
  const digits = value.replace(/^-/, '').split('e')[0]!.length;
  return stored !== 0 && digits <= 100 && value === decimalValue(stored.toPrecision(digits));
}

/** A JSON number's exact value as `[-]digits e exponent`, digits without leading or trailing zeros ("0" for zero). */
function decimalValue(literal: string): string {
  const m = /^(-?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(literal);
  if (m === null) return literal;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = BigInt(m[4] ?? '0') - BigInt(fraction.length);
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += BigInt(trailing);
  return `${m[1]}${digits}e${exponent}`;
}

/**
 * Bytes as UTF-8 text, refusing what is not: a Latin-1 file or stray bytes decoded with replacement would put
 * U+FFFD where the sender's character was, and the chain would prove text nobody sent (an outsider's finding).
 * A byte order mark is kept, for the strict scan to refuse as it always did.
 */
export function decodeUtf8Input(bytes: Uint8Array, where: { file: string; line?: number }): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    let line = where.line ?? 1;
    let lineStart = 0;
    for (let i = 0; i < at; i++)
      if (bytes[i] === 0x0a) {
        line++;
        lineStart = i + 1;
      }
    throw new InputError(
      'INPUT_INVALID',
      `${where.file}:${line}: byte ${at - lineStart + 1} of the line (0x${bytes[at]!.toString(16).padStart(2, '0')}) is not UTF-8: JSON input must be UTF-8 text (RFC 8259 §8.1); convert the file (for example iconv -f latin1 -t utf-8) and append again`,
      { location: { file: where.file, line } },
    );
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The offset of the first byte of `bytes` that starts no well-formed UTF-8 sequence (the Unicode standard's table 3-7). */
function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const n = b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    // The second byte's range is narrower after E0, ED, F0 and F4 (no overlong forms, surrogates or > U+10FFFF).
    const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return bytes.length;
}

export async function readText(path: string | undefined): Promise<{ text: string; name: string }> {
  if (path === undefined || path === '-') {
    if (process.stdin.isTTY)
      throw new InputError('INPUT_UNREADABLE', 'no input: pass --file, or pipe JSON into standard input');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return { text: decodeUtf8Input(Buffer.concat(chunks), { file: '<stdin>' }), name: '<stdin>' };
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(
      'INPUT_UNREADABLE',
      `cannot read ${path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`,
      { location: { file: path } },
    );
  }
  return { text: decodeUtf8Input(bytes, { file: path }), name: path };
}

/** Whether a path names a journal (a directory) or a receipt (a file); a clear error when it is neither. */
export async function pathKind(path: string): Promise<'journal' | 'receipt'> {
  let info;
  try {
    info = await stat(path);
  } catch (e) {
    throw new InputError(
      'INPUT_UNREADABLE',
      `cannot read ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`,
      { location: { file: path } },
    );
  }
  if (info.isDirectory()) return 'journal';
  // A FIFO, device or socket is refused before it is opened: reading a FIFO with no writer waits for ever.
  if (!info.isFile())
    throw new InputError(
      'INPUT_UNREADABLE',
      `cannot read ${path}: it is ${info.isFIFO() ? 'a FIFO' : info.isSocket() ? 'a socket' : info.isCharacterDevice() || info.isBlockDevice() ? 'a device' : 'not a regular file'}, neither a receipt file nor a journal folder`,
      { location: { file: path } },
    );
  return 'receipt';
}

/**
 * The non-blank lines of a file (or standard input, for undefined or "-"), one at a time with their line
 * numbers: a JSONL input of any length is read in memory bounded by its longest line.
 */
export async function* readLinesOf(
  path: string | undefined,
): AsyncGenerator<{ text: string; line: number; name: string }> {
  let input: NodeJS.ReadableStream;
  let name: string;
  if (path === undefined || path === '-') {
    if (process.stdin.isTTY)
      throw new InputError('INPUT_UNREADABLE', 'no input: pass --file, or pipe JSON into standard input');
    input = process.stdin;
    name = '<stdin>';
  } else {
    const { createReadStream } = await import('node:fs');
    const file = createReadStream(path);
    await new Promise<void>((resolve, reject) => {
      file.once('open', () => resolve());
      file.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new InputError(
            'INPUT_UNREADABLE',
            `cannot read ${path}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`,
            { location: { file: path } },
          ),
        ),
      );
    });
    input = file;
    name = path;
  }
  // Split on LF bytes and decode each line strictly (decodeUtf8Input): a line reader that decodes first would
  // have replaced invalid bytes with U+FFFD before anything could refuse them.
  let line = 0;
  // The pieces of the line not ended yet, joined once at its end (a long line arrives in many chunks).
  let open: Buffer[] = [];
  const emit = (bytes: Buffer): { text: string; line: number; name: string } | null => {
    line++;
    const body = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes;
    const text = decodeUtf8Input(body, { file: name, line });
    return text.trim() === '' ? null : { text, line, name };
  };
  for await (const chunk of input) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let from = 0;
    for (let at = bytes.indexOf(0x0a); at !== -1; from = at + 1, at = bytes.indexOf(0x0a, from)) {
      const piece = bytes.subarray(from, at);
      const got = emit(open.length === 0 ? piece : Buffer.concat([...open, piece]));
      open = [];
      if (got !== null) yield got;
    }
    // A copy: the stream may reuse its chunk's memory for the next one.
    if (from < bytes.length) open.push(Buffer.from(bytes.subarray(from)));
  }
  if (open.length > 0) {
    const got = emit(Buffer.concat(open));
    if (got !== null) yield got;
  }
}
