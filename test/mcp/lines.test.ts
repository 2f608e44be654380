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

test('peek reads requests, responses and batches, and ignores what is not JSON-RPC; ids 1 and "1" differ', () => {
  expect(peek(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}\n'))).toEqual([
    { method: 'tools/call', id: 1, params: { name: 'x' }, hasResult: false, hasError: false },
  ]);
  expect(
    peek(Buffer.from('[{"id":"a","result":{}},{"id":2,"error":{"code":1}}]')).map((m) => [
      m.id,
      m.hasResult,
      m.hasError,
    ]),
  ).toEqual([
    ['a', true, false],
    [2, false, true],
  ]);
  expect(peek(Buffer.from('not json\n'))).toEqual([]);
  expect(peek(Buffer.from('"a string"'))).toEqual([]);
  expect(idKey(1)).not.toBe(idKey('1'));
});
