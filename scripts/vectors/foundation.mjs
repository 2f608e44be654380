// Generates the foundation vectors (spec/FORMAT.md §11): canonical.json, refused.json, step-hashes.json and
// chains.json. Inputs are fixed (ids, timestamps), so the output is byte-identical on every run.
//
// Expected values come from the library, so the generator also checks them against facts that do not
// depend on it: RFC 8785's published number table, SHA-256 from node:crypto over independently built
// preimages, and for every damaged chain the exact problem codes the damage is meant to cause. A
// disagreement aborts generation instead of writing a wrong vector.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../dist/canonical/index.js';
import { scanCanonical } from '../../dist/canonical/scan.js';
import { makeGenesis, genesisHash, sealRecord } from '../../dist/record/index.js';
import { verifyChain } from '../../dist/chain/index.js';

const FORMAT = 'stepchain-vectors/v1';
const enc = new TextEncoder();
// Records may hold markers, which the writer-side gate refuses in caller data; JCS itself is unchanged.
const jcsRecord = (r) => canonicalJson(r, { refuseReserved: false, maxDepth: 128 });
const sha = (s) => 'sha256:' + createHash('sha256').update(s, 'utf8').digest('hex');

function assert(cond, message) {
  if (!cond) throw new Error(`vector generation check failed: ${message}`);
}

// ---------------------------------------------------------------- canonical.json

// RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
const RFC8785_NUMBERS = [
  ['0000000000000000', '0', 'zero'],
  ['8000000000000000', '0', 'minus zero'],
  ['0000000000000001', '5e-324', 'min pos number'],
  ['8000000000000001', '-5e-324', 'min neg number'],
  ['7fefffffffffffff', '1.7976931348623157e+308', 'max pos number'],
  ['ffefffffffffffff', '-1.7976931348623157e+308', 'max neg number'],
  ['4340000000000000', '9007199254740992', 'max pos int'],
  ['c340000000000000', '-9007199254740992', 'max neg int'],
  ['4430000000000000', '295147905179352830000', '~2**68'],
  ['44b52d02c7e14af5', '9.999999999999997e+22', ''],
  ['44b52d02c7e14af6', '1e+23', ''],
  ['44b52d02c7e14af7', '1.0000000000000001e+23', ''],
  ['444b1ae4d6e2ef4e', '999999999999999700000', ''],
  ['444b1ae4d6e2ef4f', '999999999999999900000', ''],
  ['444b1ae4d6e2ef50', '1e+21', 'the 1e21 boundary: exponent form from here'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7', 'just below 1e-6: exponent form'],
  ['3eb0c6f7a0b5ed8d', '0.000001', '1e-6: the smallest plain decimal'],
  ['41b3de4355555553', '333333333.3333332', ''],
  ['41b3de4355555554', '333333333.33333325', ''],
  ['41b3de4355555555', '333333333.3333333', ''],
  ['41b3de4355555556', '333333333.3333334', ''],
  ['41b3de4355555557', '333333333.33333343', ''],
  ['becbf647612f3696', '-0.0000033333333333333333', ''],
  ['43143ff3c1cb0959', '1424953923781206.2', 'round to even'],
];

function fromBits(hex) {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt('0x' + hex));
  return view.getFloat64(0);
}

function canonicalVectors() {
  const numbers = [];
  for (const [bits, expected, note] of RFC8785_NUMBERS) {
    const got = canonicalJson(fromBits(bits));
    assert(got === expected, `number ${bits}: library says ${got}, RFC 8785 says ${expected}`);
    numbers.push({ id: `number-${bits}`, comment: note || 'RFC 8785 Appendix B', ieee754_hex: bits, expected });
  }
  const extra = [
    ['1e21', '1e+21'], ['1e20', '100000000000000000000'], ['1e-7', '1e-7'], ['1.5e-7', '1.5e-7'],
    ['0.000001', '0.000001'], ['123456789012345680000', '123456789012345680000'], ['0.1', '0.1'], ['-1.5', '-1.5'],
  ];
  for (const [text, expected] of extra) {
    const v = Number(text);
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, v);
    const bits = view.getBigUint64(0).toString(16).padStart(16, '0');
    assert(canonicalJson(v) === expected, `number ${text}`);
    numbers.push({ id: `number-${text}`, comment: `boundary: ${text}`, ieee754_hex: bits, expected });
  }

  const values = [];
  const addValue = (id, comment, inputJson, expected) => {
    const got = canonicalJson(JSON.parse(inputJson));
    assert(got === expected, `${id}: library gives ${got}`);
    const scan = scanCanonical(expected);
    assert(scan.defect === null, `${id}: expected output does not scan as canonical: ${scan.defect?.reason}`);
    values.push({ id, comment, input_json: inputJson, expected, expected_sha256: sha(expected) });
  };
  addValue('rfc8785-3.2.2', 'the RFC 8785 §3.2.2 example: numbers, escapes, literals',
    '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  addValue('rfc8785-3.2.3', 'the RFC 8785 §3.2.3 sorting example: UTF-16 code unit order',
    '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}');
  addValue('utf16-order-astral', 'an astral-plane name (first unit 0xD83D) sorts before U+E000–U+FFFF names, unlike code point order',
    '{"\\uffff": 3, "\\ue000": 2, "\\ud83d\\ude00": 1, "z": 0}', '{"z":0,"\ud83d\ude00":1,"\ue000":2,"\uffff":3}');
  addValue('escapes-controls', 'control characters: five short escapes, the rest \\u00xx lowercase',
    '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001f"', '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001f"');
  addValue('escapes-literal', 'solidus, DEL, U+2028, U+2029 and non-ASCII are written as themselves',
    '"\\/ \\u007f \\u2028 \\u2029 \\u00e9 \\ud83d\\ude00"', '"/ \u007f \u2028 \u2029 é 😀"');
  addValue('escapes-quote-backslash', 'quote and backslash are the only other escapes', '"a\\"b\\\\c"', '"a\\"b\\\\c"');
  addValue('empty-containers', 'empty object and array', '{"b": [], "a": {}, "c": [{}, []]}', '{"a":{},"b":[],"c":[{},[]]}');
  addValue('minus-zero', '-0 is written 0', '[-0, -0.0, 0.0]', '[0,0,0]');
  addValue('numbers-shortest', 'shortest round-trip digits and exponent forms', '[1.0, 1E3, 1e-7, 1e21, 0.1, 100, 1.5e300]',
    '[1,1000,1e-7,1e+21,0.1,100,1.5e+300]');
  addValue('nested-sorting', 'members are sorted at every level', '{"b": {"z": 1, "a": [ {"y": 2, "x": 1} ]}, "a": null}',
    '{"a":null,"b":{"a":[{"x":1,"y":2}],"z":1}}');
  addValue('proto-keys', '__proto__, constructor and prototype are ordinary member names',
    '{"__proto__": {"polluted": true}, "constructor": 1, "prototype": 2}', '{"__proto__":{"polluted":true},"constructor":1,"prototype":2}');
  const deep = '['.repeat(100) + ']'.repeat(100);
  addValue('depth-100', 'a value nested exactly 100 deep: the writer limit for a content field', deep, deep);

  return {
    format: FORMAT,
    kind: 'canonical',
    description: 'RFC 8785 canonicalization. numbers: an IEEE 754 binary64 bit pattern (big-endian hex) and its canonical text. values: a JSON text, its canonical text and the digest of that text.',
    cases: [...numbers.map((c) => ({ group: 'numbers', result: 'valid', ...c })), ...values.map((c) => ({ group: 'values', result: 'valid', ...c }))],
  };
}

