/**
 * Every ts/js block of README.md and docs/*.md type-checks as an adopter's strict ESM app would compile it,
 * against the built package's types (`import 'stepchain'` resolves to dist/ by self-reference) and the
 * frameworks' own types — so an example cannot drift from the API. Apart from examples.test.ts, which runs
 * them, so that the two share the machine's cores.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { blockKind, CODE_COMPILER_OPTIONS, documentedFiles, makeCodeDir, parseBlocks, ROOT, writeCodeBlock } from '../../scripts/docs/blocks.mjs';

test('every ts/js block type-checks as a strict ESM app against the built package', () => {
  const checkDir = makeCodeDir();
  try {
    const paths: string[] = [];
    for (const file of documentedFiles()) {
      for (const block of parseBlocks(readFileSync(join(ROOT, file), 'utf8'))) {
        if (blockKind(block) === 'code') paths.push(writeCodeBlock(block, checkDir, `${file.replace(/[^\w]+/g, '_')}_line${block.start + 1}`));
      }
    }
    expect(paths.length).toBeGreaterThan(0);
    const { options, errors } = ts.convertCompilerOptionsFromJson(CODE_COMPILER_OPTIONS, ROOT);
    expect(errors).toEqual([]);
    const program = ts.createProgram(paths, options);
    const diagnostics = paths.flatMap((p) => [...program.getSyntacticDiagnostics(program.getSourceFile(p)), ...program.getSemanticDiagnostics(program.getSourceFile(p))]);
    const text = diagnostics.map((d) => {
      const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const name = d.file ? relative(checkDir, d.file.fileName) : '';
      return `${name}${where ? `:${where.line + 1}:${where.character + 1}` : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
    expect(text).toEqual([]);
  } finally {
    rmSync(checkDir, { recursive: true, force: true });
  }
});

test('a block with a type error is reported, naming the block', () => {
  const checkDir = makeCodeDir();
  try {
    const [block] = parseBlocks("```ts\nimport { FileStore } from 'stepchain';\nconst s: number = new FileStore('x');\nconsole.log(s);\n```");
    const path = writeCodeBlock(block!, checkDir, 'bad');
    const { options } = ts.convertCompilerOptionsFromJson(CODE_COMPILER_OPTIONS, ROOT);
    const program = ts.createProgram([path], options);
    const diagnostics = program.getSemanticDiagnostics(program.getSourceFile(path));
    expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([expect.stringContaining("'FileStore' is not assignable to type 'number'")]);
  } finally {
    rmSync(checkDir, { recursive: true, force: true });
  }
});
