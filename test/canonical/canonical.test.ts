import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonChecked } from '../../src/canonical/jcs.js';
import { CanonicalError } from '../../src/canonical/errors.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { assertIJson } from '../../src/canonical/validate.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface CanonicalCase {
  id: string;
  group: 'numbers' | 'values';
  ieee754_hex?: string;
  input_json?: string;
  expected: string;
}
interface RefusedCase {
  id: string;
  group: 'values' | 'lines';
  construct?: string;
  at?: string;
  input_json?: string;
  text?: string;
  base64?: string;
  expected_code: string | null;
  expected_path?: string;
}

const canonical = loadVectors<CanonicalCase>('canonical.json');
const refused = loadVectors<RefusedCase>('refused.json');

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

describe('canonical.json vectors', () => {
  test.each(canonical.cases.filter((c) => c.group === 'numbers').map((c) => [c.id, c] as const))('%s', (_id, c) => {
    expect(canonicalJson(fromBits(c.ieee754_hex!))).toBe(c.expected);
    expect(scanCanonical(c.expected).defect).toBeNull();
  });
  test.each(canonical.cases.filter((c) => c.group === 'values').map((c) => [c.id, c] as const))('%s', (_id, c) => {
    expect(canonicalJson(JSON.parse(c.input_json!))).toBe(c.expected);
    expect(scanCanonical(c.expected).defect).toBeNull();
  });
});

class Point {
  constructor(public x = 1) {}
}

/** Values that no JSON text can carry, placed at a pointer inside an object. */
function construct(tag: string): unknown {
  switch (tag) {
    case 'nan':
      return NaN;
    case 'infinity':
      return Infinity;
    case 'minus-infinity':
      return [-Infinity];
    case 'bigint':
      return 10n;
    case 'undefined':
      return undefined;
    case 'function':
      return () => 1;
    case 'symbol':
      return Symbol('s');
    case 'array-hole': {
      const a = [1];
      a[2] = 3;
      return a;
    }
    case 'date':
      return new Date(0);
    case 'map':
      return new Map([['a', 1]]);
    case 'set':
      return new Set([1]);
    case 'class-instance':
      return new Point();
    case 'typed-array':
      return new Uint8Array([1, 2]);
    case 'boxed-number':
      return Object(5);
    case 'to-json':
      return { toJSON: () => 'x' };
    case 'cycle': {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    }
    case 'depth-101': {
      let v: unknown = [];
      for (let i = 1; i < 100; i++) v = [v];
      return v;
    } // 100 arrays
    default:
      throw new Error(`unknown construct ${tag}`);
  }
}

describe('refused.json vectors: values a writer refuses', () => {
  test.each(refused.cases.filter((c) => c.group === 'values').map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const value = c.construct !== undefined ? { [c.at!.slice(1)]: construct(c.construct) } : JSON.parse(c.input_json!);
    // The reference gate, and the writer's one-walk path, which must refuse with the very same error.
    for (const serialize of [canonicalJson, canonicalJsonChecked]) {
      let error: unknown;
      try {
        serialize(value);
      } catch (e) {
        error = e;
      }
      expect(error, serialize.name).toBeInstanceOf(CanonicalError);
      expect((error as CanonicalError).code).toBe(c.expected_code);
      expect((error as CanonicalError).location.path).toBe(c.expected_path);
      expect((error as CanonicalError).message.startsWith(`${c.expected_code}: `)).toBe(true);
    }
  });
});

describe('refused.json vectors: stored lines', () => {
  test.each(refused.cases.filter((c) => c.group === 'lines').map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const bytes = vectorBytes(c);
    let code: string | null;
    try {
      code =
        scanCanonical(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)).defect?.code ?? null;
      if (bytes.length === 0) code = 'MALFORMED_LINE';
    } catch {
      code = 'MALFORMED_LINE'; // not UTF-8 (§4.3 rule 1)
    }
    expect(code).toBe(c.expected_code);
  });
});

describe('canonical form properties', () => {
  test('JCS(parse(JCS(x))) = JCS(x), and JCS output always scans as canonical', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (x) => {
        const once = canonicalJson(x);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
        expect(scanCanonical(once).defect).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  test('any other serialization of a value that differs from JCS is reported, never accepted', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.constantFrom(1, 2, '\t'), (x, indent) => {
        const pretty = JSON.stringify(x, null, indent);
        const canonical = canonicalJson(x);
        const defect = scanCanonical(pretty).defect;
        if (pretty === canonical) expect(defect).toBeNull();
        else expect(defect?.code).toBe('NONCANONICAL_LINE');
      }),
      { numRuns: 1000 },
    );
  });

  test('the scanner never throws and always terminates on arbitrary text', () => {
    const jsonish = fc
      .array(
        fc.constantFrom(
          '{',
          '}',
          '[',
          ']',
          '"',
          '\\',
          ':',
          ',',
          'u',
          'd8',
          '00',
          '1',
          '-',
          '.',
          'e',
          '+',
          'true',
          'nul',
          ' ',
          '\ud800',
          '😀',
          'a',
        ),
        { maxLength: 60 },
      )
      .map((a) => a.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), jsonish), (text) => {
        const result = scanCanonical(text);
        expect(result.defect === null || typeof result.defect.code === 'string').toBe(true);
      }),
      { numRuns: 5000 },
    );
  });

  test('the validator accepts exactly what JSON.parse can produce (I-JSON values)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (x) => {
        expect(() => assertIJson(JSON.parse(JSON.stringify(x)))).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });

  test('__proto__ members are data: they round-trip and pollute nothing', () => {
    const value = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    const text = canonicalJson(value);
    expect(text).toBe('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(canonicalJson(JSON.parse(text))).toBe(text);
  });
});