// ---------------------------------------------------------------- refused.json

function refusedVectors() {
  const cases = [];
  // Writer-side refusals. `construct` names a value no JSON text can carry; `input_json` is used where
  // JSON can carry it (a JSON parser yields lone surrogates from \ud800 escapes).
  const value = (id, comment, spec, code, path) => cases.push({ group: 'values', id, comment, result: 'invalid', ...spec, expected_code: code, expected_path: path });
  value('nan', 'NaN has no JSON form', { construct: 'nan', at: '/a' }, 'NOT_FINITE_NUMBER', '/a');
  value('infinity', '+Infinity', { construct: 'infinity', at: '/a' }, 'NOT_FINITE_NUMBER', '/a');
  value('minus-infinity', '-Infinity inside an array', { construct: 'minus-infinity', at: '/a' }, 'NOT_FINITE_NUMBER', '/a/0');
  value('bigint', 'a BigInt is not a JSON number', { construct: 'bigint', at: '/n' }, 'UNSUPPORTED_TYPE', '/n');
  value('undefined-member', 'undefined is not JSON (canonicalize would drop the member)', { construct: 'undefined', at: '/x' }, 'UNSUPPORTED_TYPE', '/x');
  value('function', 'a function is not JSON', { construct: 'function', at: '/f' }, 'UNSUPPORTED_TYPE', '/f');
  value('symbol', 'a symbol is not JSON', { construct: 'symbol', at: '/s' }, 'UNSUPPORTED_TYPE', '/s');
  value('array-hole', 'an array hole is not JSON', { construct: 'array-hole', at: '/arr' }, 'UNSUPPORTED_TYPE', '/arr/1');
  value('date', 'a Date is not plain data (canonicalize would call toJSON)', { construct: 'date', at: '/d' }, 'NOT_PLAIN_OBJECT', '/d');
  value('map', 'a Map is not plain data (canonicalize would write {})', { construct: 'map', at: '/m' }, 'NOT_PLAIN_OBJECT', '/m');
  value('set', 'a Set is not plain data', { construct: 'set', at: '/m' }, 'NOT_PLAIN_OBJECT', '/m');
  value('class-instance', 'a class instance is not plain data', { construct: 'class-instance', at: '/c' }, 'NOT_PLAIN_OBJECT', '/c');
  value('typed-array', 'a Uint8Array is not plain data', { construct: 'typed-array', at: '/bytes' }, 'NOT_PLAIN_OBJECT', '/bytes');
  value('boxed-number', 'a boxed Number is not plain data', { construct: 'boxed-number', at: '/n' }, 'NOT_PLAIN_OBJECT', '/n');
  value('to-json', 'a plain object with a toJSON method', { construct: 'to-json', at: '/t' }, 'NOT_PLAIN_OBJECT', '/t');
  value('cycle', 'an object that contains itself', { construct: 'cycle', at: '/loop' }, 'CYCLE', '/loop/self');
  value('depth-101', 'one level beyond the writer limit of 100: an object holding 100 nested arrays has depth 101; the 100th array is where the limit is crossed', { construct: 'depth-101', at: '/deep' }, 'DEPTH_LIMIT', '/deep' + '/0'.repeat(99));
  value('lone-high-surrogate-value', 'a lone high surrogate in a string', { input_json: '{"a":"x\\ud800y"}' }, 'LONE_SURROGATE', '/a');
  value('lone-low-surrogate-value', 'a lone low surrogate in a string', { input_json: '{"a":"\\udc00"}' }, 'LONE_SURROGATE', '/a');
  value('reversed-surrogates-value', 'a low surrogate before a high one is two lone surrogates', { input_json: '{"a":"\\udc00\\ud800"}' }, 'LONE_SURROGATE', '/a');
  value('lone-surrogate-key', 'a lone surrogate in a member name', { input_json: '{"k\\ud800":1}' }, 'LONE_SURROGATE', '/k\ud800');
  value('reserved-key', 'member names beginning with $stepchain: belong to the format', { input_json: '{"x":{"$stepchain:blob":{"digest":"sha256:00","size":1}}}' }, 'RESERVED_KEY', '/x/$stepchain:blob');

  // Verifier-side: stored line bytes and the code of §4.3 they yield (null: canonical).
  const line = (id, comment, text, code) => {
    const scan = scanCanonical(text);
    const got = scan.defect ? scan.defect.code : null;
    assert(got === code, `line ${id}: scanner says ${got}, intended ${code}`);
    cases.push({ group: 'lines', id, comment, result: code === null ? 'valid' : 'invalid', text, expected_code: code, ...(scan.defect ? { expected_index: scan.defect.index } : {}) });
  };
  const lineBytes = (id, comment, bytes, code) => {
    cases.push({ group: 'lines', id, comment, result: 'invalid', base64: Buffer.from(bytes).toString('base64'), expected_code: code });
  };
  line('ok-simple', 'canonical', '{"a":1,"b":[true,false,null],"c":"x"}', null);
  line('ok-depth-128', 'nested exactly 128 deep: the verifier limit', '['.repeat(128) + ']'.repeat(128), null);
  line('lone-high-escape-value', '\\ud800 not followed by a low surrogate escape', '{"a":"\\ud800"}', 'LONE_SURROGATE');
  line('lone-low-escape-value', 'a lone \\udc00 escape', '{"a":"x\\udc00"}', 'LONE_SURROGATE');
  line('reversed-surrogate-escapes', 'low then high: both lone', '{"a":"\\udc00\\ud800"}', 'LONE_SURROGATE');
  line('lone-surrogate-escape-key', 'a lone surrogate in a member name', '{"\\ud800":1}', 'LONE_SURROGATE');
  lineBytes('encoded-surrogate-bytes', 'a surrogate encoded as UTF-8 bytes (ED A0 80) is not UTF-8', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d], 'MALFORMED_LINE');
  lineBytes('invalid-utf8', 'a stray continuation byte', [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d], 'MALFORMED_LINE');
  lineBytes('overlong-utf8', 'an overlong encoding of "/" (C0 AF)', [0x22, 0xc0, 0xaf, 0x22], 'MALFORMED_LINE');
  line('nan-literal', 'NaN is not JSON', '{"a":NaN}', 'MALFORMED_LINE');
  line('infinity-literal', 'Infinity is not JSON', '{"a":Infinity}', 'MALFORMED_LINE');
  line('number-overflow', '1e400 is beyond binary64', '{"a":1e400}', 'NOT_FINITE_NUMBER');
  line('depth-129', 'one level beyond the verifier limit', '['.repeat(129) + ']'.repeat(129), 'DEPTH_LIMIT');
  line('depth-100000', 'a hundred thousand brackets: refused at level 129, without recursion', '['.repeat(100000), 'DEPTH_LIMIT');
  line('duplicate-adjacent', 'the same name twice in a row', '{"a":1,"a":2}', 'DUPLICATE_KEY');
  line('duplicate-same-value', 'a duplicate with the same value is still a duplicate', '{"a":1,"a":1}', 'DUPLICATE_KEY');
  line('duplicate-unsorted', 'a duplicate separated by another member, out of order', '{"b":1,"a":2,"b":3}', 'DUPLICATE_KEY');
  line('duplicate-escaped', '"a" and "\\u0061" are the same name', '{"a":1,"\\u0061":2}', 'DUPLICATE_KEY');
  line('whitespace-after-colon', 'insignificant whitespace', '{"a": 1}', 'NONCANONICAL_LINE');
  line('whitespace-leading', 'leading space', ' {"a":1}', 'NONCANONICAL_LINE');
  line('crlf', 'a CR before the newline (CRLF line endings)', '{"a":1}\r', 'NONCANONICAL_LINE');
  line('unsorted', 'members out of order', '{"b":1,"a":2}', 'NONCANONICAL_LINE');
  line('utf16-order-violation', 'U+E000 before an astral name is code point order, not UTF-16 order', '{"\ue000":1,"\ud83d\ude00":2}', 'NONCANONICAL_LINE');
  line('number-trailing-zero', '1.0 is written 1', '{"a":1.0}', 'NONCANONICAL_LINE');
  line('number-minus-zero', '-0 is written 0', '{"a":-0}', 'NONCANONICAL_LINE');
  line('number-uppercase-exponent', '1E3 is written 1000', '{"a":1E3}', 'NONCANONICAL_LINE');
  line('number-1e21-plain', '1e21 written out in full is not canonical', '{"a":1000000000000000000000}', 'NONCANONICAL_LINE');
  line('number-1e-7-plain', '1e-7 written as a decimal is not canonical', '{"a":0.0000001}', 'NONCANONICAL_LINE');
  line('escaped-solidus', '"/" is not escaped', '{"a":"\\/"}', 'NONCANONICAL_LINE');
  line('escaped-ascii', '\\u0041 is written A', '{"a":"\\u0041"}', 'NONCANONICAL_LINE');
  line('escape-uppercase-hex', '\\u001F is written \\u001f', '{"a":"\\u001F"}', 'NONCANONICAL_LINE');
  line('escape-long-newline', '\\u000a is written \\n', '{"a":"\\u000a"}', 'NONCANONICAL_LINE');
  line('escaped-surrogate-pair', 'a valid pair is written as the character itself', '{"a":"\\ud83d\\ude00"}', 'NONCANONICAL_LINE');
  line('bom', 'a byte-order mark is not JSON', '\ufeff{"a":1}', 'MALFORMED_LINE');
  line('trailing-comma', 'a trailing comma', '{"a":1,}', 'MALFORMED_LINE');
  line('unterminated', 'cut in the middle', '{"a":"b', 'MALFORMED_LINE');
  line('raw-control', 'a raw tab inside a string', '{"a":"\t"}', 'MALFORMED_LINE');
  line('empty', 'an empty line', '', 'MALFORMED_LINE');
  line('trailing-garbage', 'text after the value', '{"a":1}x', 'MALFORMED_LINE');

  // Where a defect is reported and which one wins (FORMAT §4.3 "Which defect is reported"): the code, the
  // column (1 + the UTF-8 byte offset) and the JSON Pointer a verifier reports for the line. The expected
  // location is written here by hand from the spec's rules; the generator checks the chain verifier agrees.
  const located = (id, comment, payload, code, column, path) => {
    const bytes = typeof payload === 'string' ? enc.encode(payload) : Uint8Array.from(payload);
    const report = verifyChain({ genesis: GENESIS, files: [{ name: B0, bytes: Buffer.concat([bytes, Buffer.from([0x0a])]) }] });
    const p = report.problems[0];
    const got = p && { code: p.code, column: p.location.column, path: p.location.path ?? null };
    assert(p && p.code === code && p.location.column === column && (p.location.path ?? '') === (path ?? ''),
      `located ${id}: verifier says ${JSON.stringify(got)}, intended ${JSON.stringify({ code, column, path })}`);
    cases.push({
      group: 'locations', id, comment, result: 'invalid',
      ...(typeof payload === 'string' ? { text: payload } : { base64: Buffer.from(bytes).toString('base64') }),
      expected_code: code, expected_column: column, expected_path: path,
    });
  };
  const q = (s) => [...enc.encode(s)];
  // Grammar: the first character that cannot continue a JSON text, or the end of the text.
  located('grammar-literal-cut', 'a broken literal: at the first character that departs from it, not at its start', '{"a":tru}', 'MALFORMED_LINE', 9, '/a');
  located('grammar-literal-case', 'literals are lowercase: at the L', '{"a":nulL}', 'MALFORMED_LINE', 9, '/a');
  located('grammar-literal-end', 'a literal cut by the end of the line: at the end', '{"a":fals', 'MALFORMED_LINE', 10, '/a');
  located('grammar-no-value', 'N cannot begin a value', '{"a":NaN}', 'MALFORMED_LINE', 6, '/a');
  located('grammar-escape-letter', 'an unknown escape: at the character after the backslash, not at the backslash', '{"a":"\\x"}', 'MALFORMED_LINE', 8, '/a');
  located('grammar-escape-end', 'a backslash that ends the line: at the end', '{"a":"\\', 'MALFORMED_LINE', 8, '/a');
  located('grammar-escape-hex', 'a \\u escape with a non-hex digit: at that digit', '{"a":"\\u12G4"}', 'MALFORMED_LINE', 11, '/a');
  located('grammar-escape-short', 'a \\u escape with two digits: at the quote that ends it early', '{"a":"\\u12"}', 'MALFORMED_LINE', 11, '/a');
  located('grammar-in-name', 'a defect inside a member name is located at the enclosing object', '{"k\\q":1}', 'MALFORMED_LINE', 5, '');
  located('grammar-unterminated', 'a string cut by the end of the line', '{"a":"b', 'MALFORMED_LINE', 8, '/a');
  located('grammar-minus-alone', 'a minus sign needs a digit', '{"a":-}', 'MALFORMED_LINE', 7, '/a');
  located('grammar-leading-zero', '0 is a whole number token; the 1 after it cannot continue, and the member\'s value has ended', '{"a":01}', 'MALFORMED_LINE', 7, '');
  located('grammar-array-trailing-comma', 'an array index joins the pointer where its element should begin', '[1,]', 'MALFORMED_LINE', 4, '/1');
  located('grammar-missing-colon', 'a member name joins the pointer at its closing quote', '{"a"1}', 'MALFORMED_LINE', 5, '/a');
  located('grammar-empty', 'an empty line: at its end, column 1', '', 'MALFORMED_LINE', 1, '');
  located('grammar-after-two-byte', 'columns count UTF-8 bytes: é is two', '{"é":tru}', 'MALFORMED_LINE', 10, '/é');
  located('grammar-after-astral', 'columns count UTF-8 bytes: 😀 is four (two UTF-16 units)', '["😀",x]', 'MALFORMED_LINE', 9, '/1');
  // Not UTF-8: the first byte that cannot continue a well-formed UTF-8 sequence, whatever else is wrong.
  located('utf8-truncated-at-end', 'a two-byte sequence cut by the end of the line: the column just past it, where the newline is', [...q('{"a":"'), 0xc3], 'MALFORMED_LINE', 8, null);
  located('utf8-truncated-three', 'E2 82 then a quote: the quote is the first byte that cannot continue, not the lead byte', [...q('{"a":"'), 0xe2, 0x82, ...q('"}')], 'MALFORMED_LINE', 9, null);
  located('utf8-truncated-four', 'F0 9F 98 then a quote', [0x22, 0xf0, 0x9f, 0x98, 0x22], 'MALFORMED_LINE', 5, null);
  located('utf8-overlong-lead', 'C0 can begin no sequence: at C0', [0x22, 0xc0, 0xaf, 0x22], 'MALFORMED_LINE', 2, null);
  located('utf8-encoded-surrogate', 'ED A0 80 encodes U+D800: after ED only 80–9F may follow, so at A0', [0x22, 0xed, 0xa0, 0x80, 0x22], 'MALFORMED_LINE', 3, null);
  located('utf8-overlong-three', 'E0 80 80 is overlong: after E0 only A0–BF may follow, so at the first 80', [0x22, 0xe0, 0x80, 0x80, 0x22], 'MALFORMED_LINE', 3, null);
  located('utf8-above-10ffff', 'F4 90 80 80 is above U+10FFFF: after F4 only 80–8F may follow', [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], 'MALFORMED_LINE', 3, null);
  located('utf8-f5', 'F5 can begin no sequence', [0x22, 0xf5, 0x22], 'MALFORMED_LINE', 2, null);
  located('utf8-stray-continuation', 'a continuation byte with no lead', [...q('{"a":"x'), 0x80, ...q('"}')], 'MALFORMED_LINE', 8, null);
  located('utf8-wins', 'a line that is not UTF-8 is MALFORMED_LINE at its bad byte even after an earlier defect of another kind', [...q('{ "a":1e400,"b":"'), 0xff, ...q('"}')], 'MALFORMED_LINE', 18, null);
  // Which defect wins: the hard defect met first; NONCANONICAL_LINE only when there is none.
  located('wins-hard-over-earlier-noncanonical', 'whitespace comes first, but a non-finite number is a harder defect', '{ "a":1e400}', 'NOT_FINITE_NUMBER', 7, '/a');
  located('wins-first-noncanonical-by-position', 'out of order (at the opening quote) comes before the needless escape inside the same name', '{"b":1,"\\u0061":2}', 'NONCANONICAL_LINE', 8, '/a');
  located('wins-lone-surrogate-over-broken-next-escape', 'a high surrogate escape not followed by a complete low one is lone, whatever follows', '{"a":"\\ud800\\u12x4"}', 'LONE_SURROGATE', 7, '/a');
  located('wins-lone-surrogate-at-end', 'a high surrogate escape, then the line ends inside the next escape', '{"a":"\\ud800\\udc', 'LONE_SURROGATE', 7, '/a');
  located('wins-duplicate-over-later-grammar', 'the repeated name comes before the broken value', '{"a":1,"a":tru}', 'DUPLICATE_KEY', 8, '/a');
  located('wins-unfinished-name-is-no-duplicate', 'a name cut by the end of the line is no name, so no duplicate: grammar, at the end', '{"a":1,"a', 'MALFORMED_LINE', 10, '');
  located('wins-not-finite-over-later-grammar', 'the number token is whole before the grammar breaks', '[1e400,]', 'NOT_FINITE_NUMBER', 2, '/0');
  located('wins-grammar-over-later-not-finite', 'the grammar breaks before the number', '[tru,1e400]', 'MALFORMED_LINE', 5, '/0');
  located('wins-depth-over-later-grammar', 'the 129th bracket comes before the garbage', '['.repeat(129) + 'x', 'DEPTH_LIMIT', 129, '/0'.repeat(128));
  located('wins-grammar-over-later-depth', 'the garbage comes before any deep bracket', '[x' + '['.repeat(200), 'MALFORMED_LINE', 2, '/0');
  located('wins-duplicate-over-later-lone-surrogate', 'the repeated name comes before the lone surrogate in its value', '{"a":1,"a":"\\ud800"}', 'DUPLICATE_KEY', 8, '/a');
  located('wins-lone-surrogate-in-first-name', 'a lone surrogate in a name is met in the first occurrence, at the enclosing object', '{"\\ud800":1,"\\ud800":2}', 'LONE_SURROGATE', 3, '');
  located('wins-duplicate-unsorted', 'a name repeated after another, out of order: DUPLICATE_KEY at the third member', '{"b":1,"a":2,"b":3}', 'DUPLICATE_KEY', 14, '/b');
  // Where a non-canonical form is located.
  located('noncanonical-space-in-array', 'whitespace after a comma comes before the next element begins: the array', '[1, 2]', 'NONCANONICAL_LINE', 4, '');
  located('noncanonical-space-after-colon', 'whitespace after a colon: the member', '{"a": 1}', 'NONCANONICAL_LINE', 6, '/a');
  located('noncanonical-number', 'a number form: at its first character', '[0,1.0]', 'NONCANONICAL_LINE', 4, '/1');
  located('noncanonical-escape-in-name', 'an escape form inside a name: the enclosing object', '{"\\u0061":1}', 'NONCANONICAL_LINE', 3, '');
  located('noncanonical-pair-escape', 'an escaped surrogate pair: at the backslash of its high half', '{"a":"x\\ud83d\\ude00"}', 'NONCANONICAL_LINE', 8, '/a');
  located('noncanonical-pair-uppercase-low', 'a pair with an uppercase low half is a pair (not lone), written literally in canonical form', '"\\ud800\\uDC00"', 'NONCANONICAL_LINE', 2, '');
  return {
    format: FORMAT,
    kind: 'refused',
    description: 'Inputs that must be refused. group "values": writer-side values (construct: a tag for a value JSON cannot carry, which is the value of the single member named by "at" of an object that is checked as a whole; or input_json) with the error code and JSON Pointer a writer reports. group "lines": a stored line without its newline (text, or base64 bytes) and the code of spec/FORMAT.md §4.3 (null: canonical); expected_index is the UTF-16 index where the reference scanner met the defect (informative). group \"locations\": a stored line (text or base64) and the problem a verifier reports for it, all normative: expected_code, expected_column (1 + the UTF-8 byte offset where the defect is met) and expected_path (the JSON Pointer; null when the line is not UTF-8), per spec/FORMAT.md §4.3.',
    cases,
  };
}

