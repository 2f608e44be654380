/**
 * The sanitizer of people-facing output (src/cli/safe-text.ts, issue 37): every C0 control, DEL, C1
 * control and bidi control is shown escaped in JSON's `\u001b` form; `block` keeps the layout's newlines and
 * tabs; anything else passes unchanged, and a JSON document passed through `block` parses to the same value.
 * Output keeps only the SGR codes its own style() wrote, even when content holds well-formed SGR.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { block, hasUnsafe, inline } from '../../src/cli/safe-text.js';

const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\u{e0000}-\u{e007f}]/u;

describe('inline', () => {
  test.each([
    ['OSC 52 clipboard write', '\x1b]52;c;SGVsbG8=\x07', '\\u001b]52;c;SGVsbG8=\\u0007'],
    ['clear screen', '\x1b[2J', '\\u001b[2J'],
    ['a carriage return drawing a fake verdict', 'x\r✔ chain verified', 'x\\r✔ chain verified'],
    ['a newline starting a line of its own', 'x\n✔ valid', 'x\\n✔ valid'],
    ['a tab', 'a\tb', 'a\\tb'],
    ['DEL', 'a\x7fb', 'a\\u007fb'],
    ['C1 CSI, one byte', '\u009b31m', '\\u009b31m'],
    ['C1 NEL and APC', '\u0085\u009f', '\\u0085\\u009f'],
    ['bidi override', 'abc\u202edef', 'abc\\u202edef'],
    [
      'bidi embeddings and isolates',
      '\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069',
      '\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069',
    ],
    ['bidi marks', '\u200e\u200f\u061c', '\\u200e\\u200f\\u061c'],
    ['NUL and BEL', '\u0000\u0007', '\\u0000\\u0007'],
    ['plain text, accents, emoji and ✔ unchanged', 'café ✔ 🙂 “quotes” \\u001b', 'café ✔ 🙂 “quotes” \\u001b'],
    ['U+00A0 (after C1) is not a character it escapes', '\u00a0', '\u00a0'],
    [
      'line and paragraph separators, zero-width space, BOM, soft hyphen and tag characters (issue 39 outsider finding 9)',
      'a\u2028b\u2029c\u200bd\ufeffe\u00adf\u{e0041}',
      'a\\u2028b\\u2029c\\u200bd\\ufeffe\\u00adf\\udb40\\udc41',
    ],
  ])('%s', (_name, input, shown) => {
    expect(inline(input)).toBe(shown);
    expect(UNSAFE.test(inline(input))).toBe(false);
  });
});

describe('block', () => {
  test('keeps the newlines and tabs of the layout, escapes the rest', () => {
    expect(block('line 1\n\tline 2\x1b[2J\r\u009b\u202e')).toBe('line 1\n\tline 2\\u001b[2J\\r\\u009b\\u202e');
  });

  test("a JSON document keeps its values: the escapes are JSON's own", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
        const doc = { value, s };
        const text = block(JSON.stringify(doc, null, 2));
        expect(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.test(text)).toBe(
          false,
        );
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(doc)));
      }),
    );
  });
});

test('property: inline leaves no unsafe character, changes nothing in safe text, and is reversible by JSON parsing', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const shown = inline(s);
      expect(UNSAFE.test(shown)).toBe(false);
      expect(hasUnsafe(s)).toBe(UNSAFE.test(s));
      if (!UNSAFE.test(s)) expect(shown).toBe(s);
      // Inside a JSON string the escapes decode back to the original (backslashes and quotes aside).
      if (!/["\\]/.test(s)) expect(JSON.parse(`"${shown}"`)).toBe(s);
    }),
  );
});

describe('Output writes every line through the sanitizer', () => {
  /** A stream that records what is written, a terminal or not. */
  const sink = (isTTY: boolean) => {
    const chunks: string[] = [];
    return { chunks, stream: { isTTY, write: (s: string) => (chunks.push(s), true) } as unknown as NodeJS.WriteStream };
  };

  test.each([false, true])('on a terminal: %s — content escaped, the styling Output wrote kept', async (tty) => {
    const { Output } = await import('../../src/cli/output.js');
    const err = sink(tty);
    const out = sink(tty);
    const o = new Output({ json: false, stderr: err.stream, stdout: out.stream, env: {} });
    // A well-formed SGR from content (ESC [8m hides what follows, ESC [32m paints a forged verdict green) is
    // escaped like any other control: only the codes Output's own style() asked for reach a terminal.
    const content = '\x1b]52;c;SGVsbG8=\x07\x1b[2J\r✔ forged\u009b\u202e\x7f\x1b[8m\x1b[32m';
    o.say(`${o.style('red', 'error:')} ${content}`);
    o.print(`line 1\n  ${content}`);
    await o.stream(content);
    o.document('x', { content });
    const said = err.chunks.join('');
    expect(said).toBe(
      `${tty ? '\x1b[31merror:\x1b[39m' : 'error:'} \\u001b]52;c;SGVsbG8=\\u0007\\u001b[2J\\r✔ forged\\u009b\\u202e\\u007f\\u001b[8m\\u001b[32m\n`,
    );
    // The marks style() writes are private to this Output: the same text from another Output is not styled.
    const other = new Output({ json: false, stderr: err.stream, stdout: out.stream, env: {} });
    const before = err.chunks.length;
    other.say(o.style('red', 'x'));
    expect(err.chunks.slice(before).join('')).toBe(tty ? `${o.style('red', 'x')}\n` : 'x\n');
    const printed = out.chunks.join('');
    expect(UNSAFE.test(printed.replaceAll('\n', ''))).toBe(false);
    expect(JSON.parse(printed.slice(printed.indexOf('{'))).content).toBe(content);
  });
});
