/**
 * The stdio framing (src/mcp/lines.ts): however a stream cuts the bytes into chunks, the lines handed on
 * are the input's lines, byte for byte, terminators included, and together they are the whole input.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { idKey, peek, readLines } from '../../src/mcp/lines.js';

function linesOf(chunks: Buffer[]): Promise<Buffer[]> {
  const stream = new PassThrough();
  const out: Buffer[] = [];
  const done = new Promise<Buffer[]>((resolve) =>
    readLines(
      stream,
      (l) => out.push(l),
      () => resolve(out),
    ),
  );
  for (const c of chunks) stream.write(c);
  stream.end();
  return done;
}

test('any chunking of any bytes: the lines concatenate to the input, each ends in \\n but the last, none holds \\n inside', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof(fc.constantFrom('\n', '\r\n', '{"a":1}', 'é', '\u2028'), fc.string()), { maxLength: 40 }),
      fc.array(fc.nat(50), { maxLength: 20 }),
      async (parts, cuts) => {
        const input = Buffer.from(parts.join(''), 'utf8');
        const chunks: Buffer[] = [];
        let at = 0;
        for (const c of cuts) {
          if (at >= input.length) break;
          chunks.push(input.subarray(at, at + c + 1));
          at += c + 1;
        }
        if (at < input.length) chunks.push(input.subarray(at));
        const lines = await linesOf(chunks);
        expect(Buffer.concat(lines).equals(input)).toBe(true);
        lines.forEach((l, i) => {
          const inside = l.subarray(0, l.length - 1);
          expect(inside.includes(0x0a)).toBe(false);
          if (i < lines.length - 1) expect(l[l.length - 1]).toBe(0x0a);
        });
      },
    ),
    { numRuns: 300 },
  );
});

/** What peek read, without the question each message carries (asked below). */
const plain = (line: Buffer) => peek(line).map(({ unrecordable: _, ...m }) => m);

test('a message says why it cannot be recorded as sent, once asked: bytes that are not UTF-8, a number a double reads as another', () => {
  const why = (line: string | Buffer) => peek(Buffer.isBuffer(line) ? line : Buffer.from(line))[0]!.unrecordable();
  expect(
    why(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":1.5,"s":"9007199254740993"}}}',
    ),
  ).toBeNull();
  expect(why('{"id":1,"method":"tools/call","params":{"arguments":{"n":9007199254740993}}}')).toBe(
    'it holds the number 9007199254740993, which a JSON number (a double) reads as 9007199254740992: send it as a string',
  );
  expect(why('{"id":1,"method":"tools/call","params":{"arguments":{"n":9007199254740992}}}')).toBe(
    'it holds the integer 9007199254740992, past ±(2^53 − 1), where a JSON number (a double) no longer holds every integer: send it as a string',
  );
  expect(why('{"id":1,"method":"tools/call","params":{"arguments":{"n":0.10000000000000001}}}')).toBe(
    'it holds the number 0.10000000000000001, which a JSON number (a double) reads as 0.1: send it as a string',
  );
  expect(
    why(Buffer.concat([Buffer.from('{"id":1,"method":"x","params":"caf'), Buffer.from([0xe9]), Buffer.from('"}')])),
  ).toBe('its byte 34 (0xe9) starts no UTF-8 character (MCP messages are UTF-8)');
});

test('peek reads requests, responses and batches, and ignores what is not JSON-RPC; ids 1 and "1" differ', () => {
  expect(plain(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'))).toEqual([
    { method: 'tools/call', id: 1, params: { name: 'x' }, hasResult: false, hasError: false },
  ]);
  expect(
    plain(Buffer.from('[{"id":"a","result":{}},{"id":2,"error":{"code":1}}]')).map((m) => [
      m.id,
      m.hasResult,
      m.hasError,
    ]),
  ).toEqual([
    ['a', true, false],
    [2, false, true],
  ]);
  expect(plain(Buffer.from('not json\n'))).toEqual([]);
  expect(plain(Buffer.from('"a string"'))).toEqual([]);
  expect(idKey(1)).not.toBe(idKey('1'));
});
