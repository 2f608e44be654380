/**
 * Newline-delimited framing for MCP's stdio transport, without re-encoding: each message is handed on as
 * the exact bytes that arrived (its line terminator included), so what the proxy forwards is byte-identical
 * to what it read. Parsing is for looking at a message only; the parsed value is never written back.
 */
import type { Readable } from 'node:stream';
import { firstInvalidUtf8 } from '../bytes.js';
import { inexactNumber } from '../canonical/stored-numbers.js';

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
   * Why the message cannot be recorded as sent, where it cannot: its line is not UTF-8 (decoded with replacement,
   * a record would hold U+FFFD where the sender's character was), or holds a number JSON.parse reads as another
   * (9007199254740993 as …992). Such a message is still forwarded as its bytes; a call in it is refused
   * (boundary.ts), since what would be recorded, and put to an approver, is not what the server would run.
   */
  inexact?: string;
}

function peekOne(v: unknown): Peeked | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const m = v as Record<string, unknown>;
  const p: Peeked = { hasResult: 'result' in m, hasError: 'error' in m };
  if (typeof m.method === 'string') p.method = m.method;
  if (typeof m.id === 'string' || typeof m.id === 'number' || m.id === null) p.id = m.id;
  if ('params' in m) p.params = m.params;
  if (p.hasResult) p.result = m.result;
  if (p.hasError) p.error = m.error;
  return p;
}

/** The messages a line holds (a JSON-RPC batch is several), or none when it is not JSON-RPC the proxy can read. */
export function peek(line: Buffer): Peeked[] {
  let text: string;
  let inexact: string | undefined;
  try {
    text = STRICT_UTF8.decode(line);
  } catch {
    text = line.toString('utf8');
    const at = firstInvalidUtf8(line);
    inexact = `its byte ${at} (0x${line[at]!.toString(16).padStart(2, '0')}) starts no UTF-8 character (MCP messages are UTF-8)`;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  const at = inexact === undefined ? inexactNumber(text) : -1;
  if (at !== -1) {
    const literal = /^-?[0-9.eE+-]+/.exec(text.slice(at))![0].slice(0, 40);
    inexact = `it holds the number ${literal}, which would be recorded as ${String(Number(literal))}, another number (a JSON number is a double here): send it as a string`;
  }
  const all = Array.isArray(v) ? v : [v];
  return all
    .map(peekOne)
    .filter((p): p is Peeked => p !== null)
    .map((p) => (inexact === undefined ? p : { ...p, inexact }));
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A key for a request id that keeps 1 and "1" apart. */
export const idKey = (id: JsonRpcId): string => (typeof id === 'number' ? `n:${id}` : `s:${id}`);

/** One JSON-RPC error response, as a line. */
export function errorLine(id: JsonRpcId, code: number, message: string, data?: unknown): Buffer {
  const error: Record<string, unknown> = { code, message };
  if (data !== undefined) error.data = data;
  return Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`, 'utf8');
}
