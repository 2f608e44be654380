/**
 * Generated JSON values built to find where a hand-written JCS goes wrong: integer-like member names (which
 * JavaScript enumerates first, in numeric order), names that differ only past the BMP, -0, exponents,
 * escapes and nesting. Shared by the tests that hold a fast serializer to the reference.
 */
import fc from 'fast-check';

export const awkwardKey = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.nat({ max: 4_294_967_296 }).map(String),
  fc.constantFrom(
    '',
    '0',
    '01',
    '1',
    '10',
    '2',
    '-1',
    '1.5',
    '4294967294',
    '4294967295',
    '\u20ac',
    '\ud83d\ude00',
    '\ufb33',
    'é',
    'e\u0301',
    '\u0000',
    '"',
    '\\',
  ),
);
export const awkwardNumber = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(-0, 0, 1e21, 1e-7, 5e-324, -1.7976931348623157e308, 0.1 + 0.2),
);
export const awkwardString = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.constantFrom('\u0000', '\u001f', '\u007f', '\u2028', '"', '\\', '/', '\ud83d\ude00', 'a') }),
);
export const { value: awkwardValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    awkwardNumber,
    awkwardString,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(awkwardKey, tie('value'), { maxKeys: 6 }),
  ),
}));

/** The binary64 value with these IEEE 754 bits (hex), as canonical.json's number cases give them. */
export function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}
