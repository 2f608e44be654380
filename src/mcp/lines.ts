/**
 * Newline-delimited framing for MCP's stdio transport, without re-encoding: each message is handed on as
 * the exact bytes that arrived (its line terminator included), so what the proxy forwards is byte-identical
 * to what it read. Parsing is for looking at a message only; the parsed value is never written back.
 */
import type { Readable } from 'node:stream';
import { utf8OrBadByte } from '../bytes.js';
import { firstInexactNumber } from '../canonical/exact-numbers.js';
import { numberAt } from '../canonical/stored-numbers.js';

const NEWLINE = 0x0a;

/** Calls `onLine` with each line's raw bytes (ending in "\n"), and once at the end with what followed the last newline, if anything. */
export function readLines(stream: Readable, onLine: (line: Buffer) => void, onEnd: () => void): void {
  let pending: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, at + 1);
      onLine(pending.length === 0 ? Buffer.from(piece) : Buffer.concat([...pending, piece]));
      pending = [];
      start = at + 1;
    }
    if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
  });
  stream.on('end', () => {
    if (pending.length > 0) onLine(Buffer.concat(pending));
    pending = [];
    onEnd();
  });
}

export type JsonRpcId = string | number;

/** What the proxy looks at in a JSON-RPC message; anything else about it is only forwarded. */
export interface Peeked {
  method?: string;
  id?: JsonRpcId | null;
  params?: unknown;
  result?: unknown;
  error?: unknown;
  hasResult: boolean;
  hasError: boolean;
  /**
   * Why the message cannot be recorded as sent, or null: its line is not UTF-8 (decoded with replacement, a record
   * would hold U+FFFD where the sender's character was), or holds a number that is not exactly the value JSON.parse
   * reads it as (APPROVALS.md §5 step 3: 9007199254740993 read as …992, 0.10000000000000001 as 0.1). A call in it is
   * refused (boundary.ts): recorded, and put to an approver, as parsed, it would not be the call the server reads
   * from the forwarded bytes. Asked only of calls (a look at every number of a line), once per line.
   */
  unrecordable: () => string | null;
}

function peekOne(v: unknown, unrecordable: () => string | null): Peeked | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const m = v as Record<string, unknown>;
  const p: Peeked = { hasResult: 'result' in m, hasError: 'error' in m, unrecordable };
  if (typeof m.method === 'string') p.method = m.method;
  if (typeof m.id === 'string' || typeof m.id === 'number' || m.id === null) p.id = m.id;
  if ('params' in m) p.params = m.params;
  if (p.hasResult) p.result = m.result;
  if (p.hasError) p.error = m.error;
  return p;
}

/** The messages a line holds (a JSON-RPC batch is several), or none when it is not JSON-RPC the proxy can read. */
export function peek(line: Buffer): Peeked[] {
  const strict = utf8OrBadByte(line);
  const text = typeof strict === 'string' ? strict : line.toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  let why: string | null | undefined;
  const unrecordable = (): string | null => (why ??= unrecordableLine(line, text, strict));
  const all = Array.isArray(v) ? v : [v];
  return all.map((m) => peekOne(m, unrecordable)).filter((p): p is Peeked => p !== null);
}

/** Peeked.unrecordable for a line and its text (decoded with replacement where `strict` is the first bad byte). */
function unrecordableLine(line: Buffer, text: string, strict: string | number): string | null {
  if (typeof strict === 'number')
    return `its byte ${strict} (0x${line[strict]!.toString(16).padStart(2, '0')}) starts no UTF-8 character (MCP messages are UTF-8)`;
  const at = firstInexactNumber(text);
  if (at === -1) return null;
  const literal = numberAt(text, at).slice(0, 40);
  const value = Number(literal);
  return Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER && String(value) === literal
    ? `it holds the integer ${literal}, past ±(2^53 − 1), where a JSON number (a double) no longer holds every integer: send it as a string`
    : `it holds the number ${literal}, which a JSON number (a double) reads as ${String(value)}: send it as a string`;
}

/**
 * Why a client's line cannot be read as the server may read it, or null: the proxy forwards only what it read,
 * since a line it could not parse went through unrecorded while a server's own parser may find a call in it
 * (outsider F: `NaN` and `Infinity`, which Python's pydantic accepts; a lone CR, which Python's universal
 * newlines takes for a line end, splitting one line into two messages). Blank lines pass.
 */
export function unreadableLine(line: Buffer): string | null {
  let end = line.length;
  if (end > 0 && line[end - 1] === 0x0a) end--;
  if (end > 0 && line[end - 1] === 0x0d) end--;
  const cr = line.indexOf(0x0d);
  if (cr !== -1 && cr < end)
    return `a carriage return at byte ${cr} that does not end the line (a reader may take it for a line end)`;
  return unparseable(line.subarray(0, end));
}

/** Why a message (an HTTP body, a line without its end) does not parse as JSON for the proxy, or null (blank passes). */
export function unparseable(bytes: Uint8Array): string | null {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
  if (text.trim() === '') return null;
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    return `it is not JSON (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** A key for a request id that keeps 1 and "1" apart. */
export const idKey = (id: JsonRpcId): string => (typeof id === 'number' ? `n:${id}` : `s:${id}`);

/** JSON-RPC 2.0's code for a message that could not be parsed. */
export const PARSE_ERROR = -32700;

/** One JSON-RPC error response, as a line (id null: an answer to what could not be read, JSON-RPC's parse error). */
export function errorLine(id: JsonRpcId | null, code: number, message: string, data?: unknown): Buffer {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`, 'utf8');
}