// ---------------------------------------------------------------- step-hashes.json and chains.json

const GENESIS = makeGenesis({ journalId: '3f2b8c1e-7d4a-4e9b-9c1f-2a6d5e8b0c47', createdAt: '2026-11-21T09:00:00.000Z' });
const OTHER_GENESIS = makeGenesis({ journalId: 'a1b2c3d4-0000-4000-8000-000000000001', createdAt: '2026-11-21T09:00:00.000Z' });

const CONTENTS = [
  { input: { question: 'What is the weather in Paris?' }, model: 'gpt-4o-2024-08-06', prompt: 'You are a helpful assistant. Use tools when needed.', tool_call: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } }, result: { temperature: 18.5, conditions: 'cloudy' } },
  { input: { question: 'What is the weather in Paris?', observation: { temperature: 18.5, conditions: 'cloudy' } }, model: 'gpt-4o-2024-08-06', prompt: 'Answer the user in one sentence.', tool_call: null, result: 'It is 18.5 °C and cloudy in Paris.', meta: { latency_ms: 412 } },
  { input: { question: 'And tomorrow?' }, model: 'gpt-4o-2024-08-06', prompt: 'You are a helpful assistant. Use tools when needed.', tool_call: { name: 'get_forecast', arguments: { city: 'Paris', days: 1 } }, result: { days: [{ high: 21, low: 12, conditions: 'sunny' }] } },
  { input: null, model: 'claude-sonnet-4', prompt: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Summarise: ✓ ünïcödé 😀' }], tool_call: { name: 'search', arguments: { q: '"quoted" \\ back\nslash', limit: 1e21, min: 5e-324 } }, result: { hits: [], took_ms: 0.000001, ok: true } },
  { input: { file: 'report.pdf' }, model: 'gpt-4o-mini', prompt: 'Extract the totals.', tool_call: { name: 'read_file', arguments: { path: '/tmp/report.pdf' } }, result: JSON.parse('{"$ref":"not a marker: only $stepchain: names are reserved","__proto__":{"x":1}}') },
];

