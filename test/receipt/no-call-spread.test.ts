/**
 * No call spreads in the receipt and diff code (issue 15 item 2): `f(...array)` puts every element on the
 * stack as an argument, and an unbounded array (400 000 lines, a hostile archive's entries) throws
 * "RangeError: Maximum call stack size exceeded". Array literals (`[...a, ...b]`) are not calls and are
 * fine. Checked on the parsed source, so a new one is caught the moment it is written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';

const SRC = new URL('../../src/', import.meta.url).pathname;

/** `file:line: text` of every spread argument in a call or `new` expression. */
function callSpreads(name: string, text: string): string[] {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isSpreadElement(node) && (ts.isCallExpression(node.parent) || ts.isNewExpression(node.parent))) {
      found.push(
        `${name}:${sf.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.parent.getText().slice(0, 80)}`,
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test.each(['receipt', 'diff'])('src/%s has no call spread f(...xs)', (folder) => {
  const files = readdirSync(join(SRC, folder)).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(3);
  expect(files.flatMap((f) => callSpreads(`${folder}/${f}`, readFileSync(join(SRC, folder, f), 'utf8')))).toEqual([]);
});

test('the check finds call spreads, and leaves array spreads and rest parameters alone', () => {
  const sample =
    'lines.push(...groupLines); Math.max(...rows); new Set(...x); f(a, ...rest); const y = [...a, ...b]; function g(...xs: number[]) { return xs; }';
  expect(callSpreads('sample.ts', sample)).toHaveLength(4);
});
