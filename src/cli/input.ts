/** Reading people's JSON input (step files, stdin, policies) with errors that point at the line and column. */
import { readFile, stat } from 'node:fs/promises';
import { utf8OrBadByte } from '../bytes.js';
import { inexactNumber, numberAt, scanCanonical } from '../format.js';
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
    const literal = numberAt(text, inexact);
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
 * Bytes as UTF-8 text, refusing what is not: a Latin-1 file or stray bytes decoded with replacement would put
 * U+FFFD where the sender's character was, and the chain would prove text nobody sent (an outsider's finding).
 * A byte order mark is kept, for the strict scan to refuse as it always did.
 */
export function decodeUtf8Input(bytes: Uint8Array, where: { file: string; line?: number }): string {
  const text = utf8OrBadByte(bytes);
  if (typeof text === 'string') return text;
  const at = text;
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