function stepIdFor(i) {
  return `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
}

function tsFor(i) {
  return new Date(Date.UTC(2026, 10, 21, 9, 0, 1) + i * 1250).toISOString();
}

function buildChain(genesis, n, startPrev = genesisHash(genesis), startSeq = 0) {
  const lines = [];
  const records = [];
  let prev = startPrev;
  for (let k = 0; k < n; k++) {
    const i = startSeq + k;
    const c = CONTENTS[i % CONTENTS.length];
    const unsealed = { v: 1, seq: i, step_id: stepIdFor(i), ts: tsFor(i), prev_hash: prev, input: c.input, model: c.model, prompt: c.prompt, tool_call: c.tool_call, result: c.result, ...(c.meta ? { meta: c.meta } : {}) };
    const { record, line } = sealRecord(unsealed);
    // Independent check: node:crypto over our own JCS of the record without step_hash.
    assert(record.step_hash === sha(jcsRecord(unsealed)), `step ${i} hash`);
    prev = record.step_hash;
    lines.push(line);
    records.push(record);
  }
  return { lines, records };
}

function stepHashVectors() {
  const cases = [];
  const add = (id, comment, unsealed) => {
    const { record, line } = sealRecord(unsealed);
    const preimage = jcsRecord(unsealed);
    assert(record.step_hash === sha(preimage), id);
    assert(line === jcsRecord(record) + '\n', `${id}: line is JCS of the sealed record`);
    cases.push({ id, comment, result: 'valid', record: unsealed, preimage, step_hash: record.step_hash, line });
  };
  const g = genesisHash(GENESIS);
  const base = (i, extra) => ({ v: 1, seq: i, step_id: stepIdFor(i), ts: tsFor(i), prev_hash: g, ...CONTENTS[i % CONTENTS.length], ...extra });
  add('spec-example-0', 'the first step of spec/FORMAT.md §1', { v: 1, seq: 0, step_id: '6c1d0e5a-1b7f-4f0e-8a3d-9e2b4c6d8f10', ts: '2026-11-21T09:00:01.250Z', prev_hash: g, ...CONTENTS[0] });
  add('with-meta', 'meta is covered by the hash', base(1, {}));
  add('unicode-and-numbers', 'non-ASCII text, escapes, 1e21 and 5e-324 in content', base(3, {}));
  add('all-null-content', 'every content field null', { v: 1, seq: 7, step_id: 'caller-chosen.id:7', ts: '2026-01-01T00:00:00.000Z', prev_hash: g, input: null, model: null, prompt: null, tool_call: null, result: null });
  add('empty-meta', 'an empty meta object is a member, not an absence', { v: 1, seq: 0, step_id: 'x', ts: '2026-01-01T00:00:00.000Z', prev_hash: g, input: {}, model: '', prompt: [], tool_call: false, result: 0, meta: {} });
  add('blob-reference', 'a content field replaced by a blob reference: the hash covers the reference', { v: 1, seq: 2, step_id: stepIdFor(2), ts: tsFor(2), prev_hash: g, input: null, model: 'm', prompt: 'p', tool_call: null, result: { '$stepchain:blob': { digest: sha('"' + 'x'.repeat(70000) + '"'), size: 70002 } } });
  add('redaction-marker', 'a value replaced by a redaction marker', { v: 1, seq: 3, step_id: stepIdFor(3), ts: tsFor(3), prev_hash: g, input: null, model: 'm', prompt: { '$stepchain:redacted': { commitment: sha('salt-and-value'), rule: 'prompts' } }, tool_call: { name: 'http', arguments: { api_key: { '$stepchain:redacted': { commitment: sha('k'), rule: 'secrets', text: 'sk-[REDACTED]' } } } }, result: null });
  add('text-like-step-hash', 'content containing the text ,"step_hash": must not confuse a verifier that removes the member by parsing', { v: 1, seq: 0, step_id: 'y', ts: '2026-01-01T00:00:00.000Z', prev_hash: g, input: { a: ',"step_hash":"sha256:0","step_id":' }, model: null, prompt: null, tool_call: null, result: null });
  return {
    format: FORMAT,
    kind: 'step-hashes',
    description: 'record: a step record without step_hash; preimage: JCS(record); step_hash: digest of the UTF-8 preimage; line: the stored line (JCS of the sealed record plus a newline).',
    genesis: GENESIS,
    genesis_jcs: canonicalJson(GENESIS),
    genesis_hash: genesisHash(GENESIS),
    cases,
  };
}

const B0 = '0000000000000000.jsonl';

function chainVectors() {
  const cases = [];
  /** intended: the codes the damage must produce, in report order; checked against the library. */
  const add = (id, comment, { genesis = GENESIS, files, start, expectHead, intended }) => {
    const report = verifyChain({
      genesis,
      ...(start ? { start } : {}),
      ...(expectHead ? { expectHead } : {}),
      files: files.map((f) => ({ name: f.name, bytes: f.base64 ? Buffer.from(f.base64, 'base64') : enc.encode(f.text) })),
    });
    const codes = report.problems.map((p) => p.code);
    assert(JSON.stringify(codes) === JSON.stringify(intended), `chain ${id}: verifier reports [${codes}], intended [${intended}]`);
    cases.push({
      id, comment, result: intended.length === 0 ? 'valid' : 'invalid',
      ...(genesis === GENESIS ? {} : { genesis }),
      ...(start ? { start } : {}),
      ...(expectHead ? { expect_head: expectHead } : {}),
      files,
      expect: {
        ok: report.ok, head: report.head, head_seq: report.head_seq, steps: report.steps,
        problems: report.problems.map((p) => {
          const { file, line, seq, field, column } = p.location;
          return { code: p.code, ...(file !== undefined ? { file } : {}), ...(line !== undefined ? { line } : {}), ...(column !== undefined ? { column } : {}), ...(seq !== undefined ? { seq } : {}), ...(field !== undefined ? { field } : {}) };
        }),
      },
    });
  };
  const text = (lines) => lines.join('');
  const five = buildChain(GENESIS, 5);
  const head5 = five.records[4].step_hash;

  add('valid-empty', 'a journal with no steps', { files: [], intended: [] });
  add('valid-1', 'one step', { files: [{ name: B0, text: text(buildChain(GENESIS, 1).lines) }], intended: [] });
  add('valid-2', 'the example of spec/FORMAT.md §1 (other step ids and times)', { files: [{ name: B0, text: text(buildChain(GENESIS, 2).lines) }], intended: [] });
  add('valid-5-pinned-head', 'five steps, head pinned', { files: [{ name: B0, text: text(five.lines) }], expectHead: head5, intended: [] });
  const twelve = buildChain(GENESIS, 12);
  add('valid-12-three-buckets', 'twelve steps across three bucket files named by their first seq', {
    files: [
      { name: B0, text: text(twelve.lines.slice(0, 5)) },
      { name: '0000000000000005.jsonl', text: text(twelve.lines.slice(5, 9)) },
      { name: '0000000000000009.jsonl', text: text(twelve.lines.slice(9)) },
    ],
    expectHead: twelve.records[11].step_hash,
    intended: [],
  });
  add('valid-partial', 'a partial chain: steps 5..8 starting from step 4\'s hash', {
    start: { seq: 5, prev_hash: twelve.records[4].step_hash },
    files: [{ name: '0000000000000005.jsonl', text: text(twelve.lines.slice(5, 9)) }],
    expectHead: twelve.records[8].step_hash,
    intended: [],
  });

  // Damage.
  const edited = [...five.lines];
  edited[2] = edited[2].replace('"city":"Paris"', '"city":"Lyon"');
  add('edited-content', 'a content field of step 2 edited, step_hash left alone', { files: [{ name: B0, text: text(edited) }], intended: ['HASH_MISMATCH'] });

  const rehashed = buildChain(GENESIS, 5);
  {
    const r = { ...rehashed.records[2] };
    delete r.step_hash;
    r.tool_call = { name: 'get_forecast', arguments: { city: 'Lyon', days: 1 } };
    rehashed.lines[2] = sealRecord(r).line;
  }
  add('edited-and-rehashed', 'step 2 edited and its step_hash recomputed: the next link breaks', { files: [{ name: B0, text: text(rehashed.lines) }], intended: ['LINK_BROKEN'] });

  const editedSeq = [...five.lines];
  editedSeq[3] = editedSeq[3].replace('"seq":3,', '"seq":7,');
  add('edited-seq', 'seq of step 3 changed to 7 without rehashing', { files: [{ name: B0, text: text(editedSeq) }], intended: ['HASH_MISMATCH', 'SEQ_GAP', 'SEQ_OUT_OF_ORDER'] });

  add('reordered', 'steps 2 and 3 swapped', { files: [{ name: B0, text: text([five.lines[0], five.lines[1], five.lines[3], five.lines[2], five.lines[4]]) }], intended: ['SEQ_GAP', 'LINK_BROKEN', 'SEQ_OUT_OF_ORDER', 'LINK_BROKEN', 'SEQ_GAP', 'LINK_BROKEN'] });
  add('deleted', 'step 2 deleted', { files: [{ name: B0, text: text([five.lines[0], five.lines[1], five.lines[3], five.lines[4]]) }], intended: ['SEQ_GAP', 'LINK_BROKEN'] });
  add('deleted-first', 'step 0 deleted', { files: [{ name: B0, text: text(five.lines.slice(1)) }], intended: ['SEQ_GAP', 'BUCKET_MISNAMED', 'GENESIS_MISMATCH'] });
  add('duplicated', 'step 2 appended twice', { files: [{ name: B0, text: text([five.lines[0], five.lines[1], five.lines[2], five.lines[2], five.lines[3], five.lines[4]]) }], intended: ['DUPLICATE_STEP'] });
  add('truncated-line', 'the last line cut mid-way, as a crash leaves it (a torn write)', { files: [{ name: B0, text: text(five.lines.slice(0, 4)) + five.lines[4].slice(0, 100) }], intended: ['TRUNCATED_LINE'] });
  add('missing-final-newline', 'a whole record without its newline is still a torn write', { files: [{ name: B0, text: text(five.lines).slice(0, -1) }], intended: ['TRUNCATED_LINE'] });
  const spaced = [...five.lines];
  spaced[1] = spaced[1].replace('"model":', '"model": ');
  add('noncanonical-whitespace', 'a space inserted after a colon in step 1; the link check of step 2 is skipped', { files: [{ name: B0, text: text(spaced) }], intended: ['NONCANONICAL_LINE'] });
  const crlf = five.lines.map((l) => l.replace('\n', '\r\n'));
  add('crlf-line-endings', 'every line ends CRLF (a text-mode copy)', { files: [{ name: B0, text: text(crlf.slice(0, 2)) }], intended: ['NONCANONICAL_LINE', 'NONCANONICAL_LINE'] });
  add('wrong-genesis', 'a valid chain presented with another journal\'s genesis', { genesis: OTHER_GENESIS, files: [{ name: B0, text: text(five.lines) }], intended: ['GENESIS_MISMATCH'] });
  add('head-mismatch-truncated', 'the last step removed cleanly: only the pinned head reveals it', { files: [{ name: B0, text: text(five.lines.slice(0, 4)) }], expectHead: head5, intended: ['HEAD_MISMATCH'] });
  add('head-mismatch-empty', 'every step removed: the pinned head is not there', { files: [{ name: B0, text: '' }], expectHead: head5, intended: ['HEAD_MISMATCH'] });
  add('bucket-misnamed', 'the second bucket is named for the wrong first seq', {
    files: [{ name: B0, text: text(twelve.lines.slice(0, 5)) }, { name: '0000000000000006.jsonl', text: text(twelve.lines.slice(5)) }],
    intended: ['BUCKET_MISNAMED'],
  });
  const unknownField = [...five.lines];
  unknownField[1] = unknownField[1].replace('"v":1}', '"v":1,"zz":true}');
  add('unknown-field', 'an extra member (which also breaks the hash)', { files: [{ name: B0, text: text(unknownField) }], intended: ['UNKNOWN_FIELD', 'HASH_MISMATCH'] });
  {
    const r = { ...five.records[0] };
    delete r.step_hash;
    r.v = 2;
    const v2 = [sealRecord(r).line, ...five.lines.slice(1)];
    add('unsupported-version', 'a record of version 2, correctly hashed', { files: [{ name: B0, text: text(v2) }], intended: ['UNSUPPORTED_VERSION', 'LINK_BROKEN'] });
  }
  const badTs = [...five.lines];
  badTs[0] = badTs[0].replace(/"ts":"[^"]*"/, '"ts":"2026-02-30T00:00:00.000Z"');
  add('invalid-ts', '30 February (and the hash no longer matches)', { files: [{ name: B0, text: text(badTs) }], intended: ['FIELD_INVALID', 'HASH_MISMATCH'] });
  const missing = [...five.lines];
  missing[4] = missing[4].replace(/"model":"[^"]*",/, '');
  add('missing-field', 'the model member removed from step 4', { files: [{ name: B0, text: text(missing) }], intended: ['MISSING_FIELD', 'HASH_MISMATCH'] });
  {
    const r = { ...five.records[1] };
    delete r.step_hash;
    r.result = { '$stepchain:blob': { digest: 'sha256:' + '0'.repeat(64), size: 1 }, extra: 1 };
    const bad = [five.lines[0], sealRecord(r).line];
    add('marker-invalid', 'a blob reference with a second member', { files: [{ name: B0, text: text(bad) }], intended: ['MARKER_INVALID'] });
  }
  add('garbage-line', 'a line of binary noise between steps', {
    files: [{ name: B0, base64: Buffer.concat([Buffer.from(text(five.lines.slice(0, 2))), Buffer.from([0xff, 0xfe, 0x00, 0x41, 0x0a]), Buffer.from(text(five.lines.slice(2)))]).toString('base64') }],
    intended: ['MALFORMED_LINE'],
  });
  add('unreadable-step', 'step 2 damaged beyond reading (bytes cut out of its middle): one problem, and the chain resumes', {
    files: [{ name: B0, text: text([...five.lines.slice(0, 2), five.lines[2].slice(0, 40) + five.lines[2].slice(90), ...five.lines.slice(3)]) }],
    intended: ['MALFORMED_LINE'],
  });
  add('partial-wrong-start', 'a partial chain that does not continue from the stated prev_hash', {
    start: { seq: 5, prev_hash: twelve.records[3].step_hash },
    files: [{ name: '0000000000000005.jsonl', text: text(twelve.lines.slice(5, 9)) }],
    intended: ['LINK_BROKEN'],
  });
  add('genesis-invalid', 'a genesis object with an unknown format', { genesis: { ...GENESIS, format: 'stepchain/v9' }, files: [{ name: B0, text: text(five.lines.slice(0, 2)) }], intended: ['GENESIS_INVALID'] });
  {
    // FORMAT §3.5: a marker is checked wherever it stands; a well-formed redaction marker outside the content
    // fields and meta is MARKER_INVALID besides the member's own problem (both steps correctly hashed).
    const marker = { '$stepchain:redacted': { commitment: 'sha256:' + 'a'.repeat(64), rule: 'pii' } };
    const inTs = { ...five.records[1] };
    delete inTs.step_hash;
    inTs.ts = marker;
    add('marker-in-ts', 'a well-formed redaction marker as ts: ts is invalid, and the marker stands where none may', {
      files: [{ name: B0, text: text([five.lines[0], sealRecord(inTs).line]) }], intended: ['FIELD_INVALID', 'MARKER_INVALID'],
    });
    const inUnknown = { ...five.records[1] };
    delete inUnknown.step_hash;
    inUnknown.notes = { kept: marker };
    add('marker-in-unknown-member', 'a well-formed redaction marker inside an unknown member: both are reported', {
      files: [{ name: B0, text: text([five.lines[0], sealRecord(inUnknown).line]) }], intended: ['UNKNOWN_FIELD', 'MARKER_INVALID'],
    });
  }

  return {
    format: FORMAT,
    kind: 'chains',
    description: 'Chains to verify per spec/FORMAT.md §6.3. Each case: files (name and text, or base64 bytes) in order; genesis (when absent, the file-level genesis); start {seq, prev_hash} for a partial chain; expect_head when a head is pinned; expect: the report. problems are listed in the order the procedure meets them; messages are informative and not given.',
    genesis: GENESIS,
    genesis_hash: genesisHash(GENESIS),
    cases,
  };
}

export async function generate() {
  return {
    'canonical.json': canonicalVectors(),
    'refused.json': refusedVectors(),
    'step-hashes.json': stepHashVectors(),
    'chains.json': chainVectors(),
  };
}
