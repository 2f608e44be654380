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
  // Proven, not checked: JSON.parse yields JSON values only, and the scan above refused what Json excludes.
  return JSON.parse(text) as Json;
}

export async function readText(path: string | undefined): Promise<{ text: string; name: string }> {
  if (path === undefined || path === '-') {
    if (process.stdin.isTTY)
      throw new InputError('INPUT_UNREADABLE', 'no input: pass --file, or pipe JSON into standard input');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return { text: Buffer.concat(chunks).toString('utf8'), name: '<stdin>' };
  }
  try {
    return { text: await readFile(path, 'utf8'), name: path };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(
      'INPUT_UNREADABLE',
      `cannot read ${path}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`,
      { location: { file: path } },
    );
  }
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
  const { createInterface } = await import('node:readline');
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() !== '') yield { text, line, name };
  }
}
