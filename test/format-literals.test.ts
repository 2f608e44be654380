/**
 * Format knowledge lives in src/record/ (ARCHITECTURE.md, "Format capabilities"): code elsewhere asks the
 * format object what it can hold (`capabilitiesOf(genesis).parts`, `.approvals`, `.publication`, …) and
 * never compares a genesis `format` against a written-out name. This test reads every string and template
 * literal under src/ outside record/ and fails on one that is, or quotes, a journal format name.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { SRC, sourceFiles } from './helpers/source-files.js';

/** A journal format name as a whole literal, or quoted inside one (an SQL list, a hint naming an option value). */
const FORMAT_NAME = /^stepchain\/v\d+$|['"`]stepchain\/v\d+['"`]/;

/** The literal texts of a source file that name a format: `line: text` for each. */
export function formatLiterals(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      // A literal type's string is a StringLiteral node too, so `'stepchain/v1' | …` is seen here.
      if (FORMAT_NAME.test(node.text))
        found.push(`${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('format names are written only in src/record/', () => {
  test('the check sees a comparison, a literal type, a quoted name in a template, and nothing in comments', () => {
    const probe = [
      "// a comment may say 'stepchain/v3'",
      "if (g.format === 'stepchain/v2') x();",
      "type F = 'stepchain/v1' | 'other';",
      'const sql = `WHERE f IN (${a}, "stepchain/v3")`;',
      'const fine = `a stepchain/v3 journal`;',
    ].join('\n');
    expect(formatLiterals('probe.ts', probe)).toEqual(['2: stepchain/v2', '3: stepchain/v1', '4: , "stepchain/v3")']);
  });

  test('no file outside src/record/ holds a format literal: it asks the format object instead', () => {
    const offenders: string[] = [];
    for (const path of sourceFiles(SRC)) {
      const name = relative(SRC, path);
      if (name.startsWith('record/')) continue;
      for (const hit of formatLiterals(name, readFileSync(path, 'utf8'))) offenders.push(`${name}:${hit}`);
    }
    expect(offenders).toEqual([]);
  });
});

describe('the format object says what each format holds', () => {
  test('capabilities by format, and the run formats the stores list', async () => {
    const { journalFormat, RUN_FORMATS, formatNamed, capabilitiesOf } = await import('../src/record/formats.js');
    const table = Object.fromEntries(
      ['stepchain/v1', 'stepchain/v2', 'stepchain/v3'].map((f) => [f, journalFormat(f)!.capabilities]),
    );
    expect(table).toEqual({
      'stepchain/v1': {
        runRecords: false,
        fieldSalts: false,
        parts: false,
        erasure: false,
        approvals: false,
        publication: 'reanchored',
        written: true,
      },
      'stepchain/v2': {
        runRecords: true,
        fieldSalts: true,
        parts: false,
        erasure: false,
        approvals: false,
        publication: 'slots',
        written: true,
      },
      'stepchain/v3': {
        runRecords: true,
        fieldSalts: false,
        parts: true,
        erasure: true,
        approvals: true,
        publication: 'tree',
        written: true,
      },
    });
    expect(RUN_FORMATS).toEqual(['stepchain/v2', 'stepchain/v3']);
    expect(formatNamed('v3')?.format).toBe('stepchain/v3');
    expect(formatNamed('v4')).toBeNull();
    // A genesis of no format this verifier reads holds nothing beyond plain steps (its check reports it).
    expect(capabilitiesOf({ format: 'stepchain/v9' })).toEqual(table['stepchain/v1']);
    expect(capabilitiesOf(null)).toEqual(table['stepchain/v1']);
  });
});
